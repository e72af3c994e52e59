"""Gen 1 stats, HP and PP as Showdown computes them (Battle.statModify, calculatePP, and the
Pokemon constructor's clamping), on int32 arrays so that whole teams compute at once.

Showdown represents a Gen 1 DV d as the even IV 2d: an IV is clamped to 0-31 and its low bit
cleared; stat experience (EVs) is clamped to 0-255 and enters as floor(ev / 4).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

PP_UPS = 3  # Showdown gives every Gen 1 move three PP Ups


def normalise_ivs(ivs: jax.Array) -> jax.Array:
    return jnp.clip(ivs, 0, 31) & 30


def normalise_evs(evs: jax.Array) -> jax.Array:
    return jnp.clip(evs, 0, 255)


def max_hp(base: jax.Array, iv: jax.Array, ev: jax.Array, level: jax.Array) -> jax.Array:
    core = 2 * base + normalise_ivs(iv) + normalise_evs(ev) // 4 + 100
    return core * level // 100 + 10


def other_stat(base: jax.Array, iv: jax.Array, ev: jax.Array, level: jax.Array) -> jax.Array:
    core = 2 * base + normalise_ivs(iv) + normalise_evs(ev) // 4
    return core * level // 100 + 5


def stats(base: jax.Array, ivs: jax.Array, evs: jax.Array, level: jax.Array) -> jax.Array:
    """[..., 5] in tables.STAT_NAMES order (hp, atk, def, spa, spe): HP from the first column,
    the others from theirs; level broadcasts over the last axis."""
    level = jnp.asarray(level)[..., None]
    hp = max_hp(base[..., :1], ivs[..., :1], evs[..., :1], level)
    rest = other_stat(base[..., 1:], ivs[..., 1:], evs[..., 1:], level)
    return jnp.concatenate([hp, rest], axis=-1)


def max_pp(base_pp: jax.Array) -> jax.Array:
    """calculatePP(move, 3): base * 8 / 5, and in Gens 1-2 a 40-PP move loses one PP per PP Up (61)."""
    pp = base_pp * (5 + PP_UPS) // 5
    return jnp.where(base_pp == 40, pp - PP_UPS, pp)
