"""MuJoCo's Euler integrator with implicit joint damping (mj_Euler, mj_advance). Batch-last.

The damping force -B qvel is already in qfrc_smooth; MuJoCo integrates it implicitly by solving
(M + h diag(B)) qacc_int = qfrc_smooth + qfrc_constraint, then qvel += h qacc_int and
qpos += h qvel (new velocity: semi-implicit). d->qacc keeps the solver's acceleration."""

from __future__ import annotations

from .linalg import cholesky_solve
from .model import PlanarModel


def euler_step(pm: PlanarModel, qpos, qvel, M, qfrc_total):
    h = pm.timestep
    n = pm.nv
    damped = [[M[i, j] + h * float(pm.dof_damping[i]) if i == j else M[i, j] for j in range(n)] for i in range(n)]
    qacc_int = cholesky_solve(damped, qfrc_total)
    qvel_new = qvel + h * qacc_int
    qpos_new = qpos + h * qvel_new  # slides and hinges only: positions add
    return qpos_new, qvel_new
