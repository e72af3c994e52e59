"""Every engine default of RULES.md where sources disagree or say nothing, as one flag each. Both
engines read the same `RuleConfig`; the defaults are RULES.md's."""

from __future__ import annotations

import dataclasses

# R-2.2's two opening hands and their sizes
OPENING_HANDS = {"five_with_basic": 5, "seven_with_mulligan": 7}


@dataclasses.dataclass(frozen=True)
class RuleConfig:
    # R-2.2 (⚑): "five_with_basic" (5 cards holding a Basic, no mulligan) or "seven_with_mulligan" ([S14],
    # the physical TCG: 7 cards, redrawn until they hold a Basic, each player then drawing one card per
    # redraw its opponent took, up to the hand limit: the physical game's "may draw" always taken)
    opening_hand: str = "five_with_basic"
    first_player_draws_turn1: bool = True  # R-3.1 (⚑)
    supporter_on_turn1: bool = True  # R-3.7 (⚑)
    attack_on_turn1: bool = True  # R-3.12 (⚑): allowed whenever the cost is met
    unused_energy_carries_over: bool = False  # R-3.3 (⚑): the current Energy is lost at the end of the turn
    hand_limit: int = 10  # a draw past it moves nothing (⚠)
    max_energy_types: int = 3  # R-1.4 (⚠)
    max_turns: int = 30  # R-5.7 (⚑): global turns; a draw after turn 30's Checkup
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
        if self.retreat_discard != "most_plentiful":
            raise ValueError(f"retreat_discard: only 'most_plentiful' is implemented, got {self.retreat_discard!r}")
        if not 1 <= self.max_energy_types <= 8:
            raise ValueError(f"max_energy_types must be 1..8, got {self.max_energy_types}")
        if self.max_turns < 1 or self.hand_limit < 1:
            raise ValueError("max_turns and hand_limit must be positive")

    @property
    def opening_hand_size(self) -> int:
        return OPENING_HANDS[self.opening_hand]
