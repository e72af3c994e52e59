"""Pong's two backends behind shared.verification's L3 protocol.

The reference drives one C env per generator state: libc's rand() is global to the process, so
each episode resets a single C env with srand(seed), exactly what PufferLib's vec_reset does for
num_envs = 1. The JAX backend gives each episode its own generator, seeded the same way.
"""

from __future__ import annotations

from functools import partial
from typing import Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from shared.verification.l3 import StepOutput, Trajectory

from .jax import env as jax_pong
from .params import INTERNAL_FIELDS, PongConfig
from .reference.c_pong import CPongVec


class CPongBackend:
    def __init__(self, config: PongConfig = PongConfig()):
        self.name = f"PufferLib C Pong (frameskip {config.frameskip})"
        self.env = CPongVec(num_envs=1, seed=0, config=config)

    def reset(self, seed: int) -> StepOutput:
        observation = self.env.reset(seed)[0].copy()
        return StepOutput(observation=observation, state=self.env.internal_state(0))

    def step(self, action) -> StepOutput:
        observations, rewards, terminals = self.env.step(np.asarray([action]))
        return StepOutput(observation=observations[0].copy(), reward=np.float32(rewards[0]),
                          done=bool(terminals[0]), state=self.env.internal_state(0))


def _internal(state: jax_pong.EnvState) -> dict[str, np.ndarray]:
    return {name: np.asarray(getattr(state, name)) for name in INTERNAL_FIELDS}


class JaxPongBackend:
    def __init__(self, config: PongConfig = PongConfig(), params: Optional[jax_pong.EnvParams] = None,
                 name: Optional[str] = None):
        self.name = name or f"envport JAX Pong (frameskip {config.frameskip})"
        self.params = params if params is not None else jax_pong.EnvParams.from_config(config)
        self._reset = jax.jit(partial(jax_pong.reset_from_seed, params=self.params))
        self._step = jax.jit(lambda state, action: jax_pong.step(None, state, action, self.params))
        self._state = None

    def reset(self, seed: int) -> StepOutput:
        observation, self._state = self._reset(np.uint32(seed % 2**32))
        return StepOutput(observation=np.asarray(observation), state=_internal(self._state))

    def step(self, action) -> StepOutput:
        observation, self._state, reward, done, _ = self._step(self._state, jnp.int32(action))
        return StepOutput(observation=np.asarray(observation), reward=np.float32(reward), done=bool(done),
                          state=_internal(self._state))

    def rollout(self, seeds: Sequence[int], actions: Sequence[np.ndarray]) -> list[Trajectory]:
        """All episodes at once: vmap over episodes, lax.scan over steps (actions padded with 0)."""
        longest = max(len(a) for a in actions)
        padded = np.zeros((len(actions), longest), dtype=np.int32)
        for i, episode_actions in enumerate(actions):
            padded[i, : len(episode_actions)] = episode_actions
        seeds_u32 = np.asarray([s % 2**32 for s in seeds], dtype=np.uint32)
        first_obs, first_states, obs, rewards, dones, states = _batched_rollout(seeds_u32, padded, self.params)
        trajectories = []
        for i, episode_actions in enumerate(actions):
            steps = len(episode_actions)
            trajectories.append(Trajectory(
                observations=np.concatenate([first_obs[i][None], obs[i, :steps]]),
                rewards=np.concatenate([[np.float32(0)], rewards[i, :steps]]),
                dones=np.concatenate([[False], dones[i, :steps]]),
                states={name: np.concatenate([first_states[name][i][None], states[name][i, :steps]])
                        for name in INTERNAL_FIELDS},
            ))
        return trajectories


@partial(jax.jit, static_argnames=("params",))
def _batched_rollout_jit(seeds, actions, params):
    def one(seed, episode_actions):
        observation, state = jax_pong.reset_from_seed(seed, params)
        _, (obs, rewards, dones, states) = jax_pong.rollout(state, episode_actions, params)
        return observation, state, obs, rewards, dones, states

    return jax.vmap(one)(seeds, actions)


def _batched_rollout(seeds, actions, params):
    first_obs, first_state, obs, rewards, dones, states = jax.device_get(_batched_rollout_jit(seeds, actions, params))
    return (first_obs, {n: getattr(first_state, n) for n in INTERNAL_FIELDS}, obs, rewards, dones,
            {n: getattr(states, n) for n in INTERNAL_FIELDS})


def c_backend() -> CPongBackend:
    return CPongBackend()


def jax_backend() -> JaxPongBackend:
    return JaxPongBackend()


def c_backend_frameskip8() -> CPongBackend:
    return CPongBackend(PongConfig(frameskip=8))


def jax_backend_frameskip8() -> JaxPongBackend:
    return JaxPongBackend(PongConfig(frameskip=8))
