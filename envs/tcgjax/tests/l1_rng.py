"""L1: the shared random stream (RULES.md §7). The Python stream, its NumPy array form and the JAX
one give the same numbers; coins, below(n) and shuffles are fair (tested statistically with bounds
of 5 standard deviations, or a chi-square at p < 1e-6, so that a correct generator fails with
negligible probability and a biased one fails for sure)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from envs.tcgjax.jax.rng import Stream as JaxStream
from envs.tcgjax.jax.rng import seed_keys as jax_seed_keys
from envs.tcgjax.reference.rng import Stream, draw_at, mix32, mix32_array, seed_keys
from envs.tcgjax.tests.components import TCGJAX

SEEDS = [0, 1, 2, 12345, 2**31 - 1, 2**32, 2**32 + 7, 2**63 + 11, 2**64 - 1]


@TCGJAX.covers("rng")
def test_mix32_is_a_bijection_on_a_sample():
    """lowbias32 is invertible (xor-shifts and odd multipliers): distinct inputs, distinct outputs."""
    inputs = np.arange(200_000, dtype=np.uint32) * np.uint32(2654435761)
    assert len(np.unique(mix32_array(inputs))) == len(np.unique(inputs))


@TCGJAX.covers("rng")
def test_python_numpy_and_jax_agree():
    counters = np.arange(0, 3000, dtype=np.uint32)
    for seed in SEEDS:
        keys = seed_keys(seed)
        python = [draw_at(keys, int(c)) for c in counters]
        array = mix32_array(mix32_array(counters ^ np.uint32(keys[0])) + np.uint32(keys[1]))
        jkeys = jax_seed_keys(jnp.uint32(seed & 0xFFFFFFFF), jnp.uint32(seed >> 32))
        jax_values = np.asarray(JaxStream.draw(jnp.stack(jkeys), jnp.asarray(counters))[0])
        assert python == array.tolist() == jax_values.tolist()
        assert mix32(keys[0]) == int(mix32_array(np.uint32(keys[0])))


@TCGJAX.covers("rng")
@pytest.mark.parametrize("seed", SEEDS[:5])
def test_jax_shuffle_and_until_tails_match_python(seed):
    stream = Stream(seed)
    jkeys = jnp.stack(jax_seed_keys(jnp.uint32(seed & 0xFFFFFFFF), jnp.uint32(seed >> 32)))
    counter = jnp.uint32(0)
    for length in (20, 13, 1, 0, 7):
        items = list(range(100, 120))
        head = items[:length]
        stream.shuffle(head)
        shuffled, counter = JaxStream.shuffle(jkeys, counter, jnp.arange(100, 120), length)
        assert np.asarray(shuffled).tolist() == head + items[length:]
        heads = stream.coins_until_tails()
        jax_heads, counter = JaxStream.coins_until_tails(jkeys, counter)
        assert int(jax_heads) == heads
        assert int(counter) == stream.counter


@TCGJAX.covers("rng")
def test_an_inactive_draw_leaves_the_counter():
    jkeys = jnp.stack(jax_seed_keys(jnp.uint32(3), jnp.uint32(0)))
    _, counter = JaxStream.coin(jkeys, jnp.uint32(5), active=False)
    assert int(counter) == 5
    _, counter = JaxStream.coins_until_tails(jkeys, jnp.uint32(5), active=False)
    assert int(counter) == 5


@TCGJAX.covers("rng")
def test_coins_are_fair():
    stream = Stream(99)
    n = 200_000
    heads = sum(stream.coin() for _ in range(n))
    assert abs(heads - n / 2) < 5 * (n / 4) ** 0.5


@TCGJAX.covers("rng")
@pytest.mark.parametrize("n", [2, 3, 5, 20])
def test_below_is_uniform(n):
    from scipy.stats import chisquare

    stream = Stream(7 + n)
    counts = np.bincount([stream.below(n) for _ in range(40_000)], minlength=n)
    assert counts.shape == (n,)
    assert chisquare(counts).pvalue > 1e-6


@TCGJAX.covers("rng")
def test_shuffle_puts_each_card_anywhere_uniformly():
    from scipy.stats import chisquare

    stream = Stream(2024)
    positions = np.zeros((8, 8), int)
    for _ in range(20_000):
        items = list(range(8))
        stream.shuffle(items)
        for position, item in enumerate(items):
            positions[item, position] += 1
    for item in range(8):
        assert chisquare(positions[item]).pvalue > 1e-6


@TCGJAX.covers("rng")
def test_different_seeds_give_different_streams_and_bad_seeds_fail():
    firsts = {Stream(seed).draw() for seed in range(1000)}
    assert len(firsts) > 990
    with pytest.raises(ValueError, match="seed"):
        Stream(-1)
    with pytest.raises(ValueError, match="seed"):
        Stream(2**64)
    with pytest.raises(ValueError, match="below"):
        Stream(0).below(0)
