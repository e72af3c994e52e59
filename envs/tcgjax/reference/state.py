"""The game state of the Python reference: plain, mutable objects that read like the rules.
Slot 0 of a board is the Active Spot, slots 1-3 the Bench (R-2.4); an empty slot is None, so a
Pokemon keeps its slot number while it stays on the Bench (actions name slots)."""

from __future__ import annotations

import dataclasses
from typing import Optional

from envs.tcgjax.reference.rng import Stream

NO_ENERGY = -1
NEVER = -1  # a turn number before the game starts: "not in force"

# Asleep, Paralyzed and Confused exclude each other: one field holds at most one of them.
ASLEEP, PARALYZED, CONFUSED = 1, 2, 3
CONDITION_NAMES = {"Asleep": ASLEEP, "Paralyzed": PARALYZED, "Confused": CONFUSED}

# Outcome
ONGOING, DRAW = -1, 2


@dataclasses.dataclass(eq=False)
class InPlay:
    """A Pokemon in play: its card stack (Basic or Fossil first, the top card last), damage counters,
    attached Energy counted per type (cards.ENERGY_TYPES order), conditions and timed effects.
    Equality is identity (eq=False): two Pokemon with the same card and counters are still two
    (board.index(pokemon) must find this one, not an equal twin: L3 found that in game 225)."""

    stack: list[int]
    entered_turn: int
    damage: int = 0
    energy: list[int] = dataclasses.field(default_factory=lambda: [0] * 8)
    evolved_turn: int = NEVER
    ability_used_turn: int = NEVER
    # Special Conditions (Active only)
    poisoned: bool = False
    burned: bool = False
    exclusive: int = 0  # 0, ASLEEP, PARALYZED or CONFUSED
    paralyzed_on_turn: int = NEVER
    # Effects "during your opponent's next turn": the last turn they are in force
    cant_attack_until: int = NEVER
    cant_retreat_until: int = NEVER
    attack_minus_until: int = NEVER
    attack_minus: int = 0
    takes_minus_until: int = NEVER
    takes_minus: int = 0
    prevent_until: int = NEVER
    prevent_effects: bool = False
    counter_until: int = NEVER
    counter_damage: int = 0
    boost_turn: int = NEVER  # "During your next turn, this Pokemon's X attack does +N"
    boost: int = 0

    @property
    def top(self) -> int:
        return self.stack[-1]

    def clear_conditions(self) -> None:
        self.poisoned = self.burned = False
        self.exclusive = 0
        self.paralyzed_on_turn = NEVER

    def leave_active(self, end_effects: bool = True) -> None:
        """Moving to the Bench (or anywhere) ends Special Conditions (R-3.10, R-6.1) and, with `end_effects`
        (RuleConfig.effects_end_on_leaving_active, R-3.10's ⚠ default), every effect tied to this Pokemon in
        the Active Spot (R-6.9); without, those run until they expire."""
        self.clear_conditions()
        if not end_effects:
            return
        self.cant_attack_until = self.cant_retreat_until = self.attack_minus_until = NEVER
        self.takes_minus_until = self.prevent_until = self.counter_until = self.boost_turn = NEVER
        self.attack_minus = self.takes_minus = self.counter_damage = self.boost = 0
        self.prevent_effects = False


@dataclasses.dataclass(eq=False)  # identity: game.players.index(player) must find this one
class Player:
    deck: list[int]  # index 0 is the top
    energy_types: tuple[int, ...]  # indices into cards.ENERGY_TYPES
    hand: list[int] = dataclasses.field(default_factory=list)
    discard: list[int] = dataclasses.field(default_factory=list)
    board: list[Optional[InPlay]] = dataclasses.field(default_factory=lambda: [None] * 4)
    points: int = 0
    energy_current: int = NO_ENERGY
    energy_next: int = NO_ENERGY
    # this turn's limits and boosts (reset when the player's turn starts)
    attached: bool = False
    supporter_played: bool = False
    retreated: bool = False
    retreat_discount: int = 0
    turn_boosts: list[tuple[int, tuple[str, ...]]] = dataclasses.field(default_factory=list)
    supporter_lock_until: int = NEVER
    sweets_relay_turn: int = NEVER  # the last turn one of this player's Pokemon used Sweets Relay
    turns_taken: int = 0

    @property
    def active(self) -> Optional[InPlay]:
        return self.board[0]

    def bench_slots(self) -> list[int]:
        return [s for s in (1, 2, 3) if self.board[s] is not None]

    def in_play(self) -> list[int]:
        return [s for s in range(4) if self.board[s] is not None]


@dataclasses.dataclass
class Game:
    players: list[Player]
    rng: Stream
    first: int = 0  # who goes first
    turn: int = 0  # global turn counter; 0 during setup (RULES §3)
    current: int = 0  # whose turn (or whose setup) it is
    phase: str = "setup"  # setup | main | promote | over
    # promotions owed (R-5.3, and forced switches): (player, "ko" | "swap"), resolved in order
    pending: list[tuple[int, str]] = dataclasses.field(default_factory=list)
    resume: str = "main"  # what follows the promotions: main | end_turn | next_turn
    winner: int = ONGOING  # 0, 1, DRAW
    setup_done: list[bool] = dataclasses.field(default_factory=lambda: [False, False])

    @property
    def decision_player(self) -> int:
        """Who acts next: the player owing a promotion, else the turn (or setup) player."""
        if self.phase == "promote" and self.pending:
            return self.pending[0][0]
        return self.current
