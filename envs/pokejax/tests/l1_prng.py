"""L1: Showdown's PRNG in JAX (envs/pokejax/jax/prng.py) against Showdown's own sim/prng.ts.

Both generators, seeds drawn by hypothesis, mixed sequences of raw draws, random(n) and
random(m, n); every value and the seed string after the sequence must be equal."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envs.pokejax.jax import prng
from envs.pokejax.tests.components import POKEJAX

HEX = "0123456789abcdef"

sodium_seeds = st.one_of(
    st.sampled_from(["sodium," + "0" * 32, "sodium," + "f" * 64, "sodium,1"]),
    st.text(HEX, min_size=1, max_size=64).map(lambda h: "sodium," + h),
)
gen5_seeds = st.one_of(
    st.sampled_from(["gen5," + "0" * 16, "gen5," + "f" * 16]),
    st.text(HEX, min_size=16, max_size=16).map(lambda h: "gen5," + h),
)
draws = st.lists(
    st.one_of(
        st.just(()),
        st.integers(1, 2**16 - 1).map(lambda n: (n,)),
        st.sampled_from([(2,), (4,), (16,), (100,), (256,)]),
        st.tuples(st.integers(0, 1000), st.integers(1, 2**15)).map(lambda mn: (mn[0], mn[0] + mn[1])),
    ),
    min_size=1,
    max_size=40,
)


def _jax_draws(seed: str, sequence: list[tuple]) -> tuple[list[int], str]:
    kind, state = prng.parse_seed(seed)
    state = jnp.asarray(state)
    values = []
    for args in sequence:
        if len(args) == 0:
            state, value = prng.next_u32(kind, state)
        elif len(args) == 1:
            state, value = prng.random_below(kind, state, args[0])
        else:
            state, value = prng.random_range(kind, state, *args)
        values.append(int(value))
    return values, prng.format_seed(kind, np.asarray(state))


@POKEJAX.covers("prng")
@settings(max_examples=40, deadline=None)
@given(seed=st.one_of(sodium_seeds, gen5_seeds), sequence=draws)
def test_draws_equal_showdown(showdown, seed, sequence):
    expected_values, expected_seed = showdown.prng(seed, sequence)
    values, seed_after = _jax_draws(seed, sequence)
    assert values == expected_values, f"seed {seed}, draws {sequence}"
    assert seed_after == expected_seed


@POKEJAX.covers("prng")
@pytest.mark.parametrize("kind", ["sodium", "gen5"])
def test_jitted_vmapped_stream_equals_showdown(showdown, kind):
    """A batch of generators stepped 300 times under jit(vmap(scan)), as the battles will run them."""
    digits = 32 if kind == "sodium" else 16
    seeds = [f"{kind}," + format(i * 0x9E3779B97F4A7C15 % 16**digits, f"0{digits}x") for i in range(8)]
    states = jnp.asarray(np.stack([prng.parse_seed(s)[1] for s in seeds]))

    def stream(state):
        def draw(state, _):
            return prng.random_below(kind, state, 256)

        return jax.lax.scan(draw, state, None, length=300)

    final, values = jax.jit(jax.vmap(stream))(states)
    for i, seed in enumerate(seeds):
        expected_values, expected_seed = showdown.prng(seed, [(256,)] * 300)
        assert np.asarray(values[i]).tolist() == expected_values, seed
        assert prng.format_seed(kind, np.asarray(final[i])) == expected_seed


@POKEJAX.covers("prng")
@pytest.mark.parametrize("kind", ["sodium", "gen5"])
def test_skipped_draws_settle_where_showdown_is(showdown, kind):
    """A step's tail of draws whose values nothing reads (prng.skip) ends where Showdown's stream
    is after as many draws: from the prefetched buffer, past its end, and under jit(vmap) with
    a different count in every lane."""
    digits = 32 if kind == "sodium" else 16
    seeds = [f"{kind}," + format((i + 1) * 0x9E3779B97F4A7C15 % 16**digits, f"0{digits}x") for i in range(6)]
    used_and_skipped = [(0, 0), (0, 3), (2, 3), (4, 1), (3, 4), (1, 9)]  # capacity 5
    states = jnp.asarray(np.stack([prng.parse_seed(s)[1] for s in seeds]))

    def settle(state, used, skipped):
        draws = prng.prefetch(kind, state, 5)
        for index in range(5):
            draws, _ = prng.take_below(draws, 256, index < used)
        return prng.settle(kind, prng.skip(draws, skipped)), prng.skip(draws, skipped).overflowed

    used, skipped = (jnp.asarray(column) for column in zip(*used_and_skipped, strict=True))
    final, overflowed = jax.jit(jax.vmap(settle))(states, used, skipped)
    assert not np.asarray(overflowed).any()
    for i, (seed, (n_used, n_skipped)) in enumerate(zip(seeds, used_and_skipped, strict=True)):
        _, expected_seed = showdown.prng(seed, [()] * (n_used + n_skipped))
        assert prng.format_seed(kind, np.asarray(final[i])) == expected_seed, (seed, n_used, n_skipped)
    # a value read after a skip would come from the wrong place in the stream: flagged
    draws = prng.skip(prng.prefetch(kind, states[0], 5), 1)
    assert bool(prng.take_below(draws, 256)[0].overflowed)


@POKEJAX.covers("prng")
def test_chacha20_block_is_rfc7539():
    """RFC 7539 section 2.3.2's test vector (key 00..1f, counter 1, its own nonce), through the same
    rounds: checks the cipher independently of Showdown."""
    key = jnp.asarray(np.frombuffer(bytes(range(32)), dtype="<u4").astype(np.uint32))
    nonce = np.frombuffer(bytes.fromhex("000000090000004a00000000"), dtype="<u4").astype(np.uint32)
    block = prng.chacha20_block(key, counter=1, nonce=nonce)
    expected = bytes.fromhex(
        "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
        "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e"
    )
    assert np.asarray(block).astype("<u4").tobytes() == expected


@POKEJAX.covers("prng")
@given(n=st.integers(1, 2**16 - 1), value=st.integers(0, 2**32 - 1))
def test_random_below_is_the_floor_of_the_product(n, value):
    # Showdown computes Math.floor(value * n / 2 ** 32) in doubles, exact here since value * n < 2^53
    assert int(prng.mulhi(jnp.uint32(value), jnp.uint32(n))) == (value * n) >> 32


@POKEJAX.covers("prng")
@pytest.mark.parametrize(
    "seed", ["sodium,xyz", "sodium," + "0" * 65, "gen5,123", "gen5,zzzzzzzzzzzzzzzz", "1,2,3,4", "", "chacha,00"]
)
def test_bad_seed_strings_are_refused(seed):
    with pytest.raises(ValueError, match="seed"):
        prng.parse_seed(seed)


@POKEJAX.covers("prng")
def test_seed_strings_round_trip():
    assert prng.format_seed(*prng.parse_seed("sodium," + "ab" * 32)) == "sodium," + "ab" * 32
    # Showdown prints gen5 seeds as four decimal 16-bit words
    assert prng.format_seed(*prng.parse_seed("gen5,0001000200030004")) == "1,2,3,4"
