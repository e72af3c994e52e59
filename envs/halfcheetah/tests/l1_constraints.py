"""L1, non-smooth dynamics: capsule-floor contacts and their Jacobians, joint-limit rows, the
soft-constraint parameters, and the Newton solver's forces, each against MuJoCo C's efc arrays
from the same random state (MuJoCo keeps only the rows in effect; ours has fixed slots, compared
where they are in effect, in MuJoCo's order); then energy conservation of the unconstrained,
undamped, unactuated system."""

import dataclasses

import jax
import numpy as np
from hypothesis import given, settings

from envs.halfcheetah.jax import dynamics
from envs.halfcheetah.jax.collision import capsule_floor_contacts
from envs.halfcheetah.jax.inertia import motion_frames
from envs.halfcheetah.jax.kinematics import forward_kinematics
from envs.halfcheetah.reference.model_file import model_path
from envs.halfcheetah.tests.harness import (
    CHEETAH,
    PM,
    assert_close,
    cheetah_states,
    in_mujoco_layout,
    mujoco_forward,
    ours_forward,
    rows_in_effect,
)

EXAMPLES = settings(max_examples=40, deadline=None)


@jax.jit
def _contacts(qpos):
    return capsule_floor_contacts(PM, motion_frames(PM, forward_kinematics(PM, qpos)))


@CHEETAH.covers("collision")
@EXAMPLES
@given(cheetah_states(contact_heavy=True))
def test_contacts_positions_distances_and_frames_equal_mujoco(state):
    qpos, qvel, ctrl = state
    m, d = mujoco_forward(qpos, qvel, ctrl)
    con = _contacts(qpos)
    active = np.asarray(con.active)
    assert active.sum() == d.ncon, f"{active.sum()} contacts, MuJoCo finds {d.ncon}"
    contacts = d.contact[: d.ncon]
    assert_close(np.asarray(con.dist)[active], contacts.dist, 1e-12, "contact dist")
    pos = np.asarray(con.pos)[active]
    assert_close(np.stack([pos[:, 0], np.zeros(len(pos)), pos[:, 1]], 1), contacts.pos, 1e-12, "contact pos")
    geoms = np.repeat(np.array(PM.capsule_geom), 2)[active]
    assert np.array_equal(contacts.geom[:, 1], geoms) and np.all(contacts.geom[:, 0] == 0)
    tangent = np.asarray(con.tangent_x)[active, 0]
    assert_close(np.stack([tangent, np.zeros_like(tangent), np.zeros_like(tangent)], 1), contacts.frame[:, 3:6], 1e-12,
                 "contact frame first tangent")


@CHEETAH.covers("collision", "limits")
@EXAMPLES
@given(cheetah_states(contact_heavy=True))
def test_constraint_jacobian_and_positions_equal_efc_J(state):
    qpos, qvel, ctrl = state
    m, d = mujoco_forward(qpos, qvel, ctrl)
    fwd = ours_forward(qpos, qvel, ctrl)
    rows = rows_in_effect(fwd)
    assert rows.sum() == d.nefc, f"{rows.sum()} rows in effect, MuJoCo has {d.nefc}"
    dense = in_mujoco_layout(np.asarray(fwd.rows.dense_J(PM)).T).T
    assert_close(dense[rows], d.efc_J.reshape(d.nefc, m.nv), 1e-12, "efc_J")
    assert_close(in_mujoco_layout(fwd.rows.pos)[rows], d.efc_pos, 1e-12, "efc_pos")


@CHEETAH.covers("impedance", "limits")
@EXAMPLES
@given(cheetah_states(contact_heavy=True))
def test_regularisation_and_reference_acceleration_equal_efc_R_and_aref(state):
    qpos, qvel, ctrl = state
    m, d = mujoco_forward(qpos, qvel, ctrl)
    fwd = ours_forward(qpos, qvel, ctrl)
    rows = rows_in_effect(fwd)
    # R spans 1e-3..1e3 (impedance from 1e-4 to 0.8): compare relatively
    assert_close(in_mujoco_layout(fwd.rows.R)[rows], d.efc_R, 0.0, "efc_R", rtol=1e-12)
    assert_close(in_mujoco_layout(fwd.rows.aref)[rows], d.efc_aref, 1e-9, "efc_aref", rtol=1e-12)


@CHEETAH.covers("solver")
@EXAMPLES
@given(cheetah_states(contact_heavy=True))
def test_single_step_solve_gives_mujocos_efc_force_and_qacc(state):
    qpos, qvel, ctrl = state
    m, d = mujoco_forward(qpos, qvel, ctrl)
    fwd = ours_forward(qpos, qvel, ctrl)
    rows = rows_in_effect(fwd)
    # forces reach 1e4 N; MuJoCo stops its Newton iterations at a scaled tolerance of 1e-8, ours at
    # the exact minimiser: agreement to ~1e-13 relative, stated with margin
    assert_close(in_mujoco_layout(fwd.solution.efc_force)[rows], d.efc_force, 1e-8, "efc_force", rtol=1e-10)
    assert_close(fwd.solution.qfrc_constraint, d.qfrc_constraint, 1e-8, "qfrc_constraint", rtol=1e-10)
    assert_close(fwd.solution.qacc, d.qacc, 1e-8, "qacc", rtol=1e-10)
    assert int(fwd.solution.iterations) < 100, "the Newton solver must converge well inside MuJoCo's 100 iterations"


@CHEETAH.covers("solver")
def test_solver_forces_are_non_negative_where_they_push_and_zero_without_contact():
    airborne = ours_forward(np.r_[0, 2.0, 0, np.zeros(6)], np.zeros(9), np.zeros(6))
    assert not np.any(np.asarray(airborne.rows.in_effect))
    assert np.array_equal(np.asarray(airborne.solution.qacc), np.asarray(airborne.qacc_smooth))
    resting = ours_forward(np.r_[0, -0.6, 0, np.zeros(6)], np.zeros(9), np.zeros(6))
    force = np.asarray(resting.solution.efc_force)
    assert force.min() >= 0 and force.max() > 0, "pyramid edge forces only push"


@CHEETAH.covers("integrator")
def test_energy_is_conserved_without_damping_contact_or_actuation():
    """Springs and gravity only: semi-implicit Euler keeps the energy within a bounded, first-order
    oscillation; a 4x smaller timestep must shrink the worst drift at least 3x. The energy itself
    is checked against MuJoCo's (mjENBL_ENERGY) at the start."""
    import mujoco

    qpos = np.r_[0.3, 0.2, 0.5, 0.3, -0.4, 0.2, 0.6, -0.5, 0.3]
    qvel = np.r_[1, -2, 3, -4, 5, -6, 7, -8, 9.0]
    m = mujoco.MjModel.from_xml_path(model_path())  # a private copy: the shared one stays unchanged
    m.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:] = qpos, qvel
    mujoco.mj_forward(m, d)
    assert_close(dynamics.mechanical_energy(PM, qpos, qvel), d.energy, 1e-10, "energy")
    drifts = []
    for timestep in (0.01, 0.0025):
        pm = dataclasses.replace(PM, dof_damping=np.zeros(PM.nv), timestep=timestep)
        step = jax.jit(lambda q, v: dynamics.physics_step(pm, q, v, np.zeros(6), constraints=False)[:2])  # noqa: B023
        energy = jax.jit(lambda q, v: sum(dynamics.mechanical_energy(pm, q, v)))  # noqa: B023
        start, q, v, worst = energy(qpos, qvel), qpos, qvel, 0.0
        for _ in range(int(round(2.0 / timestep))):
            q, v = step(q, v)
            worst = max(worst, abs(float(energy(q, v) - start)))
        drifts.append(worst)
    assert drifts[0] < 0.25 * float(start), drifts  # bounded: no blow-up over 2 s
    assert drifts[1] < drifts[0] / 3, f"drift must shrink with the timestep: {drifts}"
