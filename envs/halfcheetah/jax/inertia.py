"""Composite rigid body algorithm: the joint-space mass matrix with armature (MuJoCo's mj_crb,
returned dense like mj_fullM). Batch-last (layout.py).

Spatial quantities are taken about the torso's frame origin (MuJoCo takes them about the
subtree centre of mass; any fixed point gives the same matrix, a nearby one keeps the rounding
small when the cheetah has run far from the world origin).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from .kinematics import Kinematics, rotate
from .layout import const, matrix, stack
from .model import HINGE_Y, SLIDE_X, SLIDE_Z, PlanarModel
from .spatial import body_inertia


@struct.dataclass
class Frames:
    """Kinematics plus the motion subspace of each dof and each body's spatial inertia."""

    kin: Kinematics
    origin: jax.Array  # (2,) reference point of all spatial vectors
    cdof: jax.Array  # (nv, 3) motion of the reference point per unit dof velocity
    cinert: jax.Array  # (nbody, 3, 3) spatial inertia of each body


def subtree_sums(pm: PlanarModel, per_body: list) -> list:
    """Per body, the sum of `per_body` over its subtree (children before parents)."""
    total = list(per_body)
    for body in range(pm.nbody - 1, 0, -1):
        total[pm.body_parent[body]] = total[pm.body_parent[body]] + total[body]
    return total


def motion_frames(pm: PlanarModel, kin: Kinematics) -> Frames:
    dtype = kin.body_xz.dtype
    origin = kin.body_xz[1]
    zero, one = jnp.zeros((), dtype), jnp.ones((), dtype)
    cdof = []
    for dof, kind in enumerate(pm.dof_kind):
        body = pm.dof_body[dof]
        parent_angle = kin.body_angle[pm.body_parent[body]]
        if kind == SLIDE_X:
            cdof.append(stack([zero, *rotate(parent_angle, 1.0, 0.0)]))
        elif kind == SLIDE_Z:
            cdof.append(stack([zero, *rotate(parent_angle, 0.0, 1.0)]))
        elif kind == HINGE_Y:
            anchor = kin.body_xz[body] - origin
            cdof.append(stack([one, -anchor[1], anchor[0]]))
    angle = kin.body_angle
    cinert = body_inertia(const(pm.body_mass, dtype, angle), const(pm.body_iyy, dtype, angle),
                          kin.com_xz[:, 0] - origin[0], kin.com_xz[:, 1] - origin[1])
    return Frames(kin=kin, origin=origin, cdof=stack(cdof), cinert=cinert)


def tree_entries(pm: PlanarModel, cdof, per_body: list) -> list:
    """Entries of sum over bodies b of S' K_b S, S the motion subspace of the dofs moving b, for
    one 3x3 K_b per body: the CRB assembly (M for K = cinert, J' W J for contact stiffnesses),
    as nested lists with None where no body couples the two dofs."""
    comp = subtree_sums(pm, per_body)
    n = pm.nv
    entries = [[None] * n for _ in range(n)]
    for i in range(n):
        force = jnp.sum(comp[pm.dof_body[i]] * cdof[i][None], axis=1)
        for j in pm.ancestors_dofs(pm.dof_body[i]):
            if j <= i:
                entries[i][j] = entries[j][i] = jnp.sum(cdof[j] * force, axis=0)
    return entries


def mass_matrix(pm: PlanarModel, frames: Frames) -> jax.Array:
    """Dense (nv, nv) joint-space inertia M(q), armature on the diagonal."""
    dtype = frames.cdof.dtype
    entries = tree_entries(pm, frames.cdof, [frames.cinert[b] for b in range(pm.nbody)])
    for d in range(pm.nv):
        entries[d][d] = entries[d][d] + float(pm.dof_armature[d])
    return matrix(entries, frames.cdof.shape[2:], dtype)
