"""envport/HalfCheetahJax-v0's native vector env: `gymnasium.make_vec("envport/HalfCheetahJax-v0", num_envs=N)`.

All N cheetahs step in one jitted, vmapped call of the functional env (jax/env.py) instead of N calls
through Gymnasium's SyncVectorEnv (`vectorization_mode="sync"`, still available). The episodes are the
ones SyncVectorEnv's single envs play: env i is reset with seed + i (or the i-th of a list of seeds,
or from its own generator when reset without one) and draws its start from its own generator as
HalfCheetah-v5 draws it; every episode is truncated after `max_episode_steps` (the registered 1000
unless given). Then, as SyncVectorEnv does it under the same `autoreset_mode`: NEXT_STEP (Gymnasium's
default) resets every env on the next step (its actions ignored, rewards 0, info empty); SAME_STEP
resets them in the truncating step itself, its observations the new episodes' first, the last ones
in info["final_obs"] and their step info in info["final_info"]. A test plays both side by side.

render_mode "rgb_array" or "depth_array" (with HalfCheetah-v5's width, height, camera_id and
camera_name): `render()` gives one MuJoCo frame per env, as SyncVectorEnv's render() gives them.

Bad input is an error before anything moves: actions must be finite, of shape (N, 6); values outside
[-1, 1] are clipped to the actuators' range, as by the single envs.
"""

from __future__ import annotations

import functools
from typing import Any, Optional, Union

import jax
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from shared.episode_seeds import EpisodeSeeds, SeedArgument
from shared.jax_fork_guard import refuse_if_forked_from_jax
from shared.render_mode import checked_render_mode, warn_no_render_mode
from shared.vector_settings import checked_autoreset_mode, checked_max_episode_steps, checked_num_envs

from .gym_envs import (
    checked_action,
    checked_exclude_x,
    checked_params,
    observation_space,
    observe,
    packed_step,
    reset_noise,
    unpacked,
)
from .jax import env as jax_cheetah
from .reference.mujoco_ref import RESET_NOISE_SCALE
from .render import RENDER_MODES, MujocoFrames, checked_render_arguments, render_fps


@functools.cache
def _batched_functions(params: jax_cheetah.EnvParams, exclude_x: bool) -> tuple[Any, Any]:
    """The jitted batched start and step for one set of params, shared by every vector env of the
    process that has them (a jit compiles once per function object)."""

    def start(qpos: jax.Array, qvel: jax.Array):
        state = jax_cheetah.state_from_qpos_qvel(qpos, qvel, params)
        return observe(state, exclude_x), state

    def step(state: jax_cheetah.EnvState, action: jax.Array):
        return packed_step(state, action, params, exclude_x)

    return jax.jit(jax.vmap(start)), jax.jit(jax.vmap(step))


class HalfCheetahJaxVectorEnv(VectorEnv):
    """N cheetahs of the functional env, stepped together; see the module docstring."""

    metadata = {"render_modes": RENDER_MODES, "render_fps": render_fps(5), "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int = 1, dtype: str = "float32", forward_reward_weight: float = 1.0,
                 ctrl_cost_weight: float = 0.1, reset_noise_scale: float = RESET_NOISE_SCALE,
                 exclude_current_positions_from_observation: bool = True, frame_skip: int = 5,
                 max_episode_steps: Optional[int] = 1000,
                 autoreset_mode: Union[AutoresetMode, str] = AutoresetMode.NEXT_STEP,
                 render_mode: Optional[str] = None, **render_arguments: Any):
        refuse_if_forked_from_jax("HalfCheetahJaxVectorEnv")
        self.num_envs = checked_num_envs(num_envs)
        self.max_episode_steps = checked_max_episode_steps(max_episode_steps)
        self.autoreset_mode = checked_autoreset_mode(autoreset_mode)
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self.params = checked_params(dtype, forward_reward_weight, ctrl_cost_weight, reset_noise_scale, frame_skip)
        self.metadata["render_fps"] = render_fps(self.params.frame_skip)
        exclude_x = checked_exclude_x(exclude_current_positions_from_observation)
        self.single_observation_space = observation_space(exclude_x)
        self.single_action_space = spaces.Box(-1.0, 1.0, (jax_cheetah.ACTION_SIZE,), np.float32)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.render_mode = checked_render_mode(render_mode, RENDER_MODES)
        render_arguments = checked_render_arguments(render_arguments)
        # a renderer per env, as SyncVectorEnv's envs each have: HalfCheetah-v5's camera looks where
        # its env's cheetah was at the first frame, so one shared renderer would aim every env's camera alike
        self._frames = [MujocoFrames(render_mode, self.params.frame_skip, render_arguments)
                        for _ in range(self.num_envs)] if render_mode else None
        self._start, self._step = _batched_functions(self.params, exclude_x)
        # each env's generator, as each single env's np_random: its reset noise is drawn from it
        self._seeds = EpisodeSeeds(self.num_envs)
        self._states: Optional[jax_cheetah.EnvState] = None
        self._elapsed = 0  # steps in the current episodes: every env's episode starts together
        self._needs_autoreset = False

    def _new_episodes(self, seeds: list[Optional[int]]) -> np.ndarray:
        starts = [reset_noise(self._seeds.generator(index, seed), self.params.reset_noise_scale)
                  for index, seed in enumerate(seeds)]
        qpos, qvel = (np.stack(parts) for parts in zip(*starts, strict=True))
        observations, self._states = self._start(qpos, qvel)
        self._elapsed, self._needs_autoreset = 0, False
        return np.asarray(observations, np.float64)

    def reset(self, *, seed: SeedArgument = None, options: Optional[dict] = None):
        seeds = self._seeds.per_env(seed)
        super().reset(seed=seed if isinstance(seed, (int, np.integer)) else None)
        return self._new_episodes(seeds), {}

    def step(self, actions: Any):
        if self._states is None:
            raise RuntimeError("call reset() before step()")
        actions = checked_action(actions, self.action_space.shape)
        zeros = np.zeros(self.num_envs, bool)
        if self._needs_autoreset:
            observations = self._new_episodes([None] * self.num_envs)
            return observations, np.zeros(self.num_envs), zeros, zeros.copy(), {}
        self._states, outputs = self._step(self._states, actions)
        observations, rewards, step_info = unpacked(outputs, self.single_observation_space.shape[0])
        self._elapsed += 1
        truncated = self.max_episode_steps is not None and self._elapsed >= self.max_episode_steps
        if truncated and self.autoreset_mode == AutoresetMode.SAME_STEP:
            infos: dict[str, Any] = {}
            for index in range(self.num_envs):  # every env's episode ends in this step
                final_info = {key: float(values[index]) for key, values in step_info.items()}
                infos = self._add_info(infos, {"final_obs": observations[index], "final_info": final_info}, index)
            observations = self._new_episodes([None] * self.num_envs)  # their reset info is empty
        else:
            self._needs_autoreset = truncated
            infos = dict(step_info)
            infos.update({f"_{key}": np.ones(self.num_envs, bool) for key in step_info})
        return observations, rewards, zeros, np.full(self.num_envs, truncated), infos

    def render(self) -> Optional[tuple[np.ndarray, ...]]:
        """One HalfCheetah-v5 frame per env (as SyncVectorEnv gives them), or None without render_mode."""
        if self._frames is None:
            warn_no_render_mode("rgb_array")
            return None
        if self._states is None:
            raise RuntimeError("call reset() before render()")
        qpos, qvel = jax.device_get((self._states.qpos, self._states.qvel))
        return tuple(frames.draw(qpos[index], qvel[index]) for index, frames in enumerate(self._frames))

    def close_extras(self, **kwargs):
        for frames in self._frames or ():
            frames.close()
