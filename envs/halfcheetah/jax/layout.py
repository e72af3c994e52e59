"""Batch-last layout, shared by every stage module.

Each function takes one cheetah's arrays, shaped as MuJoCo's (qpos (9,), cdof (9, 3), M (9, 9),
...), or many cheetahs' with the batch as *trailing* axes (qpos (9, B), M (9, 9, B)): the code
indexes structure axes from the front and reduces over named structure axes only, so it is the
same code either way. Batch-last is the fast layout for a CPU: every per-env scalar of the
physics is then one contiguous (B,) vector, a structure index (x[3]) is a free slice, and XLA
fuses the arithmetic into long elementwise loops. (`jax.vmap` would put the batch first, where
every stack and index of a small per-env array becomes a strided copy; env.py routes vmap into
this layout.)
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np


def const(value, dtype, like) -> jnp.ndarray:
    """A model constant shaped to broadcast against `like`'s batch axes: `like` has the constant's
    structure axes first, then the batch."""
    array = jnp.asarray(np.asarray(value), dtype)
    return array.reshape(array.shape + (1,) * (like.ndim - array.ndim))


def stack(parts, axis: int = 0) -> jnp.ndarray:
    """jnp.stack after broadcasting the parts to one shape (constants and zeros meet batched values)."""
    return jnp.stack(jnp.broadcast_arrays(*parts), axis)


def take(x, indices) -> jnp.ndarray:
    """x[indices] along the first axis, for static indices."""
    return jnp.stack([x[int(i)] for i in indices])


def matrix(entries, batch: tuple, dtype) -> jnp.ndarray:
    """A dense matrix from nested lists of entries (None for a structural zero), batch last."""
    zero = jnp.zeros(batch, dtype)
    return jnp.stack([jnp.stack([zero if e is None else jnp.broadcast_to(e, batch) for e in row]) for row in entries])
