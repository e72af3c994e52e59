"""reference/rng.py's stream in JAX, on uint32 only (bit-equal to the NumPy / Python one): a game's
keys and counter live in its state, and every draw advances the counter by one."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from envs.tcgjax.reference.rng import SEED_SALT

U32 = jnp.uint32


def mix32(x):
    x = jnp.asarray(x, U32)
    x = x ^ (x >> U32(16))
    x = x * U32(0x7FEB352D)
    x = x ^ (x >> U32(15))
    x = x * U32(0x846CA68B)
    return x ^ (x >> U32(16))


def seed_keys(seed_low, seed_high):
    """The two keys from a seed given as its low and high 32 bits (reference/rng.seed_keys)."""
    return mix32(seed_low), mix32(jnp.asarray(seed_high, U32) ^ U32(SEED_SALT))


def draw_at(key0, key1, counter):
    return mix32(mix32(jnp.asarray(counter, U32) ^ key0) + key1)


class Stream:
    """Functional helpers over (key0, key1, counter): each returns (value, new counter)."""

    @staticmethod
    def draw(keys, counter, active=True):
        """One draw; the counter moves only where `active` (so a draw can be skipped under vmap)."""
        value = draw_at(keys[0], keys[1], counter)
        return value, counter + jnp.asarray(active, U32)

    @staticmethod
    def coin(keys, counter, active=True):
        value, counter = Stream.draw(keys, counter, active)
        return (value >> U32(31)) == U32(0), counter

    @staticmethod
    def below(keys, counter, n, active=True):
        value, counter = Stream.draw(keys, counter, active)
        return (value % jnp.maximum(jnp.asarray(n, U32), U32(1))).astype(jnp.int32), counter

    @staticmethod
    def coins_until_tails(keys, counter, active=True):
        """Heads before the first tails (no draw at all when not active)."""

        def cond(carry):
            _, _, going = carry
            return going

        def body(carry):
            heads, counter, _ = carry
            head, counter = Stream.coin(keys, counter)
            return heads + head.astype(jnp.int32), counter, head

        heads, counter, _ = jax.lax.while_loop(cond, body, (jnp.int32(0), counter, jnp.asarray(active)))
        return heads, counter

    @staticmethod
    def shuffle(keys, counter, items, length, active=True):
        """Fisher-Yates over items[:length] from the last position down (reference/rng.Stream.shuffle)."""
        size = items.shape[0]

        def body(k, carry):
            items, counter = carry
            i = size - 1 - k
            live = jnp.logical_and(jnp.logical_and(i < length, i >= 1), active)
            j, counter = Stream.below(keys, counter, i + 1, live)
            # selects, not items[j] and .at[j]: under vmap j differs per game, and a gather or a
            # scatter at per-game indices runs element by element on CPU
            position = jnp.arange(size)
            a = items[i]
            b = jnp.sum(jnp.where(position == j, items, jnp.zeros((), items.dtype)), dtype=items.dtype)
            swapped = jnp.where(position == i, b, jnp.where(position == j, a, items))
            items = jnp.where(live, swapped, items)
            return items, counter

        return jax.lax.fori_loop(0, size - 1, body, (items, counter))
