"""EmuRust's two L4 backends: PPO (shared/ppo's host loop, categorical policy over the 4 moves)
trained on 2048 in PyBoy or in the Rust emulator, and the greedy policy evaluated on either.

Both backends are the same Gymnasium env class over a different emulator (`gym_envs.py`),
vectorised in one process, observations flattened to 25 floats (log2 tiles). Evaluation plays
`eval_episodes` episodes from seeds `seed * 1000 + e` (same start delays, so the same games on both
emulators as far as they are equal) and returns the mean score.

Delta (TOST margin on the mean evaluation score): `L4_DELTA` points. A uniformly random policy
scores 2632 +- 1358 (mean +- std over 30 episodes of at most 1000 moves, measured 2026-11-30 on the
Rust backend); Delta is a tenth of that mean, well inside one episode's spread, so two equivalent
emulators pass it with 10 seeds when training noise is of the same order, and an emulator whose
tiles or merges were wrong (a different game) would not.
"""

from __future__ import annotations

import dataclasses
from functools import cache

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np

from shared.ppo import PPOConfig, train_host
from shared.ppo.core import make_network
from shared.verification.l4 import L4Backend, TrainOutcome

from . import game2048
from .gym_envs import Game2048Env

L4_DELTA = 250.0
NUM_ACTIONS = len(game2048.ACTION_BUTTONS)
OBSERVATION_SIZE = game2048.BOARD_SIDE * game2048.BOARD_SIDE


@dataclasses.dataclass(frozen=True)
class L4Settings:
    ppo: PPOConfig = PPOConfig(total_timesteps=32_768, num_envs=8, num_steps=128, learning_rate=2.5e-4,
                               update_epochs=4, num_minibatches=4, gamma=0.99, gae_lambda=0.95, ent_coef=0.01)
    eval_episodes: int = 3
    max_episode_steps: int = 1000


def _flat_env(backend: str, max_episode_steps: int) -> gymnasium.Env:
    env = gymnasium.wrappers.TimeLimit(Game2048Env(backend=backend), max_episode_steps)
    env = gymnasium.wrappers.FlattenObservation(env)
    return gymnasium.wrappers.DtypeObservation(env, np.float32)


def vector_env(backend: str, num_envs: int, max_episode_steps: int) -> gymnasium.vector.VectorEnv:
    return gymnasium.vector.SyncVectorEnv(
        [lambda: _flat_env(backend, max_episode_steps) for _ in range(num_envs)],
        autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP,
    )


@cache
def _greedy(settings: L4Settings):
    network = make_network(settings.ppo, NUM_ACTIONS)
    return jax.jit(lambda params, obs: jnp.argmax(network.apply(params, obs)[0], axis=-1))


def evaluate(settings: L4Settings, backend: str, params, seed: int) -> float:
    policy = _greedy(settings)
    env = _flat_env(backend, settings.max_episode_steps)
    scores = []
    for episode in range(settings.eval_episodes):
        observation, _ = env.reset(seed=seed * 1000 + episode)
        total, done = 0.0, False
        while not done:
            action = int(policy(params, jnp.asarray(observation)))
            observation, reward, terminated, truncated, _ = env.step(action)
            total += reward
            done = terminated or truncated
        scores.append(total)
    env.close()
    return float(np.mean(scores))


def backend(name: str, emulator: str, settings: L4Settings = L4Settings(), show_progress: bool = False) -> L4Backend:
    def train(seed: int) -> TrainOutcome:
        config = dataclasses.replace(settings.ppo, seed=seed)
        env = vector_env(emulator, config.num_envs, settings.max_episode_steps)
        train_state, metrics, _ = train_host(config, env, show_progress=show_progress, name=f"2048 {name}")
        env.close()
        returns = np.asarray(metrics["episode_return"], np.float64)
        return TrainOutcome(train_state.params, (np.arange(len(returns)) + 1) * config.batch_size, returns)

    return L4Backend(name, train, lambda params, seed: evaluate(settings, emulator, params, seed))


def rust_backend(settings: L4Settings = L4Settings(), show_progress: bool = False) -> L4Backend:
    return backend("Rust (ours)", "rust", settings, show_progress)


def pyboy_backend(settings: L4Settings = L4Settings(), show_progress: bool = False) -> L4Backend:
    return backend("PyBoy", "pyboy", settings, show_progress)
