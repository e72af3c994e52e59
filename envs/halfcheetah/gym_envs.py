"""Gymnasium envs for HalfCheetah: envport/HalfCheetah-v0 (the reference: Gymnasium's own
HalfCheetah-v5 on MuJoCo C) and envport/HalfCheetahJax-v0 (the JAX translation).

Both refuse the same bad actions with the same errors: a shape other than (6,), or a value that is
not finite (MuJoCo would only print a warning and step on). Finite values outside [-1, 1] are
accepted by both and clipped to the actuators' control range, as HalfCheetah-v5 does.

The JAX env draws its reset noise from the env's `np_random` exactly as HalfCheetah-v5 does, so
`reset(seed=s)` starts both envs from the same state; it steps in float32 unless created with
`dtype="float64"` (which needs `jax_enable_x64`). Both are wrapped in a 1000-step TimeLimit by
registration, as HalfCheetah-v5 is, and both take v5's forward_reward_weight, ctrl_cost_weight,
reset_noise_scale, exclude_current_positions_from_observation and frame_skip.
"""

from __future__ import annotations

from typing import Any, Optional

import gymnasium
import jax
import numpy as np
from gymnasium import spaces
from gymnasium.envs.mujoco.half_cheetah_v5 import HalfCheetahEnv

from shared.jax_fork_guard import refuse_if_forked_from_jax
from shared.render_mode import checked_render_mode, warn_no_render_mode

from .jax import env as jax_cheetah
from .reference.mujoco_messages import known_notices_silenced
from .reference.mujoco_ref import RESET_NOISE_SCALE
from .render import RENDER_MODES, MujocoFrames, checked_render_arguments, draw_with_gl_hint, render_fps

# the step info, in HalfCheetah-v5's order
INFO_KEYS = ("x_position", "x_velocity", "reward_forward", "reward_ctrl")


def checked_action(action: Any, shape: tuple) -> np.ndarray:
    """`action` as float64 of `shape` (one env's (6,), a vector env's (N, 6)), every value finite."""
    action = np.asarray(action, np.float64)
    if action.shape != shape:
        raise ValueError(f"action shape {action.shape}; expected {shape}")
    if not np.all(np.isfinite(action)):
        raise ValueError(f"action has non-finite values: {action}")
    return action


def checked_params(dtype: str, forward_reward_weight: float, ctrl_cost_weight: float, reset_noise_scale: float,
                   frame_skip: int) -> jax_cheetah.EnvParams:
    """HalfCheetah-v5's arguments as the JAX env's params, refused with a message when v5 would misbehave."""
    if dtype not in ("float32", "float64"):
        raise ValueError(f"dtype must be 'float32' or 'float64', got {dtype!r}")
    for name, value in (("forward_reward_weight", forward_reward_weight), ("ctrl_cost_weight", ctrl_cost_weight),
                        ("reset_noise_scale", reset_noise_scale)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)) \
                or not np.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
    if reset_noise_scale < 0:
        raise ValueError(f"reset_noise_scale must be at least 0, got {reset_noise_scale}")
    if isinstance(frame_skip, (bool, np.bool_)) or not isinstance(frame_skip, (int, np.integer)) or frame_skip < 1:
        raise ValueError(f"frame_skip must be a positive int, got {frame_skip!r}")
    params = jax_cheetah.EnvParams(
        forward_reward_weight=float(forward_reward_weight), ctrl_cost_weight=float(ctrl_cost_weight),
        reset_noise_scale=float(reset_noise_scale), frame_skip=int(frame_skip), dtype=dtype,
        max_steps=2**30)  # the TimeLimit wrapper (or the vector env) truncates
    jax_cheetah._dtype(params)  # fail now, not at the first step, if float64 lacks x64
    return params


def checked_exclude_x(exclude_current_positions_from_observation: Any) -> bool:
    """v5's flag, a bool: a string such as "no" would otherwise count as True."""
    if not isinstance(exclude_current_positions_from_observation, (bool, np.bool_)):
        raise ValueError(f"exclude_current_positions_from_observation must be a bool, got "
                         f"{exclude_current_positions_from_observation!r}")
    return bool(exclude_current_positions_from_observation)


def observation_space(exclude_x: bool) -> spaces.Box:
    size = jax_cheetah.OBSERVATION_SIZE + (0 if exclude_x else 1)
    return spaces.Box(-np.inf, np.inf, (size,), np.float64)


def observe(state: jax_cheetah.EnvState, exclude_x: bool) -> jax.Array:
    """v5's observation: qpos without the x position (the default), or all of it, then qvel."""
    if exclude_x:
        return jax_cheetah.observation(state)
    return jax.numpy.concatenate([state.qpos, state.qvel])


def packed_step(state: jax_cheetah.EnvState, action: jax.Array, params: jax_cheetah.EnvParams, exclude_x: bool):
    """One env step, its observation, reward and info (INFO_KEYS) in one array, so that the host
    fetches one buffer a step (0.75 against 1.02 ms a call for the vector env at 1 env: README)."""
    _, next_state, reward, _, info = jax_cheetah.step_no_reset(state, action, params)
    outputs = (observe(next_state, exclude_x), reward[None], *(info[key][None] for key in INFO_KEYS))
    return next_state, jax.numpy.concatenate(outputs)


def unpacked(outputs: jax.Array, size: int) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """packed_step's array (one env's or a batch's) as float64 observation(s), reward(s) and info."""
    outputs = np.asarray(outputs, np.float64)
    info = {key: outputs[..., size + 1 + column].copy() for column, key in enumerate(INFO_KEYS)}
    return outputs[..., :size].copy(), outputs[..., size].copy(), info


def reset_noise(np_random: np.random.Generator, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """An episode's start (qpos, qvel), drawn from the env's generator as HalfCheetah-v5 draws it."""
    qpos = np_random.uniform(-scale, scale, 9)  # qpos0 = 0
    qvel = scale * np_random.standard_normal(9)
    return qpos, qvel


class HalfCheetahReferenceEnv(HalfCheetahEnv):
    """Gymnasium's HalfCheetah-v5, unchanged but for refusing actions the JAX env refuses (and saying
    what to set when rendering finds no OpenGL)."""

    def __init__(self, *args: Any, **kwargs: Any):
        with known_notices_silenced():  # no WARNING line and MUJOCO_LOG.TXT entry per env made
            super().__init__(*args, **kwargs)

    def step(self, action: Any):
        return super().step(checked_action(action, self.action_space.shape))

    def render(self):
        return draw_with_gl_hint(super().render)


class HalfCheetahJaxEnv(gymnasium.Env):
    """envport/HalfCheetahJax-v0. Takes HalfCheetah-v5's reward, reset-noise, frame-skip and observation
    arguments, with its defaults, so that `gymnasium.make(id, **kwargs)` means the same on both ids, and
    its render arguments (render_mode "rgb_array" or "depth_array", width, height, camera_id,
    camera_name): frames are MuJoCo's, drawn from the JAX state (render.py)."""

    metadata = {"render_modes": RENDER_MODES, "render_fps": render_fps(5)}

    def __init__(self, dtype: str = "float32", forward_reward_weight: float = 1.0, ctrl_cost_weight: float = 0.1,
                 reset_noise_scale: float = RESET_NOISE_SCALE, exclude_current_positions_from_observation: bool = True,
                 frame_skip: int = 5, render_mode: Optional[str] = None, **render_arguments: Any):
        refuse_if_forked_from_jax("envport/HalfCheetahJax-v0")
        self.params = checked_params(dtype, forward_reward_weight, ctrl_cost_weight, reset_noise_scale, frame_skip)
        self.render_mode = checked_render_mode(render_mode, RENDER_MODES)
        self.metadata = {**type(self).metadata, "render_fps": render_fps(self.params.frame_skip)}
        render_arguments = checked_render_arguments(render_arguments)  # a misspelt argument fails with or without a renderer
        self._frames = MujocoFrames(render_mode, self.params.frame_skip, render_arguments) if render_mode else None
        self._exclude_x = checked_exclude_x(exclude_current_positions_from_observation)
        self.observation_space = observation_space(self._exclude_x)
        self.action_space = spaces.Box(-1.0, 1.0, (jax_cheetah.ACTION_SIZE,), np.float32)
        params, exclude_x = self.params, self._exclude_x
        self._step = jax.jit(lambda state, action: packed_step(state, action, params, exclude_x))
        self._state = None

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        qpos, qvel = reset_noise(self.np_random, self.params.reset_noise_scale)
        self._state = jax_cheetah.state_from_qpos_qvel(qpos, qvel, self.params)
        return np.asarray(observe(self._state, self._exclude_x), np.float64), {}

    def step(self, action: Any):
        if self._state is None:
            raise RuntimeError("call reset() before step()")
        action = checked_action(action, self.action_space.shape)
        self._state, outputs = self._step(self._state, action)
        obs, reward, info = unpacked(outputs, self.observation_space.shape[0])
        return obs, float(reward), False, False, {key: float(value) for key, value in info.items()}

    def render(self) -> Optional[np.ndarray]:
        """HalfCheetah-v5's frame of the current state (uint8 [height, width, 3] for "rgb_array",
        float32 [height, width] for "depth_array"), or None without render_mode."""
        if self._frames is None:
            warn_no_render_mode("rgb_array")
            return None
        if self._state is None:
            raise RuntimeError("call reset() before render()")
        return self._frames.draw(*jax.device_get((self._state.qpos, self._state.qvel)))

    def close(self):
        if self._frames is not None:
            self._frames.close()

