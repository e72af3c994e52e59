"""Pokemon Showdown's PRNG (sim/prng.ts) in JAX, on uint32 only (no x64 mode needed).

Showdown picks the generator from the seed string:
  "sodium,<hex>"   SodiumRNG: libsodium's randombytes_buf_deterministic, i.e. ChaCha20 (RFC 7539:
                   32-bit block counter 0, 96-bit nonce "LibsodiumDRG") keyed by the 32-byte seed
                   (the hex, zero-padded on the right to 64 digits). Each draw encrypts 36 zero bytes:
                   keystream bytes 0-31 become the next seed, bytes 32-35 read big-endian are the
                   32-bit output. Showdown's default.
  "gen5,<16 hex>"  Gen5RNG: the 64-bit LCG x' = 0x5D588B656C078965 x + 0x269EC3 (mod 2^64), whose
                   output is the upper 32 bits of the new x.

The state is one uint32[8] array for both kinds (a pytree leaf that vmaps): the ChaCha20 key words
(little-endian, as the cipher reads the seed bytes), or for gen5 words 0-1 = the high and low halves
of x and the rest zero. The kind is static (a Python string), as it is per format in Showdown.

`random_below(n)` is Showdown's random(n) = floor(next * n / 2^32), exact for n < 2^16 (every use
in battle: 256, 100, 16, ...); `random_range(m, n)` is random(m, n).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

SODIUM = "sodium"
GEN5 = "gen5"
KINDS = (SODIUM, GEN5)
STATE_WORDS = 8

_SIGMA = (0x61707865, 0x3320646E, 0x79622D32, 0x6B206574)
_NONCE = np.frombuffer(b"LibsodiumDRG", dtype="<u4").astype(np.uint32)
_LCG_MUL = (0x5D588B65, 0x6C078965)  # (high, low) words
_LCG_ADD = 0x00269EC3
_MASK16 = 0xFFFF


# -- seeds (host side) ------------------------------------------------------------------------------


def parse_seed(seed: str) -> tuple[str, np.ndarray]:
    """(kind, uint32[8] state) of a Showdown seed string ("sodium,<hex>" or "gen5,<16 hex>")."""
    kind, _, rest = seed.partition(",")
    words = np.zeros(STATE_WORDS, dtype=np.uint32)
    if kind == SODIUM:
        if len(rest) > 64 or any(c not in "0123456789abcdefABCDEF" for c in rest):
            raise ValueError(f"a sodium seed is 'sodium,' and up to 64 hex digits, not {seed!r}")
        key = bytes.fromhex(rest.ljust(64, "0"))
        words[:] = np.frombuffer(key, dtype="<u4")
        return SODIUM, words
    if kind == GEN5:
        if len(rest) != 16 or any(c not in "0123456789abcdefABCDEF" for c in rest):
            raise ValueError(f"a gen5 seed is 'gen5,' and 16 hex digits, not {seed!r}")
        words[0] = int(rest[:8], 16)
        words[1] = int(rest[8:], 16)
        return GEN5, words
    raise ValueError(f"unrecognised PRNG seed {seed!r}: expected 'sodium,<hex>' or 'gen5,<16 hex>'")


def format_seed(kind: str, state: np.ndarray) -> str:
    """The seed string Showdown's getSeed() prints for this state."""
    words = np.asarray(state, dtype=np.uint32)
    if kind == SODIUM:
        return "sodium," + words.astype("<u4").tobytes().hex()
    if kind == GEN5:
        high, low = int(words[0]), int(words[1])
        parts = (high >> 16, high & _MASK16, low >> 16, low & _MASK16)
        return ",".join(str(p) for p in parts)
    raise ValueError(f"unknown PRNG kind {kind!r}")


# -- 32-bit arithmetic --------------------------------------------------------------------------------


def _u32(x: int) -> jax.Array:
    return jnp.uint32(x)


def mulhi(a: jax.Array, b: jax.Array) -> jax.Array:
    """The high 32 bits of the 64-bit product of two uint32, from 16-bit halves."""
    a_lo, a_hi = a & _MASK16, a >> 16
    b_lo, b_hi = b & _MASK16, b >> 16
    lo_lo = a_lo * b_lo
    hi_lo = a_hi * b_lo
    lo_hi = a_lo * b_hi
    middle = (lo_lo >> 16) + (hi_lo & _MASK16) + (lo_hi & _MASK16)
    return a_hi * b_hi + (hi_lo >> 16) + (lo_hi >> 16) + (middle >> 16)


def _rotl(x: jax.Array, n: int) -> jax.Array:
    return (x << n) | (x >> (32 - n))


# -- ChaCha20 -----------------------------------------------------------------------------------------


def _quarter_round(x: list, a: int, b: int, c: int, d: int) -> None:
    x[a] = x[a] + x[b]
    x[d] = _rotl(x[d] ^ x[a], 16)
    x[c] = x[c] + x[d]
    x[b] = _rotl(x[b] ^ x[c], 12)
    x[a] = x[a] + x[b]
    x[d] = _rotl(x[d] ^ x[a], 8)
    x[c] = x[c] + x[d]
    x[b] = _rotl(x[b] ^ x[c], 7)


def _double_round(_: int, words: tuple) -> tuple:
    x = list(words)
    _quarter_round(x, 0, 4, 8, 12)
    _quarter_round(x, 1, 5, 9, 13)
    _quarter_round(x, 2, 6, 10, 14)
    _quarter_round(x, 3, 7, 11, 15)
    _quarter_round(x, 0, 5, 10, 15)
    _quarter_round(x, 1, 6, 11, 12)
    _quarter_round(x, 2, 7, 8, 13)
    _quarter_round(x, 3, 4, 9, 14)
    return tuple(x)


def chacha20_block(key: jax.Array, counter: int = 0, nonce: np.ndarray = _NONCE) -> jax.Array:
    """The 16 keystream words of one ChaCha20 block (RFC 7539) for a uint32[8] key; libsodium's
    deterministic generator uses counter 0 and the nonce "LibsodiumDRG"."""
    initial = [_u32(s) for s in _SIGMA] + [key[i] for i in range(8)] + [_u32(counter)] + [_u32(int(n)) for n in nonce]
    mixed = jax.lax.fori_loop(0, 10, _double_round, tuple(initial))
    return jnp.stack([m + i for m, i in zip(mixed, initial, strict=False)])


def _byteswap(x: jax.Array) -> jax.Array:
    return (x >> 24) | ((x >> 8) & 0xFF00) | ((x << 8) & 0xFF0000) | (x << 24)


# -- the generators -----------------------------------------------------------------------------------


def _sodium_next(state: jax.Array) -> tuple[jax.Array, jax.Array]:
    block = chacha20_block(state)
    return block[:8], _byteswap(block[8])


def _gen5_next(state: jax.Array) -> tuple[jax.Array, jax.Array]:
    high, low = state[0], state[1]
    mul_high, mul_low = _u32(_LCG_MUL[0]), _u32(_LCG_MUL[1])
    product_low = low * mul_low
    new_low = product_low + _u32(_LCG_ADD)
    carry = (new_low < product_low).astype(jnp.uint32)
    new_high = mulhi(low, mul_low) + high * mul_low + low * mul_high + carry
    return state.at[0].set(new_high).at[1].set(new_low), new_high


def next_u32(kind: str, state: jax.Array) -> tuple[jax.Array, jax.Array]:
    """(state after, the 32-bit output) of one draw: Showdown's rng.next()."""
    if kind == SODIUM:
        return _sodium_next(state)
    if kind == GEN5:
        return _gen5_next(state)
    raise ValueError(f"unknown PRNG kind {kind!r}")


def random_below(kind: str, state: jax.Array, n: jax.Array | int) -> tuple[jax.Array, jax.Array]:
    """Showdown's random(n): an integer in [0, n) (as int32), for 1 <= n < 2^16."""
    state, value = next_u32(kind, state)
    return state, mulhi(value, jnp.asarray(n, dtype=jnp.uint32)).astype(jnp.int32)


def random_range(
    kind: str, state: jax.Array, low: jax.Array | int, high: jax.Array | int
) -> tuple[jax.Array, jax.Array]:
    """Showdown's random(m, n): an integer in [m, n), for 0 < n - m < 2^16."""
    span = jnp.asarray(high, dtype=jnp.int32) - jnp.asarray(low, dtype=jnp.int32)
    state, offset = random_below(kind, state, span)
    return state, offset + jnp.asarray(low, dtype=jnp.int32)


def random_chance(
    kind: str, state: jax.Array, numerator: jax.Array | int, denominator: jax.Array | int
) -> tuple[jax.Array, jax.Array]:
    """Showdown's randomChance(numerator, denominator): random(denominator) < numerator."""
    state, value = random_below(kind, state, denominator)
    return state, value < jnp.asarray(numerator, dtype=jnp.int32)


# -- a buffer of the next draws -------------------------------------------------------------------------


@struct.dataclass
class Draws:
    """The next `capacity` draws of a generator, computed up front, and how many have been used.

    Showdown's draws are sequential (each sodium draw rekeys ChaCha20 with the last block), and which
    of them happen depends on the battle; under vmap every conditional draw would otherwise cost a
    whole ChaCha20 block whether it happens or not. Computing the chain once per battle step and
    taking draws from it by index costs `capacity` blocks, however many branches ask.
    `overflowed` is set if a step asks for more draws than the buffer holds (a bug the tests check
    never happens: the state after `capacity` draws would be wrong).

    `pending` counts draws at the end of a step whose values nothing reads (speedSort shuffles of
    handlers whose order changes nothing): `settle` takes them from what is left of the buffer and
    makes the rest, rarely any, in a loop that under vmap runs as often as the batch's largest
    remainder, instead of prefetching blocks for the rare step that needs them all. Reading a
    value after skipping is a bug, and sets `overflowed` too."""

    states: jax.Array  # uint32[capacity + 1, 8]: the generator after i draws
    values: jax.Array  # uint32[capacity]: the 32-bit output of draw i
    used: jax.Array  # int32
    overflowed: jax.Array  # bool
    pending: jax.Array  # int32: draws skipped after `used`, made by `settle`

    @property
    def rng(self) -> jax.Array:
        """The generator state after the draws used so far."""
        return self.states[jnp.minimum(self.used, self.values.shape[0])]


def prefetch(kind: str, state: jax.Array, capacity: int) -> Draws:
    def one(state, _):
        next_state, value = next_u32(kind, state)
        return next_state, (next_state, value)

    _, (states, values) = jax.lax.scan(one, state, None, length=capacity)
    return Draws(
        states=jnp.concatenate([state[None], states]),
        values=values,
        used=jnp.int32(0),
        overflowed=jnp.bool_(False),
        pending=jnp.int32(0),
    )


def skip(draws: Draws, count: jax.Array | int) -> Draws:
    """`count` more draws whose values nothing reads (see Draws.pending)."""
    return draws.replace(pending=draws.pending + jnp.asarray(count, dtype=jnp.int32))


def settle(kind: str, draws: Draws) -> jax.Array:
    """The generator state after the used draws and the pending ones: from the buffer while it
    lasts (it usually does), then one draw at a time."""

    def draw(carry):
        state, left = carry
        return next_u32(kind, state)[0], left - 1

    capacity = draws.values.shape[0]
    used = jnp.minimum(draws.used, capacity)
    from_buffer = jnp.minimum(draws.pending, capacity - used)
    start = draws.states[used + from_buffer]
    state, _ = jax.lax.while_loop(lambda carry: carry[1] > 0, draw, (start, draws.pending - from_buffer))
    return state


def take_below(draws: Draws, n: jax.Array | int, condition: jax.Array | bool = True) -> tuple[Draws, jax.Array]:
    """random(n) from the buffer when `condition` (else no draw, and 0)."""
    capacity = draws.values.shape[0]
    condition = jnp.asarray(condition)
    value = mulhi(draws.values[jnp.minimum(draws.used, capacity - 1)], jnp.asarray(n, dtype=jnp.uint32))
    used = draws.used + condition.astype(jnp.int32)
    draws = draws.replace(
        used=used, overflowed=draws.overflowed | (used > capacity) | (condition & (draws.pending > 0))
    )
    return draws, jnp.where(condition, value.astype(jnp.int32), 0)


def take_range(
    draws: Draws, low: jax.Array | int, high: jax.Array | int, condition: jax.Array | bool = True
) -> tuple[Draws, jax.Array]:
    """random(low, high) from the buffer when `condition` (else no draw, and 0)."""
    span = jnp.asarray(high, dtype=jnp.int32) - jnp.asarray(low, dtype=jnp.int32)
    draws, offset = take_below(draws, span, condition)
    return draws, jnp.where(condition, offset + jnp.asarray(low, dtype=jnp.int32), 0)


def take_chance(
    draws: Draws, numerator: jax.Array | int, denominator: jax.Array | int, condition: jax.Array | bool = True
) -> tuple[Draws, jax.Array]:
    """randomChance(numerator, denominator) from the buffer when `condition` (else no draw, and False)."""
    draws, value = take_below(draws, denominator, condition)
    return draws, jnp.asarray(condition) & (value < jnp.asarray(numerator, dtype=jnp.int32))
