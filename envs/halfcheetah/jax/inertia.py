"""Composite rigid body algorithm: the joint-space mass matrix with armature (MuJoCo's mj_crb,
returned dense like mj_fullM).

Spatial quantities are taken about the torso's frame origin (MuJoCo takes them about the
subtree centre of mass; any fixed point gives the same matrix, a nearby one keeps the rounding
small when the cheetah has run far from the world origin).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from .kinematics import Kinematics, rotate
from .model import HINGE_Y, SLIDE_X, SLIDE_Z, PlanarModel
from .spatial import body_inertia


@struct.dataclass
class Frames:
    """Kinematics plus the motion subspace of each dof and each body's spatial inertia."""

    kin: Kinematics
    origin: jax.Array  # (2,) reference point of all spatial vectors
    cdof: jax.Array  # (nv, 3) motion of the reference point per unit dof velocity
    cinert: jax.Array  # (nbody, 3, 3) spatial inertia of each body


def _subtree_matrix(pm: PlanarModel) -> np.ndarray:
    """S[b, k] = 1 if body k lies in the subtree of body b."""
    sub = np.zeros((pm.nbody, pm.nbody))
    for k in range(pm.nbody):
        b = k
        while True:
            sub[b, k] = 1.0
            if b == 0:
                break
            b = pm.body_parent[b]
    return sub


def _ancestry_mask(pm: PlanarModel) -> np.ndarray:
    """mask[i, j] = 1 if dof j moves the body of dof i and j <= i (the lower triangle of M's pattern)."""
    mask = np.zeros((pm.nv, pm.nv))
    for i in range(pm.nv):
        for j in pm.ancestors_dofs(pm.dof_body[i]):
            if j <= i:
                mask[i, j] = 1.0
    return mask


def motion_frames(pm: PlanarModel, kin: Kinematics) -> Frames:
    dtype = kin.body_xz.dtype
    origin = kin.body_xz[1]
    cdof = []
    for dof, kind in enumerate(pm.dof_kind):
        body = pm.dof_body[dof]
        parent_angle = kin.body_angle[pm.body_parent[body]]
        if kind == SLIDE_X:
            lin = rotate(parent_angle, jnp.array([1.0, 0.0], dtype))
            cdof.append(jnp.stack([jnp.zeros((), dtype), lin[0], lin[1]]))
        elif kind == SLIDE_Z:
            lin = rotate(parent_angle, jnp.array([0.0, 1.0], dtype))
            cdof.append(jnp.stack([jnp.zeros((), dtype), lin[0], lin[1]]))
        elif kind == HINGE_Y:
            anchor = kin.body_xz[body] - origin
            cdof.append(jnp.stack([jnp.ones((), dtype), -anchor[1], anchor[0]]))
    cinert = body_inertia(jnp.asarray(pm.body_mass, dtype), jnp.asarray(pm.body_iyy, dtype), kin.com_xz - origin)
    return Frames(kin=kin, origin=origin, cdof=jnp.stack(cdof), cinert=cinert)


def composite_inertia(pm: PlanarModel, frames: Frames) -> jax.Array:
    """(nbody, 3, 3) inertia of each body's subtree (MuJoCo's crb)."""
    sub = jnp.asarray(_subtree_matrix(pm), frames.cinert.dtype)
    return jnp.einsum("bk,kij->bij", sub, frames.cinert)


def mass_matrix(pm: PlanarModel, frames: Frames) -> jax.Array:
    """Dense (nv, nv) joint-space inertia M(q), armature on the diagonal."""
    dtype = frames.cdof.dtype
    crb = composite_inertia(pm, frames)
    dof_body = np.array(pm.dof_body)
    force = jnp.einsum("dij,dj->di", crb[dof_body], frames.cdof)  # crb of dof i's body times S_i
    full = force @ frames.cdof.T  # full[i, j] = S_j . (crb_{body i} S_i)
    lower = full * jnp.asarray(_ancestry_mask(pm), dtype)
    m = lower + lower.T - jnp.diag(jnp.diag(lower))
    return m + jnp.diag(jnp.asarray(pm.dof_armature, dtype))
