"""Observation and reward normalisation: the statistics against numpy over the same data, and both
PPO loops normalising alike."""

import dataclasses

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.ppo import PPOConfig, make_train, train_host
from shared.ppo.jax_loop import JaxEnvSpec
from shared.ppo.normalization import CLIP, RewardScaler, RunningMeanStd, normalize_observation, observe, scale_rewards
from shared.ppo.test_ppo import GuessVector, _guess_reset, _guess_step


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 20), min_size=1, max_size=6), st.integers(0, 2**31 - 1))
def test_running_statistics_equal_numpy_over_everything_seen(batch_sizes, seed):
    rng = np.random.default_rng(seed)
    batches = [rng.normal(rng.uniform(-5, 5), rng.uniform(0.1, 10), size=(n, 3)) for n in batch_sizes]
    stats = RunningMeanStd.create((3,))
    for batch in batches:
        stats = stats.update(jnp.asarray(batch, jnp.float32))
    everything = np.concatenate(batches).astype(np.float32).astype(np.float64)
    # the prior is a pseudo-population of weight 1e-4 with mean 0 and variance 1: the mixture's
    # moments, from sums rather than the update's pairwise merging
    weight = len(everything) + 1e-4
    mean = everything.sum(axis=0) / weight
    var = (1e-4 * 1.0 + np.square(everything).sum(axis=0)) / weight - np.square(mean)
    np.testing.assert_allclose(np.asarray(stats.mean), mean, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(stats.var), var, rtol=1e-3, atol=1e-5)
    assert float(stats.count) == pytest.approx(weight)


def test_observations_are_standardised_and_clipped():
    stats = RunningMeanStd(jnp.asarray([1.0, -2.0]), jnp.asarray([4.0, 0.25]), jnp.asarray(10.0))
    out = np.asarray(normalize_observation(stats, jnp.asarray([[3.0, -2.5], [1.0, 100.0]])))
    np.testing.assert_allclose(out, [[1.0, -1.0], [0.0, CLIP]], rtol=1e-6)
    assert normalize_observation(None, jnp.ones(2)) is not None  # no statistics: unchanged
    np.testing.assert_array_equal(np.asarray(observe(None, jnp.ones(2))[1]), [1.0, 1.0])


def test_rewards_are_divided_by_the_std_of_the_discounted_return_which_restarts_after_done():
    # one env, gamma 0.5, rewards 2, 2 (done), 4: discounted returns 2, 3, then 4 (restarted)
    scaler = RewardScaler.create(1)
    seen = []
    for reward, done in ((2.0, False), (2.0, True), (4.0, False)):
        scaler, scaled = scale_rewards(scaler, jnp.asarray([reward]), jnp.asarray([done]), 0.5)
        seen.append(float(scaled[0]))
    returns = np.asarray([2.0, 3.0, 4.0])
    assert float(scaler.stats.mean) == pytest.approx(returns.mean(), rel=1e-4)
    assert float(scaler.stats.var) == pytest.approx(returns.var(), rel=1e-3)
    assert seen[-1] == pytest.approx(4.0 / np.sqrt(returns.var()), rel=1e-3)
    assert float(scaler.discounted_return[0]) == 4.0


NORMALISED = PPOConfig(total_timesteps=8 * 16 * 3, num_envs=8, num_steps=16, num_minibatches=2, learning_rate=1e-2,
                       normalize_observations=True, normalize_rewards=True)


def test_both_loops_normalise_alike_bit_for_bit():
    spec = JaxEnvSpec("guess", _guess_reset, _guess_step, None, (2,), 2)
    fused = jax.jit(make_train(NORMALISED, spec))(jax.random.PRNGKey(NORMALISED.seed))["train_state"]
    options = lambda reset_key: {"keys": jax.random.split(reset_key, NORMALISED.num_envs)}  # noqa: E731
    host = train_host(NORMALISED, GuessVector(8), show_progress=False, reset_options=options)[0]
    plain = train_host(dataclasses.replace(NORMALISED, normalize_observations=False, normalize_rewards=False),
                       GuessVector(8), show_progress=False, reset_options=options)[0]

    def equal(a, b):
        return all(np.array_equal(x, y) for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True))

    assert equal(host.params, fused.params) and equal(host.observation_stats, fused.observation_stats)
    assert not equal(host.params, plain.params) and plain.observation_stats is None
    # every observation acted on was counted once: the one-hot means sum to 1
    assert float(fused.observation_stats.count) == pytest.approx(NORMALISED.total_timesteps + 1e-4)
    assert float(jnp.sum(fused.observation_stats.mean)) == pytest.approx(1.0, rel=1e-5)


class _ScaledBandit(gymnasium.vector.VectorEnv):
    """Pays 100 for action 1 and 0 for action 0, every step ends: returns stay in the env's units."""

    metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP}

    def __init__(self, n):
        self.num_envs = n
        self.single_observation_space = gymnasium.spaces.Box(-1, 1, (2,), np.float32)
        self.single_action_space = gymnasium.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        return np.full((self.num_envs, 2), 0.5, np.float32), {}

    def step(self, actions):
        ones = np.ones(self.num_envs, bool)
        return np.full((self.num_envs, 2), 0.5, np.float32), 100.0 * (np.asarray(actions) == 1), ones, ~ones, {}


def test_training_on_normalised_rewards_reports_and_learns_the_env_returns():
    config = dataclasses.replace(NORMALISED, total_timesteps=16 * 16 * 30, num_envs=16, ent_coef=0.0)
    _, metrics, _ = train_host(config, _ScaledBandit(16), show_progress=False)
    assert metrics["episode_return"][-3:].mean() > 95.0  # in the env's units, and learnt
