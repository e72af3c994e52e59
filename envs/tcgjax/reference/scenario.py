"""Hand-built positions for tests: a game already in its main phase, with the boards, hands, decks,
Energy and turn a test names, instead of playing there from a seed.

    game = scenario(
        me=Side(active=Mon("Pikachu ex", energy={"Lightning": 2}), bench=[Mon("Pikachu")], hand=["Potion"]),
        foe=Side(active=Mon("Bulbasaur", damage=10)),
        turn=3, seed=7)
    step(game, encode("attack", 0, 0))

Card names are English names (the first printing) or printing ids ("A1-096")."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Optional

from envs.tcgjax.reference.cards import CardPool, load_pool
from envs.tcgjax.reference.config import RuleConfig
from envs.tcgjax.reference.engine import TYPE_INDEX, _apply_condition, _attach_context
from envs.tcgjax.reference.rng import Stream
from envs.tcgjax.reference.state import NO_ENERGY, PARALYZED, Game, InPlay, Player


@dataclasses.dataclass
class Mon:
    card: str  # the top card; `below` lists the cards under it (pre-evolutions), Basic first
    damage: int = 0
    energy: dict = dataclasses.field(default_factory=dict)  # {"Fire": 2}
    conditions: tuple = ()  # "Poisoned", "Burned", "Asleep", "Paralyzed", "Confused"
    below: tuple = ()
    entered_turn: int = 0
    paralyzed_on_turn: int = -1


@dataclasses.dataclass
class Side:
    active: Optional[Mon] = None
    bench: list = dataclasses.field(default_factory=list)  # Mon or None, bench slots 1.. in order
    hand: list = dataclasses.field(default_factory=list)
    deck: list = dataclasses.field(default_factory=list)  # top first
    discard: list = dataclasses.field(default_factory=list)
    points: int = 0
    energy_types: tuple = ("Grass",)
    energy_current: Optional[str] = None
    energy_next: Optional[str] = None


def _in_play(mon: Optional[Mon], pool: CardPool, turn: int) -> Optional[InPlay]:
    if mon is None:
        return None
    stack = [pool.card(c).index for c in mon.below] + [pool.card(mon.card).index]
    pokemon = InPlay(stack=stack, entered_turn=mon.entered_turn, damage=mon.damage)
    for name, count in mon.energy.items():
        pokemon.energy[TYPE_INDEX[name]] += count
    for name in mon.conditions:  # R-6.2's stacking, as the engine applies it
        _apply_condition(SimpleNamespace(turn=turn - 1), pokemon, name)
    if pokemon.exclusive == PARALYZED and mon.paralyzed_on_turn >= 0:
        pokemon.paralyzed_on_turn = mon.paralyzed_on_turn
    return pokemon


def _player(side: Side, pool: CardPool, turn: int) -> Player:
    player = Player(deck=[pool.card(c).index for c in side.deck],
                    energy_types=tuple(TYPE_INDEX[t] for t in side.energy_types))
    player.hand = [pool.card(c).index for c in side.hand]
    player.discard = [pool.card(c).index for c in side.discard]
    player.board[0] = _in_play(side.active, pool, turn)
    for slot, mon in enumerate(side.bench[:3], start=1):
        player.board[slot] = _in_play(mon, pool, turn)
    player.points = side.points
    player.energy_current = TYPE_INDEX[side.energy_current] if side.energy_current else NO_ENERGY
    player.energy_next = TYPE_INDEX[side.energy_next] if side.energy_next else player.energy_types[0]
    return player


def scenario(me: Side, foe: Side, turn: int = 3, seed: int = 0, me_index: int = 0,
             config: RuleConfig = RuleConfig(), pool: Optional[CardPool] = None) -> Game:
    """A game in `me`'s main phase of global turn `turn` (me moves on odd turns when me_index == first)."""
    pool = pool or load_pool()
    players = [None, None]
    players[me_index] = _player(me, pool, turn)
    players[1 - me_index] = _player(foe, pool, turn)
    game = Game(players=players, rng=Stream(seed), turn=turn, current=me_index, phase="main")
    game.first = me_index if turn % 2 == 1 else 1 - me_index
    game.setup_done = [True, True]
    for i, p in enumerate(players):  # turns each player finished before this one (the first player has the odd ones)
        p.turns_taken = turn // 2 if i == game.first else (turn - 1) // 2
    _attach_context(game, pool, config)
    return game
