"""HalfCheetah's model as planar constants, read once from the compiled MuJoCo model.

Every joint of the cheetah moves it in the x-z plane (two slides along world x and z, seven hinges
about y), every body and geom frame is a rotation about y, and every inertia has y as a principal
axis. So each body's pose is (x, z, angle about y), its velocity (angular y, linear x, linear z),
and its rotational inertia the single moment I_yy: the same physics as MuJoCo's 6-D spatial
algebra with the zero rows left out. `planar_model()` checks these facts on the model it reads and
refuses a model that breaks them, so the specialisation cannot silently go wrong.

Numbers come from MuJoCo's compiler (masses after `settotalmass`, inertias from the capsules,
`body_invweight0`/`dof_invweight0` from `mj_setConst`); the algorithms that use them are ours.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from ..reference.model_file import load_model

# MuJoCo's clamps (mujoco.mjMINVAL, mjMINIMP, mjMAXIMP); checked against the package in tests.
MJ_MINVAL = 1e-15
MJ_MINIMP = 0.0001
MJ_MAXIMP = 0.9999

SLIDE_X, SLIDE_Z, HINGE_Y = 0, 1, 2


@dataclasses.dataclass(frozen=True)
class PlanarModel:
    """Constants of the model (numpy, float64). Index 0 of body arrays is the world."""

    # bodies
    body_parent: tuple[int, ...]
    body_pos: np.ndarray  # (nbody, 2) x, z of the body frame in its parent's frame
    body_mass: np.ndarray  # (nbody,)
    body_ipos: np.ndarray  # (nbody, 2) centre of mass in the body frame
    body_iyy: np.ndarray  # (nbody,) moment of inertia about y through the centre of mass
    body_invweight0: np.ndarray  # (nbody,) translational inverse weight at qpos0 (mj_setConst)
    body_dofs: tuple[tuple[int, ...], ...]  # dofs of each body, in MuJoCo's order
    # dofs (one per joint here)
    dof_kind: tuple[int, ...]  # SLIDE_X, SLIDE_Z or HINGE_Y
    dof_body: tuple[int, ...]
    dof_armature: np.ndarray
    dof_damping: np.ndarray
    dof_stiffness: np.ndarray
    dof_springref: np.ndarray
    dof_invweight0: np.ndarray
    # joint limits: the limited dofs, their ranges and soft-constraint parameters
    limit_dofs: tuple[int, ...]
    limit_range: np.ndarray  # (nlimit, 2)
    limit_solref: np.ndarray  # (nlimit, 2)
    limit_solimp: np.ndarray  # (nlimit, 5)
    # capsules that can touch the floor, in MuJoCo's collision order
    capsule_geom: tuple[int, ...]  # MuJoCo geom ids
    capsule_body: tuple[int, ...]
    capsule_pos: np.ndarray  # (ncapsule, 2) centre in the body frame
    capsule_angle: np.ndarray  # (ncapsule,) rotation about y relative to the body
    capsule_radius: np.ndarray
    capsule_halflength: np.ndarray
    # contact parameters (floor x capsule, mixed as MuJoCo mixes them; equal for every pair here)
    contact_friction: float
    contact_solref: np.ndarray  # (2,)
    contact_solimp: np.ndarray  # (5,)
    # actuators: one motor per actuated dof
    actuator_dof: tuple[int, ...]
    actuator_gear: np.ndarray
    actuator_ctrlrange: np.ndarray  # (nu, 2)
    # options
    timestep: float
    gravity: float  # magnitude along -z
    impratio: float
    iterations: int
    tolerance: float

    @property
    def nbody(self) -> int:
        return len(self.body_parent)

    @property
    def nv(self) -> int:
        return len(self.dof_kind)

    @property
    def nu(self) -> int:
        return len(self.actuator_dof)

    def ancestors_dofs(self, body: int) -> tuple[int, ...]:
        """Dofs that move `body`: its own and every ancestor's, root first."""
        chain = []
        while body > 0:
            chain.append(body)
            body = self.body_parent[body]
        return tuple(dof for b in reversed(chain) for dof in self.body_dofs[b])


def _angle_about_y(quat: np.ndarray, what: str) -> float:
    w, x, y, z = quat
    if abs(x) > 1e-12 or abs(z) > 1e-12:
        raise ValueError(f"{what}: quaternion {quat} is not a rotation about y; the planar model does not apply")
    return float(2.0 * np.arctan2(y, w))


def _iyy(mass_frame_quat: np.ndarray, principal: np.ndarray, what: str) -> float:
    import mujoco

    rot = np.zeros(9)
    mujoco.mju_quat2Mat(rot, mass_frame_quat)
    rot = rot.reshape(3, 3)
    inertia = rot @ np.diag(principal) @ rot.T
    if abs(inertia[0, 1]) > 1e-12 or abs(inertia[1, 2]) > 1e-12:
        raise ValueError(f"{what}: y is not a principal axis of the inertia; the planar model does not apply")
    return float(inertia[1, 1])


def from_mujoco(m) -> PlanarModel:
    """Read a compiled HalfCheetah-like `mujoco.MjModel`; raise ValueError if it is not planar."""
    import mujoco

    if m.opt.integrator != mujoco.mjtIntegrator.mjINT_EULER:
        raise ValueError("only the Euler integrator is translated")
    if m.opt.cone != mujoco.mjtCone.mjCONE_PYRAMIDAL or m.opt.solver != mujoco.mjtSolver.mjSOL_NEWTON:
        raise ValueError("only the Newton solver with the pyramidal cone is translated")
    if m.opt.disableflags != 0 or m.opt.enableflags != 0:
        raise ValueError("the translation assumes MuJoCo's default disable/enable flags")
    if not np.allclose(m.opt.gravity, [0.0, 0.0, m.opt.gravity[2]]):
        raise ValueError("gravity must point along z")
    if np.any(m.body_pos[:, 1] != 0) or np.any(m.body_ipos[:, 1] != 0):
        raise ValueError("every body must lie in the x-z plane")

    nbody = m.nbody
    body_dofs = [[] for _ in range(nbody)]
    dof_kind = []
    for j in range(m.njnt):
        axis = m.jnt_axis[j]
        if np.any(m.jnt_pos[j] != 0):
            raise ValueError("joints must sit at their body's origin")
        if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_SLIDE and np.allclose(axis, [1, 0, 0]):
            kind = SLIDE_X
        elif m.jnt_type[j] == mujoco.mjtJoint.mjJNT_SLIDE and np.allclose(axis, [0, 0, 1]):
            kind = SLIDE_Z
        elif m.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE and np.allclose(axis, [0, 1, 0]):
            kind = HINGE_Y
        else:
            raise ValueError(f"joint {j}: only slides along x/z and hinges about y are planar")
        if m.jnt_dofadr[j] != j or m.jnt_qposadr[j] != j:
            raise ValueError("expected one dof and one qpos per joint")
        dof_kind.append(kind)
        body_dofs[m.jnt_bodyid[j]].append(j)
    for b in range(nbody):
        _angle_about_y(m.body_quat[b], f"body {b}")
        if abs(_angle_about_y(m.body_quat[b], f"body {b}")) > 0:
            raise ValueError("body frames must start unrotated")

    floor = [g for g in range(m.ngeom) if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_PLANE]
    if floor != [0] or m.geom_bodyid[0] != 0 or np.any(m.geom_pos[0] != 0) or np.any(m.geom_quat[0] != [1, 0, 0, 0]):
        raise ValueError("expected one floor plane, geom 0, at the world origin facing +z")
    capsules = []
    for g in range(1, m.ngeom):
        collides = (m.geom_contype[g] & m.geom_conaffinity[0]) or (m.geom_contype[0] & m.geom_conaffinity[g])
        if not collides:
            continue
        if m.geom_type[g] != mujoco.mjtGeom.mjGEOM_CAPSULE:
            raise ValueError(f"geom {g}: only capsules against the floor are translated")
        capsules.append(g)
    # capsule-capsule pairs: contype/conaffinity must exclude them (they do in HalfCheetah)
    for a in capsules:
        for b in capsules:
            if (m.geom_contype[a] & m.geom_conaffinity[b]) and m.geom_bodyid[a] != m.geom_bodyid[b]:
                raise ValueError("capsule-capsule collisions are not translated")
    if np.any(m.geom_margin != 0) or np.any(m.geom_gap != 0) or np.any(m.geom_priority != 0):
        raise ValueError("contact margins, gaps and priorities are not translated")
    if np.any(m.geom_condim[capsules + [0]] != 3):
        raise ValueError("only condim 3 contacts are translated")
    # MuJoCo mixes friction by max and solref/solimp by solmix; all geoms agree here, so any mix is the same
    for field in ("geom_friction", "geom_solref", "geom_solimp"):
        values = getattr(m, field)[capsules + [0]]
        if np.any(values != values[0]):
            raise ValueError(f"{field} differs between geoms; contact mixing is not translated")

    if np.any(m.qpos0 != 0):
        raise ValueError("the translation assumes qpos0 = 0 (slides measured from the body frame, reset noise around 0)")
    limited = [j for j in range(m.njnt) if m.jnt_limited[j]]
    if np.any(m.jnt_margin != 0):
        raise ValueError("joint-limit margins are not translated")
    if np.any(m.dof_frictionloss != 0) or m.neq or m.ntendon:
        raise ValueError("friction loss, equality constraints and tendons are not translated")
    for a in range(m.nu):
        if m.actuator_trntype[a] != mujoco.mjtTrn.mjTRN_JOINT or m.actuator_dyntype[a] != 0 or m.actuator_gaintype[a] != 0 \
                or m.actuator_biastype[a] != 0 or not m.actuator_ctrllimited[a]:
            raise ValueError("only ctrl-limited direct joint motors are translated")

    return PlanarModel(
        body_parent=tuple(int(p) for p in m.body_parentid),
        body_pos=np.array(m.body_pos[:, [0, 2]], dtype=np.float64),
        body_mass=np.array(m.body_mass, dtype=np.float64),
        body_ipos=np.array(m.body_ipos[:, [0, 2]], dtype=np.float64),
        body_iyy=np.array([_iyy(m.body_iquat[b], m.body_inertia[b], f"body {b}") for b in range(nbody)]),
        body_invweight0=np.array(m.body_invweight0[:, 0], dtype=np.float64),
        body_dofs=tuple(tuple(d) for d in body_dofs),
        dof_kind=tuple(dof_kind),
        dof_body=tuple(int(b) for b in m.dof_bodyid),
        dof_armature=np.array(m.dof_armature, dtype=np.float64),
        dof_damping=np.array(m.dof_damping, dtype=np.float64),
        dof_stiffness=np.array(m.jnt_stiffness, dtype=np.float64),
        dof_springref=np.array(m.qpos_spring, dtype=np.float64),
        dof_invweight0=np.array(m.dof_invweight0, dtype=np.float64),
        limit_dofs=tuple(limited),
        limit_range=np.array(m.jnt_range[limited], dtype=np.float64),
        limit_solref=np.array(m.jnt_solref[limited], dtype=np.float64),
        limit_solimp=np.array(m.jnt_solimp[limited], dtype=np.float64),
        capsule_geom=tuple(capsules),
        capsule_body=tuple(int(m.geom_bodyid[g]) for g in capsules),
        capsule_pos=np.array(m.geom_pos[capsules][:, [0, 2]], dtype=np.float64),
        capsule_angle=np.array([_angle_about_y(m.geom_quat[g], f"geom {g}") for g in capsules]),
        capsule_radius=np.array(m.geom_size[capsules, 0], dtype=np.float64),
        capsule_halflength=np.array(m.geom_size[capsules, 1], dtype=np.float64),
        contact_friction=float(m.geom_friction[0, 0]),
        contact_solref=np.array(m.geom_solref[0], dtype=np.float64),
        contact_solimp=np.array(m.geom_solimp[0], dtype=np.float64),
        actuator_dof=tuple(int(m.actuator_trnid[a, 0]) for a in range(m.nu)),
        actuator_gear=np.array(m.actuator_gear[:, 0], dtype=np.float64),
        actuator_ctrlrange=np.array(m.actuator_ctrlrange, dtype=np.float64),
        timestep=float(m.opt.timestep),
        gravity=float(-m.opt.gravity[2]),
        impratio=float(m.opt.impratio),
        iterations=int(m.opt.iterations),
        tolerance=float(m.opt.tolerance),
    )


@functools.lru_cache(maxsize=1)
def planar_model() -> PlanarModel:
    """HalfCheetah-v5's model (Gymnasium's half_cheetah.xml) as planar constants."""
    return from_mujoco(load_model())
