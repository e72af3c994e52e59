"""The one random stream both TCG engines draw from (RULES.md §7).

A counter-based generator on uint32 arithmetic only, so that NumPy here and JAX in `envs/tcgjax/jax`
compute the same numbers without 64-bit support: draw number `n` of a game is

    mix(mix(n ^ key0) + key1)        (all uint32, wrapping)

where `mix` is the `lowbias32` integer hash (Chris Wellons' hash-prospector: xor-shift 16, multiply
0x7feb352d, xor-shift 15, multiply 0x846ca68b, xor-shift 16) and the two keys come from the game seed.
Each game keeps one counter; every draw uses the next value. The engines consume draws in the order
RULES.md §7 asks for, written down in `envs/tcgjax/README.md` ("Randomness contract").

Derived draws:
- a coin is heads when the draw's top bit is 0;
- `below(n)` is `draw % n` (n <= 2**8 here, so the bias is below n / 2**32 < 6e-8 and identical in
  both engines);
- a shuffle is Fisher-Yates from the last position down: for i = len-1 .. 1, swap i with below(i + 1).
"""

from __future__ import annotations

import numpy as np

MASK32 = 0xFFFFFFFF
SEED_SALT = 0x9E3779B9  # keeps key1 apart from key0 when the seed's two halves are equal


def mix32(x: int) -> int:
    """lowbias32 on a Python int taken as uint32."""
    x &= MASK32
    x ^= x >> 16
    x = (x * 0x7FEB352D) & MASK32
    x ^= x >> 15
    x = (x * 0x846CA68B) & MASK32
    x ^= x >> 16
    return x


def mix32_array(x: np.ndarray) -> np.ndarray:
    """lowbias32 over a uint32 array (NumPy wraps uint32 products, as JAX does)."""
    x = np.asarray(x, dtype=np.uint32)
    with np.errstate(over="ignore"):  # the wrap-around is the point
        x = x ^ (x >> np.uint32(16))
        x = x * np.uint32(0x7FEB352D)
        x = x ^ (x >> np.uint32(15))
        x = x * np.uint32(0x846CA68B)
        return x ^ (x >> np.uint32(16))


def seed_keys(seed: int) -> tuple[int, int]:
    """The game's two keys from a seed in [0, 2**64)."""
    if not 0 <= int(seed) < 2**64:
        raise ValueError(f"seed must be in [0, 2**64), got {seed}")
    low, high = int(seed) & MASK32, (int(seed) >> 32) & MASK32
    return mix32(low), mix32(high ^ SEED_SALT)


def draw_at(keys: tuple[int, int], counter: int) -> int:
    """Draw number `counter` of the stream with these keys."""
    return mix32((mix32(counter ^ keys[0]) + keys[1]) & MASK32)


class Stream:
    """A game's stream: keys and a counter, so a saved game resumes its randomness exactly."""

    def __init__(self, seed: int, counter: int = 0):
        self.seed = int(seed)
        self.keys = seed_keys(seed)
        self.counter = int(counter)

    def draw(self) -> int:
        value = draw_at(self.keys, self.counter)
        self.counter = (self.counter + 1) & MASK32
        return value

    def coin(self) -> bool:
        """True for heads."""
        return (self.draw() >> 31) == 0

    def below(self, n: int) -> int:
        if n < 1:
            raise ValueError(f"below(n) needs n >= 1, got {n}")
        return self.draw() % n

    def shuffle(self, items: list) -> None:
        """Shuffle in place (Fisher-Yates from the end; one draw per position but the first)."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]

    def coins_until_tails(self) -> int:
        """Heads before the first tails."""
        heads = 0
        while self.coin():
            heads += 1
        return heads
