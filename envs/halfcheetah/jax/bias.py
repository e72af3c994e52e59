"""Recursive Newton-Euler for the bias force c(q, qdot) + g(q) (MuJoCo's mj_rne with qacc = 0,
i.e. qfrc_bias), and the passive spring and damper forces (mj_passive). Batch-last (layout.py)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .inertia import Frames, subtree_sums
from .layout import const, stack
from .model import PlanarModel
from .spatial import cross_force, cross_motion


def body_velocities(pm: PlanarModel, frames: Frames, qvel: jax.Array):
    """Per body (lists of (3, ...)): spatial velocity (cvel) and the velocity-product
    acceleration (sum cdof_dot*qvel)."""
    zero = jnp.zeros((3,) + qvel.shape[1:], qvel.dtype)
    cvel = [zero]
    cacc_vp = [zero]
    for body in range(1, pm.nbody):
        v = cvel[pm.body_parent[body]]
        a = cacc_vp[pm.body_parent[body]]
        for dof in pm.body_dofs[body]:
            # cdof_dot uses the velocity before this dof is added, as mj_comVel does
            a = a + cross_motion(v, frames.cdof[dof]) * qvel[dof]
            v = v + frames.cdof[dof] * qvel[dof]
        cvel.append(v)
        cacc_vp.append(a)
    return cvel, cacc_vp


def bias_force(pm: PlanarModel, frames: Frames, qvel: jax.Array) -> jax.Array:
    """qfrc_bias: Coriolis, centrifugal and gravity forces, (nv,)."""
    dtype = qvel.dtype
    cvel, cacc_vp = body_velocities(pm, frames, qvel)
    # gravity as an upward acceleration of the world (Featherstone's trick, as MuJoCo does)
    gravity = const([0.0, 0.0, pm.gravity], dtype, cvel[0])
    cfrc = [jnp.zeros_like(cvel[0])]
    for body in range(1, pm.nbody):
        inertia = frames.cinert[body]
        momentum = jnp.sum(inertia * cvel[body][None], axis=1)
        cfrc.append(jnp.sum(inertia * (cacc_vp[body] + gravity)[None], axis=1) + cross_force(cvel[body], momentum))
    subtree = subtree_sums(pm, cfrc)
    return stack([jnp.sum(frames.cdof[d] * subtree[pm.dof_body[d]], axis=0) for d in range(pm.nv)])


def passive_force(pm: PlanarModel, qpos: jax.Array, qvel: jax.Array) -> jax.Array:
    """qfrc_passive: joint springs towards qpos_spring and linear joint damping, (nv,)."""
    dtype = qpos.dtype
    spring = -const(pm.dof_stiffness, dtype, qpos) * (qpos - const(pm.dof_springref, dtype, qpos))
    return spring - const(pm.dof_damping, dtype, qpos) * qvel
