"""envport/TcgPocketJax-v0's native vector env: `gymnasium.make_vec("envport/TcgPocketJax-v0", num_envs=N)`.

All N games advance in one jitted call (env.py's `play_batch`, with its gathering of the last games
whose opponent is still deciding) instead of N calls through Gymnasium's SyncVectorEnv
(`vectorization_mode="sync"`, still available). The episodes are the same: env i is the single env
(gym_env.py) reset with seed + i (or with a seed from its own generator when reset without one), step
for step, through episode ends and Gymnasium's autoreset as SyncVectorEnv makes it under the same
`autoreset_mode`: NEXT_STEP (the default: the step after an episode ends starts the next one in that
env, ignores its action and returns reward 0) or SAME_STEP (a finished env starts its next episode in
the step that ends the last, whose observation and info go to info["final_obs"] and
info["final_info"]). The info is SyncVectorEnv's too: each key with its `_key` mask, "illegal_action"
only in a step where some env played one. A test plays both side by side. Each episode's decks are
chosen on the host from its seed (gym_envs.episode_decks), so every deck option of the single env
works here.

Bad input is an error before any game moves: actions must be an integer array of shape (N,) in
[0, 111), and with illegal_action="raise" (the default) the action of every env that is not starting
a new episode must be legal (info["action_mask"]). With illegal_action="lose" an illegal action ends
that env's episode as a loss.
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

from envs.tcgjax.describe import describe_observation
from envs.tcgjax.gym_envs import RENDER_MODES, SEED_LIMIT, SEED_LIMIT_REASON
from envs.tcgjax.jax.env import NO_ACTION
from envs.tcgjax.jax.gym_env import check_arguments, episode_inputs, functional_env, illegal_action_message
from envs.tcgjax.reference import actions as A
from envs.tcgjax.reference.config import RuleConfig
from envs.tcgjax.reference.observation import MASK_SLICE, OBS_SIZE
from shared.episode_seeds import EpisodeSeeds, SeedArgument
from shared.jax_fork_guard import refuse_if_forked_from_jax
from shared.render_mode import checked_render_mode, warn_no_render_mode
from shared.vector_actions import check_discrete_actions
from shared.vector_settings import checked_autoreset_mode, checked_num_envs


@functools.cache
def _batched_functions(gather: bool, config: RuleConfig = RuleConfig()) -> tuple[Any, Any]:
    """(advance, empty states) for every vector env of the process. advance starts a new episode in
    the lanes flagged `starting` (from decks and seeds chosen on the host) and plays one decision in
    every lane: NO_ACTION in the starting lanes (the opponent's opening decisions), the agent's action
    in the others. One jitted function, so that one compile (minutes on 2 cores) serves reset and step."""
    env = functional_env(config)
    new_episodes = jax.vmap(env.new_episode)

    def started(states, inputs, starting):
        return jax.tree_util.tree_map(lambda new, old: jnp.where(starting.reshape((-1,) + (1,) * (old.ndim - 1)), new, old),
                                      new_episodes(*inputs), states)

    def advance(states, inputs, starting, actions):
        # most steps start no episode: skip the new games' setup (shuffles, draws) then
        states = jax.lax.cond(jnp.any(starting), started, lambda states, *_: states, states, inputs, starting)
        actions = jnp.where(starting, NO_ACTION, actions)
        obs, states, rewards, terminated, _ = (env.play_batch if gather else jax.vmap(env.play))(states, actions)
        game = states.game
        return states, obs, rewards, terminated, game.winner, game.turn, game.points

    def empty_states(inputs):
        return jax.tree_util.tree_map(lambda s: jnp.zeros(s.shape, s.dtype), jax.eval_shape(new_episodes, *inputs))

    return jax.jit(advance), empty_states


@jax.jit
def _select(lanes: jax.Array, new, old):
    """`new` in the lanes set in `lanes`, else `old`, leaf by leaf (one jitted call for the whole state)."""
    return jax.tree_util.tree_map(lambda a, b: jnp.where(lanes.reshape((-1,) + (1,) * (a.ndim - 1)), a, b), new, old)


class TcgJaxVectorEnv(VectorEnv):
    """N games of the JAX engine, advanced together; see the module docstring."""

    metadata = {"render_modes": RENDER_MODES, "render_fps": 4, "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int = 1, decks: Union[str, tuple[str, str]] = ("fire", "water"),
                 illegal_action: str = "raise", config: RuleConfig = RuleConfig(), max_decisions: int = 2000,
                 gather: bool = True, render_mode: Optional[str] = None,
                 autoreset_mode: Union[AutoresetMode, str] = AutoresetMode.NEXT_STEP):
        refuse_if_forked_from_jax("TcgJaxVectorEnv")
        self.render_mode = checked_render_mode(render_mode, RENDER_MODES)
        self.num_envs = checked_num_envs(num_envs)
        self.autoreset_mode = checked_autoreset_mode(autoreset_mode)
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        decks = check_arguments(decks, illegal_action, config, max_decisions)
        if not isinstance(gather, (bool, np.bool_)):
            raise ValueError(f"gather must be a bool, got {gather!r}")
        filler = episode_inputs(decks, 0, config)
        self._filler_batch = tuple(jnp.asarray(np.stack([part] * self.num_envs)) for part in filler)
        self.decks, self.illegal_action, self.config, self.max_decisions = decks, illegal_action, config, max_decisions
        self._advance, self._empty_states = _batched_functions(bool(gather), config)
        self.single_observation_space = spaces.Box(0.0, 1.0, shape=(OBS_SIZE,), dtype=np.float32)
        self.single_action_space = spaces.Discrete(A.NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        # each env's episode seeds, as the single envs draw theirs (and within their range)
        self._seeds = EpisodeSeeds(self.num_envs, limit=SEED_LIMIT, limit_reason=SEED_LIMIT_REASON)
        self._states = None
        self._obs = np.zeros((self.num_envs, OBS_SIZE), np.float32)
        self._masks = np.zeros((self.num_envs, A.NUM_ACTIONS), bool)
        self._decisions = np.zeros(self.num_envs, np.int64)
        self._needs_reset = np.ones(self.num_envs, bool)
        self._started = False

    # -- decks -----------------------------------------------------------------------------------

    def _inputs(self, starting: np.ndarray, seeds: Sequence[Optional[int]]) -> tuple[Any, ...]:
        """new_episode's arguments for every lane: a new episode's in the starting lanes, seed 0's in
        the others (a game computed, then not selected). Most steps start no episode: they pass the
        same seed-0 batch, kept on the device."""
        if not starting.any():
            return self._filler_batch
        batch = tuple(np.array(part) for part in self._filler_batch)
        for lane in np.flatnonzero(starting):
            for part, value in zip(batch, episode_inputs(self.decks, self._seeds.episode_seed(lane, seeds[lane]), self.config),
                                   strict=True):
                part[lane] = value
        return batch

    # -- reset and step --------------------------------------------------------------------------

    def _run(self, starting: np.ndarray, seeds: Sequence[Optional[int]], actions: np.ndarray):
        """One call of advance; returns (rewards, terminated) per lane and sets the observations."""
        inputs = self._inputs(starting, seeds)
        states = self._states if self._states is not None else self._empty_states(inputs)
        self._states, obs, rewards, terminated, winner, turn, points = self._advance(
            states, inputs, jnp.asarray(starting), jnp.asarray(actions, jnp.int32))
        self._obs = np.asarray(obs)
        self._masks = self._obs[:, MASK_SLICE[0]:MASK_SLICE[1]] > 0.5
        # the single env's info values, batched as SyncVectorEnv batches them (Python ints: int64)
        self._info = {"action_mask": self._masks.copy(), "turn": np.asarray(turn, np.int64),
                      "winner": np.asarray(winner, np.int64), "points": np.asarray(points, np.int64)}
        self._decisions[starting] = 0
        return np.asarray(rewards), np.asarray(terminated)

    def _start_in_place(self, lanes: np.ndarray) -> None:
        """SAME_STEP: the next episode in `lanes`, the other lanes left exactly as they are (the same
        compiled call as a step's, whose other lanes' results are not kept)."""
        kept_states, kept_obs, kept_info = self._states, self._obs, self._info
        self._run(lanes, [None] * self.num_envs, np.full(self.num_envs, NO_ACTION, np.int32))
        self._states = _select(jnp.asarray(lanes), self._states, kept_states)
        self._obs = np.where(lanes[:, None], self._obs, kept_obs)
        self._masks = self._obs[:, MASK_SLICE[0]:MASK_SLICE[1]] > 0.5
        self._info = {key: np.where(lanes.reshape((-1,) + (1,) * (value.ndim - 1)), self._info[key], value)
                      for key, value in kept_info.items()}

    def reset(self, *, seed: SeedArgument = None, options: Optional[dict] = None):
        super().reset(seed=seed if isinstance(seed, (int, np.integer)) else None)
        starting = np.ones(self.num_envs, bool)
        self._run(starting, self._seeds.per_env(seed), np.full(self.num_envs, NO_ACTION, np.int32))
        self._needs_reset[:] = False
        self._started = True
        return self._obs.copy(), self._batched_info(self._info, np.ones(self.num_envs, bool))

    def render(self) -> Optional[tuple[str, ...]]:
        """render_mode="ansi": each env's last observation as text (describe.py), a tuple as
        Gymnasium's SyncVectorEnv gives its single envs' texts; None without render_mode."""
        if self.render_mode is None:
            warn_no_render_mode("ansi")
            return None
        if not self._started:
            raise RuntimeError("call reset() before render()")
        return tuple(describe_observation(obs, self.config.max_turns) for obs in self._obs)

    def step(self, actions: Any):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        actions = check_discrete_actions(actions, self.num_envs, A.NUM_ACTIONS)
        starting = self._needs_reset.copy()
        legal = self._masks[np.arange(self.num_envs), actions] | starting
        if not np.all(legal) and self.illegal_action == "raise":
            bad = int(np.flatnonzero(~legal)[0])
            raise ValueError(f"env {bad} of envs {np.flatnonzero(~legal).tolist()} with illegal actions: "
                             f"{illegal_action_message(int(actions[bad]), self._masks[bad])}; nothing was played")
        # an illegal action (illegal_action="lose") is played too: play ends that game as a loss
        rewards, terminated = self._run(starting, [None] * self.num_envs, actions)
        moved = ~starting
        illegal = moved & ~legal
        self._decisions[moved & legal] += 1
        terminated = moved & terminated
        truncated = moved & ~terminated & (self._decisions >= self.max_decisions)
        rewards = np.where(moved, rewards, np.float32(0.0))  # a starting lane's step gives 0
        finished = terminated | truncated
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            self._needs_reset = finished
            return self._obs.copy(), rewards, terminated, truncated, self._step_info(illegal, np.ones(self.num_envs, bool))
        final: dict[str, Any] = {}
        if finished.any():
            final_obs = np.full(self.num_envs, None, dtype=object)
            for lane in np.flatnonzero(finished):
                final_obs[lane] = self._obs[lane].copy()
            final = {"final_obs": final_obs, "_final_obs": finished.copy(),
                     "final_info": self._step_info(illegal & finished, finished), "_final_info": finished.copy()}
            self._start_in_place(finished)
        # at the top, a restarted env's reset info and the others' step info, as SyncVectorEnv puts them:
        # the same keys, which the last values now hold for both
        info = self._step_info(illegal & ~finished, np.ones(self.num_envs, bool))
        return self._obs.copy(), rewards, terminated, truncated, {**info, **final}

    def _batched_info(self, values: dict[str, np.ndarray], present: np.ndarray) -> dict[str, Any]:
        """The keys of `values` as SyncVectorEnv lays them out for the envs where `present` (zeros elsewhere),
        each with its `_key` mask."""
        info: dict[str, Any] = {}
        for key, value in values.items():
            info[key] = np.where(present.reshape((-1,) + (1,) * (value.ndim - 1)), value, np.zeros_like(value))
            info[f"_{key}"] = present.copy()
        return info

    def _step_info(self, illegal: np.ndarray, present: np.ndarray) -> dict[str, Any]:
        """The step infos of the envs where `present`: the last _run's values, and illegal_action where
        an env played one (a single env's info has the key only then)."""
        info = self._batched_info(self._info, present)
        if illegal.any():
            info["illegal_action"], info["_illegal_action"] = illegal.copy(), illegal.copy()
        return info
