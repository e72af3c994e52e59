"""envport/TcgPocketJax-v0: the Gymnasium env of gym_envs.py (envport/TcgPocketReference-v0) on the JAX
engine. The same constructor arguments, spaces, observations, rewards, ends and info, from the same
seed and actions: reset(seed=s) plays the decks `episode_decks(decks, s)`, the game seeded with s and
the opponent's stream seeded with s + OPPONENT_SALT, as the reference env does (a test plays both side
by side). One agent decision per step, the opponent's replies inside it (env.py's `play`: the
functional env's step without its auto-reset, so that an episode's last observation is returned).

Bad input raises ValueError before anything is played: an action that is not an integer in [0, 111),
or an illegal one (its name and the legal actions in the message) unless illegal_action="lose", which
ends the episode as a loss. `config` (RuleConfig) is honoured as the reference honours it, up to the JAX
state's capacities (a hand_limit above 10 or max_energy_types above 3 is a ValueError); each config
compiles its own engine (once per process). `gymnasium.make_vec("envport/TcgPocketJax-v0", num_envs=N)` gives the native
vector env (vector_env.py)."""

from __future__ import annotations

import functools
from typing import Any, Optional, Union

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
from gymnasium import spaces

from envs.tcgjax.gym_envs import (
    OPPONENT_SALT,
    RENDER_MODES,
    check_seed,
    check_settings,
    checked_decks,
    episode_decks,
    render_text,
    validate_action,
)
from envs.tcgjax.jax.env import NO_ACTION, TcgJaxEnv, deck_arrays
from envs.tcgjax.jax.tables import check_capacity
from envs.tcgjax.reference import actions as A
from envs.tcgjax.reference.config import RuleConfig
from envs.tcgjax.reference.observation import MASK_SLICE, OBS_SIZE
from envs.tcgjax.reference.rng import seed_keys
from shared.jax_fork_guard import refuse_if_forked_from_jax
from shared.render_mode import checked_render_mode


@functools.cache
def functional_env(config: RuleConfig = RuleConfig()) -> TcgJaxEnv:
    """One functional env per process and config (its tables are built once), shared by the Gymnasium envs."""
    return TcgJaxEnv(config=config)


@functools.cache
def _single_functions(config: RuleConfig = RuleConfig()) -> tuple[Any, Any]:
    """The jitted new_episode and play, compiled once per process and config (play takes a minute or more)."""
    env = functional_env(config)
    return jax.jit(env.new_episode), jax.jit(env.play)


def episode_inputs(decks: Union[str, tuple[str, str]], seed: int,
                   config: RuleConfig = RuleConfig()) -> tuple[np.ndarray, ...]:
    """new_episode's arguments for the episode of seed `seed`: the decks as gym_envs.episode_decks
    chooses them (checked under `config`, as the reference's new_game checks them), and the seed's
    32-bit halves."""
    for stream_seed in (seed, seed + OPPONENT_SALT):  # the game's and the opponent's, as the reference seeds them
        seed_keys(stream_seed)  # the reference's range check: ValueError outside [0, 2**64)
    return (*deck_arrays(episode_decks(decks, seed), config), np.uint32(seed & 0xFFFFFFFF), np.uint32(seed >> 32))


def check_arguments(decks, illegal_action: str, config: RuleConfig, max_decisions: int) -> Union[str, tuple[str, str]]:
    """The reference env's checks, and the JAX state's capacities (jax/tables.py check_capacity);
    returns the decks as the envs keep them (a pair as a tuple)."""
    check_settings(illegal_action, config, max_decisions)
    check_capacity(config)
    return checked_decks(decks)


def illegal_action_message(value: int, mask: np.ndarray) -> str:
    return (f"action {value} ({A.decode(value)}) is illegal now; legal actions: {np.flatnonzero(mask).tolist()} "
            "(info['action_mask']; envs/tcgjax/reference/actions.py names them)")


class TcgJaxGymEnv(gymnasium.Env):
    metadata = {"render_modes": RENDER_MODES, "render_fps": 4}  # 4: as Gymnasium's text envs (Taxi, Blackjack)

    def __init__(self, decks: Union[str, tuple[str, str]] = ("fire", "water"), illegal_action: str = "raise",
                 config: RuleConfig = RuleConfig(), max_decisions: int = 2000, render_mode: Optional[str] = None):
        refuse_if_forked_from_jax("envport/TcgPocketJax-v0")
        self.render_mode = checked_render_mode(render_mode, RENDER_MODES)
        decks = check_arguments(decks, illegal_action, config, max_decisions)
        self.decks, self.illegal_action, self.config, self.max_decisions = decks, illegal_action, config, max_decisions
        self.observation_space = spaces.Box(0.0, 1.0, shape=(OBS_SIZE,), dtype=np.float32)
        self.action_space = spaces.Discrete(A.NUM_ACTIONS)
        self._state = None
        self._mask = np.zeros(A.NUM_ACTIONS, bool)
        self._decisions = 0
        self._done = True
        self._last_obs: Optional[np.ndarray] = None

    # The jitted functions are looked up at first use, not in __init__: a constructor that starts no
    # JAX lets Gymnasium's AsyncVectorEnv make its probe env in the parent and then fork workers that
    # can still run JAX.
    @property
    def _new_episode(self):
        return _single_functions(self.config)[0]

    @property
    def _play(self):
        return _single_functions(self.config)[1]

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        check_seed(seed)
        super().reset(seed=seed)
        if seed is None:
            seed = int(self.np_random.integers(2**31))
        state = self._new_episode(*episode_inputs(self.decks, int(seed), self.config))
        obs, self._state, _, _, _ = self._play(state, jnp.int32(NO_ACTION))
        self._decisions, self._done = 0, False
        return self._observed(obs)

    def _observed(self, obs) -> tuple[np.ndarray, dict]:
        """(obs, info) of a reset or step; render() shows this obs."""
        obs = self._last_obs = np.asarray(obs)
        self._mask = obs[MASK_SLICE[0]:MASK_SLICE[1]] > 0.5
        game = self._state.game
        turn, winner, points = jax.device_get((game.turn, game.winner, game.points))  # not the whole state
        info = {"action_mask": self._mask.copy(), "turn": int(turn), "winner": int(winner),
                "points": np.asarray(points, np.int64)}
        return obs, info

    def render(self) -> Optional[str]:
        """The agent's view of the game as text (render_mode="ansi"): the reference env's text."""
        return render_text(self)

    def step(self, action):
        if self._state is None:
            raise RuntimeError("call reset() before step()")
        if self._done:
            raise RuntimeError("the episode has ended: call reset() before step()")
        value = validate_action(action)
        legal = bool(self._mask[value])
        if not legal and self.illegal_action == "raise":
            raise ValueError(illegal_action_message(value, self._mask))
        # an illegal action (illegal_action="lose") is played too: play ends the game as a loss
        obs, self._state, reward, terminated, _ = self._play(self._state, jnp.int32(value))
        obs, info = self._observed(obs)
        reward, terminated = float(reward), bool(terminated)
        if not legal:
            self._done = True
            return obs, reward, terminated, False, {**info, "illegal_action": True}
        self._decisions += 1
        truncated = not terminated and self._decisions >= self.max_decisions
        self._done = terminated or truncated
        return obs, reward, terminated, truncated, info
