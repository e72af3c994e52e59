"""L4 backends that train with the shared PPO: make_train on a JAX env, or the host loop over a
Gymnasium env, each returning a TrainOutcome that run_policy_transfer takes. What varies between envs
is only the env, the PPO config and how a policy is evaluated; those are the arguments here.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import jax
import numpy as np

from shared.ppo import PPOConfig, make_train, train_host
from shared.ppo.jax_loop import JaxEnvSpec

from .l4 import L4Backend, TrainOutcome

Evaluate = Callable[[Any, int], float]  # (policy params, evaluation seed) -> the policy's score


def training_curve(config: PPOConfig, returns) -> tuple[np.ndarray, np.ndarray]:
    """(env steps at the end of each update, that update's mean episode return), for TrainOutcome."""
    steps = (np.arange(len(returns)) + 1) * config.batch_size
    return steps, np.asarray(returns, dtype=np.float64)


def _ignore_update(update_index, mean_return) -> None:
    pass


class CompiledPPO:
    """make_train for one config and env, jitted once and then run for every seed: the seed is the
    key train takes, so a new seed compiles nothing (a large env's step takes minutes to compile).
    The progress callback is compiled in, so it forwards to the bar of the run in progress."""

    def __init__(self, config: PPOConfig, env: JaxEnvSpec):
        self.config = config
        self._on_update: Callable[[Any, Any], None] = _ignore_update
        self._train = jax.jit(make_train(config, env, progress=lambda i, r: self._on_update(i, r)))

    def train(self, seed: int, description: str, show_progress: bool = True) -> TrainOutcome:
        from shared.ppo.progress import TrainingProgress

        config = self.config
        with TrainingProgress(description, config.num_updates, enabled=show_progress) as bar:
            self._on_update = lambda i, r: bar.advance(config.batch_size, r)
            out = jax.block_until_ready(self._train(jax.random.PRNGKey(seed)))
        steps, returns = training_curve(config, np.asarray(out["metrics"]["episode_return"]))
        return TrainOutcome(out["train_state"].params, steps, returns)


def jax_ppo_backend(name: str, trainer: Callable[[], CompiledPPO], evaluate: Evaluate,
                    show_progress: bool = True) -> L4Backend:
    """trainer is asked for at each seed's training, not here, so that making the backend compiles
    nothing; the env caches it, so every seed runs the one compiled function."""
    return L4Backend(name, lambda seed: trainer().train(seed, f"PPO {name} seed {seed}", show_progress), evaluate)


def host_ppo_backend(name: str, config: PPOConfig, make_env: Callable[[], Any], evaluate: Evaluate,
                     show_progress: bool = True) -> L4Backend:
    """PPO's host loop over config.num_envs of make_env()'s Gymnasium envs, stepped in this process."""

    def train(seed: int) -> TrainOutcome:
        import gymnasium

        seeded = dataclasses.replace(config, seed=seed)
        # SAME_STEP: the observation returned with done is already the next episode's, as train_host
        # (and the JAX env's auto-reset) expects
        vector_env = gymnasium.vector.SyncVectorEnv([make_env] * seeded.num_envs,
                                                    autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP)
        try:
            train_state, metrics, _ = train_host(seeded, vector_env, show_progress=show_progress,
                                                 name=f"{name} seed {seed}")
        finally:
            vector_env.close()
        steps, returns = training_curve(seeded, metrics["episode_return"])
        return TrainOutcome(train_state.params, steps, returns)

    return L4Backend(name, train, evaluate)


def small_budget_reason(host: str, host_config: PPOConfig, jax_name: str, jax_config: PPOConfig) -> str:
    """run_policy_transfer's training_not_compared for a host backend too slow to train with the JAX
    backend's budget: `host` (as the sentence names it) trains with host_config, jax_name with jax_config."""
    return (f"{host} trains with a small budget ({host_config.num_updates * host_config.batch_size:,} decisions "
            f"per seed, {jax_name} {jax_config.num_updates * jax_config.batch_size:,})")
