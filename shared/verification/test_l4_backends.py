"""The PPO-trained L4 backends on a one-step bandit (action 1 pays 1, action 0 pays 0): each loop
trains a policy that picks action 1, with one compile for every seed on JAX and every env stepped,
seeded and closed on the host."""

import functools

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from shared.ppo import PPOConfig
from shared.ppo.core import make_network
from shared.ppo.jax_loop import JaxEnvSpec
from shared.verification.l4_backends import (
    CompiledPPO,
    host_ppo_backend,
    jax_ppo_backend,
    small_budget_reason,
    training_curve,
)

CONFIG = PPOConfig(total_timesteps=16 * 16 * 30, num_envs=16, num_steps=16, learning_rate=1e-2, ent_coef=0.0)


class TracedBandit:
    """The bandit as a gymnax-style env that counts how often JAX traces its step (once per compile)."""

    def __init__(self):
        self.traces = 0

    def reset(self, key, params):
        return jnp.zeros(2), jnp.int32(0)

    def step(self, key, state, action, params):
        self.traces += 1
        return jnp.zeros(2), state, (action == 1).astype(jnp.float32), jnp.bool_(True), {}

    def spec(self) -> JaxEnvSpec:
        return JaxEnvSpec("bandit", self.reset, self.step, None, (2,), 2)


class Bandit(gymnasium.Env):
    """The bandit as a Gymnasium env that records its resets' seeds, its steps and whether it was closed."""

    observation_space = gymnasium.spaces.Box(0.0, 1.0, (2,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self):
        self.reset_seeds, self.steps, self.closed = [], 0, False

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.reset_seeds.append(seed)
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.steps += 1
        return np.zeros(2, np.float32), float(action == 1), True, False, {}

    def close(self):
        self.closed = True


def greedy_payoff(params) -> float:
    """What the greedy policy earns on the bandit: 1 if it picks action 1."""
    logits, _ = make_network(CONFIG, 2).apply(params, jnp.zeros((1, 2)))
    return float(jnp.argmax(logits[0]) == 1)


class RecordedProgress:
    """Stands in for TrainingProgress: keeps every bar's description and the steps it was advanced by."""

    bars: list = []

    def __init__(self, description, total_updates, enabled=True):
        self.description, self.total_updates, self.advances = description, total_updates, []
        RecordedProgress.bars.append(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def advance(self, steps, mean_return):
        self.advances.append(steps)


def test_training_curve_counts_env_steps_per_update_and_keeps_updates_without_episodes():
    config = PPOConfig(num_envs=4, num_steps=8, total_timesteps=96)
    steps, returns = training_curve(config, [0.5, float("nan"), 1.0])
    np.testing.assert_array_equal(steps, [32, 64, 96])
    assert returns.dtype == np.float64 and np.isnan(returns[1]) and returns[2] == 1.0


def test_jax_backend_compiles_once_and_each_seed_feeds_its_own_progress_bar(monkeypatch):
    import shared.ppo.progress

    monkeypatch.setattr(shared.ppo.progress, "TrainingProgress", RecordedProgress)
    monkeypatch.setattr(RecordedProgress, "bars", [])
    env = TracedBandit()
    trainer = functools.cache(lambda: CompiledPPO(CONFIG, env.spec()))
    backend = jax_ppo_backend("toy", trainer, lambda params, seed: greedy_payoff(params), show_progress=False)
    assert env.traces == 0  # making the backend compiles nothing
    first = backend.train(0)
    traces = env.traces
    second = backend.train(1)
    assert traces > 0 and env.traces == traces  # the second seed ran the first seed's compiled function
    assert [bar.description for bar in RecordedProgress.bars] == ["PPO toy seed 0", "PPO toy seed 1"]
    assert [bar.advances for bar in RecordedProgress.bars] == [[CONFIG.batch_size] * 30] * 2
    np.testing.assert_array_equal(first.curve_steps, np.arange(1, 31) * CONFIG.batch_size)
    assert first.curve_returns.shape == (30,) and first.curve_returns[-3:].mean() > 0.95
    # the seed is the training key: another seed, another initial network
    first_kernel, second_kernel = (jax.tree.leaves(outcome.policy)[-1] for outcome in (first, second))
    assert not np.array_equal(first_kernel, second_kernel)
    assert backend.evaluate(first.policy, 0) == 1.0


def test_host_backend_steps_every_env_the_same_step_it_resets_and_closes_them():
    envs = []

    def make_env():
        envs.append(Bandit())
        return envs[-1]

    backend = host_ppo_backend("toy host", CONFIG, make_env, lambda params, seed: greedy_payoff(params),
                               show_progress=False)
    outcome = backend.train(7)
    assert len(envs) == CONFIG.num_envs and all(env.closed for env in envs)
    # SAME_STEP auto-reset: every call is a real step (NEXT_STEP would spend every other one resetting)
    assert all(env.steps == CONFIG.num_steps * CONFIG.num_updates for env in envs)
    assert envs[0].reset_seeds[0] == 7  # the seed reaches the vector env's reset
    np.testing.assert_array_equal(outcome.curve_steps, np.arange(1, 31) * CONFIG.batch_size)
    assert outcome.curve_returns[-3:].mean() > 0.95 and backend.evaluate(outcome.policy, 0) == 1.0


def test_host_backend_closes_its_envs_when_training_fails():
    envs = []

    class Broken(Bandit):
        def step(self, action):
            raise RuntimeError("the env broke")

    def make_env():
        envs.append(Broken())
        return envs[-1]

    backend = host_ppo_backend("broken", CONFIG, make_env, lambda params, seed: 0.0, show_progress=False)
    with pytest.raises(RuntimeError, match="the env broke"):
        backend.train(0)
    assert envs and all(env.closed for env in envs)


def test_the_small_budget_reason_counts_the_decisions_each_backend_trained_on():
    # 100 decisions asked make one whole update of 64: the reason counts what PPO runs, not what was asked
    small, large = PPOConfig(total_timesteps=100, num_envs=8, num_steps=8), PPOConfig(total_timesteps=2_000_000)
    assert small_budget_reason("the reference", small, "JAX", large) == \
        "the reference trains with a small budget (64 decisions per seed, JAX 1,998,848)"
