"""Recursive Newton-Euler for the bias force c(q, qdot) + g(q) (MuJoCo's mj_rne with qacc = 0,
i.e. qfrc_bias), and the passive spring and damper forces (mj_passive)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .inertia import Frames, _subtree_matrix
from .model import PlanarModel
from .spatial import cross_force, cross_motion


def body_velocities(pm: PlanarModel, frames: Frames, qvel: jax.Array):
    """Per body: spatial velocity (cvel) and the velocity-product acceleration (sum cdof_dot*qvel)."""
    dtype = qvel.dtype
    zero = jnp.zeros(3, dtype)
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
    return jnp.stack(cvel), jnp.stack(cacc_vp)


def bias_force(pm: PlanarModel, frames: Frames, qvel: jax.Array) -> jax.Array:
    """qfrc_bias: Coriolis, centrifugal and gravity forces, (nv,)."""
    dtype = qvel.dtype
    cvel, cacc_vp = body_velocities(pm, frames, qvel)
    # gravity as an upward acceleration of the world (Featherstone's trick, as MuJoCo does)
    cacc = cacc_vp + jnp.array([0.0, 0.0, pm.gravity], dtype)
    momentum = jnp.einsum("bij,bj->bi", frames.cinert, cvel)
    cfrc = jnp.einsum("bij,bj->bi", frames.cinert, cacc) + cross_force(cvel, momentum)
    cfrc = cfrc.at[0].set(0.0)
    subtree = jnp.asarray(_subtree_matrix(pm), dtype) @ cfrc
    return jnp.einsum("di,di->d", frames.cdof, subtree[jnp.array(pm.dof_body)])


def passive_force(pm: PlanarModel, qpos: jax.Array, qvel: jax.Array) -> jax.Array:
    """qfrc_passive: joint springs towards qpos_spring and linear joint damping, (nv,)."""
    dtype = qpos.dtype
    spring = -jnp.asarray(pm.dof_stiffness, dtype) * (qpos - jnp.asarray(pm.dof_springref, dtype))
    return spring - jnp.asarray(pm.dof_damping, dtype) * qvel
