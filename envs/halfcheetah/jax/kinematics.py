"""Forward kinematics: body frames, centres of mass and capsule frames from qpos (MuJoCo's
mj_kinematics + mj_comPos, in the x-z plane).

A rotation about y by `a` maps a local (x, z) to (cos a * x + sin a * z, -sin a * x + cos a * z):
MuJoCo's right-handed convention, under which +a turns z towards x.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from .model import HINGE_Y, SLIDE_X, SLIDE_Z, PlanarModel


@struct.dataclass
class Kinematics:
    body_xz: jax.Array  # (nbody, 2) frame origins in the world
    body_angle: jax.Array  # (nbody,) frame rotation about y
    com_xz: jax.Array  # (nbody, 2) centres of mass in the world
    capsule_xz: jax.Array  # (ncapsule, 2) capsule centres
    capsule_angle: jax.Array  # (ncapsule,) capsule frame rotation about y (its axis is local z)


def rotate(angle, local_xz):
    """World offset of a local (x, z) offset in a frame rotated by `angle` about y."""
    c, s = jnp.cos(angle), jnp.sin(angle)
    return jnp.stack([c * local_xz[..., 0] + s * local_xz[..., 1], -s * local_xz[..., 0] + c * local_xz[..., 1]], axis=-1)


def forward_kinematics(pm: PlanarModel, qpos: jax.Array) -> Kinematics:
    dtype = qpos.dtype
    zero = jnp.zeros((), dtype)
    xz = [jnp.zeros(2, dtype)]
    angle = [zero]
    for body in range(1, pm.nbody):
        parent = pm.body_parent[body]
        origin = xz[parent] + rotate(angle[parent], jnp.asarray(pm.body_pos[body], dtype))
        rot = angle[parent]
        # joints act in their order; slides along the frame's (still unrotated) axes, hinges about y
        for dof in pm.body_dofs[body]:
            kind = pm.dof_kind[dof]
            if kind == SLIDE_X:
                origin = origin + rotate(rot, jnp.array([1.0, 0.0], dtype)) * qpos[dof]  # qpos0 = 0
            elif kind == SLIDE_Z:
                origin = origin + rotate(rot, jnp.array([0.0, 1.0], dtype)) * qpos[dof]  # qpos0 = 0
            elif kind == HINGE_Y:
                rot = rot + qpos[dof]
        xz.append(origin)
        angle.append(rot)
    body_xz = jnp.stack(xz)
    body_angle = jnp.stack(angle)
    com_xz = body_xz + rotate(body_angle, jnp.asarray(pm.body_ipos, dtype))
    cap_body = jnp.array(pm.capsule_body)
    capsule_xz = body_xz[cap_body] + rotate(body_angle[cap_body], jnp.asarray(pm.capsule_pos, dtype))
    capsule_angle = body_angle[cap_body] + jnp.asarray(pm.capsule_angle, dtype)
    return Kinematics(body_xz=body_xz, body_angle=body_angle, com_xz=com_xz, capsule_xz=capsule_xz,
                      capsule_angle=capsule_angle)


def rotation_matrix(angle):
    """3x3 world rotation (MuJoCo's xmat, row-major) of a frame rotated by `angle` about y."""
    c, s = jnp.cos(angle), jnp.sin(angle)
    o, z = jnp.ones_like(angle), jnp.zeros_like(angle)
    return jnp.stack([jnp.stack([c, z, s], -1), jnp.stack([z, o, z], -1), jnp.stack([-s, z, c], -1)], -2)


def to_3d(xz):
    """(..., 2) x-z points as (..., 3) world points with y = 0."""
    return jnp.stack([xz[..., 0], jnp.zeros_like(xz[..., 0]), xz[..., 1]], axis=-1)
