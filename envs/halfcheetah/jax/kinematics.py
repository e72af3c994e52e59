"""Forward kinematics: body frames, centres of mass and capsule frames from qpos (MuJoCo's
mj_kinematics + mj_comPos, in the x-z plane). Batch-last (layout.py).

A rotation about y by `a` maps a local (x, z) to (cos a * x + sin a * z, -sin a * x + cos a * z):
MuJoCo's right-handed convention, under which +a turns z towards x.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from .layout import const, stack, take
from .model import HINGE_Y, SLIDE_X, SLIDE_Z, PlanarModel


@struct.dataclass
class Kinematics:
    body_xz: jax.Array  # (nbody, 2) frame origins in the world
    body_angle: jax.Array  # (nbody,) frame rotation about y
    com_xz: jax.Array  # (nbody, 2) centres of mass in the world
    capsule_xz: jax.Array  # (ncapsule, 2) capsule centres
    capsule_angle: jax.Array  # (ncapsule,) capsule frame rotation about y (its axis is local z)


def rotate(angle, x, z):
    """World offset (x, z) of a local offset (x, z) in a frame rotated by `angle` about y."""
    c, s = jnp.cos(angle), jnp.sin(angle)
    return c * x + s * z, -s * x + c * z


def forward_kinematics(pm: PlanarModel, qpos: jax.Array) -> Kinematics:
    dtype = qpos.dtype
    zero = jnp.zeros(qpos.shape[1:], dtype)
    xs, zs, angle = [zero], [zero], [zero]
    for body in range(1, pm.nbody):
        parent = pm.body_parent[body]
        rot = angle[parent]
        dx, dz = rotate(rot, float(pm.body_pos[body][0]), float(pm.body_pos[body][1]))
        ox, oz = xs[parent] + dx, zs[parent] + dz
        # joints act in their order; slides along the frame's (still unrotated) axes, hinges about y
        for dof in pm.body_dofs[body]:
            kind = pm.dof_kind[dof]
            if kind == SLIDE_X:
                ax, az = rotate(rot, 1.0, 0.0)
                ox, oz = ox + ax * qpos[dof], oz + az * qpos[dof]  # qpos0 = 0
            elif kind == SLIDE_Z:
                ax, az = rotate(rot, 0.0, 1.0)
                ox, oz = ox + ax * qpos[dof], oz + az * qpos[dof]  # qpos0 = 0
            elif kind == HINGE_Y:
                rot = rot + qpos[dof]
        xs.append(ox)
        zs.append(oz)
        angle.append(rot)
    body_x, body_z = stack(xs), stack(zs)
    body_angle = stack(angle)
    ix, iz = rotate(body_angle, const(pm.body_ipos[:, 0], dtype, body_angle), const(pm.body_ipos[:, 1], dtype, body_angle))
    com_xz = stack([body_x + ix, body_z + iz], 1)
    cap_angle_body = take(body_angle, pm.capsule_body)
    cx, cz = rotate(cap_angle_body, const(pm.capsule_pos[:, 0], dtype, cap_angle_body),
                    const(pm.capsule_pos[:, 1], dtype, cap_angle_body))
    capsule_xz = stack([take(body_x, pm.capsule_body) + cx, take(body_z, pm.capsule_body) + cz], 1)
    capsule_angle = cap_angle_body + const(pm.capsule_angle, dtype, cap_angle_body)
    return Kinematics(body_xz=stack([body_x, body_z], 1), body_angle=body_angle, com_xz=com_xz,
                      capsule_xz=capsule_xz, capsule_angle=capsule_angle)


def rotation_matrix(angle):
    """3x3 world rotation (MuJoCo's xmat, row-major) of one cheetah's frames rotated by `angle`
    about y: (..., 3, 3) for angles (...) (tests)."""
    c, s = jnp.cos(angle), jnp.sin(angle)
    o, z = jnp.ones_like(angle), jnp.zeros_like(angle)
    return jnp.stack([jnp.stack([c, z, s], -1), jnp.stack([z, o, z], -1), jnp.stack([-s, z, c], -1)], -2)


def to_3d(xz):
    """One cheetah's (..., 2) x-z points as (..., 3) world points with y = 0 (tests)."""
    return jnp.stack([xz[..., 0], jnp.zeros_like(xz[..., 0]), xz[..., 1]], axis=-1)
