"""HalfCheetah's two L4 backends: PPO (Gaussian policy) trained on the JAX translation
(make_train, float32) or on MuJoCo C (host loop over Gymnasium's HalfCheetah-v5 vector env), and
evaluation of a policy's mean action on either backend from the same start states.

Many seeds are needed (PPO's seed-to-seed spread on HalfCheetah is ~3x Delta), so both backends
train seeds together: the JAX one vmaps make_train over a chunk of seeds (one program, ~3x the
throughput of one seed at a time on 2 cores), MuJoCo C runs one host loop per core in worker
processes. A seed's JAX run depends on its chunk's size (XLA's float order differs with the batch
shape, and training is chaotic), not on the other seeds in it; both are fixed by L4Settings.
Evaluation goes the same way (evaluate_many_*): JAX vmaps a chunk of policies into one program,
MuJoCo C scores policies in worker processes."""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
from functools import cache
from typing import Any, Optional

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from shared.ppo import PPOConfig, train_host, train_with_progress
from shared.ppo.core import make_network
from shared.ppo.jax_loop import JaxEnvSpec, make_train
from shared.ppo.networks import gaussian_mode
from shared.ppo.normalization import RunningMeanStd, normalize_observation
from shared.verification.l4 import L4Backend, TrainOutcome
from shared.verification.l4_backends import training_curve

from .jax import env as jax_cheetah
from .reference.mujoco_messages import known_notices_silenced
from .reference.mujoco_ref import MujocoCheetah


@dataclasses.dataclass(frozen=True)
class L4Settings:
    ppo: PPOConfig = PPOConfig(total_timesteps=200_000, num_envs=32, num_steps=64, learning_rate=3e-4,
                               update_epochs=4, num_minibatches=8, gamma=0.99, gae_lambda=0.95, ent_coef=0.0,
                               vf_coef=0.5, continuous=True)
    eval_episodes: int = 5
    episode_steps: int = 1000
    seeds: int = 256  # per backend; README, L4: how the count and the budget were chosen
    seeds_per_program: int = 16  # JAX: seeds vmapped into one make_train
    workers: int = 0  # MuJoCo: host-loop processes at once; 0 = one per core


@struct.dataclass
class Policy:
    """What L4 evaluates: the network's parameters and the observation statistics it was trained
    with (None without PPOConfig.normalize_observations)."""

    params: Any
    observation_stats: Optional[RunningMeanStd]

    @classmethod
    def of(cls, train_state) -> Policy:
        return cls(train_state.params, train_state.observation_stats)


def _padded_chunks(items: list, width: int):
    """(n, chunk) for consecutive chunks of `width` items, the last one padded with its last item to
    the full width: an item's result then never depends on how many items were asked for, and one
    compiled program serves every chunk. n is the number of real items in the chunk."""
    for start in range(0, len(items), width):
        chunk = list(items[start:start + width])
        yield len(chunk), chunk + [chunk[-1]] * (width - len(chunk))


def _in_workers(settings: L4Settings, function, jobs: list):
    """function(job) for each job, in order, in one spawned worker process per core (or
    settings.workers); in this process when one worker is all there is."""
    workers = min(len(jobs), settings.workers or os.cpu_count() or 1)
    if workers <= 1:
        yield from map(function, jobs)
        return
    # spawn, not fork: the parent has JAX's thread pools running, which a forked child would inherit broken
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        yield from pool.imap(function, jobs)


def start_states(seed: int, episodes: int) -> tuple[np.ndarray, np.ndarray]:
    """HalfCheetah-v5's reset noise for seeds seed*1000 + e: the same starts on both backends."""
    cheetah = MujocoCheetah()
    qpos, qvel = [], []
    for e in range(episodes):
        cheetah.reset(seed * 1000 + e)
        qpos.append(cheetah.qpos)
        qvel.append(cheetah.qvel)
    return np.asarray(qpos), np.asarray(qvel)


@cache
def _policy(settings: L4Settings):
    network = make_network(settings.ppo, jax_cheetah.ACTION_SIZE)
    return jax.jit(lambda policy, obs: gaussian_mode(network.apply(
        policy.params, normalize_observation(policy.observation_stats, obs))[0]))


@cache
def _jax_episodes(settings: L4Settings):
    network = make_network(settings.ppo, jax_cheetah.ACTION_SIZE)
    params_env = jax_cheetah.EnvParams()
    step = jax.vmap(lambda s, a: jax_cheetah.step_no_reset(s, a, params_env)[1:3])

    @jax.jit
    def play(policy, qpos, qvel):
        state = jax.vmap(lambda q, v: jax_cheetah.state_from_qpos_qvel(q, v, params_env))(qpos, qvel)

        def body(carry, _):
            state, total = carry
            obs = jax.vmap(jax_cheetah.observation)(state)
            action = gaussian_mode(network.apply(policy.params, normalize_observation(policy.observation_stats, obs))[0])
            state, reward = step(state, action)
            return (state, total + reward), None

        (_, total), _ = jax.lax.scan(body, (state, jnp.zeros(qpos.shape[0])), None, length=settings.episode_steps)
        return total

    return play


def evaluate_on_jax(settings: L4Settings, policy: Policy, seed: int) -> float:
    qpos, qvel = start_states(seed, settings.eval_episodes)
    return float(np.mean(np.asarray(_jax_episodes(settings)(policy, jnp.asarray(qpos, jnp.float32),
                                                            jnp.asarray(qvel, jnp.float32)))))


@cache
def _jax_episodes_of_many(settings: L4Settings):
    return jax.jit(jax.vmap(_jax_episodes(settings)))


def evaluate_many_on_jax(settings: L4Settings, policies: list[Policy], seeds: list[int]) -> list[float]:
    """evaluate_on_jax for many policies, settings.seeds_per_program vmapped into one program (the
    last one padded, so that a policy's score never depends on how many were asked for)."""
    scores = []
    for n, padded in _padded_chunks(list(zip(policies, seeds, strict=True)), settings.seeds_per_program):
        stacked = jax.tree.map(lambda *leaves: jnp.stack(leaves), *[policy for policy, _ in padded])
        starts = [start_states(seed, settings.eval_episodes) for _, seed in padded]
        totals = _jax_episodes_of_many(settings)(stacked, jnp.asarray(np.stack([q for q, _ in starts]), jnp.float32),
                                                 jnp.asarray(np.stack([v for _, v in starts]), jnp.float32))
        scores.extend(np.asarray(totals).mean(axis=1)[:n].astype(float).tolist())
    return scores


def evaluate_on_mujoco(settings: L4Settings, policy: Policy, seed: int) -> float:
    """The episodes run in lockstep, one policy call for all of them per step (as on JAX: HalfCheetah
    never terminates early, so all are 1000 steps)."""
    act = _policy(settings)
    cheetahs = []
    for qpos, qvel in zip(*start_states(seed, settings.eval_episodes), strict=True):
        cheetahs.append(MujocoCheetah())
        cheetahs[-1].set_state(qpos, qvel)
    obs = np.stack([cheetah.observation() for cheetah in cheetahs])
    totals = np.zeros(len(cheetahs))
    for _ in range(settings.episode_steps):
        actions = np.asarray(act(policy, jnp.asarray(obs, jnp.float32)), np.float64)
        for i, cheetah in enumerate(cheetahs):
            obs[i], reward = cheetah.step(actions[i])
            totals[i] += reward
    return float(np.mean(totals))


def evaluate_many_on_mujoco(settings: L4Settings, policies: list[Policy], seeds: list[int]) -> list[float]:
    """evaluate_on_mujoco for many policies, one worker process per core (as training)."""
    jobs = [(settings, policy, seed) for policy, seed in zip(policies, seeds, strict=True)]
    return list(_in_workers(settings, _evaluate_on_mujoco_job, jobs))


def _evaluate_on_mujoco_job(job: tuple[L4Settings, Policy, int]) -> float:
    return evaluate_on_mujoco(*job)


def jax_env_spec() -> JaxEnvSpec:
    return JaxEnvSpec("halfcheetah", jax_cheetah.reset, jax_cheetah.step, jax_cheetah.EnvParams(),
                      (jax_cheetah.OBSERVATION_SIZE,), jax_cheetah.ACTION_SIZE)


def jax_backend(settings: L4Settings = L4Settings(), show_progress: bool = False) -> L4Backend:
    def train(seed: int) -> TrainOutcome:
        config = dataclasses.replace(settings.ppo, seed=seed)
        train_state, metrics = train_with_progress(config, jax_env_spec(), show=show_progress)
        return TrainOutcome(Policy.of(train_state), *training_curve(config, metrics["episode_return"]))

    train_chunk = jax.jit(jax.vmap(make_train(settings.ppo, jax_env_spec())))  # compiled at first use, once

    def train_seeds(seeds: list[int]) -> list[TrainOutcome]:
        outcomes = []
        for n, padded in _padded_chunks(list(seeds), settings.seeds_per_program):
            out = jax.block_until_ready(train_chunk(jax.vmap(jax.random.PRNGKey)(jnp.asarray(padded))))
            for i in range(n):
                policy = jax.tree.map(lambda x, i=i: np.asarray(x[i]), Policy.of(out["train_state"]))
                outcomes.append(TrainOutcome(policy, *training_curve(settings.ppo, np.asarray(
                    out["metrics"]["episode_return"][i]))))
            if show_progress:
                print(f"PPO halfcheetah (JAX): seeds {len(outcomes)} of {len(seeds)} trained", flush=True)
        return outcomes

    return L4Backend("JAX (ours)", train, lambda policy, seed: evaluate_on_jax(settings, policy, seed),
                     train_seeds=train_seeds,
                     evaluate_many=lambda policies, seeds: evaluate_many_on_jax(settings, policies, seeds))


def mujoco_vector_env(num_envs: int):
    """Gymnasium's HalfCheetah-v5 on MuJoCo C, num_envs in one process, reset in the same step."""
    with known_notices_silenced():
        return gymnasium.make_vec("HalfCheetah-v5", num_envs=num_envs, vectorization_mode="sync",
                                  vector_kwargs={"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP})


def mujoco_backend(settings: L4Settings = L4Settings(), show_progress: bool = False) -> L4Backend:
    def train(seed: int) -> TrainOutcome:
        return train_on_mujoco(settings, seed, show_progress)

    def train_seeds(seeds: list[int]) -> list[TrainOutcome]:
        outcomes = []
        for outcome in _in_workers(settings, _train_on_mujoco_quietly, [(settings, seed) for seed in seeds]):
            outcomes.append(outcome)
            if show_progress:
                print(f"PPO halfcheetah (MuJoCo C): seeds {len(outcomes)} of {len(seeds)} trained", flush=True)
        return outcomes

    return L4Backend("MuJoCo C", train, lambda policy, seed: evaluate_on_mujoco(settings, policy, seed),
                     train_seeds=train_seeds,
                     evaluate_many=lambda policies, seeds: evaluate_many_on_mujoco(settings, policies, seeds))


def train_on_mujoco(settings: L4Settings, seed: int, show_progress: bool = False) -> TrainOutcome:
    config = dataclasses.replace(settings.ppo, seed=seed)
    env = mujoco_vector_env(config.num_envs)
    try:
        train_state, metrics, _ = train_host(config, env, show_progress=show_progress, name="halfcheetah MuJoCo")
    finally:
        env.close()
    policy = jax.tree.map(np.asarray, Policy.of(train_state))  # numpy: it crosses back from a worker process
    return TrainOutcome(policy, *training_curve(config, metrics["episode_return"]))


def _train_on_mujoco_quietly(settings_and_seed: tuple[L4Settings, int]) -> TrainOutcome:
    return train_on_mujoco(*settings_and_seed)
