"""glibc's rand() (random_r, TYPE_3: the additive generator behind srand/rand) in JAX.

PufferLib's Pong picks each serve's vertical direction with `rand() % 2`. To give the same serves
for the same seeds, each JAX env carries its own copy of the generator that C's process-global
rand() runs.

glibc's TYPE_3 state is 31 words r[0..30]. srandom(seed) fills them with the Park-Miller LCG
r[i] = 16807 * r[i-1] mod (2^31 - 1) (computed with Schrage's trick in int32), sets the front pointer
3 words ahead of the rear one, then discards 310 outputs. Each random_r() does
    r[f] += r[r]  (mod 2^32);  output = r[f] >> 1;  f, r advance by one, wrapping at 31.
Read as a sequence, that is the lagged Fibonacci recurrence x[n] = x[n-31] + x[n-3] over a window
holding the last 31 words, oldest first; the window starts as r rotated left by 3.

The env needs only `rand() % 2`, which is bit 1 of x[n]. Bits 0 and 1 of a sum depend only on bits
0 and 1 of its terms (carries move upward only), so after seeding, the env keeps just those two bits
of each of the 31 words, packed in two uint32 registers (`ServeBits`), and advances them with a
handful of bit operations. tests/l1_glibc_random.py checks both forms against libc's own rand().
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct
from jax import lax

DEGREE = 31
SEPARATION = 3
DISCARDED_AT_SEED = 10 * DEGREE
_LAG_INDEX = DEGREE - SEPARATION  # x[n-3] sits at window index 28


def _as_c_unsigned(seed) -> jax.Array:
    if isinstance(seed, int):  # C's srand takes an unsigned int: Python ints wrap modulo 2^32
        seed = np.uint32(seed % 2**32)
    return jnp.asarray(seed).astype(jnp.uint32)


def _park_miller_words(seed) -> jax.Array:
    """r[0..30] as srandom_r writes them: int32 arithmetic, truncating division as in C."""
    seed = _as_c_unsigned(seed)
    word0 = jnp.where(seed == 0, jnp.uint32(1), seed).astype(jnp.int32)

    def next_word(word, _):
        hi = lax.div(word, jnp.int32(127773))
        lo = lax.rem(word, jnp.int32(127773))
        word = jnp.int32(16807) * lo - jnp.int32(2836) * hi
        word = jnp.where(word < 0, word + jnp.int32(2147483647), word)
        return word, word

    _, rest = lax.scan(next_word, word0, None, length=DEGREE - 1)
    return jnp.concatenate([word0[None], rest]).astype(jnp.uint32)


def _advance_window(window: jax.Array) -> tuple[jax.Array, jax.Array]:
    new = window[0] + window[_LAG_INDEX]
    return jnp.concatenate([window[1:], new[None]]), new


def srandom_window(seed) -> jax.Array:
    """The 31-word window after srand(seed): the state rand() draws from next."""
    window = jnp.roll(_park_miller_words(seed), -SEPARATION)
    window, _ = lax.scan(lambda w, _: _advance_window(w), window, None, length=DISCARDED_AT_SEED)
    return window


def rand_sequence(seed, count: int) -> jax.Array:
    """The first `count` values of rand() after srand(seed), as int32 (full generator)."""
    return _rand_sequence(_as_c_unsigned(seed), count)


@partial(jax.jit, static_argnames=("count",))
def _rand_sequence(seed, count: int) -> jax.Array:
    _, values = lax.scan(lambda w, _: _advance_window(w), srandom_window(seed), None, length=count)
    return (values >> 1).astype(jnp.int32)


@struct.dataclass
class ServeBits:
    """Bits 0 (`low`) and 1 (`high`) of the generator's 31 words; bit k of each register belongs to
    window word k (k = 0 oldest)."""

    low: jax.Array
    high: jax.Array


def serve_bits_from_window(window: jax.Array) -> ServeBits:
    weights = jnp.left_shift(jnp.uint32(1), jnp.arange(DEGREE, dtype=jnp.uint32))
    low = jnp.sum(jnp.where((window & 1) != 0, weights, 0), dtype=jnp.uint32)
    high = jnp.sum(jnp.where((window & 2) != 0, weights, 0), dtype=jnp.uint32)
    return ServeBits(low=low, high=high)


def seed_serve_bits(seed) -> ServeBits:
    """srand(seed), reduced to the two bits that rand() % 2 depends on."""
    return serve_bits_from_window(srandom_window(seed))


def next_rand_parity(bits: ServeBits) -> tuple[ServeBits, jax.Array]:
    """(state after one rand(), rand() % 2 as uint32)."""
    one = jnp.uint32(1)
    a0, a1 = bits.low & one, bits.high & one
    b0, b1 = (bits.low >> _LAG_INDEX) & one, (bits.high >> _LAG_INDEX) & one
    sum0 = a0 ^ b0
    sum1 = a1 ^ b1 ^ (a0 & b0)
    top = jnp.uint32(DEGREE - 1)
    advanced = ServeBits(low=(bits.low >> one) | (sum0 << top), high=(bits.high >> one) | (sum1 << top))
    return advanced, sum1
