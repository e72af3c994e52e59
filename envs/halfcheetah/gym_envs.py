"""Gymnasium envs for HalfCheetah: envport/HalfCheetah-v0 (the reference: Gymnasium's own
HalfCheetah-v5 on MuJoCo C) and envport/HalfCheetahJax-v0 (the JAX translation).

Both refuse the same bad actions with the same errors: a shape other than (6,), or a value that is
not finite (MuJoCo would only print a warning and step on). Finite values outside [-1, 1] are
accepted by both and clipped to the actuators' control range, as HalfCheetah-v5 does.

The JAX env draws its reset noise from the env's `np_random` exactly as HalfCheetah-v5 does, so
`reset(seed=s)` starts both envs from the same state; it steps in float32 unless created with
`dtype="float64"` (which needs `jax_enable_x64`). Both are wrapped in a 1000-step TimeLimit by
registration, as HalfCheetah-v5 is.
"""

from __future__ import annotations

from typing import Any, Optional

import gymnasium
import jax
import numpy as np
from gymnasium import spaces
from gymnasium.envs.mujoco.half_cheetah_v5 import HalfCheetahEnv

from shared.jax_fork_guard import refuse_if_forked_from_jax

from .jax import env as jax_cheetah
from .reference.mujoco_ref import RESET_NOISE_SCALE


def _checked_action(action: Any, shape: tuple) -> np.ndarray:
    action = np.asarray(action, np.float64)
    if action.shape != shape:
        raise ValueError(f"action shape {action.shape}; expected {shape}")
    if not np.all(np.isfinite(action)):
        raise ValueError(f"action has non-finite values: {action}")
    return action


class HalfCheetahReferenceEnv(HalfCheetahEnv):
    """Gymnasium's HalfCheetah-v5, unchanged but for refusing actions the JAX env refuses."""

    def step(self, action: Any):
        return super().step(_checked_action(action, self.action_space.shape))


class HalfCheetahJaxEnv(gymnasium.Env):
    metadata = {"render_modes": []}

    def __init__(self, dtype: str = "float32"):
        refuse_if_forked_from_jax("envport/HalfCheetahJax-v0")
        self.params = jax_cheetah.EnvParams(dtype=dtype, max_steps=2**30)  # TimeLimit truncates
        jax_cheetah._dtype(self.params)  # fail now, not at the first step, if float64 lacks x64
        self.observation_space = spaces.Box(-np.inf, np.inf, (jax_cheetah.OBSERVATION_SIZE,), np.float64)
        self.action_space = spaces.Box(-1.0, 1.0, (jax_cheetah.ACTION_SIZE,), np.float32)
        params = self.params
        self._step = jax.jit(lambda state, action: jax_cheetah.step_no_reset(state, action, params))
        self._state = None

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        qpos = self.np_random.uniform(-RESET_NOISE_SCALE, RESET_NOISE_SCALE, 9)  # qpos0 = 0
        qvel = RESET_NOISE_SCALE * self.np_random.standard_normal(9)
        self._state = jax_cheetah.state_from_qpos_qvel(qpos, qvel, self.params)
        return np.asarray(jax_cheetah.observation(self._state), np.float64), {}

    def step(self, action: Any):
        if self._state is None:
            raise RuntimeError("call reset() before step()")
        action = _checked_action(action, self.action_space.shape)
        obs, self._state, reward, _, info = self._step(self._state, action)
        info = {key: float(value) for key, value in info.items() if key != "truncated"}
        return np.asarray(obs, np.float64), float(reward), False, False, info


def register() -> None:
    entries = (
        ("envport/HalfCheetah-v0", "envs.halfcheetah.gym_envs:HalfCheetahReferenceEnv"),
        ("envport/HalfCheetahJax-v0", "envs.halfcheetah.gym_envs:HalfCheetahJaxEnv"),
    )
    for env_id, entry in entries:
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=entry, max_episode_steps=1000)
