"""One MuJoCo timestep (mj_step with the Euler integrator), composed from the stage modules:
kinematics -> mass matrix -> bias and passive forces -> actuation -> collision and constraint
rows -> Newton solver -> Euler. One cheetah, or many with the batch last (layout.py)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from .bias import bias_force, passive_force
from .collision import capsule_floor_contacts
from .constraints import ConstraintRows, make_constraints
from .inertia import mass_matrix, motion_frames
from .integrator import euler_step
from .kinematics import forward_kinematics
from .layout import const
from .linalg import cholesky_solve
from .model import PlanarModel
from .solver import SolverResult, newton_solve


@struct.dataclass
class Forward:
    """What mj_forward computes that the step and the tests read."""

    M: jax.Array
    qfrc_bias: jax.Array
    qfrc_passive: jax.Array
    qfrc_actuator: jax.Array
    qfrc_smooth: jax.Array
    qacc_smooth: jax.Array
    rows: ConstraintRows
    solution: SolverResult


def actuator_force(pm: PlanarModel, ctrl: jax.Array) -> jax.Array:
    dtype = ctrl.dtype
    clamped = jnp.clip(ctrl, const(pm.actuator_ctrlrange[:, 0], dtype, ctrl), const(pm.actuator_ctrlrange[:, 1], dtype, ctrl))
    force = const(pm.actuator_gear, dtype, ctrl) * clamped
    zero = jnp.zeros(ctrl.shape[1:], dtype)
    by_dof = {dof: force[i] for i, dof in enumerate(pm.actuator_dof)}
    return jnp.stack([by_dof.get(dof, zero) for dof in range(pm.nv)])


def forward(pm: PlanarModel, qpos, qvel, ctrl, max_iterations: int = 100, constraints: bool = True) -> Forward:
    """mj_forward. `constraints=False` leaves out contacts and joint limits (qacc = qacc_smooth):
    the unconstrained system, for energy tests."""
    kin = forward_kinematics(pm, qpos)
    frames = motion_frames(pm, kin)
    M = mass_matrix(pm, frames)
    qfrc_bias = bias_force(pm, frames, qvel)
    qfrc_passive = passive_force(pm, qpos, qvel)
    qfrc_actuator = actuator_force(pm, ctrl)
    qfrc_smooth = qfrc_passive - qfrc_bias + qfrc_actuator
    qacc_smooth = cholesky_solve(M, qfrc_smooth)
    contacts = capsule_floor_contacts(pm, frames)
    rows = make_constraints(pm, frames, contacts, qpos, qvel)
    if constraints:
        solution = newton_solve(pm, M, qfrc_smooth, qacc_smooth, rows, max_iterations)
    else:
        zero_rows = jnp.zeros_like(rows.D)
        solution = SolverResult(qacc=qacc_smooth, efc_force=zero_rows, qfrc_constraint=jnp.zeros_like(qacc_smooth),
                                iterations=jnp.zeros(qpos.shape[1:], jnp.int32), cost=jnp.zeros(qpos.shape[1:], qpos.dtype))
    return Forward(M=M, qfrc_bias=qfrc_bias, qfrc_passive=qfrc_passive, qfrc_actuator=qfrc_actuator,
                   qfrc_smooth=qfrc_smooth, qacc_smooth=qacc_smooth, rows=rows, solution=solution)


def physics_step(pm: PlanarModel, qpos, qvel, ctrl, max_iterations: int = 100, constraints: bool = True):
    """(qpos, qvel, Forward) after one timestep from (qpos, qvel) under `ctrl`."""
    fwd = forward(pm, qpos, qvel, ctrl, max_iterations, constraints)
    qpos_new, qvel_new = euler_step(pm, qpos, qvel, fwd.M, fwd.qfrc_smooth + fwd.solution.qfrc_constraint)
    return qpos_new, qvel_new, fwd


def mechanical_energy(pm: PlanarModel, qpos, qvel):
    """(potential, kinetic): gravity + joint springs, and 0.5 qvel' M qvel (mj_energyPos/Vel)."""
    dtype = qpos.dtype
    kin = forward_kinematics(pm, qpos)
    M = mass_matrix(pm, motion_frames(pm, kin))
    gravity = pm.gravity * jnp.sum(jnp.asarray(pm.body_mass, dtype) * kin.com_xz[:, 1])
    stretch = qpos - jnp.asarray(pm.dof_springref, dtype)
    springs = 0.5 * jnp.sum(jnp.asarray(pm.dof_stiffness, dtype) * stretch * stretch)
    return gravity + springs, 0.5 * jnp.dot(qvel, M @ qvel)
