"""PureJaxRL-style PPO: `make_train(config, env)` returns one function that jits end to end
(scan over updates; inside, scan over steps of the vmapped env, GAE, epochs, minibatches)."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from .core import PPOConfig, Transition, make_network, make_train_state, update
from .networks import policy_functions
from .normalization import RewardScaler, normalize_observation, observe, scale_rewards


@dataclasses.dataclass(frozen=True)
class JaxEnvSpec:
    """A gymnax-style env: reset(key, params) -> (obs, state); step(key, state, action, params) ->
    (obs, state, reward, done, info), auto-resetting."""

    name: str
    reset: Callable
    step: Callable
    params: Any
    observation_shape: tuple[int, ...]
    num_actions: int  # or the action dimension, for continuous actions (PPOConfig.continuous)
    # step_batch(keys, states, actions, params): the same values as vmap(step) over the batch, for an env that
    # does better with the whole batch in hand (TCGJax: its opponent loop); make_train uses it if given
    step_batch: Optional[Callable] = None


@struct.dataclass
class EpisodeStats:
    """Running return and length per env, and those of each env's last finished episode."""

    episode_return: jax.Array
    episode_length: jax.Array


def make_train(config: PPOConfig, env: JaxEnvSpec, progress: Optional[Callable[[Any, Any], None]] = None):
    """`train(key)` -> {"train_state", "metrics"}; metrics["episode_return"][u] is the mean return of
    the episodes that finished during update u (NaN if none), in the env's own rewards even when
    PPOConfig.normalize_rewards scales what PPO learns from. `progress(update_index, mean_return)`
    is called from inside the jitted loop after every update (jax.debug.callback)."""
    network = make_network(config, env.num_actions)
    sample_action, _, _ = policy_functions(config.continuous)
    vmapped_reset = jax.vmap(env.reset, in_axes=(0, None))
    vmapped_step = env.step_batch or jax.vmap(env.step, in_axes=(0, 0, 0, None))

    def train(key: jax.Array):
        key, init_key, reset_key = jax.random.split(key, 3)
        train_state = make_train_state(config, network, init_key, env.observation_shape)
        obs, env_state = vmapped_reset(jax.random.split(reset_key, config.num_envs), env.params)
        stats = EpisodeStats(jnp.zeros(config.num_envs), jnp.zeros(config.num_envs, jnp.int32))
        scaler = RewardScaler.create(config.num_envs) if config.normalize_rewards else None

        def one_update(carry, update_index):
            train_state, env_state, stats, scaler, obs, key = carry

            def env_step(carry, _):
                train_state, env_state, stats, scaler, obs, key = carry
                key, action_key, step_key = jax.random.split(key, 3)
                observation_stats, policy_obs = observe(train_state.observation_stats, obs)
                train_state = train_state.replace(observation_stats=observation_stats)
                logits, value = network.apply(train_state.params, policy_obs)
                action, logp = sample_action(action_key, logits)
                next_obs, env_state, reward, done, _ = _step_the_policy_actions(
                    vmapped_step, jax.random.split(step_key, config.num_envs), env_state, action, env, config)
                scaler, train_reward = scale_rewards(scaler, reward, done, config.gamma)
                running = stats.episode_return + reward
                finished_return = jnp.where(done, running, jnp.nan)
                stats = EpisodeStats(jnp.where(done, 0.0, running), jnp.where(done, 0, stats.episode_length + 1))
                transition = Transition(done, action, value, train_reward, logp, policy_obs)
                return (train_state, env_state, stats, scaler, next_obs, key), (transition, finished_return)

            (train_state, env_state, stats, scaler, obs, key), (transitions, finished) = jax.lax.scan(
                env_step, (train_state, env_state, stats, scaler, obs, key), None, length=config.num_steps)
            key, update_key = jax.random.split(key)
            # the bootstrap value sees the last observation normalised but not yet counted: the next
            # rollout's first step counts it
            last_obs = normalize_observation(train_state.observation_stats, obs)
            train_state, losses = update(train_state, transitions, last_obs, update_key, config)
            mean_return = jnp.nanmean(finished)
            if progress is not None:
                jax.debug.callback(progress, update_index, mean_return)
            metrics = {"episode_return": mean_return, "episodes_finished": jnp.sum(~jnp.isnan(finished)), **losses}
            return (train_state, env_state, stats, scaler, obs, key), metrics

        (train_state, *_), metrics = jax.lax.scan(
            one_update, (train_state, env_state, stats, scaler, obs, key), jnp.arange(config.num_updates))
        return {"train_state": train_state, "metrics": metrics}

    return train


def _step_the_policy_actions(vmapped_step, keys, env_state, action, env: JaxEnvSpec, config: PPOConfig):
    """The env's batched step on the policy's actions. It runs while make_train is traced, so an env
    that cannot take those actions (most often config.continuous not matching the env's action
    space) fails here, named, instead of with a bare shape error from inside the env."""
    try:
        return vmapped_step(keys, env_state, action, env.params)
    except (TypeError, ValueError) as error:
        kind = ("continuous: float32 vectors of num_actions" if config.continuous
                else "discrete: one int32 index each")
        raise ValueError(f"{env.name}'s step failed on the policy's actions, shape {action.shape} ({kind}); "
                         f"does PPOConfig.continuous={config.continuous} match the env's action space? "
                         f"The env said: {type(error).__name__}: {error}") from error


def train_with_progress(config: PPOConfig, env: JaxEnvSpec, show: bool = True):
    """Compile and run make_train with a rich progress bar; returns (train_state, metrics as numpy)."""
    from .progress import TrainingProgress

    with TrainingProgress(f"PPO {env.name} (JAX)", config.num_updates, enabled=show) as bar:
        train = jax.jit(make_train(config, env, progress=lambda i, r: bar.advance(config.batch_size, r)))
        out = jax.block_until_ready(train(jax.random.PRNGKey(config.seed)))
    return out["train_state"], jax.tree.map(np.asarray, out["metrics"])


def measure_sps(config: PPOConfig, env: JaxEnvSpec, key: Optional[jax.Array] = None) -> dict:
    """make_train compiled ahead, run once untimed, then timed on a second run: agent steps per
    second (compile and first run excluded) and the compile seconds; what every env bench reports
    for its JAX PPO row.

    The first execution of a compiled program pays one-off costs (buffer allocation, thread pool
    start: ~60 ms on a 2-core VM, ten times a 3-update PPO run at one env); the host loop's figures
    leave out its first update likewise."""
    import time

    key = jax.random.PRNGKey(0) if key is None else key
    started = time.perf_counter()
    compiled = jax.jit(make_train(config, env)).lower(key).compile()
    compile_s = time.perf_counter() - started
    jax.block_until_ready(compiled(key))
    started = time.perf_counter()
    jax.block_until_ready(compiled(key))
    return {"sps": config.batch_size * config.num_updates / (time.perf_counter() - started), "compile_s": compile_s}
