"""Gymnasium envs and VectorEnvs for both Pong backends: envport/Pong-v0 (PufferLib's C) and
envport/PongJax-v0 (the JAX translation).

Seeding: reset(seed=s) on a single env runs C's srand(s) then c_reset; reset() without a seed
draws the next C seed from the env's np_random, so a seeded env replays the same trajectory.
Vector envs seed env i with i + s * num_envs, as PufferLib's vec_reset does; reset(seed=[s_0, ...])
seeds env i with s_i, as Gymnasium's SyncVectorEnv seeds its single envs (a None entry: env i draws
its seed as a single env reset without one does); options["env_seeds"][i] overrides both (PPO's host loop uses it to start where make_train starts).

render_mode="rgb_array" draws each frame from the game's internal state (render.py: PufferLib's
window layout, the same pixels on both backends); a vector env's render() gives one frame per env.

Episodes end inside step, as in C: the step that returns terminated=True also resets the game, so
its observation is the next episode's first. The C backend's serves come from libc's rand(),
which is global to the process: the C envs of one CPongVectorEnv share one stream (PufferLib's
own behaviour) unless it is made with private_streams=True. A single CPongEnv always draws from
a private stream (the same draws a lone C env makes after srand), so that envs stepped side by
side in one process (Gymnasium's SyncVectorEnv, an evaluation env beside a training one) do not
change each other's games; each JAX env has its own stream too.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Optional

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from shared.discrete_action import check_discrete_action
from shared.episode_seeds import EpisodeSeeds, refuse_bool_seed
from shared.jax_fork_guard import refuse_if_forked_from_jax
from shared.render_mode import checked_render_mode, warn_no_render_mode
from shared.vector_actions import check_discrete_actions
from shared.vector_settings import checked_num_envs

from .jax import env as jax_pong
from .params import NUM_ACTIONS, OBSERVATION_SIZE, PongConfig, observation_bounds
from .reference.c_pong import CPongVec, validate_env_seeds
from .render import draw_frame

_C_SEED_LIMIT = 2**31


def _list_seed(per_env_seeds: np.ndarray) -> int:
    """The vector's own np_random seed when reset with a list: the list's SeedSequence entropy."""
    return int(np.random.SeedSequence([int(seed) for seed in per_env_seeds]).generate_state(1)[0])


def _observation_space(config: PongConfig) -> spaces.Box:
    low, high = observation_bounds(config)  # PufferLib's Box(0, 1) is a little too narrow: params.py says why
    return spaces.Box(low=low, high=high, shape=(OBSERVATION_SIZE,), dtype=np.float32)


def _config(config: Optional[PongConfig], overrides: dict) -> PongConfig:
    if config is None:
        return PongConfig(**overrides)
    if not isinstance(config, PongConfig):
        raise TypeError(f"config must be a PongConfig, got {type(config).__name__}")
    if overrides:
        raise ValueError(f"give either config= or PongConfig's fields, not both: {sorted(overrides)} would be "
                         f"ignored (use dataclasses.replace(config, ...))")
    return config


ACTION_MEANING = "0 stay, 1 up, 2 down"


def _single_action(action) -> int:
    return check_discrete_action(action, NUM_ACTIONS, ACTION_MEANING)


RENDER_MODES = ["rgb_array"]
# the fields a frame is drawn from (render.draw_frame)
_DRAWN_FIELDS = ("paddle_yl", "paddle_yr", "ball_x", "ball_y", "score_l", "score_r")


def _render_setup(env, render_mode: Optional[str], config: PongConfig) -> None:
    env.render_mode = checked_render_mode(render_mode, RENDER_MODES)
    # PufferLib's window runs at 60 / frameskip frames a second (C's integer division; at least 1 here)
    env.metadata = {**type(env).metadata, "render_fps": max(1, 60 // config.frameskip)}


class _PongEnvBase(gymnasium.Env):
    metadata = {"render_modes": RENDER_MODES, "render_fps": 60}

    def __init__(self, config: Optional[PongConfig] = None, render_mode: Optional[str] = None,
                 **config_overrides: Any):
        self.config = _config(config, config_overrides)
        self.observation_space = _observation_space(self.config)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        _render_setup(self, render_mode, self.config)

    def render(self) -> Optional[np.ndarray]:
        """uint8[height, width + 6 * paddle_width, 3] (640 x 620 by default), or None without render_mode."""
        if self.render_mode is None:
            warn_no_render_mode("rgb_array")
            return None
        return draw_frame(self._drawn_fields(), self.config)

    def _c_seed(self, seed: Optional[int]) -> int:
        refuse_bool_seed(seed)
        if seed is not None:
            if not -_C_SEED_LIMIT <= seed < _C_SEED_LIMIT:
                raise ValueError(f"seed must fit a C int, got {seed}")
            return int(seed)
        return int(self.np_random.integers(_C_SEED_LIMIT))


class CPongEnv(_PongEnvBase):
    """envport/Pong-v0: one PufferLib C Pong."""

    def __init__(self, config: Optional[PongConfig] = None, render_mode: Optional[str] = None,
                 **config_overrides: Any):
        super().__init__(config, render_mode, **config_overrides)
        self._env = CPongVec(num_envs=1, seed=0, config=self.config, private_streams=True)
        self._needs_reset = True

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        observation = self._env.reset(self._c_seed(seed))[0].copy()
        self._needs_reset = False
        return observation, {}

    def step(self, action):
        if self._needs_reset:
            raise RuntimeError("call reset() before step()")
        observations, rewards, terminals = self._env.step(np.asarray([_single_action(action)]))
        return observations[0].copy(), float(rewards[0]), bool(terminals[0]), False, {}

    def _drawn_fields(self) -> dict:
        if self._needs_reset:
            raise RuntimeError("call reset() before render()")
        return self._env.internal_state(0)

    def close(self):
        self._env.close()


class JaxPongEnv(_PongEnvBase):
    """envport/PongJax-v0: one JAX Pong, stepped through jitted functions."""

    def __init__(self, config: Optional[PongConfig] = None, render_mode: Optional[str] = None,
                 **config_overrides: Any):
        refuse_if_forked_from_jax("envport/PongJax-v0")
        super().__init__(config, render_mode, **config_overrides)
        self.params = jax_pong.EnvParams.from_config(self.config)
        self._reset_fn = jax.jit(partial(jax_pong.reset_from_seed, params=self.params))
        self._step_fn = jax.jit(lambda state, action: jax_pong.step(None, state, action, self.params))
        self._state = None

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        observation, self._state = self._reset_fn(np.uint32(self._c_seed(seed) % 2**32))
        return np.asarray(observation), {}

    def step(self, action):
        if self._state is None:
            raise RuntimeError("call reset() before step()")
        observation, self._state, reward, done, _ = self._step_fn(self._state, jnp.int32(_single_action(action)))
        return np.asarray(observation), float(reward), bool(done), False, {}

    def _drawn_fields(self) -> dict:
        if self._state is None:
            raise RuntimeError("call reset() before render()")
        return jax.device_get({name: getattr(self._state, name) for name in _DRAWN_FIELDS})


class _PongVectorBase(VectorEnv):
    metadata = {"render_modes": RENDER_MODES, "render_fps": 60, "autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, num_envs: int, config: Optional[PongConfig], render_mode: Optional[str],
                 config_overrides: dict):
        self.num_envs = checked_num_envs(num_envs)
        self.config = _config(config, config_overrides)
        _render_setup(self, render_mode, self.config)
        self.single_observation_space = _observation_space(self.config)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self._np_random_seed = None
        self._seeded = False
        self._episode_seeds = EpisodeSeeds(self.num_envs)  # for list resets: each env's own generator

    def _vector_seed(self, seed: Optional[int]) -> int:
        refuse_bool_seed(seed)
        if seed is None:
            if not self._seeded:
                self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(None)
                self._seeded = True
            return int(self._np_random.integers(_C_SEED_LIMIT // self.num_envs))
        self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(seed)
        self._seeded = True
        return int(seed)

    def _env_seeds(self, seed, options: Optional[dict]) -> np.ndarray:
        """Each env's C seed: options["env_seeds"] (one per env) if given; else a list of num_envs seeds,
        as Gymnasium's vector envs take them (env i plays as a single env reset with seed[i]); else
        i + seed * num_envs, as PufferLib's vec_reset."""
        listed = isinstance(seed, (list, tuple)) or (isinstance(seed, np.ndarray) and seed.ndim == 1)
        per_env = self._per_env_seeds(seed) if listed else None
        base = self._vector_seed(_list_seed(per_env) if listed else seed)
        if options and "env_seeds" in options:
            return validate_env_seeds(options["env_seeds"], self.num_envs)
        if listed:
            return per_env
        return ((np.arange(self.num_envs, dtype=np.int64) + base * self.num_envs) % 2**32).astype(np.uint32)

    def _per_env_seeds(self, seeds) -> np.ndarray:
        """Each env's C seed for a list reset, drawn as env i's single env draws it: seeds[i] itself, or
        for a None entry the next seed from env i's own generator (seeded by its last listed seed)."""
        if len(seeds) != self.num_envs:
            raise ValueError(f"a list of seeds needs one per env: got {len(seeds)} for {self.num_envs} envs "
                             "(or pass one int: env i is then seeded with i + seed * num_envs, as in PufferLib)")
        per_env = self._episode_seeds.per_env(seeds)  # ints >= 0 or None, as a single env takes them
        too_big = [seed for seed in per_env if seed is not None and seed >= _C_SEED_LIMIT]
        if too_big:
            raise ValueError(f"each seed must be a non-negative C int, in [0, 2**31), got {too_big[0]}")
        return np.asarray([self._episode_seeds.episode_seed(index, seed) for index, seed in enumerate(per_env)],
                          dtype=np.uint32)

    def _check_actions(self, actions) -> np.ndarray:
        return check_discrete_actions(actions, self.num_envs, NUM_ACTIONS, ACTION_MEANING)

    def render(self) -> Optional[tuple[np.ndarray, ...]]:
        """One frame per env (as Gymnasium's SyncVectorEnv gives them), or None without render_mode."""
        if self.render_mode is None:
            warn_no_render_mode("rgb_array")
            return None
        return tuple(draw_frame(fields, self.config) for fields in self._drawn_fields())


class CPongVectorEnv(_PongVectorBase):
    """num_envs C Pongs stepped by one C call per step, as PufferLib steps them.

    private_streams=True gives each env its own libc rand() state (CPongVec), so that env i serves
    as JaxPongVectorEnv's env i does: the two vector envs then replay each other exactly."""

    def __init__(self, num_envs: int = 1, config: Optional[PongConfig] = None, private_streams: bool = False,
                 render_mode: Optional[str] = None, **config_overrides: Any):
        super().__init__(num_envs, config, render_mode, config_overrides)
        self._env = CPongVec(num_envs=self.num_envs, seed=0, config=self.config, private_streams=private_streams)
        self._needs_reset = True

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        observations = self._env.reset_each(self._env_seeds(seed, options)).copy()
        self._needs_reset = False
        return observations, {}

    def step(self, actions):
        if self._needs_reset:  # C would step games that were never served
            raise RuntimeError("call reset() before step()")
        observations, rewards, terminals = self._env.step(self._check_actions(actions))
        return (observations.copy(), rewards.copy(), terminals.astype(bool),
                np.zeros(self.num_envs, dtype=bool), {})

    def _drawn_fields(self) -> list[dict]:
        if self._needs_reset:
            raise RuntimeError("call reset() before render()")
        return [self._env.internal_state(i) for i in range(self.num_envs)]

    def close_extras(self, **kwargs):
        self._env.close()


class JaxPongVectorEnv(_PongVectorBase):
    """num_envs JAX Pongs, vmapped; each has its own rand() stream."""

    def __init__(self, num_envs: int = 1, config: Optional[PongConfig] = None, render_mode: Optional[str] = None,
                 **config_overrides: Any):
        refuse_if_forked_from_jax("JaxPongVectorEnv")
        super().__init__(num_envs, config, render_mode, config_overrides)
        self.params = jax_pong.EnvParams.from_config(self.config)
        self._reset_fn = jax.jit(jax.vmap(partial(jax_pong.reset_from_seed, params=self.params)))
        self._step_fn = jax.jit(jax.vmap(lambda s, a: jax_pong.step(None, s, a, self.params)))
        self._state = None

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        seeds = self._env_seeds(seed, options)
        observations, self._state = self._reset_fn(jnp.asarray(seeds))
        return np.asarray(observations), {}

    def step(self, actions):
        if self._state is None:
            raise RuntimeError("call reset() before step()")
        actions = jnp.asarray(self._check_actions(actions))
        observations, self._state, rewards, dones, _ = self._step_fn(self._state, actions)
        return (np.asarray(observations), np.asarray(rewards), np.asarray(dones),
                np.zeros(self.num_envs, dtype=bool), {})

    def _drawn_fields(self) -> list[dict]:
        if self._state is None:
            raise RuntimeError("call reset() before render()")
        batched = jax.device_get({name: getattr(self._state, name) for name in _DRAWN_FIELDS})
        return [{name: values[i] for name, values in batched.items()} for i in range(self.num_envs)]

