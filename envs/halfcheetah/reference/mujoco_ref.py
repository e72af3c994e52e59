"""The reference: MuJoCo C through the `mujoco` package, with Gymnasium's HalfCheetah-v5.

`make_gym_env()` is Gymnasium's own env (what users train on). `MujocoCheetah` drives the same
model and step directly (mj_step x frame_skip, Gymnasium's reward), which is what the L2/L3
comparisons need: set an exact state, step, read qpos/qvel/qacc. Both use MuJoCo's C engine in
its default (and fastest honest) configuration: one thread per MjData, no rendering.
"""

from __future__ import annotations

import numpy as np

from .model_file import load_model
from .mujoco_messages import known_notices_silenced

FRAME_SKIP = 5
CTRL_COST_WEIGHT = 0.1
FORWARD_REWARD_WEIGHT = 1.0
RESET_NOISE_SCALE = 0.1


def make_gym_env(**kwargs):
    """gymnasium.make('HalfCheetah-v5') (TimeLimit 1000 included)."""
    import gymnasium

    with known_notices_silenced():
        return gymnasium.make("HalfCheetah-v5", **kwargs)


class MujocoCheetah:
    """One HalfCheetah in MuJoCo C, stepped like Gymnasium's HalfCheetah-v5."""

    def __init__(self):
        import mujoco

        self._mujoco = mujoco
        self.model = load_model()
        self.data = mujoco.MjData(self.model)
        self.dt = self.model.opt.timestep * FRAME_SKIP

    def reset(self, seed: int) -> np.ndarray:
        """Gymnasium's reset noise drawn from numpy's generator seeded with `seed`."""
        rng = np.random.default_rng(seed)
        nq, nv = self.model.nq, self.model.nv
        qpos = self.model.qpos0 + rng.uniform(-RESET_NOISE_SCALE, RESET_NOISE_SCALE, nq)
        qvel = RESET_NOISE_SCALE * rng.standard_normal(nv)
        self.set_state(qpos, qvel)
        return self.observation()

    def set_state(self, qpos, qvel, qacc_warmstart=None):
        mujoco = self._mujoco
        qpos, qvel = np.asarray(qpos, np.float64), np.asarray(qvel, np.float64)
        if qpos.shape != (self.model.nq,) or qvel.shape != (self.model.nv,):
            raise ValueError(f"state shapes {qpos.shape}, {qvel.shape}; expected ({self.model.nq},), ({self.model.nv},)")
        mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[:] = qpos
        self.data.qvel[:] = qvel
        if qacc_warmstart is not None:
            self.data.qacc_warmstart[:] = qacc_warmstart
        mujoco.mj_forward(self.model, self.data)

    def observation(self) -> np.ndarray:
        return np.concatenate([self.data.qpos[1:], self.data.qvel])

    def step(self, action) -> tuple[np.ndarray, float]:
        """frame_skip mj_steps under `action`; (observation, reward) as HalfCheetah-v5 computes them."""
        action = np.asarray(action, np.float64)
        if action.shape != (self.model.nu,):
            raise ValueError(f"action shape {action.shape}; expected ({self.model.nu},)")
        if not np.all(np.isfinite(action)):
            raise ValueError(f"action has non-finite values: {action}")
        x_before = self.data.qpos[0]
        self.data.ctrl[:] = action
        self._mujoco.mj_step(self.model, self.data, nstep=FRAME_SKIP)
        x_velocity = (self.data.qpos[0] - x_before) / self.dt
        reward = FORWARD_REWARD_WEIGHT * x_velocity - CTRL_COST_WEIGHT * float(np.sum(action * action))
        return self.observation(), reward

    @property
    def qpos(self) -> np.ndarray:
        return self.data.qpos.copy()

    @property
    def qvel(self) -> np.ndarray:
        return self.data.qvel.copy()
