"""L3 for TCGJax: games played on the Python reference and on the JAX engine from the same seed with
the same actions, compared after every action: the legal-action mask and every state field (the
JAX GameState's fields, read from the reference's objects by `reference_snapshot`).

    report = play_game(seed=7, decks=("fire", "water"))   # None when equal, else the first divergence
    report = play_game(seed=7, config=RuleConfig(max_turns=12))   # under other rules (RuleConfig)

The actions come from a policy stream (a reference/rng Stream seeded from the game seed): with
probability END_WEIGHT the policy ends the turn when it may do something else, otherwise it picks
uniformly among the other legal actions, so that random games attack, evolve and play Trainers
instead of passing (uniform play passes most turns and draws at the turn limit)."""

from __future__ import annotations

import collections
import dataclasses
import functools
import itertools
from typing import Optional, Union

import jax
import jax.numpy as jnp
import numpy as np

from envs.tcgjax.gym_envs import episode_decks
from envs.tcgjax.jax import engine as J
from envs.tcgjax.jax import state as S
from envs.tcgjax.jax.tables import card_tables, engine_tables, rule_tables
from envs.tcgjax.reference import actions as A
from envs.tcgjax.reference import engine as E
from envs.tcgjax.reference.config import RuleConfig
from envs.tcgjax.reference.decks import FIXED_DECKS
from envs.tcgjax.reference.engine import TYPE_INDEX
from envs.tcgjax.reference.rng import Stream
from envs.tcgjax.reference.state import Game

POLICY_SALT = 0x5EED
FIXED_PAIRS = list(itertools.product(sorted(FIXED_DECKS), repeat=2))  # 36 pairs of fixed decks
END_WEIGHT = 0.15  # out of 1: how often the policy ends its turn when it could act
PHASES = {"setup": S.SETUP, "main": S.MAIN, "promote": S.PROMOTE, "over": S.OVER}
RESUMES = {"main": S.RESUME_MAIN, "end_turn": S.RESUME_END_TURN, "next_turn": S.RESUME_NEXT_TURN}


def _pad(values, size, fill=-1):
    out = np.full(size, fill, np.int32)
    out[: len(values)] = values
    return out


@functools.lru_cache(maxsize=1)
def _name_set_ids() -> dict[frozenset, int]:
    tables = card_tables()
    from envs.tcgjax.reference.cards import load_pool

    names = sorted({c.name for c in load_pool().cards})
    return {frozenset(names[i] for i in np.flatnonzero(row)): s for s, row in enumerate(tables["name_sets"])}


def reference_snapshot(game: Game) -> dict[str, np.ndarray]:
    """The reference game in the JAX GameState's layout (every field but the keys)."""
    sets = _name_set_ids()
    out: dict[str, np.ndarray] = {
        "counter": np.uint32(game.rng.counter), "turn": np.int32(game.turn), "current": np.int32(game.current),
        "first": np.int32(game.first), "phase": np.int32(PHASES[game.phase]), "winner": np.int32(game.winner),
        "setup_done": np.array(game.setup_done, bool),
        "pending": np.array([{"ko": S.PENDING_KO, "swap": S.PENDING_SWAP}.get(
            dict((w, m) for w, m in game.pending).get(p), S.PENDING_NONE) for p in (0, 1)], np.int32),
    }
    players = game.players
    out["deck"] = np.stack([_pad(p.deck, S.DECK) for p in players])
    out["deck_len"] = np.array([len(p.deck) for p in players], np.int32)
    out["hand"] = np.stack([_pad(p.hand, S.HAND) for p in players])
    out["hand_len"] = np.array([len(p.hand) for p in players], np.int32)
    out["discard"] = np.stack([_pad(p.discard, S.DECK) for p in players])
    out["discard_len"] = np.array([len(p.discard) for p in players], np.int32)
    for name in ("points", "energy_current", "energy_next", "retreat_discount", "supporter_lock_until",
                 "sweets_relay_turn", "turns_taken"):
        out[name] = np.array([getattr(p, name) for p in players], np.int32)
    for name in ("attached", "supporter_played", "retreated"):
        out[name] = np.array([getattr(p, name) for p in players], bool)
    out["energy_types"] = np.stack([_pad(p.energy_types, S.MAX_ZONE_TYPES, 0) for p in players])
    out["n_types"] = np.array([len(p.energy_types) for p in players], np.int32)
    out["boost_all"] = np.array([sum(a for a, names in p.turn_boosts if not names) for p in players], np.int32)
    boost_set = np.zeros((2, len(sets)), np.int32)
    for i, p in enumerate(players):
        for amount, names in p.turn_boosts:
            if names:
                boost_set[i, sets[frozenset(names)]] += amount
    out["boost_set"] = boost_set
    stack = np.full((2, S.SLOTS, S.STACK), -1, np.int32)
    stack_len = np.zeros((2, S.SLOTS), np.int32)
    energy = np.zeros((2, S.SLOTS, S.TYPES), np.int32)
    fields = {name: np.full((2, S.SLOTS), value, bool if isinstance(value, bool) else np.int32)
              for name, value in S.POKEMON_FIELDS.items()}
    for i, p in enumerate(players):
        for slot, pokemon in enumerate(p.board):
            if pokemon is None:
                continue
            stack[i, slot, : len(pokemon.stack)] = pokemon.stack
            stack_len[i, slot] = len(pokemon.stack)
            energy[i, slot] = pokemon.energy
            for name in S.POKEMON_FIELDS:
                fields[name][i, slot] = getattr(pokemon, name)
    out.update(stack=stack, stack_len=stack_len, energy=energy, **fields)
    return out


def jax_state_of(game: Game) -> S.GameState:
    """The reference game as a JAX GameState (the inverse of `jax_snapshot` plus the stream keys and
    the pending resume), so that a hand-built reference position can be stepped on both engines."""
    template = S.empty_state(len(_name_set_ids()))
    fields = dict(reference_snapshot(game), keys=np.array(game.rng.keys, np.uint32),
                  resume=np.int32(RESUMES[game.resume]))
    return S.GameState(**{name: jnp.asarray(value, getattr(template, name).dtype) for name, value in fields.items()})


def jax_snapshot(state: S.GameState) -> dict[str, np.ndarray]:
    return {f.name: np.asarray(getattr(state, f.name)) for f in dataclasses.fields(state) if f.name != "keys"}


def first_difference(reference: dict, jax_state: dict) -> Optional[str]:
    for name, value in reference.items():
        other = jax_state[name]
        if name == "resume":
            continue
        if np.shape(value) != np.shape(other) or not np.array_equal(value, other):
            return f"{name}: reference {np.asarray(value).tolist()} vs JAX {np.asarray(other).tolist()}"
    return None


def jax_inputs(deck0: E.Deck, deck1: E.Deck, seed: int):
    decks = np.array([deck0.cards, deck1.cards], np.int32)
    types = np.stack([_pad([TYPE_INDEX[t] for t in d.energy_types], S.MAX_ZONE_TYPES, 0) for d in (deck0, deck1)])
    n_types = np.array([len(deck0.energy_types), len(deck1.energy_types)], np.int32)
    return decks, types, n_types, np.uint32(seed & 0xFFFFFFFF), np.uint32((seed >> 32) & 0xFFFFFFFF)


DEFAULT_RULES = RuleConfig()


@functools.lru_cache(maxsize=1)
def jitted():
    """(new_game, legal_mask, step), jitted once per process, the tables (default rules) closed over."""
    tables = {k: jnp.asarray(v) for k, v in engine_tables().items()}
    return (jax.jit(functools.partial(J.new_game, tables)), jax.jit(functools.partial(J.legal_mask, tables)),
            jax.jit(functools.partial(J.step, tables)))


@functools.lru_cache(maxsize=2)
def _jitted_with_rules(batched: bool):
    """(new_game, legal_mask, step) taking the rules (rule_tables as arrays) as their first argument:
    one compile serves every config; `batched`: vmapped over games (the rules shared)."""
    cards = {k: jnp.asarray(v) for k, v in card_tables().items()}

    def with_rules(function, arity):
        def call(rules, *args):
            return function({**cards, **rules}, *args)
        return jax.jit(jax.vmap(call, in_axes=(None,) + (0,) * arity) if batched else call)

    return with_rules(J.new_game, 5), with_rules(J.legal_mask, 1), with_rules(J.step, 2)


def _functions(config: RuleConfig, batched: bool):
    """(new_game, legal_mask, step) for `config`: the default rules' closed-over programs (what the
    default L3 tiers compile), any other config's through the rules-as-arguments programs."""
    if config == DEFAULT_RULES:
        return jitted_batch() if batched else jitted()
    rules = {k: jnp.asarray(v) for k, v in rule_tables(config).items()}
    return tuple(functools.partial(function, rules) for function in _jitted_with_rules(batched))


def policy_action(stream: Stream, mask) -> int:
    """END_WEIGHT of the time end the turn when something else is legal; else uniform over the rest."""
    legal = [a for a, ok in enumerate(mask) if ok]
    others = [a for a in legal if a != A.END_TURN]
    if not others:
        return legal[stream.below(len(legal))]
    if A.END_TURN in legal and stream.below(1000) < int(END_WEIGHT * 1000):
        return A.END_TURN
    return others[stream.below(len(others))]


@dataclasses.dataclass
class GameReport:
    seed: int
    decks: tuple[str, str]
    actions: list[int]
    winner: int
    turns: int
    divergence: Optional[str] = None  # "after action k (kind): field ..." or None
    events: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    config: RuleConfig = DEFAULT_RULES

    def reproducer(self) -> str:
        if self.config == DEFAULT_RULES:
            return (f"from envs.tcgjax.l3_games import replay\n"
                    f"replay(seed={self.seed}, decks={self.decks!r}, actions={self.actions!r})")
        return (f"from envs.tcgjax.l3_games import replay\nfrom envs.tcgjax.reference.config import RuleConfig\n"
                f"replay(seed={self.seed}, decks={self.decks!r}, actions={self.actions!r}, config={self.config!r})")


def play_game(seed: int, decks: Union[str, tuple[str, str]] = "random", max_actions: int = 3000,
              config: RuleConfig = DEFAULT_RULES) -> GameReport:
    """One game on both engines under the rules of `config`, compared after every action."""
    new_game, legal_mask, step = _functions(config, batched=False)
    deck0, deck1 = episode_decks(decks, seed)
    game = E.new_game(deck0, deck1, seed, config)
    state = new_game(*jax_inputs(deck0, deck1, seed))
    policy = Stream(seed + POLICY_SALT)
    actions: list[int] = []
    names = (deck0.name, deck1.name)

    events: collections.Counter = collections.Counter()

    def report(divergence=None):
        return GameReport(seed, names, actions, game.winner, game.turn, divergence, events, config)

    difference = first_difference(reference_snapshot(game), jax_snapshot(state))
    if difference:
        return report(f"after setup: {difference}")
    while game.winner == E.ONGOING and len(actions) < max_actions:
        mask = E.action_mask(game)
        jax_mask = np.asarray(legal_mask(state))
        if not np.array_equal(np.asarray(mask), jax_mask):
            wrong = [(a, str(A.decode(a)), mask[a]) for a in range(A.NUM_ACTIONS) if mask[a] != jax_mask[a]]
            return report(f"legal mask after {len(actions)} actions: (action, reference legal?) {wrong}")
        action = policy_action(policy, mask)
        actions.append(action)
        _tally(game, action, events)
        E.step(game, action)
        state = step(state, action)
        difference = first_difference(reference_snapshot(game), jax_snapshot(state))
        if difference:
            return report(f"after action {len(actions)} ({A.decode(action)}, turn {game.turn}): {difference}")
    return report()


@functools.lru_cache(maxsize=1)
def jitted_batch():
    """(new_game, legal_mask, step) vmapped over games, jitted once per process (the default rules)."""
    tables = {k: jnp.asarray(v) for k, v in engine_tables().items()}
    return (jax.jit(jax.vmap(functools.partial(J.new_game, tables))),
            jax.jit(jax.vmap(functools.partial(J.legal_mask, tables))),
            jax.jit(jax.vmap(functools.partial(J.step, tables))))


def play_games(seeds, decks_of, batch: int = 64, max_actions: int = 3000,
               config: RuleConfig = DEFAULT_RULES) -> list[GameReport]:
    """`play_game` for many games, the JAX side batched: `batch` games at a time, each played by the
    reference with the same policy, while the JAX engine steps all of them in one vmapped call per
    action (a finished game's state stays as it is: a step of a game that is over changes nothing).
    The same comparisons after every action: the legal masks, then every field. A game that diverges
    is played again by `play_game`, whose report (the action, the field, both values) is returned.

    `decks_of(seed)` gives a game's decks ("random" or a pair of fixed deck names); `config` the rules
    both engines play by."""
    seeds = list(seeds)
    reports: list[GameReport] = []
    for start in range(0, len(seeds), batch):
        reports.extend(_play_batch(seeds[start:start + batch], decks_of, batch, max_actions, config))
    return reports


def _play_batch(seeds, decks_of, batch, max_actions, config) -> list[GameReport]:
    new_game, legal_mask, step = _functions(config, batched=True)
    decks = [episode_decks(decks_of(seed), seed) for seed in seeds]
    games = [E.new_game(d0, d1, seed, config) for (d0, d1), seed in zip(decks, seeds, strict=True)]
    inputs = [jax_inputs(d0, d1, seed) for (d0, d1), seed in zip(decks, seeds, strict=True)]
    pad = batch - len(seeds)  # the last batch repeats its first game to keep one compiled shape
    inputs += [inputs[0]] * pad
    state = new_game(*(np.stack(column) for column in zip(*inputs, strict=True)))
    policies = [Stream(seed + POLICY_SALT) for seed in seeds]
    actions: list[list[int]] = [[] for _ in seeds]
    events = [collections.Counter() for _ in seeds]
    diverged = [False] * len(seeds)
    fields = sorted(reference_snapshot(games[0]))

    def compare(live):
        # every field of every game as one row of integers; a differing row marks its game
        snapshot = jax_snapshot(state)
        rows = np.concatenate([snapshot[name].reshape(batch, -1).astype(np.int64) for name in fields], axis=1)
        for i in live:
            reference = reference_snapshot(games[i])
            row = np.concatenate([np.ravel(reference[name]).astype(np.int64) for name in fields])
            if row.shape != rows[i].shape or not np.array_equal(row, rows[i]):
                diverged[i] = True

    compare(range(len(seeds)))
    while True:
        live = [i for i, game in enumerate(games)
                if not diverged[i] and game.winner == E.ONGOING and len(actions[i]) < max_actions]
        if not live:
            break
        jax_masks = np.asarray(legal_mask(state))
        chosen = np.zeros(batch, np.int32)
        for i in live:
            mask = E.action_mask(games[i])
            if not np.array_equal(np.asarray(mask), jax_masks[i]):
                diverged[i] = True
                continue
            action = policy_action(policies[i], mask)
            actions[i].append(action)
            _tally(games[i], action, events[i])
            E.step(games[i], action)
            chosen[i] = action
        # the games not stepped here (over, diverged, cut) get END_TURN; their results are not read again
        state = step(state, jnp.asarray(chosen))
        compare([i for i in live if not diverged[i]])
    reports = []
    for i, seed in enumerate(seeds):
        if diverged[i]:
            reports.append(play_game(seed, decks_of(seed), max_actions, config))
        else:
            game = games[i]
            names = (decks[i][0].name, decks[i][1].name)
            reports.append(GameReport(seed, names, actions[i], game.winner, game.turn, None, events[i], config))
    return reports


def l3_decks(seed: int):
    """The L3 tiers' decks: random legal decks for an even seed, else the fixed pair seed % 36."""
    return "random" if seed % 2 == 0 else FIXED_PAIRS[seed % len(FIXED_PAIRS)]


def _tally(game: Game, action: int, events: collections.Counter) -> None:
    """What an action exercises: its kind, and for a card program the op kinds it runs."""
    act = A.decode(action)
    events[f"action:{act.kind}"] += 1
    if game.phase != "main":
        return
    player = game.players[game.current]
    pool = game.pool
    program = None
    if act.kind == "attack":
        program = pool[player.active.top].attacks[act.slot].program
    elif act.kind == "copy":
        events["op:copy_opponent_attack"] += 1
        program = pool[game.players[1 - game.current].board[act.slot].top].attacks[act.index].program
    elif act.kind == "ability":
        program = pool[player.board[act.slot].top].ability
    elif act.kind == "play":
        card = pool[player.hand[act.slot]]
        program = card.program
        if card.is_pokemon and not card.is_basic:
            events["evolve"] += 1
    if program is not None:
        for op in program.ops:
            events[f"op:{op.kind}"] += 1
    for pokemon in player.board + game.players[1 - game.current].board:
        if pokemon is not None:
            passive = pool[pokemon.top].passive
            if passive is not None and act.kind == "attack":
                events[f"passive_in_play:{passive.kind}"] += 1


def reference_game(seed: int, decks: Union[str, tuple[str, str]] = "random", config: RuleConfig = DEFAULT_RULES,
                   max_actions: int = 3000) -> tuple[list[int], int, int]:
    """The game `play_game` plays, on the reference alone: (actions, winner, last turn)."""
    game = E.new_game(*episode_decks(decks, seed), seed, config)
    policy = Stream(seed + POLICY_SALT)
    actions: list[int] = []
    while game.winner == E.ONGOING and len(actions) < max_actions:
        actions.append(policy_action(policy, E.action_mask(game)))
        E.step(game, actions[-1])
    return actions, game.winner, game.turn


def replay(seed: int, decks, actions: list[int], config: RuleConfig = DEFAULT_RULES):
    """Both engines through `actions`; returns (reference game, JAX state) for inspection."""
    new_game, _, step = _functions(config, batched=False)
    deck0, deck1 = episode_decks(decks if decks == "random" or isinstance(decks, tuple) else "random", seed)
    game = E.new_game(deck0, deck1, seed, config)
    state = new_game(*jax_inputs(deck0, deck1, seed))
    for action in actions:
        E.step(game, action)
        state = step(state, action)
    return game, state


def play_env_episode(seed: int, decks: Union[str, tuple[str, str]] = ("fire", "water"), policy_seed: int = 0,
                     config: RuleConfig = DEFAULT_RULES):
    """The Gymnasium reference env and the JAX functional env (started from the same decks and seed,
    both under `config`) through one episode with the same agent actions: the observations, rewards
    and ends must match. Returns None when equal, else the first difference."""
    from envs.tcgjax.gym_envs import TcgReferenceEnv
    from envs.tcgjax.jax.env import deck_bank

    reference = TcgReferenceEnv(decks=decks, config=config)
    obs, info = reference.reset(seed=seed)
    params = deck_bank(list(episode_decks(decks, seed)), config)
    start, step = _env_functions(config)
    jax_obs, state = start(jnp.array([0, 1]), jnp.uint32(seed & 0xFFFFFFFF), jnp.uint32(seed >> 32), params)
    policy = Stream(policy_seed + POLICY_SALT)
    key = jax.random.PRNGKey(0)
    for decision in range(5000):
        if not np.array_equal(obs, np.asarray(jax_obs)):
            where = np.flatnonzero(obs != np.asarray(jax_obs))
            return f"observation after {decision} decisions differs at {where.tolist()[:10]}"
        action = policy_action(policy, info["action_mask"])
        obs, reward, terminated, truncated, info = reference.step(action)
        jax_obs, state, jax_reward, done, _ = step(key, state, action, params)
        if float(jax_reward) != reward or bool(done) != (terminated or truncated):
            return f"decision {decision}: reward {reward} vs {float(jax_reward)}, done {terminated} vs {bool(done)}"
        if terminated or truncated:
            return None
    return "no end after 5000 decisions"


@functools.lru_cache(maxsize=2)
def _env_functions(config: RuleConfig = DEFAULT_RULES):
    from envs.tcgjax.jax.env import TcgJaxEnv

    env = TcgJaxEnv(config=config)
    return jax.jit(env.start), jax.jit(env.step)


def main(argv=None) -> int:
    """python -m envs.tcgjax.l3_games --games N [--first F] [--batch B] [--tally]: stops at the first divergence."""
    import argparse

    from rich.progress import track

    from shared.cli_args import count_at_least

    parser = argparse.ArgumentParser(description="L3 by hand: the reference against the JAX engine")
    parser.add_argument("--games", type=count_at_least(1), default=100)
    parser.add_argument("--first", type=count_at_least(0), default=0)
    parser.add_argument("--tally", action="store_true", help="print what the games exercised")
    parser.add_argument("--batch", type=count_at_least(1), default=64, help="games the JAX engine steps at once")
    args = parser.parse_args(argv)
    events: collections.Counter = collections.Counter()
    winners: collections.Counter = collections.Counter()
    seeds = range(args.first, args.first + args.games)
    chunks = [seeds[i:i + args.batch] for i in range(0, len(seeds), args.batch)]
    for chunk in track(chunks, description=f"games ({args.batch} a batch)"):
        for report in play_games(chunk, l3_decks, batch=args.batch):
            if report.divergence:
                print(f"seed {report.seed}, decks {report.decks}: {report.divergence}\n{report.reproducer()}")
                return 1
            events.update(report.events)
            winners[report.winner] += 1
    compared = sum(winners.values())  # the games actually played on both engines, not the number asked for
    if compared != args.games:
        print(f"compared {compared} games of the {args.games} asked for")
        return 1
    print(f"{compared} games equal; winners: player 0 {winners[0]}, player 1 {winners[1]}, draws {winners[2]}")
    if args.tally:
        for key, count in sorted(events.items()):
            print(f"  {key}: {count}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
