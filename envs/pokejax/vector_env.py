"""envport/PokeJax-v0's native vector env: `gymnasium.make_vec("envport/PokeJax-v0", num_envs=N)`.

All N battles step in one jitted, vmapped call of the functional env (jax/env.py) instead of N calls
through Gymnasium's SyncVectorEnv (`vectorization_mode="sync"`, still available). The episodes are the
same: env i is the single env `envport/PokeJax-v0` reset with seed + i (or with a seed from its own
generator when reset without one), step for step, through episode ends and Gymnasium's autoreset as
SyncVectorEnv makes it under the same `autoreset_mode`: NEXT_STEP (the default: the step after an
episode ends resets that env, ignores its action and returns reward 0) or SAME_STEP (a finished env
resets in the step that ends its episode, whose observation and info go to info["final_obs"] and
info["final_info"]), with the same keys drawn in the same order (a test plays both side by side).

render_mode="ansi": render() gives each env's battle as text (render.py), a tuple as SyncVectorEnv gives
its single envs' texts; a finished battle shows as it ended until its env resets.

Bad input is an error before any battle moves: actions must be an integer array of shape (N,) in
[0, 9), and with illegal_action="raise" (the default) every action of an env that is not resetting must
be legal (info["action_mask"]). With illegal_action="lose" an illegal action ends that env's episode as
a loss, its battle left where it was, as the single env does.
"""

from __future__ import annotations

import functools
from typing import Any, Optional, Sequence, Union

import jax
import jax.numpy as jnp
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from shared.episode_seeds import EpisodeSeeds, SeedArgument
from shared.jax_fork_guard import refuse_if_forked_from_jax
from shared.render_mode import checked_render_mode, warn_no_render_mode
from shared.vector_actions import check_discrete_actions
from shared.vector_settings import checked_autoreset_mode, checked_num_envs

from .gym_envs import ILLEGAL_ACTION_MODES, RENDER_MODES, SEED_LIMIT, _shared_env
from .jax import battle as jb
from .jax import prng
from .jax.env import CUSTOM_GAME, OBS_SIZE, EnvParams
from .render import battle_text, jax_view


@functools.cache
def _batched_functions(kind: str) -> tuple[Any, Any]:
    """The jitted batched reset and step for a PRNG kind, shared by every vector env of the process
    (a jit compiles once per function object; the battle step takes a minute or more on a CPU)."""
    env = _shared_env(kind).env  # the single envs' functional env: its tables are built once

    def reset_one(key: jax.Array, params: EnvParams):
        # the single env's first _next_key() after PRNGKey(seed)
        key, reset_key = jax.random.split(key)
        obs, state = env.reset(reset_key, params)
        return key, obs, state, env.legal_mask(state)

    def step_one(key: jax.Array, state, action: jax.Array, moves: jax.Array, params: EnvParams):
        next_key, step_key = jax.random.split(key)
        # without the auto-reset: a finished battle stays as it ended (render() shows it) until its env
        # resets (the next step, or this one under SAME_STEP) through _reset_lanes, as the single env's reset()
        obs, next_state, _, _, info = env.step_env(step_key, state, action, params)
        # lanes that do not step keep their key and battle (resetting lanes, illegal actions)
        key = jnp.where(moves, next_key, key)
        state = jax.tree_util.tree_map(lambda new, old: jnp.where(moves, new, old), next_state, state)
        outcome = (info["won"], info["lost"], info["drawn"])
        return key, state, obs, info["action_mask"], outcome

    batched_reset = jax.jit(jax.vmap(reset_one, in_axes=(0, None)))
    batched_step = jax.jit(jax.vmap(step_one, in_axes=(0, 0, 0, 0, None)))
    return batched_reset, batched_step


@jax.jit
def _select(mask: jax.Array, new, old):
    """`new` where mask (a lane per leading index), else `old`, leaf by leaf (jitted: one call for
    the battle's some forty arrays, not one dispatch each)."""
    return jax.tree_util.tree_map(
        lambda a, b: jnp.where(mask.reshape(mask.shape + (1,) * (a.ndim - 1)), a, b), new, old
    )


class PokeJaxVectorEnv(VectorEnv):
    """N battles of the JAX engine, stepped together; see the module docstring."""

    metadata = {"render_modes": RENDER_MODES, "render_fps": 4, "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        num_envs: int = 1,
        kind: str = prng.SODIUM,
        max_decisions: int = 500,
        illegal_action: str = "raise",
        battle_format: str = CUSTOM_GAME,
        render_mode: Optional[str] = None,
        autoreset_mode: Union[AutoresetMode, str] = AutoresetMode.NEXT_STEP,
    ):
        refuse_if_forked_from_jax("PokeJaxVectorEnv")
        self.render_mode = checked_render_mode(render_mode, RENDER_MODES)
        if illegal_action not in ILLEGAL_ACTION_MODES:
            raise ValueError(f"illegal_action must be one of {ILLEGAL_ACTION_MODES}, got {illegal_action!r}")
        self.num_envs = checked_num_envs(num_envs)
        self.autoreset_mode = checked_autoreset_mode(autoreset_mode)
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        if kind not in prng.KINDS:
            raise ValueError(f"kind (Showdown's PRNG) must be one of {prng.KINDS}, got {kind!r}")
        self.kind = kind
        self.illegal_action = illegal_action
        self.params = EnvParams(max_decisions=max_decisions, battle_format=battle_format)
        self._batched_reset, self._batched_step = _batched_functions(kind)
        self.single_observation_space = spaces.Box(low=0.0, high=1.0, shape=(OBS_SIZE,), dtype=np.float32)
        self.single_action_space = spaces.Discrete(jb.NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        # each env's episode seeds, as the single envs draw theirs (and within their limit)
        self._seeds = EpisodeSeeds(self.num_envs, limit=SEED_LIMIT, limit_reason="jax.random.PRNGKey takes seeds below")
        self._keys = None
        self._states = None
        self._obs = np.zeros((self.num_envs, OBS_SIZE), np.float32)
        self._masks = np.zeros((self.num_envs, jb.NUM_ACTIONS), bool)
        self._decisions = np.zeros(self.num_envs, np.int64)
        self._needs_reset = np.ones(self.num_envs, bool)
        self._started = False

    # -- reset -----------------------------------------------------------------------------------

    def _reset_lanes(self, lanes: np.ndarray, seeds: Sequence[Optional[int]]) -> None:
        """Starts a new episode in each lane where `lanes` is set, from PRNGKey(its seed)."""
        keys = np.zeros((self.num_envs, 2), np.uint32) if self._keys is None else np.array(self._keys)
        for index in np.flatnonzero(lanes):
            keys[index] = np.asarray(jax.random.PRNGKey(self._seeds.episode_seed(index, seeds[index])))
        new_keys, obs, states, masks = self._batched_reset(jnp.asarray(keys), self.params)
        if self._states is None:  # the first reset starts every lane
            self._keys, self._states = new_keys, states
        else:
            self._keys = _select(lanes, new_keys, self._keys)
            self._states = _select(lanes, states, self._states)
        self._obs = np.where(lanes[:, None], np.asarray(obs), self._obs)
        self._masks = np.where(lanes[:, None], np.asarray(masks), self._masks)
        self._decisions[lanes] = 0
        self._needs_reset[lanes] = False

    def reset(self, *, seed: SeedArgument = None, options: Optional[dict] = None):
        super().reset(seed=seed if isinstance(seed, (int, np.integer)) else None)
        self._reset_lanes(np.ones(self.num_envs, bool), self._seeds.per_env(seed))
        self._started = True
        return self._obs.copy(), {"action_mask": self._masks.copy(), "_action_mask": np.ones(self.num_envs, bool)}

    def render(self) -> Optional[tuple[str, ...]]:
        """render_mode="ansi": each env's battle as text; None without render_mode."""
        if self.render_mode is None:
            warn_no_render_mode("ansi")
            return None
        if not self._started:
            raise RuntimeError("call reset() before render()")
        states = jax.device_get(self._states.battle)
        return tuple(
            battle_text(jax_view(jax.tree_util.tree_map(lambda leaf, i=i: leaf[i], states)), self._masks[i],
                        int(self._decisions[i]), self.params.max_decisions)
            for i in range(self.num_envs)
        )

    # -- step ------------------------------------------------------------------------------------

    def step(self, actions: Any):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        actions = check_discrete_actions(actions, self.num_envs, jb.NUM_ACTIONS,
                                         "actions are 0-3 (moves) and 4-8 (switches)")
        resetting = self._needs_reset.copy()
        legal = self._masks[np.arange(self.num_envs), actions] | resetting
        if not np.all(legal) and self.illegal_action == "raise":
            bad = np.flatnonzero(~legal)
            raise ValueError(
                f"illegal actions in envs {bad.tolist()}: {actions[bad].tolist()}; legal actions are "
                "info['action_mask'] (0-3 move slots, 4-8 switch to team slot 2-6); nothing was stepped"
            )
        moves = ~resetting & legal
        rewards = np.zeros(self.num_envs, np.float32)
        terminated = np.zeros(self.num_envs, bool)
        truncated = np.zeros(self.num_envs, bool)
        illegal = ~resetting & ~legal
        if np.any(moves):
            self._keys, self._states, final_obs, final_masks, outcome = self._batched_step(
                self._keys, self._states, jnp.asarray(actions), jnp.asarray(moves), self.params
            )
            won, lost, drawn = (np.asarray(flag) & moves for flag in outcome)
            self._obs = np.where(moves[:, None], np.asarray(final_obs), self._obs)
            self._masks = np.where(moves[:, None], np.asarray(final_masks), self._masks)
        else:
            won = lost = drawn = np.zeros(self.num_envs, bool)
        lost = lost | illegal  # illegal_action="lose": a loss, the battle left as it was
        stepped = moves | illegal
        self._decisions[stepped] += 1
        rewards[won] = 1.0
        rewards[lost] = -1.0
        terminated[stepped] = (won | lost | drawn)[stepped]
        truncated[stepped] = (~terminated & (self._decisions >= self.params.max_decisions))[stepped]
        self._masks[illegal] = False
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            finished = terminated | truncated
            info = self._same_step_info(finished, illegal)
            if np.any(finished):
                self._reset_lanes(finished, [None] * self.num_envs)
                info["action_mask"] = self._masks.copy()
            return self._obs.copy(), rewards, terminated, truncated, info
        # SyncVectorEnv's layout: each key with its `_key` mask; a resetting env has only its reset info
        info = {"action_mask": self._masks.copy(), "_action_mask": np.ones(self.num_envs, bool),
                "illegal_action": illegal, "_illegal_action": ~resetting}
        if np.any(resetting):
            self._reset_lanes(resetting, [None] * self.num_envs)
            info["action_mask"] = self._masks.copy()
        self._needs_reset = terminated | truncated
        return self._obs.copy(), rewards, terminated, truncated, info

    def _same_step_info(self, finished: np.ndarray, illegal: np.ndarray) -> dict[str, Any]:
        """SyncVectorEnv's info under SAME_STEP, taken before the finished envs reset: a finished env's
        step info goes under final_info (its last observation under final_obs) and its reset info (a
        mask) to the top, where the other envs' step infos are."""
        n = self.num_envs
        info: dict[str, Any] = {"action_mask": self._masks.copy(), "_action_mask": np.ones(n, bool)}
        if not finished.all():  # (a reset's info has no illegal_action: SyncVectorEnv then leaves the key out)
            info["illegal_action"], info["_illegal_action"] = illegal & ~finished, ~finished
        if finished.any():
            final_obs = np.full(n, None, dtype=object)
            for index in np.flatnonzero(finished):
                final_obs[index] = self._obs[index].copy()
            info["final_obs"], info["_final_obs"] = final_obs, finished.copy()
            info["final_info"] = {
                "action_mask": self._masks & finished[:, None], "_action_mask": finished.copy(),
                "illegal_action": illegal & finished, "_illegal_action": finished.copy(),
            }
            info["_final_info"] = finished.copy()
        return info
