"""The same PPO (network, loss, update) for envs that are not JAX: a Gymnasium VectorEnv stepped on
the host, one jitted policy call per step and one jitted update per iteration."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import gymnasium
import jax
import numpy as np

from .core import PPOConfig, Transition, make_network, make_train_state, update
from .networks import policy_functions
from .normalization import RewardScaler, normalize_observation, observe, scale_rewards


@dataclass
class PhaseTimes:
    """Seconds spent per phase of the host loop (the breakdown tool reads these)."""

    env_step: float = 0.0
    transfer: float = 0.0
    forward: float = 0.0
    backward: float = 0.0
    per_update: list = field(default_factory=list)  # wall seconds of each update (the first compiles)
    phases_per_update: list = field(default_factory=list)  # {phase: seconds} of each update

    def snapshot(self) -> dict:
        return {"env_step": self.env_step, "transfer": self.transfer, "forward": self.forward,
                "backward": self.backward}


def train_host(config: PPOConfig, vector_env: gymnasium.vector.VectorEnv, show_progress: bool = True,
               name: str = "env", max_updates: int | None = None,
               reset_options: Callable[[jax.Array], dict] | None = None):
    """PPO on a Gymnasium VectorEnv with a Discrete single action space (or a 1-D Box one with
    config.continuous). Returns (train_state, metrics dict of numpy arrays, PhaseTimes).

    The key is split exactly as make_train splits it (init/reset keys, then per step an action key
    and an env key, per update an update key), so the same seed samples the same actions from the
    same logits and shuffles the same minibatches in both loops. `reset_options(reset_key)`, if
    given, returns the `options` of the vector env's first reset: an env whose JAX twin derives
    each env's seed from `split(reset_key, num_envs)` (make_train's reset) can start from the same
    states, and then the two loops train alike step for step."""
    if vector_env.num_envs != config.num_envs:
        raise ValueError(f"config.num_envs={config.num_envs} but the vector env has {vector_env.num_envs}")
    check_same_step_autoreset(vector_env)
    space = vector_env.single_action_space
    if config.continuous:
        if not (isinstance(space, gymnasium.spaces.Box) and len(space.shape) == 1):
            raise TypeError(f"continuous host-loop PPO needs a 1-D Box action space, got {space}")
        network = make_network(config, int(space.shape[0]))
    else:
        if not isinstance(space, gymnasium.spaces.Discrete):
            raise TypeError(f"host-loop PPO needs a Discrete action space (or config.continuous), got {space}")
        network = make_network(config, int(space.n))
    sample_action, _, _ = policy_functions(config.continuous)
    key = jax.random.PRNGKey(config.seed)
    key, init_key, reset_key = jax.random.split(key, 3)
    train_state = make_train_state(config, network, init_key, vector_env.single_observation_space.shape)

    # One dispatch per step: the key split that make_train does in its scan happens inside the same
    # jitted call as the policy, since a separate split costs as much as the policy itself (~0.2 ms).
    # With normalised observations the call also folds the observation into the statistics and
    # hands back what the policy saw (the transition stores that, as make_train's does).
    @jax.jit
    def act(params, observation_stats, obs, key):
        key, action_key, _env_key = jax.random.split(key, 3)  # the env key is make_train's env step's
        observation_stats, policy_obs = observe(observation_stats, obs)
        logits, value = network.apply(params, policy_obs)
        action, logp = sample_action(action_key, logits)
        if observation_stats is None:  # returning the input would cost a copy back for nothing
            return key, action, logp, value, None, None
        return key, action, logp, value, observation_stats, policy_obs

    scale = jax.jit(lambda scaler, reward, done: scale_rewards(scaler, reward, done, config.gamma))
    bootstrap_observation = jax.jit(normalize_observation)
    scaler = RewardScaler.create(config.num_envs) if config.normalize_rewards else None
    jit_update = jax.jit(lambda ts, tr, last_obs, k: update(ts, tr, last_obs, k, config))
    times = PhaseTimes()
    options = None if reset_options is None else reset_options(reset_key)
    obs, _ = vector_env.reset(seed=config.seed, options=options)
    running = np.zeros(config.num_envs)
    returns_per_update, losses_per_update = [], []
    updates = config.num_updates if max_updates is None else min(max_updates, config.num_updates)

    from .progress import TrainingProgress

    with TrainingProgress(f"PPO {name} (host loop)", updates, enabled=show_progress) as bar:
        for _ in range(updates):
            update_start = time.perf_counter()
            before = times.snapshot()
            buffers = _HostBuffers(config.num_steps)
            finished = []
            for step in range(config.num_steps):
                # the observation goes to the jitted call as numpy: its copy to the device happens in
                # the call (a separate device_put costs several times more here), so the forward
                # phase includes that transfer and the transfer phase is the way back
                t1 = time.perf_counter()
                key, action, logp, value, observation_stats, policy_obs = act(
                    train_state.params, train_state.observation_stats, obs, key)
                action.block_until_ready()
                t2 = time.perf_counter()
                action_host, logp_host, value_host = np.asarray(action), np.asarray(logp), np.asarray(value)
                if observation_stats is not None:
                    train_state = train_state.replace(observation_stats=observation_stats)
                    policy_obs = np.asarray(policy_obs)
                else:
                    policy_obs = obs
                t3 = time.perf_counter()
                next_obs, reward, terminated, truncated, _ = vector_env.step(action_host)
                t4 = time.perf_counter()
                times.transfer += t3 - t2
                times.forward += t2 - t1
                times.env_step += t4 - t3
                done = np.logical_or(terminated, truncated)
                running += reward
                if done.any():
                    finished.extend(running[done].tolist())
                    running[done] = 0.0
                train_reward = reward
                if scaler is not None:
                    scaler, train_reward = scale(scaler, reward, done)
                    train_reward = np.asarray(train_reward)
                buffers.write(step, done, action_host, value_host, train_reward, logp_host, policy_obs)
                obs = next_obs
            t0 = time.perf_counter()
            transitions = Transition(*jax.device_put(tuple(buffers.arrays)))
            last_obs = jax.device_put(obs)
            if train_state.observation_stats is not None:  # normalised, not counted: as make_train
                last_obs = bootstrap_observation(train_state.observation_stats, last_obs)
            t1 = time.perf_counter()
            key, update_key = jax.random.split(key)
            train_state, losses = jit_update(train_state, transitions, last_obs, update_key)
            jax.block_until_ready(train_state.params)
            t2 = time.perf_counter()
            times.transfer += t1 - t0
            times.backward += t2 - t1
            mean_return = float(np.mean(finished)) if finished else float("nan")
            returns_per_update.append(mean_return)
            losses_per_update.append(jax.device_get(losses))
            times.per_update.append(time.perf_counter() - update_start)
            times.phases_per_update.append({k: v - before[k] for k, v in times.snapshot().items()})
            bar.advance(config.batch_size, mean_return)
    metrics = {"episode_return": np.asarray(returns_per_update)}
    for loss_name in ("loss", "value_loss", "actor_loss", "entropy"):
        metrics[loss_name] = np.asarray([float(losses[loss_name]) for losses in losses_per_update])
    return train_state, metrics, times


def check_same_step_autoreset(vector_env: gymnasium.vector.VectorEnv) -> None:
    """train_host's transitions are make_train's: the observation that comes back with done is
    already the next episode's first, so the next step is a real one. Under NEXT_STEP (Gymnasium's
    default) the step after done is a reset that ignores the action and returns reward 0; trained
    on, it would be a transition that never happened and GAE would bootstrap across episodes."""
    mode = getattr(vector_env, "metadata", {}).get("autoreset_mode")
    if mode != gymnasium.vector.AutoresetMode.SAME_STEP:
        said = "declares no autoreset_mode in its metadata" if mode is None else f"auto-resets {mode}"
        raise ValueError(
            f"host-loop PPO needs a vector env that auto-resets in the same step (AutoresetMode.SAME_STEP); "
            f"{vector_env} {said}. Make it with autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP: "
            f"SyncVectorEnv(fns, autoreset_mode=...), make_vec(id, vector_kwargs={{'autoreset_mode': ...}}) for "
            f"a sync vector env, make_vec(id, autoreset_mode=...) for a native one")


class _HostBuffers:
    """One rollout's transitions, written row by row into preallocated numpy arrays (Transition's
    field order) instead of stacking per-step lists after the rollout."""

    def __init__(self, num_steps: int):
        self.arrays: list[np.ndarray] | None = None
        self.num_steps = num_steps

    def write(self, step: int, *row) -> None:
        if self.arrays is None:  # shapes and dtypes are known once the first step has returned
            self.arrays = [np.empty((self.num_steps, *np.shape(v)), dtype=np.asarray(v).dtype) for v in row]
        for array, value in zip(self.arrays, row, strict=True):
            array[step] = value
