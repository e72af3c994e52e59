"""Gymnasium's HalfCheetah-v5 on our pure-JAX MuJoCo translation, gymnax-style.

`reset(key, params) -> (obs, state)` and `step(key, state, action, params) -> (obs, state,
reward, done, info)` with auto-reset at the 1000-step truncation; fixed shapes throughout, so envs
batch with `vmap` and episodes fuse into `lax.scan` (`rollout`). Definitions as in Gymnasium v5:
observation = qpos[1:] and qvel (17 values); reward = forward_reward_weight * dx/dt -
ctrl_cost_weight * |action|^2 with dt = frame_skip * timestep = 0.05; reset noise qpos0 + U(-0.1,
0.1), qvel = 0.1 N(0, 1) (drawn with JAX's PRNG: MuJoCo's side draws with numpy, so L3 compares
from equal *states* - `state_from_qpos_qvel` - rather than equal seeds).

Arithmetic runs in `params.dtype`: float64 (needs `jax_enable_x64`) reproduces MuJoCo to ~1e-11,
float32 is the fast mode.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from .dynamics import physics_step
from .model import PlanarModel, planar_model

OBSERVATION_SIZE = 17
ACTION_SIZE = 6


@struct.dataclass
class EnvParams:
    forward_reward_weight: float = 1.0
    ctrl_cost_weight: float = 0.1
    reset_noise_scale: float = 0.1
    max_steps: int = struct.field(pytree_node=False, default=1000)
    frame_skip: int = struct.field(pytree_node=False, default=5)
    dtype: str = struct.field(pytree_node=False, default="float32")
    # MuJoCo's own cap; the exact-line-search Newton needs far fewer (typically 2-4)
    solver_iterations: int = struct.field(pytree_node=False, default=100)


@struct.dataclass
class EnvState:
    qpos: jax.Array  # (9,)
    qvel: jax.Array  # (9,)
    step_count: jax.Array  # int32: env steps taken in this episode


def _dtype(params: EnvParams):
    dtype = jnp.dtype(params.dtype)
    if dtype == jnp.float64 and not jax.config.jax_enable_x64:
        raise ValueError("EnvParams(dtype='float64') needs jax.config.update('jax_enable_x64', True) before use")
    return dtype


def observation(state: EnvState) -> jax.Array:
    return jnp.concatenate([state.qpos[1:], state.qvel])


def state_from_qpos_qvel(qpos, qvel, params: EnvParams = EnvParams(), step_count=0) -> EnvState:
    dtype = _dtype(params)
    return EnvState(qpos=jnp.asarray(qpos, dtype), qvel=jnp.asarray(qvel, dtype),
                    step_count=jnp.asarray(step_count, jnp.int32))


def reset(key: jax.Array, params: EnvParams = EnvParams()):
    dtype = _dtype(params)
    kq, kv = jax.random.split(key)
    noise = params.reset_noise_scale
    qpos = jax.random.uniform(kq, (9,), dtype, -noise, noise)  # qpos0 is all zeros
    qvel = noise * jax.random.normal(kv, (9,), dtype)
    state = EnvState(qpos=qpos, qvel=qvel, step_count=jnp.zeros((), jnp.int32))
    return observation(state), state


def physics(params: EnvParams, state: EnvState, action: jax.Array, pm: PlanarModel | None = None):
    """frame_skip MuJoCo timesteps under `action`: (qpos, qvel) after them.

    Under `jax.vmap` this runs the whole batch at once in the batch-last layout (layout.py: each
    per-env scalar one contiguous vector; 2-2.5x the speed of vmap's batch-first arrays at batch
    64-4096 on a 2-core CPU); the arithmetic is the same code either way.
    """
    pm = pm or planar_model()
    dtype = _dtype(params)
    frame_skip, iterations = params.frame_skip, params.solver_iterations

    def timesteps(qpos, qvel, ctrl):  # one cheetah, or a batch along the last axis
        def substep(carry, _):
            qpos, qvel = carry
            qpos, qvel, _ = physics_step(pm, qpos, qvel, ctrl, iterations)
            return (qpos, qvel), None

        (qpos, qvel), _ = jax.lax.scan(substep, (qpos, qvel), None, length=frame_skip)
        return qpos, qvel

    @jax.custom_batching.custom_vmap
    def one_cheetah(qpos, qvel, ctrl):
        return timesteps(qpos, qvel, ctrl)

    @one_cheetah.def_vmap
    def batch_last(axis_size, in_batched, qpos, qvel, ctrl):
        def to_last(x, batched):
            return jnp.moveaxis(x, 0, -1) if batched else jnp.broadcast_to(x[..., None], x.shape + (axis_size,))

        qpos, qvel = timesteps(*(to_last(x, b) for x, b in zip((qpos, qvel, ctrl), in_batched, strict=True)))
        return (jnp.moveaxis(qpos, -1, 0), jnp.moveaxis(qvel, -1, 0)), (True, True)

    return one_cheetah(state.qpos, state.qvel, action.astype(dtype))


def step_no_reset(state: EnvState, action: jax.Array, params: EnvParams = EnvParams()):
    if jnp.shape(action) != (ACTION_SIZE,):  # known when traced; a batch goes through jax.vmap
        raise ValueError(f"one HalfCheetah's action is {ACTION_SIZE} torques, shape ({ACTION_SIZE},), got shape "
                         f"{jnp.shape(action)}; step a batch with jax.vmap")
    pm = planar_model()
    dtype = _dtype(params)
    action = jnp.asarray(action, dtype)
    qpos, qvel = physics(params, state, action, pm)
    dt = pm.timestep * params.frame_skip
    x_velocity = (qpos[0] - state.qpos[0]) / dt
    reward_forward = params.forward_reward_weight * x_velocity
    reward_ctrl = -params.ctrl_cost_weight * jnp.sum(action * action)
    next_state = EnvState(qpos=qpos, qvel=qvel, step_count=state.step_count + 1)
    truncated = next_state.step_count >= params.max_steps
    info = {"x_position": qpos[0], "x_velocity": x_velocity, "reward_forward": reward_forward,
            "reward_ctrl": reward_ctrl, "truncated": truncated}
    return observation(next_state), next_state, reward_forward + reward_ctrl, truncated, info


def step(key: jax.Array, state: EnvState, action: jax.Array, params: EnvParams = EnvParams()):
    """One env step; at truncation the env resets itself from `key` and returns the new first
    observation (the last one is in info['terminal_observation'])."""
    obs, next_state, reward, done, info = step_no_reset(state, action, params)
    reset_obs, reset_state = reset(key, params)
    info = dict(info, terminal_observation=obs)
    state_out = jax.tree_util.tree_map(lambda r, n: jnp.where(done, r, n), reset_state, next_state)
    return jnp.where(done, reset_obs, obs), state_out, reward, done, info


def rollout(key: jax.Array, state: EnvState, actions: jax.Array, params: EnvParams = EnvParams()):
    """Scan-fused rollout of actions (T, 6): (observations, rewards, dones), each (T, ...)."""

    def body(carry, action):
        key, state = carry
        key, sub = jax.random.split(key)
        obs, state, reward, done, _ = step(sub, state, action, params)
        return (key, state), (obs, reward, done)

    (_, final), out = jax.lax.scan(body, (key, state), actions)
    return out, final


def env_spec() -> dict[str, Any]:
    return {"observation_size": OBSERVATION_SIZE, "action_size": ACTION_SIZE, "action_low": -1.0, "action_high": 1.0}
