"""shuffle.py against JAX itself: the same permutations as jax.random.permutation, the same order as
a stable lax.sort_key_val (ties included), and the same PPO update."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from shared.ppo import core
from shared.ppo.shuffle import permutation, shuffle_rounds, stable_argsort_uint32


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 128, 1000, 8192, 65536, 100_003])
def test_permutation_is_jax_random_permutation(n):
    compiled = jax.jit(permutation, static_argnums=1)
    for seed in range(3):
        key = jax.random.PRNGKey(1000 * seed + n)
        expected = jax.random.permutation(key, n)
        ours = compiled(key, n)
        assert ours.dtype == expected.dtype
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(expected))


def test_the_sizes_cover_one_two_and_three_rounds():
    assert {shuffle_rounds(n) for n in (1, 2, 1000, 8192, 65536, 100_003)} == {0, 1, 2}
    assert shuffle_rounds(2**22) == 3  # (stable_argsort_uint32's 4-pass case, 2**22, is checked below)


@pytest.mark.parametrize("n,high", [(5, 2), (100, 8), (8192, 8), (8192, 2**32), (70_000, 3), (2**22, 2**32)])
def test_stable_argsort_is_a_stable_sort_key_val(n, high):
    # few distinct keys (many ties, where stability decides) and full-range keys
    if high == 2**32:
        keys = jax.random.bits(jax.random.PRNGKey(n), (n,), jnp.uint32)
    else:
        keys = jax.random.randint(jax.random.PRNGKey(n), (n,), 0, high).astype(jnp.uint32)
    expected = lax.sort_key_val(keys, jnp.arange(n, dtype=jnp.int32))[1]
    np.testing.assert_array_equal(np.asarray(jax.jit(stable_argsort_uint32)(keys)), np.asarray(expected))


def test_the_ppo_update_is_the_one_with_jax_random_permutation(monkeypatch):
    config = core.PPOConfig(num_envs=8, num_steps=16, total_timesteps=8 * 16 * 4, num_minibatches=4)
    network = core.make_network(config, 3)
    state = core.make_train_state(config, network, jax.random.PRNGKey(0), (5,))
    keys = jax.random.split(jax.random.PRNGKey(1), 4)
    transitions = core.Transition(
        done=jax.random.bernoulli(keys[0], 0.05, (16, 8)), action=jax.random.randint(keys[1], (16, 8), 0, 3),
        value=jax.random.normal(keys[2], (16, 8)), reward=jax.random.normal(keys[3], (16, 8)),
        log_prob=jnp.full((16, 8), -1.1), obs=jax.random.normal(keys[0], (16, 8, 5)))

    def run():
        return core.update(state, transitions, jnp.zeros((8, 5)), jax.random.PRNGKey(2), config)[0].params

    ours = run()
    monkeypatch.setattr(core, "shuffled_positions", jax.random.permutation)
    theirs = run()
    for a, b in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
