"""Every engine default of RULES.md where sources disagree or say nothing, as one flag each. Both
engines read the same `RuleConfig`; the defaults are RULES.md's."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class RuleConfig:
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
    # Attacker-side bonuses (Giovanni, Blaine, next-turn boosts) and Weakness apply to attacks that
    # do damage; an attack whose base damage is 0 stays at 0 (R-4.2 says so for Weakness).
    bonuses_need_damage: bool = True

    def __post_init__(self):
        if self.tie_policy not in ("count_conditions", "empty_board_loses"):
            raise ValueError(f"tie_policy must be 'count_conditions' or 'empty_board_loses', got {self.tie_policy!r}")
        if self.retreat_discard != "most_plentiful":
            raise ValueError(f"retreat_discard: only 'most_plentiful' is implemented, got {self.retreat_discard!r}")
        if not 1 <= self.max_energy_types <= 8:
            raise ValueError(f"max_energy_types must be 1..8, got {self.max_energy_types}")
        if self.max_turns < 1 or self.hand_limit < 1:
            raise ValueError("max_turns and hand_limit must be positive")
