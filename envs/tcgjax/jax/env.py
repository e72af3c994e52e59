"""TCGJax as a gymnax-style environment: the agent is player 0 of a TCG Pocket battle against an
opponent that picks uniformly among its legal actions (gym_envs.py's reference env, in JAX).

    env = TcgJaxEnv()
    params = env.default_params                 # a deck bank: the fixed decks, or random legal decks
    obs, state = env.reset(key, params)
    obs, state, reward, done, info = env.step(key, state, action, params)    # auto-resets

reset draws two deck indices of the bank and a 64-bit game seed from the key; the opponent's
stream is seeded with game seed + OPPONENT_SALT, as in the reference env, so an episode can be
replayed there (info["seed"] gives the seed halves, info["decks"] the bank indices).
One step is one agent decision; the opponent's decisions in between run inside step (a while loop
that shares one compiled engine step with the agent's action). An illegal action ends the episode
as a loss (reward -1), as Pgx does; the legal mask is the observation's last 111 values and
info["action_mask"]. Reward +1 win, -1 loss, 0 draw; an episode is cut at max_decisions."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from envs.tcgjax.gym_envs import OPPONENT_SALT
from envs.tcgjax.jax import engine as J
from envs.tcgjax.jax.observation import observe
from envs.tcgjax.jax.state import MAX_ZONE_TYPES, OVER, GameState
from envs.tcgjax.jax.tables import check_capacity, engine_tables
from envs.tcgjax.reference import actions as A
from envs.tcgjax.reference.cards import load_pool
from envs.tcgjax.reference.config import RuleConfig
from envs.tcgjax.reference.decks import FIXED_DECKS, fixed_deck, random_deck
from envs.tcgjax.reference.engine import TYPE_INDEX
from envs.tcgjax.reference.observation import OBS_SIZE

AGENT = 0
NO_ACTION = -1  # play(): the agent does not act (a new episode's opening decisions)
U32 = jnp.uint32


@struct.dataclass
class EnvParams:
    deck_cards: jnp.ndarray  # int32[K, DECK]
    deck_types: jnp.ndarray  # int32[K, MAX_ZONE_TYPES]
    deck_n_types: jnp.ndarray  # int32[K]
    # traced, not static: a program compiled for one cut serves every cut (tests cut at 30)
    max_decisions: jnp.ndarray = 2000  # int32

    def __post_init__(self):
        # JAX rebuilds params with tracers (and other placeholders) as leaves, which cannot be
        # checked here; a number or a concrete array given by hand can
        decisions = self.max_decisions
        if isinstance(decisions, jax.core.Tracer):
            return
        if isinstance(decisions, (bool, np.bool_, str, float, np.floating)) or (
                isinstance(decisions, (int, np.integer)) and decisions < 1) or (
                isinstance(decisions, (np.ndarray, jax.Array)) and not (
                    np.issubdtype(decisions.dtype, np.integer) and bool(np.all(np.asarray(decisions) >= 1)))):
            raise ValueError(f"max_decisions must be a whole number >= 1, got {decisions!r}")


@struct.dataclass
class EnvState:
    game: GameState
    opponent_keys: jnp.ndarray  # uint32[2]
    opponent_counter: jnp.ndarray  # uint32
    seed: jnp.ndarray  # uint32[2]: the game seed's low and high halves
    decks: jnp.ndarray  # int32[2]: bank indices
    decisions: jnp.ndarray


def deck_arrays(decks, config: RuleConfig = RuleConfig()) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(cards int32[K, DECK], energy types int32[K, MAX_ZONE_TYPES], number of types int32[K]) of reference Decks,
    each checked as the reference's new_game checks it (Deck.validate under `config`: ValueError)."""
    check_capacity(config)
    pool = load_pool()
    for deck in decks:
        deck.validate(pool, config)
    cards = np.array([d.cards for d in decks], np.int32)
    types = np.zeros((len(decks), MAX_ZONE_TYPES), np.int32)
    for i, d in enumerate(decks):
        types[i, : len(d.energy_types)] = [TYPE_INDEX[t] for t in d.energy_types]
    n_types = np.array([len(d.energy_types) for d in decks], np.int32)
    return cards, types, n_types


def deck_bank(decks, config: RuleConfig = RuleConfig()) -> EnvParams:
    """EnvParams over a list of reference Decks, each legal under `config`."""
    decks = list(decks)
    if not decks:  # reset draws a deck index below the bank's size: an empty bank has none to draw
        raise ValueError("a deck bank needs at least one deck")
    return EnvParams(*(jnp.asarray(array) for array in deck_arrays(decks, config)))


def fixed_bank(config: RuleConfig = RuleConfig()) -> EnvParams:
    return deck_bank([fixed_deck(name) for name in sorted(FIXED_DECKS)], config)


def random_bank(size: int = 256, seed: int = 0, config: RuleConfig = RuleConfig()) -> EnvParams:
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise ValueError(f"a random bank's size must be a whole number >= 1, got {size!r}")
    return deck_bank([random_deck(seed * 100_003 + i) for i in range(size)], config)


def _opponent_keys(seed_low, seed_high):
    """reference Stream(seed + OPPONENT_SALT)'s keys, with the 64-bit addition done on two halves."""
    from envs.tcgjax.jax.rng import seed_keys

    low = seed_low + U32(OPPONENT_SALT)
    high = seed_high + (low < seed_low).astype(U32)
    return jnp.stack(seed_keys(low, high))


def opponent_choice(keys, counter, mask):
    """gym_envs.opponent_choice: below(number legal), the legal actions in index order."""
    count = jnp.sum(mask)
    pick, counter = J.Stream.below(keys, counter, count)
    return jnp.argmax(jnp.cumsum(mask) > pick).astype(jnp.int32), counter


class TcgJaxEnv:
    def __init__(self, bank: str = "fixed", config: RuleConfig = RuleConfig()):
        if bank not in ("fixed", "random"):
            raise ValueError(f"bank is 'fixed' or 'random', got {bank!r}")
        self.bank, self.config = bank, config
        # the rules are in the tables (jax/tables.py rule_tables), closed over: each config compiles its own
        self.tables = {k: jnp.asarray(v) for k, v in engine_tables(config).items()}
        self.num_actions = A.NUM_ACTIONS
        self.observation_size = OBS_SIZE

    @functools.cached_property
    def default_params(self) -> EnvParams:
        return fixed_bank(self.config) if self.bank == "fixed" else random_bank(config=self.config)

    def start(self, decks_index, seed_low, seed_high, params: EnvParams) -> tuple[jnp.ndarray, EnvState]:
        """A new episode from bank indices and a seed (what reset draws from its key)."""
        state = self._to_agent(self._new_state(decks_index, seed_low, seed_high, params))
        return observe(self.tables, state.game, AGENT), state

    def reset(self, key, params: EnvParams) -> tuple[jnp.ndarray, EnvState]:
        state = self._to_agent(self._fresh(key, params))
        return observe(self.tables, state.game, AGENT), state

    def _to_agent(self, state: EnvState) -> EnvState:
        """A new episode's opening decisions of the opponent, up to the agent's first (reset, start)."""
        cond, body = self._loop(False, 0)
        return jax.lax.while_loop(cond, body, _loop_start(state, -1, state))["state"]

    def _loop(self, can_reset: bool, max_decisions: int):
        """The decision loop as (cond, body) over one game's carry (_loop_start): the agent's action
        (none when it is -1), then the opponent's until the agent decides. With can_reset, when the
        game ends (or is cut at max_decisions) the loop switches to the carry's fresh episode and
        plays its opponent's opening decisions too: one loop, so that the engine step is compiled
        once whether or not the episode auto-resets. step runs it under while_loop; step_batch runs
        the same body on only the games still looping."""
        tables = self.tables

        def finished(state):
            """The game is over, or (after the agent's action) cut at max_decisions."""
            return (state.game.phase == OVER) | (can_reset & (state.decisions >= max_decisions))

        def cond(carry):
            state, first, ended = carry["state"], carry["first"], carry["ended"]
            done = finished(state)
            return first | (~done & (J.decision_player(tables, state.game) != AGENT)) | (done & can_reset & ~ended)

        def body(carry):
            state, first, ended, action = carry["state"], carry["first"], carry["ended"], carry["action"]
            game = state.game
            switch = ~first & finished(state) & can_reset & ~ended
            mask = J.legal_mask(tables, game)
            theirs, counter = opponent_choice(state.opponent_keys, state.opponent_counter, mask)
            agent_moves = first & (action >= 0)
            opponent_moves = ~first & ~finished(state)  # cond() held: the opponent decides
            chosen = jnp.where(agent_moves, action, theirs)
            stepped = state.replace(
                game=jax.lax.cond(agent_moves | opponent_moves, lambda g: J.step(tables, g, chosen), lambda g: g, game),
                opponent_counter=jnp.where(opponent_moves, counter, state.opponent_counter))
            state = jax.tree_util.tree_map(lambda f, s: jnp.where(switch, f, s), carry["fresh"], stepped)
            return dict(carry, state=state, first=jnp.bool_(False), ended=ended | switch,
                        winner=jnp.where(switch, game.winner, carry["winner"]))

        return cond, body

    def _fresh(self, key, params: EnvParams) -> EnvState:
        deck_key, seed_key = jax.random.split(key)
        decks_index = jax.random.randint(deck_key, (2,), 0, params.deck_cards.shape[0])
        bits = jax.random.bits(seed_key, (2,), jnp.uint32)
        return self._new_state(decks_index, bits[0], bits[1], params)

    def _new_state(self, decks_index, seed_low, seed_high, params: EnvParams) -> EnvState:
        game = J.new_game(self.tables, params.deck_cards[decks_index], params.deck_types[decks_index],
                          params.deck_n_types[decks_index], seed_low, seed_high)
        return EnvState(game, _opponent_keys(seed_low, seed_high), U32(0), jnp.stack([seed_low, seed_high]),
                        decks_index.astype(jnp.int32), jnp.int32(0))

    def step(self, key, state: EnvState, action, params: EnvParams):
        carry, legal = self._begin(key, state, action, params)
        cond, body = self._loop(True, params.max_decisions)
        return self._end(state, jax.lax.while_loop(cond, body, carry), legal)

    def step_batch(self, keys, states: EnvState, actions, params: EnvParams, compact: int = 0):
        """vmap(step) over a batch, the same values, faster: under vmap step's loop runs until the
        batch's slowest opponent is done (measured at 1,024 games: 0.97 opponent moves per agent
        decision on average, but the batch's most 5.6 on average), so once at most `compact` games
        (default an eighth of the batch) are still looping, the loop steps only those, gathered.
        Each game's body runs exactly as often as under vmap; only the idle games' selects go."""
        carry, legal = jax.vmap(self._begin, in_axes=(0, 0, 0, None))(keys, states, actions, params)
        carry = self._loop_batch(carry, True, params.max_decisions, compact)
        return jax.vmap(self._end)(states, carry, legal)

    def play(self, state: EnvState, action):
        """One agent decision and the opponent's replies up to the agent's next decision, without
        step's auto-reset: what a Gymnasium env needs to return an episode's last observation.
        action NO_ACTION (-1) plays only the opponent (a new episode's opening decisions, after
        new_episode); any other action outside the legal mask ends the game as a loss, as in step.
        Returns (obs, state, reward, terminated, legal); an episode cut at a decision limit is
        the caller's to count (reward 0, as step gives it)."""
        carry, legal = self._begin_play(state, action)
        cond, body = self._loop(False, 0)
        return self._end_play(jax.lax.while_loop(cond, body, carry)["state"], legal)

    def play_batch(self, states: EnvState, actions, compact: int = 0):
        """vmap(play) over a batch, with step_batch's gathering of the last games still looping."""
        carry, legal = jax.vmap(self._begin_play)(states, actions)
        carry = self._loop_batch(carry, False, 0, compact)
        return jax.vmap(self._end_play)(carry["state"], legal)

    def new_episode(self, deck_cards, deck_types, deck_n_types, seed_low, seed_high) -> EnvState:
        """A new game of two decks (int32[2, DECK], int32[2, MAX_ZONE_TYPES], int32[2]) and a 64-bit seed given as
        halves, before the opponent's opening decisions (play(state, NO_ACTION) plays them): start
        without its loop, for callers that choose the decks per episode."""
        params = EnvParams(deck_cards, deck_types, deck_n_types)
        return self._new_state(jnp.arange(2), seed_low, seed_high, params)

    def _loop_batch(self, carry, can_reset: bool, max_decisions, compact: int):
        """The decision loop (_loop) over a batch of carries, gathering the games still looping once
        at most `compact` of them are (default an eighth of the batch)."""
        batch = jax.tree_util.tree_leaves(carry)[0].shape[0]
        compact = compact or max(1, batch // 8)
        cond, body = self._loop(can_reset, max_decisions)
        looping = jax.vmap(cond)

        def all_games(carry, active):
            stepped = jax.vmap(body)(carry)
            return jax.tree_util.tree_map(
                lambda new, old: jnp.where(active.reshape((-1,) + (1,) * (old.ndim - 1)), new, old), stepped, carry)

        def gathered(carry, active):
            index = jnp.nonzero(active, size=compact, fill_value=batch)[0]  # index batch: a free place
            stepped = jax.vmap(body)(jax.tree_util.tree_map(lambda x: x[jnp.minimum(index, batch - 1)], carry))
            return jax.tree_util.tree_map(lambda x, new: x.at[index].set(new, mode="drop"), carry, stepped)

        def one_pass(carry):
            active = looping(carry)
            return jax.lax.cond(jnp.sum(active) <= compact, gathered, all_games, carry, active)

        return jax.lax.while_loop(lambda c: jnp.any(looping(c)), one_pass, carry)

    def _begin(self, key, state: EnvState, action, params: EnvParams):
        """The action checked (an illegal one ends the game as a loss), and the loop's start."""
        state, chosen, legal = self._checked(state, action)
        return _loop_start(state, chosen, self._fresh(key, params)), legal

    def _checked(self, state: EnvState, action, allow_none: bool = False):
        """(state, the action the loop plays (-1: none), legal). An illegal action marks the game
        over, won by the opponent; with allow_none, NO_ACTION is legal and plays nothing."""
        action = jnp.asarray(action, jnp.int32)
        mask = J.legal_mask(self.tables, state.game)
        legal = mask[jnp.clip(action, 0, A.NUM_ACTIONS - 1)] & (action >= 0) & (action < A.NUM_ACTIONS)
        none = allow_none & (action == NO_ACTION)
        # an illegal action ends the game at once (a loss): mark it over (step's loop then auto-resets)
        lost = ~legal & ~none
        state = state.replace(decisions=state.decisions + (~none).astype(jnp.int32), game=state.game.replace(
            phase=jnp.where(lost, OVER, state.game.phase), winner=jnp.where(lost, 1 - AGENT, state.game.winner)))
        return state, jnp.where(legal, action, NO_ACTION), legal | none

    def _begin_play(self, state: EnvState, action):
        state, chosen, legal = self._checked(state, action, allow_none=True)
        return _loop_start(state, chosen, state), legal

    def _end_play(self, state: EnvState, legal):
        game = state.game
        terminated = game.phase == OVER
        reward = jnp.where(terminated & (game.winner == AGENT), 1.0,
                           jnp.where(terminated & (game.winner == 1 - AGENT), -1.0, 0.0))
        return observe(self.tables, game, AGENT), state, reward.astype(jnp.float32), terminated, legal

    def _end(self, state: EnvState, carry, legal):
        next_state, ended, winner = carry["state"], carry["ended"], carry["winner"]
        # a cut episode ends with the winner still ONGOING: reward 0
        reward = jnp.where(~legal, -1.0, jnp.where(ended & (winner == AGENT), 1.0,
                                                   jnp.where(ended & (winner == 1 - AGENT), -1.0, 0.0)))
        obs = observe(self.tables, next_state.game, AGENT)
        truncated = ended & legal & (winner == -1)
        info = {"winner": winner, "illegal_action": ~legal, "truncated": truncated, "turn": state.game.turn,
                "seed": state.seed, "decks": state.decks, "action_mask": obs[-A.NUM_ACTIONS:] > 0.5}
        return obs, next_state, reward.astype(jnp.float32), ended, info


def _loop_start(state: EnvState, action, fresh: EnvState) -> dict:
    """One game's carry through the decision loop: its state, the agent's action (-1: none), the
    episode that follows if this one ends, and whether it has (and who won)."""
    return {"state": state, "first": jnp.bool_(True), "ended": jnp.bool_(False), "winner": jnp.int32(-1),
            "action": jnp.asarray(action, jnp.int32), "fresh": fresh}
