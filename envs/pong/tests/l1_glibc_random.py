"""L1, serve_rng: the JAX generator against libc's own srand()/rand() (the real reference)."""

import jax
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from envs.pong.jax import glibc_random
from envs.pong.tests.components import PONG
from envs.pong.tests.harness import libc_rand_sequence
from shared.verification.strategies import seeds

SEED_SERVE_BITS = jax.jit(glibc_random.seed_serve_bits)
@PONG.covers("serve_rng")
@settings(max_examples=60, deadline=None)
@given(seed=seeds())
def test_full_generator_equals_libc(seed):
    expected = libc_rand_sequence(seed, 100)
    assert np.asarray(glibc_random.rand_sequence(seed, 100)).tolist() == expected


@PONG.covers("serve_rng")
@settings(max_examples=40, deadline=None)
@given(seed=seeds(), draws=st.integers(1, 400))
def test_two_bit_registers_give_rand_mod_2(seed, draws):
    expected = [value % 2 for value in libc_rand_sequence(seed, draws)]
    bits = SEED_SERVE_BITS(np.uint32(seed % 2**32))
    _, parities = jax.lax.scan(lambda b, _: glibc_random.next_rand_parity(b), bits, None, length=draws)
    assert np.asarray(parities).tolist() == expected


@PONG.covers("serve_rng")
def test_seed_zero_is_seed_one():
    # glibc's srandom_r replaces a zero seed by 1
    assert libc_rand_sequence(0, 5) == libc_rand_sequence(1, 5)
    assert np.asarray(glibc_random.rand_sequence(0, 5)).tolist() == libc_rand_sequence(1, 5)


@PONG.covers("serve_rng")
def test_negative_c_int_seed_wraps_like_unsigned():
    assert np.asarray(glibc_random.rand_sequence(-7, 10)).tolist() == libc_rand_sequence(2**32 - 7, 10)
