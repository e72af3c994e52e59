"""Every engine default of RULES.md where sources disagree or say nothing, as one flag each. Both
engines read the same `RuleConfig`; the defaults are RULES.md's."""

from __future__ import annotations

import dataclasses

# R-2.2's two opening hands and their sizes
OPENING_HANDS = {"five_with_basic": 5, "seven_with_mulligan": 7}
BASIC_GUARANTEES = ("reshuffle", "basic_on_top")
ENERGY_CHOICES = ("uniform", "active_costs")


@dataclasses.dataclass(frozen=True)
class RuleConfig:
    # R-2.2 (⚑): "five_with_basic" (5 cards holding a Basic, no mulligan) or "seven_with_mulligan" ([S14],
    # the physical TCG: 7 cards, redrawn until they hold a Basic, each player then drawing one card per
    # redraw its opponent took, up to the hand limit: the physical game's "may draw" always taken)
    opening_hand: str = "five_with_basic"
    # R-2.2 (⚠) how the opening hand is made to hold a Basic: "reshuffle" (option A: shuffle the whole deck
    # until the top cards hold one) or "basic_on_top" (option B, [C1]'s: one of the deck's Basic Pokemon
    # put on top, chosen uniformly by copy, then the other 19 shuffled; never a redraw, so under
    # seven_with_mulligan no one takes a mulligan)
    basic_guarantee: str = "reshuffle"
    first_player_draws_turn1: bool = True  # R-3.1 (⚑)
    supporter_on_turn1: bool = True  # R-3.7 (⚑)
    attack_on_turn1: bool = True  # R-3.12 (⚑): allowed whenever the cost is met
    unused_energy_carries_over: bool = False  # R-3.3 (⚑): the current Energy is lost at the end of the turn
    # R-3.3 (⚑) the type of each *next* Energy: "uniform" among the deck's types, or "active_costs" ([S15]:
    # "based on your Active Pokemon's attack costs"; no source says how, so this engine's reading): uniform
    # among the deck's types that some attack cost of the player's Active names at the roll, all the deck's
    # types when none does or there is no Active (setup's rolls)
    energy_choice: str = "uniform"
    hand_limit: int = 10  # a draw past it moves nothing (⚠)
    max_energy_types: int = 3  # R-1.4 (⚠)
    # R-3.6(c) (⚠): a Pokemon cannot evolve twice in one turn (RULES.md: evolving counts as entering play
    # this turn); False lets a Pokemon in play since an earlier turn go Basic -> Stage 1 -> Stage 2 in one turn
    evolve_once_per_turn: bool = True
    # R-3.10 (⚠), R-6.9: effects tied to a Pokemon (can't attack or retreat, -20, prevent all, counter,
    # next-turn boost) end when it leaves the Active Spot; False lets them run until they expire
    # (Special Conditions end on leaving either way, sourced)
    effects_end_on_leaving_active: bool = True
    # R-4.2 (⚠): damage an Ability does (Water Shuriken, Counterattack) is not attack damage and takes no
    # Weakness; True adds Weakness's +20 when it hits an Active weak to the Ability's Pokemon's type
    weakness_on_ability_damage: bool = False
    max_turns: int = 30  # R-5.7 (⚑): global turns; a draw after turn 30's Checkup
    # R-5.3 (⚠): after a double Knock Out (or any two promotions owed at once) the turn player promotes
    # first; False lets its opponent choose first
    turn_player_promotes_first: bool = True
    tie_policy: str = "count_conditions"  # R-5.5 (⚑): or "empty_board_loses"
    fossil_counts_as_basic_for_deck: bool = False  # R-1.3 (⚠)
    # Engine defaults of this implementation (not in RULES.md; README "Engine defaults"):
    # lets the owner pick which Energy pays a Retreat Cost; the action space has no such
    # choice, so the Energy goes from the most plentiful type first (ties: the lower type index).
    retreat_discard: str = "most_plentiful"
    # Attacker-side bonuses (Giovanni, Blaine, next-turn boosts, Growl's -20) apply to attacks that do
    # damage, as Weakness does (R-4.2, not a flag: its sources agree); an attack whose computed damage is
    # 0 stays at 0.
    bonuses_need_damage: bool = True

    def __post_init__(self):
        if self.tie_policy not in ("count_conditions", "empty_board_loses"):
            raise ValueError(f"tie_policy must be 'count_conditions' or 'empty_board_loses', got {self.tie_policy!r}")
        if self.opening_hand not in OPENING_HANDS:
            raise ValueError(f"opening_hand must be one of {', '.join(map(repr, OPENING_HANDS))}, "
                             f"got {self.opening_hand!r}")
        if self.basic_guarantee not in BASIC_GUARANTEES:
            raise ValueError(f"basic_guarantee must be one of {', '.join(map(repr, BASIC_GUARANTEES))}, "
                             f"got {self.basic_guarantee!r}")
        if self.energy_choice not in ENERGY_CHOICES:
            raise ValueError(f"energy_choice must be one of {', '.join(map(repr, ENERGY_CHOICES))}, "
                             f"got {self.energy_choice!r}")
        if self.retreat_discard != "most_plentiful":
            raise ValueError(f"retreat_discard: only 'most_plentiful' is implemented, got {self.retreat_discard!r}")
        if not 1 <= self.max_energy_types <= 8:
            raise ValueError(f"max_energy_types must be 1..8, got {self.max_energy_types}")
        if self.max_turns < 1 or self.hand_limit < 1:
            raise ValueError("max_turns and hand_limit must be positive")

    @property
    def opening_hand_size(self) -> int:
        return OPENING_HANDS[self.opening_hand]
