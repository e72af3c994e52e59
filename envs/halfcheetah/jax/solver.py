"""The constraint solver: MuJoCo's primal Newton method for this model (pyramidal cone, soft
constraints), mj_solNewton.

It minimises over the acceleration x
    0.5 (x - qacc_smooth)' M (x - qacc_smooth) + sum_i w_i 0.5 D_i min(0, J_i x - aref_i)^2,
a strictly convex piecewise quadratic whose minimiser is qacc (w_i counts MuJoCo's copies of a
row, see constraints.py); each copy's force is f_i = -D_i min(0, J_i x - aref_i). Each iteration
takes the Newton direction of the quadratic piece at x (Hessian M + J' diag(w D active) J,
Cholesky) and an exact line search along it.

MuJoCo stops when its scaled cost improvement or gradient falls below `tolerance` (1e-8) and
uses an inexact line search, so its path differs from ours; both land on the same minimiser.
Ours stops at the exact minimiser: when the active set after a step is the one whose quadratic
the step solved (that step was then a full Newton step to the minimum of the right piece), or
when a step no longer lowers the cost (rounding), or after `max_iterations`.

J x, J' f and J' diag(w) J go through the kinematic tree (rows.py); M x is a broadcast-multiply-
sum. Batch-last (layout.py): every per-env scalar is a (B,) vector, so all of it is elementwise
loops over the batch that XLA fuses (a tiny batched matmul is not).

Over a batch the loop runs until the slowest env is done, and most envs are done early (of 4,096
running cheetahs, per timestep about 2,000 iterate at all, 900 a second time, 120 a third, a few a
fourth or fifth).
So once few envs still iterate, they are gathered into a smaller batch (a quarter, then a 32nd,
of the batch, each of at least 64 lanes), iterate there, and are merged back: the same per-env
arithmetic on fewer lanes, bit-equal in float64 to iterating them in the whole batch (tested).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from .constraints import ConstraintRows
from .linalg import cholesky_solve
from .model import PlanarModel

LINE_SEARCH_ITERATIONS = 30
# a batch of B envs iterates in sub-batches of B // d for each d here; below MIN_SUB_BATCH lanes
# the gathers cost about what the lanes save (measured at batch 64 on 2 cores: no gain)
COMPACTION_DIVISORS = (4, 32)
MIN_SUB_BATCH = 64


@struct.dataclass
class SolverResult:
    qacc: jax.Array
    efc_force: jax.Array  # force of one copy of each row
    qfrc_constraint: jax.Array
    iterations: jax.Array
    cost: jax.Array


def matvec(a, x):
    return jnp.sum(a * x[None], axis=1)


def _evaluate(pm, x, M, qfrc_smooth, qacc_smooth, rows: ConstraintRows, wd):
    jar = rows.J_mul(pm, x) - rows.aref
    active = (jar < 0) & (wd > 0)
    ma = matvec(M, x)
    cost = (0.5 * jnp.sum((ma - qfrc_smooth) * (x - qacc_smooth), axis=0)
            + 0.5 * jnp.sum(jnp.where(active, wd * jar * jar, 0.0), axis=0))
    grad = ma - qfrc_smooth + rows.JT_mul(pm, jnp.where(active, wd * jar, 0.0))
    return jar, active, cost, grad


def exact_line_search(jar, jv, wd, slope0, curvature, searching):
    """argmin over alpha >= 0 of slope0*alpha + 0.5*curvature*alpha^2 + sum 0.5 wd min(0, jar + alpha jv)^2,
    for the envs where `searching` (the others get 0).

    The derivative is piecewise linear and non-decreasing. From a point, solve the linear piece
    it lies on; if that solution lies on the same piece it is the minimiser, otherwise it becomes
    the next point, kept inside the bracket [lo, hi] of known derivative signs (bisecting when it
    falls outside), so the search ends after finitely many pieces. Over a batch the loop runs
    until the slowest env is done; an env that is done keeps its values.
    """
    inf = jnp.asarray(jnp.inf, jar.dtype)

    def piece(alpha):
        act = ((jar + alpha * jv) < 0) & (wd > 0)
        num = slope0 + jnp.sum(jnp.where(act, wd * jar * jv, 0.0), axis=0)
        den = curvature + jnp.sum(jnp.where(act, wd * jv * jv, 0.0), axis=0)
        deriv = num + alpha * den
        return act, deriv, -num / den

    def cond(carry):
        _, _, _, done, it = carry
        return jnp.any(~done) & (it < LINE_SEARCH_ITERATIONS)

    def body(carry):
        alpha, lo, hi, done, it = carry
        act, deriv, solution = piece(alpha)
        same_piece = jnp.all(piece(solution)[0] == act, axis=0)
        new_lo = jnp.where(deriv < 0, alpha, lo)
        new_hi = jnp.where(deriv > 0, alpha, hi)
        inside = (solution > new_lo) & (solution < new_hi)
        fallback = jnp.where(jnp.isinf(new_hi), 2.0 * new_lo + 1.0, 0.5 * (new_lo + new_hi))
        nxt = jnp.where(same_piece | inside, solution, fallback)
        keep = lambda new, old: jnp.where(done, old, new)  # noqa: E731
        return keep(nxt, alpha), keep(new_lo, lo), keep(new_hi, hi), done | same_piece | (deriv == 0), it + 1

    zero = jnp.zeros_like(slope0)
    carry = (zero, zero, zero + inf, ~searching, jnp.zeros((), jnp.int32))
    alpha, *_ = jax.lax.while_loop(cond, body, carry)
    return alpha


def compaction_sizes(batch_shape: tuple) -> tuple[int, ...]:
    """The sub-batch sizes a batch of this shape iterates in: none for one env or a nested batch."""
    if len(batch_shape) != 1:
        return ()
    return tuple(batch_shape[0] // d for d in COMPACTION_DIVISORS if batch_shape[0] // d >= MIN_SUB_BATCH)


def _lanes(tree, lanes, batch: int):
    """The envs `lanes` of a batch-last pytree; leaves without the batch axis (constants shaped to
    broadcast, trailing size 1) are kept as they are."""
    return jax.tree.map(lambda a: a[..., lanes] if a.ndim and a.shape[-1] == batch else a, tree)


def _merge(full, part, moved, position):
    """`full` with each moved env's values taken from its `position` in the sub-batch `part`: a
    gather and a select, several times cheaper on a CPU than scattering `part` into `full`."""
    return jax.tree.map(lambda f, p: jnp.where(moved, p[..., position], f), full, part)


def newton_solve(pm: PlanarModel, M, qfrc_smooth, qacc_smooth, rows: ConstraintRows, max_iterations: int = 100,
                 sub_batches: tuple[int, ...] | None = None) -> SolverResult:
    """Over a batch (layout.py) an env that is done keeps its values and its iteration count;
    `sub_batches` (default `compaction_sizes`) are the smaller batches the last iterating envs
    move to, () to iterate in the whole batch throughout."""
    wd = rows.weight * rows.D
    n = pm.nv

    def running(done, it):
        return ~done & (it < max_iterations)

    def iterate(carry, fixed, stop_at: int):
        """Newton iterations while more than `stop_at` envs of this (sub-)batch still run."""
        M, qfrc_smooth, qacc_smooth, rows, wd = fixed

        def cond(carry):
            *_, it, done = carry
            return jnp.sum(running(done, it)) > stop_at

        def body(carry):
            x, jar, active, cost, grad, it, done = carry
            run = running(done, it)
            gram = rows.gram_entries(pm, jnp.where(active, wd, 0.0))
            hessian = [[M[i, j] if gram[i][j] is None else M[i, j] + gram[i][j] for j in range(n)] for i in range(n)]
            direction = -cholesky_solve(hessian, grad)
            jv = rows.J_mul(pm, direction)
            m_dir = matvec(M, direction)
            slope0 = jnp.sum(m_dir * (x - qacc_smooth), axis=0)
            curvature = jnp.sum(m_dir * direction, axis=0)
            alpha = exact_line_search(jar, jv, wd, slope0, curvature, run)
            x_new = x + alpha * direction
            jar_new, active_new, cost_new, grad_new = _evaluate(pm, x_new, M, qfrc_smooth, qacc_smooth, rows, wd)
            improved = cost_new < cost
            step_done = jnp.all(active_new == active, axis=0) | ~improved
            # keep the better point: a step that did not lower the cost is rounding noise
            take_new = run & improved
            keep = lambda new, old: jnp.where(take_new, new, old)  # noqa: E731
            return (keep(x_new, x), keep(jar_new, jar), keep(active_new, active), keep(cost_new, cost),
                    keep(grad_new, grad), it + run.astype(it.dtype), done | (run & step_done))

        return jax.lax.while_loop(cond, body, carry)

    def iterate_compacting(carry, fixed, sizes):
        if not sizes:
            return iterate(carry, fixed, 0)
        batch, size = carry[-1].shape[-1], sizes[0]
        carry = iterate(carry, fixed, size)
        # at most `size` envs still run: their lanes in order, padded with one that does not
        # (padding never runs, and only the running envs are merged back)
        run = running(carry[-1], carry[-2])
        lanes = jnp.nonzero(run, size=size, fill_value=jnp.argmin(run))[0]
        sub = iterate_compacting(_lanes(carry, lanes, batch), _lanes(fixed, lanes, batch), sizes[1:])
        position = jnp.maximum(jnp.cumsum(run) - 1, 0)
        return _merge(carry, sub, run, position)

    jar, active, cost, grad = _evaluate(pm, qacc_smooth, M, qfrc_smooth, qacc_smooth, rows, wd)
    carry = (qacc_smooth, jar, active, cost, grad, jnp.zeros(cost.shape, jnp.int32), ~jnp.any(active, axis=0))
    sizes = compaction_sizes(cost.shape) if sub_batches is None else tuple(sub_batches)
    # the iterations read J (op) and aref only: the other rows stay out of what sub-batches gather
    loop_rows = rows.replace(D=None, pos=None, R=None, in_effect=None, weight=None)
    x, jar, active, cost, _, it, _ = iterate_compacting(carry, (M, qfrc_smooth, qacc_smooth, loop_rows, wd), sizes)
    force = jnp.where(active, -rows.D * jar, 0.0)
    return SolverResult(qacc=x, efc_force=force, qfrc_constraint=rows.JT_mul(pm, rows.weight * force),
                        iterations=it, cost=cost)
