"""Cholesky solves for the small dense systems of one cheetah (9 x 9), unrolled into scalar
operations. The matrix is anything indexed a[i][j] (an (n, n, ...) array or nested lists of
entries), the right-hand side b[i]; batch axes trail (layout.py), so each scalar operation is one
elementwise op over the batch, which XLA fuses. (The batched LAPACK call this replaces is slower
at this size and can stall XLA's CPU thread pool: the env's README, "The XLA CPU hang".)"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .layout import stack


def cholesky_factor(a) -> list[list[jax.Array]]:
    """Lower-triangular L with L L^T = a, as nested lists of scalars (a must be SPD)."""
    n = len(a)
    low: list[list[jax.Array]] = [[None] * n for _ in range(n)]  # type: ignore[list-item]
    for j in range(n):
        s = a[j][j]
        for k in range(j):
            s = s - low[j][k] * low[j][k]
        diag = jnp.sqrt(s)
        low[j][j] = diag
        inv = 1.0 / diag
        for i in range(j + 1, n):
            s = a[i][j]
            for k in range(j):
                s = s - low[i][k] * low[j][k]
            low[i][j] = s * inv
    return low


def cholesky_solve_factored(low: list[list[jax.Array]], b: jax.Array) -> jax.Array:
    n = len(low)
    y = [None] * n
    for i in range(n):
        s = b[i]
        for k in range(i):
            s = s - low[i][k] * y[k]
        y[i] = s / low[i][i]
    x = [None] * n
    for i in reversed(range(n)):
        s = y[i]
        for k in range(i + 1, n):
            s = s - low[k][i] * x[k]
        x[i] = s / low[i][i]
    return stack(x)


def cholesky_solve(a, b: jax.Array) -> jax.Array:
    """x with a x = b for a symmetric positive definite `a`."""
    return cholesky_solve_factored(cholesky_factor(a), b)
