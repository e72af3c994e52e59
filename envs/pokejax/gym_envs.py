"""Gymnasium envs for both PokeJAX backends, with one observation encoding (jax/env.py):

    envport/PokeJax-v0        the JAX engine (jax/battle.py), one battle, jitted
    envport/PokeShowdown-v0   the same battles played by the pinned Pokemon Showdown (reference/)

The agent is p1 of a Gen 1 battle against a uniformly random opponent (jax/env.py says which
battles, the 9 actions, the reward and the observation); battle_format="gen1randombattle" plays
Showdown's random-battle teams by its Standard ruleset instead of random teams of any moves. reset(seed=s) draws the teams,
the Showdown seed and every later opponent choice from jax.random.PRNGKey(s); both backends draw
them the same way, so the same seed and the same actions give the same trajectory on either (a
test plays both side by side). reset() without a seed draws one from the env's np_random.

render_mode="ansi" makes render() return the battle as text (render.py), the same text on both
backends when their battles agree.

Bad input is an error, never a silent substitute: an action that is not an integer in [0, 9)
raises ValueError, and so does an illegal one (a fainted Pokemon, a move with no PP, a move
during a forced switch) unless the env is made with illegal_action="lose", which ends the
episode as a loss, as the functional JAX env does. info["action_mask"] says what is legal.
Episodes end with terminated=True (a win or a loss) or truncated=True after max_decisions.
`gymnasium.make_vec("envport/PokeJax-v0", num_envs=N)` gives the native vector env (vector_env.py: the
N battles in one jitted, vmapped step, the same episodes as N single envs); `vectorization_mode="sync"`
gives Gymnasium's synchronous vector env of either backend.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple, Optional

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
from gymnasium import spaces

from shared.discrete_action import check_discrete_action
from shared.jax_fork_guard import refuse_if_forked_from_jax
from shared.render_mode import checked_render_mode, warn_no_render_mode

from .jax import battle as jb
from .jax import prng
from .jax.env import CUSTOM_GAME, OBS_SIZE, EnvParams, PokeJaxEnv, encode_observation, random_legal_action
from .jax.tables import BOOST_KEYS, STATUSES, VOLATILES, gen1_tables
from .render import BattleView, battle_text, jax_view, showdown_view
from .showdown_io import choice_string, showdown_legal, showdown_sets

ILLEGAL_ACTION_MODES = ("raise", "lose")
SEED_LIMIT = 2**63  # jax.random.PRNGKey's seeds are int64
RENDER_MODES = ["ansi"]


class _Engine(NamedTuple):
    env: PokeJaxEnv
    reset: Any
    step_env: Any  # the step without its auto-reset: an env's reset comes from reset()
    teams: Any
    encode: Any


@functools.cache
def _shared_env(kind: str) -> _Engine:
    """One functional env and its jitted reset, step_env, teams and observation encoder per PRNG kind,
    shared by every Gymnasium env of the process: a jit compiles once per function object, and the
    battle step takes most of a minute to compile on a CPU."""
    env = PokeJaxEnv(kind)
    return _Engine(env, jax.jit(env.reset), jax.jit(env.step_env), jax.jit(env.teams), jax.jit(encode_observation))


@jax.jit
def _split_step_key(key: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """(the env's next key, the turn key, the switch key): what _next_key and the JAX env's step
    split a decision's key into, in one jitted call (eager splits were a third of a Showdown step)."""
    key, step_key = jax.random.split(key)
    turn_key, switch_key, _ = jax.random.split(step_key, 3)
    return key, turn_key, switch_key


_jit_random_legal_action = jax.jit(random_legal_action)


def _validate_action(action: Any) -> int:
    return check_discrete_action(action, jb.NUM_ACTIONS, "actions are 0-3 (moves) and 4-8 (switches)")


class _PokeEnvBase(gymnasium.Env):
    metadata = {"render_modes": RENDER_MODES, "render_fps": 4}  # 4: as Gymnasium's text envs (Taxi, Blackjack)

    def __init__(
        self,
        kind: str = prng.SODIUM,
        max_decisions: int = 500,
        illegal_action: str = "raise",
        battle_format: str = CUSTOM_GAME,
        render_mode: Optional[str] = None,
    ):
        # both backends run JAX: the Showdown env draws its teams and seeds as the JAX env does
        refuse_if_forked_from_jax(type(self).__name__)
        if illegal_action not in ILLEGAL_ACTION_MODES:
            raise ValueError(f"illegal_action must be one of {ILLEGAL_ACTION_MODES}, got {illegal_action!r}")
        if kind not in prng.KINDS:  # checked here: the functional env is made at the first reset
            raise ValueError(f"kind (Showdown's PRNG) must be one of {prng.KINDS}, got {kind!r}")
        self.render_mode = checked_render_mode(render_mode, RENDER_MODES)
        self.kind = kind
        self.illegal_action = illegal_action
        self.params = EnvParams(max_decisions=max_decisions, battle_format=battle_format)
        self.observation_space = spaces.Box(low=0.0, high=1.0, shape=(OBS_SIZE,), dtype=np.float32)
        self.action_space = spaces.Discrete(jb.NUM_ACTIONS)
        self._key: Optional[jax.Array] = None
        self._mask = np.zeros(jb.NUM_ACTIONS, dtype=bool)
        self._decisions = 0
        self._done = True

    @property
    def _engine(self) -> _Engine:
        """The functional env and its jitted functions, looked up at first use, not in __init__: a
        constructor that starts no JAX lets Gymnasium's AsyncVectorEnv make its probe env in the
        parent and then fork workers that can still run JAX."""
        return _shared_env(self.kind)

    @property
    def jax_env(self) -> PokeJaxEnv:
        return self._engine.env

    def _next_key(self) -> jax.Array:
        assert self._key is not None
        self._key, key = jax.random.split(self._key)
        return key

    @staticmethod
    def _check_seed(seed: Optional[int]) -> None:
        """Before anything changes: jax.random.PRNGKey takes seeds below 2**63, Gymnasium's seeding more."""
        if seed is not None and not isinstance(seed, (bool, np.bool_)) and isinstance(seed, (int, np.integer)) \
                and seed >= SEED_LIMIT:
            raise ValueError(f"seed must be in [0, 2**63) (jax.random.PRNGKey draws the battle from it), got {seed}")

    def _start(self, seed: Optional[int]) -> jax.Array:
        if seed is None:
            seed = int(self.np_random.integers(2**31))
        self._key = jax.random.PRNGKey(seed)
        self._decisions = 0
        self._done = False
        return self._next_key()

    def _check(self, action: Any) -> tuple[int, bool]:
        if self._key is None:
            raise RuntimeError("call reset() before step()")
        if self._done:
            raise RuntimeError("the episode has ended: call reset() before step()")
        value = _validate_action(action)
        legal = bool(self._mask[value])
        if not legal and self.illegal_action == "raise":
            raise ValueError(
                f"action {value} is illegal now; legal actions: {np.flatnonzero(self._mask).tolist()} "
                "(0-3 move slots, 4-8 switch to team slot 2-6)"
            )
        return value, legal

    def _view(self) -> BattleView:
        raise NotImplementedError

    def render(self) -> Optional[str]:
        """render_mode="ansi": the battle as text (render.py); None without render_mode."""
        if self.render_mode is None:
            warn_no_render_mode("ansi")
            return None
        if self._key is None:
            raise RuntimeError("call reset() before render()")
        return battle_text(self._view(), self._mask, self._decisions, self.params.max_decisions)

    def _lose_for_illegal(self):
        """illegal_action="lose": the episode ends as a loss, the battle left where it was."""
        reward, terminated, truncated = self._finish(False, True)
        self._mask = np.zeros(jb.NUM_ACTIONS, bool)  # the episode is over: nothing is legal (render() says so)
        info = {"action_mask": self._mask.copy(), "illegal_action": True}
        return self._last_obs.copy(), reward, terminated, truncated, info

    def _finish(self, won: bool, lost: bool, drawn: bool = False) -> tuple[float, bool, bool]:
        """(reward, terminated, truncated); a drawn battle (both sides' last Pokemon fell together)
        ends with reward 0."""
        self._decisions += 1
        terminated = won or lost or drawn
        truncated = not terminated and self._decisions >= self.params.max_decisions
        self._done = terminated or truncated
        return (1.0 if won else -1.0 if lost else 0.0), terminated, truncated


class PokeJaxGymEnv(_PokeEnvBase):
    """envport/PokeJax-v0: one battle of the JAX engine."""

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        self._check_seed(seed)
        super().reset(seed=seed)
        obs, self._state = self._engine.reset(self._start(seed), self.params)
        self._mask = np.asarray(self.jax_env.legal_mask(self._state))
        self._last_obs = np.asarray(obs)
        return self._last_obs.copy(), {"action_mask": self._mask.copy()}

    def _view(self) -> BattleView:
        return jax_view(self._state.battle)

    def step(self, action: Any):
        value, legal = self._check(action)
        if not legal:
            return self._lose_for_illegal()
        obs, self._state, _, _, info = self._engine.step_env(
            self._next_key(), self._state, jnp.int32(value), self.params
        )
        reward, terminated, truncated = self._finish(bool(info["won"]), bool(info["lost"]), bool(info["drawn"]))
        self._last_obs = np.asarray(obs)
        self._mask = np.asarray(info["action_mask"])
        return (
            self._last_obs.copy(),
            reward,
            terminated,
            truncated,
            {"action_mask": self._mask.copy(), "illegal_action": False},
        )


class PokeShowdownGymEnv(_PokeEnvBase):
    """envport/PokeShowdown-v0: the same battles on Pokemon Showdown (one Node process per env)."""

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        from .reference.showdown import Showdown

        self._showdown = Showdown(auto_restart=True)
        self._battle: Optional[str] = None
        self._battle_pid: Optional[int] = None  # the Node process the battle lives in
        self._count = 0
        self._closed = False

    def _refuse_if_closed(self) -> None:
        # auto_restart would start a fresh Node process that knows no battle: say what happened instead
        if self._closed:
            raise RuntimeError("this PokeShowdownGymEnv is closed (its Node process stopped): make a new env")

    def _observe(self, snap: dict[str, Any]) -> np.ndarray:
        t = gen1_tables()
        sides = snap["state"]["sides"]
        hp = np.array([[p["hp"] for p in side["pokemon"]] for side in sides])
        max_hp = np.array([[p["maxhp"] for p in side["pokemon"]] for side in sides])
        level = np.array([[p["level"] for p in side["pokemon"]] for side in sides])
        types = np.array(
            [[[t.types.index(p["types"][0]), t.types.index(p["types"][-1])] for p in side["pokemon"]] for side in sides]
        )
        status = np.array([[STATUSES.index(p["status"]) for p in side["pokemon"]] for side in sides])
        boosts = np.array([[side["pokemon"][0]["boosts"][keys[0]] for keys in BOOST_KEYS] for side in sides])
        volatiles = np.array([[v in side["pokemon"][0]["volatiles"] for v in VOLATILES] for side in sides])
        active = sides[0]["pokemon"][0]
        moves = np.zeros(jb.NUM_MOVE_SLOTS, dtype=np.int32)
        pp = np.zeros(jb.NUM_MOVE_SLOTS, dtype=np.int32)
        for i, move in enumerate(active["moves"]):
            moves[i], pp[i] = t.move_index(move["id"]), move["pp"]
        self._snap = snap
        self._mask = showdown_legal(snap["requests"][0])
        obs = self._engine.encode(
            self.jax_env.tables,
            hp,
            max_hp,
            level,
            types,
            status,
            boosts,
            volatiles,
            moves,
            pp,
            self._mask,
            snap["turn"],
        )
        self._last_obs = np.asarray(obs)
        return self._last_obs.copy()

    def _view(self) -> BattleView:
        return showdown_view(self._snap)

    def _end_battle(self) -> None:
        battle, self._battle = self._battle, None
        # a battle of a process that has died (and perhaps been restarted: auto_restart) is gone with it
        if battle is not None and self._showdown.alive and self._showdown.pid == self._battle_pid:
            self._showdown.end(battle)

    def _refuse_if_the_process_died(self) -> None:
        """The battle lived in the Node process: if that process is gone, say so (its exit code and
        stderr), instead of letting auto_restart start a fresh one that knows no battle."""
        if self._showdown.alive and self._showdown.pid == self._battle_pid:
            return
        from .reference.showdown import ShowdownDied

        self._done = True
        battle, self._battle = self._battle, None
        if self._showdown.alive:  # already restarted (auto_restart) by the call that found it dead
            raise ShowdownDied(f"the Showdown process that held battle {battle} (pid {self._battle_pid}) died and a "
                               "fresh one was started; the battle is lost: reset() starts a new one")
        died = self._showdown._died(f"battle {battle}")  # exit code and stderr tail, as the adapter reports them
        raise ShowdownDied(f"{died}\nThe battle is lost: reset() starts a new one in a fresh process.")

    def _choose(self, p1: str, p2: str) -> dict[str, Any]:
        """Showdown's choose; a process that died just before (the auto-restarted one then knows no
        battle) or during the call is reported as such."""
        from .reference.showdown import ShowdownError

        try:
            return self._showdown.choose(self._battle, p1, p2)
        except ShowdownError:
            self._refuse_if_the_process_died()
            raise

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        self._refuse_if_closed()
        self._check_seed(seed)
        super().reset(seed=seed)
        self._end_battle()
        seed_words, species, level, moves, ivs, evs = jax.device_get(self._engine.teams(self._start(seed), self.params))
        self._count += 1
        self._battle = f"gym-{self._count}"
        snap = self._showdown.start(
            self._battle,
            self.params.battle_format,
            prng.format_seed(self.kind, seed_words),
            {"team": showdown_sets(species[0], level[0], moves[0], ivs[0], evs[0])},
            {"team": showdown_sets(species[1], level[1], moves[1], ivs[1], evs[1])},
        )
        self._battle_pid = self._showdown.pid
        return self._observe(snap), {"action_mask": self._mask.copy()}

    def step(self, action: Any):
        self._refuse_if_closed()
        value, legal = self._check(action)
        self._refuse_if_the_process_died()
        # the same keys the JAX env splits its step key into, for the same opponent choices
        assert self._key is not None
        self._key, turn_key, switch_key = _split_step_key(self._key)
        if not legal:
            return self._lose_for_illegal()
        opponent = showdown_legal(self._snap["requests"][1])
        opponent_choice = ""
        if opponent.any():
            opponent_choice = choice_string(int(_jit_random_legal_action(turn_key, opponent)))
        snap = self._choose(choice_string(value), opponent_choice)
        if not snap["ended"] and showdown_legal(snap["requests"][0]).sum() == 0:
            replacement = int(_jit_random_legal_action(switch_key, showdown_legal(snap["requests"][1])))
            snap = self._choose("", choice_string(replacement))
        won = snap["ended"] and snap["winner"] == "p1"
        lost = snap["ended"] and snap["winner"] == "p2"
        obs = self._observe(snap)
        reward, terminated, truncated = self._finish(won, lost, snap["ended"] and not (won or lost))
        return obs, reward, terminated, truncated, {"action_mask": self._mask.copy(), "illegal_action": False}

    def close(self) -> None:
        self._showdown.close()
        self._closed = True
        super().close()

