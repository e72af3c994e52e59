"""Gymnasium env of a TCG Pocket battle on the Python reference engine:

    envport/TcgPocketReference-v0   this module's TcgReferenceEnv
    envport/TcgPocketJax-v0         the same env on the JAX engine (jax/gym_env.py), with a native
                                    vector env for make_vec (jax/vector_env.py)

The agent is player 0 against an opponent that picks uniformly among its legal actions. One step is
one decision of the agent (setup placements, main-phase actions, promotions); the opponent's
decisions in between are played inside step(). Reward: +1 for a win, -1 for a loss, 0 for a draw
(R-5.5, R-5.7), given when the episode ends. The observation is reference/observation.py's vector
from the agent's view; its last 111 values are the legal-action mask (also in info["action_mask"]).

Decks: `decks=("fire", "water")` names two fixed decks (reference/decks.py), "random" draws a random
legal deck for each player per episode (from the episode seed), "fixed" a pair of the fixed decks per
episode (from the seed: `fixed_pair`), the distribution the JAX env's fixed bank plays. reset(seed=s) fixes the decks, the
game's random stream (seed s) and the opponent's choices (its own stream, seed s + OPPONENT_SALT):
the same seed and actions give the same trajectory. Bad input raises ValueError: an action that is
not an integer in [0, 111), or an illegal one (the message gives the rule) unless the env is made
with illegal_action="lose", which ends the episode as a loss. render_mode="ansi": render() gives the last
observation as text (describe.py; the agent's view, the same on both engines).
"""

from __future__ import annotations

from typing import Any, Optional, Union

import gymnasium
import numpy as np
from gymnasium import spaces

from envs.tcgjax.describe import describe_observation
from envs.tcgjax.reference import actions as A
from envs.tcgjax.reference import engine as E
from envs.tcgjax.reference.config import RuleConfig
from envs.tcgjax.reference.decks import FIXED_DECKS, fixed_deck, random_deck
from envs.tcgjax.reference.observation import MASK_SLICE, OBS_SIZE, observe
from envs.tcgjax.reference.rng import Stream
from envs.tcgjax.reference.state import DRAW
from shared.discrete_action import check_discrete_action
from shared.render_mode import checked_render_mode, warn_no_render_mode

OPPONENT_SALT = 0x0DDBA11
AGENT = 0
ILLEGAL_ACTION_MODES = ("raise", "lose")
# the game's stream takes the seed and the opponent's stream seed + OPPONENT_SALT, each below 2**64
SEED_LIMIT = 2**64 - OPPONENT_SALT
SEED_LIMIT_REASON = "the opponent's stream is seeded with seed + 0x0DDBA11, below 2**64: seeds must be below"


FIXED_NAMES = tuple(sorted(FIXED_DECKS))  # the JAX env's fixed bank, in its index order


def fixed_pair(seed: int) -> tuple[int, int]:
    """The fixed-deck pair (indices into FIXED_NAMES) of an episode of decks="fixed": all 36 pairs
    equally often over consecutive seeds, the agent's deck the faster-changing index."""
    n = len(FIXED_NAMES)
    return seed % n, (seed // n) % n


def checked_decks(decks: Any) -> Union[str, tuple[str, str]]:
    """"random", "fixed", or a pair of fixed deck names (a tuple, or a list as a JSON spec gives it back)."""
    if decks in ("random", "fixed"):
        return decks
    if isinstance(decks, (tuple, list)) and len(decks) == 2:
        unknown = [name for name in decks if name not in FIXED_DECKS]
        if not unknown:
            return (decks[0], decks[1])
        raise ValueError(f"no fixed deck named {unknown[0]!r}; the fixed decks are {sorted(FIXED_DECKS)}")
    raise ValueError(f"decks is 'random', 'fixed' or a pair of fixed deck names from {sorted(FIXED_DECKS)}, "
                     f"got {decks!r}")


def episode_decks(decks: Union[str, tuple[str, str]], seed: int) -> tuple[E.Deck, E.Deck]:
    decks = checked_decks(decks)
    if decks == "random":
        return random_deck(2 * seed), random_deck(2 * seed + 1)
    if decks == "fixed":
        mine, theirs = fixed_pair(seed)
        return fixed_deck(FIXED_NAMES[mine]), fixed_deck(FIXED_NAMES[theirs])
    return fixed_deck(decks[0]), fixed_deck(decks[1])


def check_settings(illegal_action: Any, config: Any, max_decisions: Any) -> None:
    """The constructor arguments both engines' envs take, checked when the env is made."""
    if illegal_action not in ILLEGAL_ACTION_MODES:
        raise ValueError(f"illegal_action must be one of {ILLEGAL_ACTION_MODES}, got {illegal_action!r}")
    if not isinstance(config, RuleConfig):
        raise ValueError(f"config must be a RuleConfig (envs/tcgjax/reference/config.py), got {config!r}")
    if isinstance(max_decisions, (bool, np.bool_)) or not isinstance(max_decisions, (int, np.integer)) \
            or max_decisions < 1:
        raise ValueError(f"max_decisions must be a whole number >= 1, got {max_decisions!r}")


def check_seed(seed: Any) -> None:
    """reset's seed, before anything changes (Gymnasium checks its type and sign)."""
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)) and seed >= SEED_LIMIT:
        raise ValueError(f"seed must be in [0, 2**64 - 0x0DDBA11) ({SEED_LIMIT_REASON} {SEED_LIMIT}), got {seed}")


def opponent_choice(stream: Stream, mask: list[bool]) -> int:
    """Uniform among the legal actions: below(number legal), legal actions in index order."""
    legal = [a for a, ok in enumerate(mask) if ok]
    return legal[stream.below(len(legal))]


def validate_action(action: Any) -> int:
    return check_discrete_action(action, A.NUM_ACTIONS, "see envs/tcgjax/reference/actions.py")


RENDER_MODES = ["ansi"]


def render_text(env) -> Optional[str]:
    """render() of both TCG envs: the last observation as text (describe.py), or None without render_mode."""
    if env.render_mode is None:
        warn_no_render_mode("ansi")
        return None
    if env._last_obs is None:
        raise RuntimeError("call reset() before render()")
    return describe_observation(env._last_obs, env.config.max_turns)


class TcgReferenceEnv(gymnasium.Env):
    metadata = {"render_modes": RENDER_MODES, "render_fps": 4}  # 4: as Gymnasium's text envs (Taxi, Blackjack)

    def __init__(self, decks: Union[str, tuple[str, str]] = ("fire", "water"), illegal_action: str = "raise",
                 config: RuleConfig = RuleConfig(), max_decisions: int = 2000, render_mode: Optional[str] = None):
        self.render_mode = checked_render_mode(render_mode, RENDER_MODES)
        check_settings(illegal_action, config, max_decisions)
        decks = checked_decks(decks)
        self.decks, self.illegal_action, self.config, self.max_decisions = decks, illegal_action, config, max_decisions
        self.observation_space = spaces.Box(0.0, 1.0, shape=(OBS_SIZE,), dtype=np.float32)
        self.action_space = spaces.Discrete(A.NUM_ACTIONS)
        self.game: Optional[E.Game] = None
        self._opponent: Optional[Stream] = None
        self._decisions = 0
        self._done = True
        self._last_obs: Optional[np.ndarray] = None

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        check_seed(seed)
        super().reset(seed=seed)
        if seed is None:
            seed = int(self.np_random.integers(2**31))
        deck0, deck1 = episode_decks(self.decks, seed)
        self.game = E.new_game(deck0, deck1, seed, self.config)
        self._opponent = Stream(seed + OPPONENT_SALT)
        self._decisions, self._done = 0, False
        self._play_opponent()
        obs = observe(self.game, AGENT)
        return obs, self._info(obs)

    def _play_opponent(self) -> None:
        game = self.game
        while game.winner == E.ONGOING and game.decision_player != AGENT:
            E.step(game, opponent_choice(self._opponent, E.action_mask(game)))

    def _info(self, obs: np.ndarray) -> dict:
        """The mask is the observation's own (computed once per step: it is most of a step's cost). Every
        reset and step passes its observation here, which render() shows."""
        self._last_obs = obs
        game = self.game
        return {"action_mask": obs[MASK_SLICE[0]:MASK_SLICE[1]] > 0.5, "turn": game.turn, "winner": game.winner,
                # an array, so that a vector env's info holds (num_envs, 2) integers, not tuples
                "points": np.array([game.players[0].points, game.players[1].points], np.int64)}

    def render(self) -> Optional[str]:
        """The agent's view of the game as text (render_mode="ansi"): the same text on both engines."""
        return render_text(self)

    def _reward(self) -> float:
        winner = self.game.winner
        return 0.0 if winner in (E.ONGOING, DRAW) else (1.0 if winner == AGENT else -1.0)

    def step(self, action):
        if self.game is None:
            raise RuntimeError("call reset() before step()")
        if self._done:  # a finished game, or one truncated at max_decisions (the JAX env refuses both alike)
            raise RuntimeError("the episode has ended: call reset() before step()")
        value = validate_action(action)
        reason = E.why_illegal(self.game, value)
        if reason is not None:
            if self.illegal_action == "raise":
                raise ValueError(f"action {value} ({A.decode(value)}) is illegal: {reason}; legal actions: "
                                 f"{E.legal_actions(self.game)}")
            self.game.winner, self.game.phase = 1 - AGENT, "over"
            self._done = True
            obs = observe(self.game, AGENT)
            return obs, -1.0, True, False, {**self._info(obs), "illegal_action": True}
        E.step(self.game, value)
        self._play_opponent()
        self._decisions += 1
        terminated = self.game.winner != E.ONGOING
        truncated = not terminated and self._decisions >= self.max_decisions
        self._done = terminated or truncated
        obs = observe(self.game, AGENT)
        return obs, self._reward(), terminated, truncated, self._info(obs)

