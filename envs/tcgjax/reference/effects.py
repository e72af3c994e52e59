"""Card texts -> effect programs: each attack, Ability and Trainer text becomes a short list of
parametric operations (`Op`) that both engines run in order. The families are those of
`data/effect_families.md`; a text that matches no pattern makes its card unsupported (listed in the
README's coverage table, never silently played as plain damage).

Targets: an attack or Ability that asks its user to choose a Pokemon declares `target` (one of
TARGETS); the action that uses it carries the choice (envs/tcgjax/reference/actions.py)."""

from __future__ import annotations

import dataclasses
import re
from typing import Optional

ENERGY_LETTERS = {"G": "Grass", "R": "Fire", "W": "Water", "L": "Lightning", "P": "Psychic", "F": "Fighting",
                  "D": "Darkness", "M": "Metal", "C": "Colorless"}

# What the user of an attack / Ability / Trainer chooses, encoded in the action's target index.
TARGETS = (
    "none",
    "opp_any",  # 0 = opponent's Active, 1-3 = their Bench
    "opp_bench",  # 1-3
    "opp_bench_basic",  # 1-3, a Basic Pokemon (Fragrance Trap)
    "own_any",  # 0 = own Active, 1-3 = own Bench
    "own_bench",  # 1-3
    "own_bench_typed",  # 1-3, of the Op's energy type
    "own_typed",  # 0-3, of the type named by the card (Erika, Misty)
    "own_named",  # 0-3, named by the card (Brock)
    "own_damaged",  # 0-3 with damage on it (Potion)
    "own_bench_pair",  # 1 = bench 1+2, 2 = bench 1+3, 3 = bench 2+3 (Manaphy; a lone benched Pokemon: 1)
)


@dataclasses.dataclass(frozen=True)
class Op:
    kind: str
    params: tuple = ()


@dataclasses.dataclass(frozen=True)
class Program:
    ops: tuple[Op, ...]
    target: str = "none"
    # the attack's main damage goes to the chosen target instead of the opponent's Active
    damage_to_target: bool = False
    target_type: str = ""  # the type a typed target must have (own_bench_typed, own_typed)
    active_only: bool = False  # an Ability usable only while its Pokemon is in the Active Spot


class Unsupported(Exception):
    """A text the engines do not implement (the reason says why)."""


def normalise(text: str) -> str:
    """One spelling per text: typography differs between printings (data/README caveats)."""
    return (text.replace("\u2019", "'").replace("\u2212", "-").replace("\u00d7", "x").replace("\u2014", "-")
            .replace("  ", " ").strip())


def _energy(letter: str) -> str:
    return ENERGY_LETTERS[letter]


# (pattern, builder) for attack texts; the builder gets the match and returns a Program.
_N = r"(\d+)"
_COUNT = {"a": 1, "an": 1, "1": 1, "2": 2, "3": 3, "4": 4}
ATTACK_PATTERNS: list[tuple[str, object]] = [
    # damage computed from coins / counts (family: coin_damage_per_heads, coin_until_tails_damage, ...)
    (rf"Flip {_N} coins\. This attack does {_N} damage for each heads\.",
     lambda m: Program((Op("coins_per_heads", (int(m[1]), int(m[2]))),))),
    (rf"Flip a coin until you get tails\. This attack does {_N} damage for each heads\.",
     lambda m: Program((Op("until_tails_per", (int(m[1]),)),))),
    (rf"Flip a coin until you get tails\. This attack does {_N} more damage for each heads\.",
     lambda m: Program((Op("until_tails_plus", (int(m[1]),)),))),
    (rf"Flip a coin\. If heads, this attack does {_N} more damage\.",
     lambda m: Program((Op("coins_plus", (1, int(m[1]), 0)),))),
    (rf"Flip 2 coins\. If both of them are heads, this attack does {_N} more damage\.",
     lambda m: Program((Op("coins_plus", (2, int(m[1]), 0)),))),
    (rf"Flip a coin\. If heads, this attack does {_N} more damage\. If tails, this Pokémon also does {_N} damage to itself\.",
     lambda m: Program((Op("coins_plus", (1, int(m[1]), int(m[2]))),))),
    (r"Flip a coin\. If tails, this attack does nothing\.", lambda m: Program((Op("coin_or_nothing"),))),
    (rf"If this Pokémon has at least {_N} extra \{{(\w)\}} Energy attached, this attack does {_N} more damage\.",
     lambda m: Program((Op("extra_energy_plus", (_energy(m[2]), int(m[1]), int(m[3]))),))),
    (rf"If your opponent's Active Pokémon has damage on it, this attack does {_N} more damage\.",
     lambda m: Program((Op("if_plus", ("defender_damaged", int(m[1]))),))),
    (rf"If this Pokémon has damage on it, this attack does {_N} more damage\.",
     lambda m: Program((Op("if_plus", ("self_damaged", int(m[1]))),))),
    (rf"If your opponent's Active Pokémon is Poisoned, this attack does {_N} more damage\.",
     lambda m: Program((Op("if_plus", ("defender_poisoned", int(m[1]))),))),
    (rf"If your opponent's Active Pokémon is an Evolution Pokémon, this attack does {_N} more damage\.",
     lambda m: Program((Op("if_plus", ("defender_evolution", int(m[1]))),))),
    (rf"If this Pokémon evolved during this turn, this attack does {_N} more damage\.",
     lambda m: Program((Op("if_plus", ("evolved_this_turn", int(m[1]))),))),
    # no Pokemon Tool exists in A1/P-A, so the condition always reads "no Tool"
    (rf"If this Pokémon has a Pokémon Tool attached, this attack does {_N} more damage\.",
     lambda m: Program((Op("if_plus", ("has_tool", int(m[1]))),))),
    (rf"If 1 of your Pokémon used Sweets Relay during your last turn, this attack does {_N} more damage\.",
     lambda m: Program((Op("if_plus", ("sweets_relay_last_turn", int(m[1]))),))),
    (rf"This attack does {_N} damage for each of your Benched \{{(\w)\}} Pokémon\.",
     lambda m: Program((Op("per_own_bench", (_energy(m[2]), int(m[1]))),))),
    (rf"This attack does {_N} damage for each of your Benched Pokémon\.",
     lambda m: Program((Op("per_own_bench", ("", int(m[1]))),))),
    (rf"This attack does {_N} more damage for each Energy attached to your opponent's Active Pokémon\.",
     lambda m: Program((Op("per_defender_energy_plus", (int(m[1]),)),))),
    (rf"This attack does {_N} more damage for each of your Benched ([\w♀♂. ]+?)\.",
     lambda m: Program((Op("per_own_bench_named_plus", (m[2], int(m[1]))),))),
    (rf"This attack does {_N} damage for each time your Pokémon used Sweets Relay during this game\.",
     lambda m: Program((Op("per_sweets_relay", (int(m[1]),)),))),
    # heal
    (rf"Heal {_N} damage from this Pokémon\.", lambda m: Program((Op("heal_self", (int(m[1]), False)),))),
    (rf"Flip a coin\. If heads, heal {_N} damage from this Pokémon\.",
     lambda m: Program((Op("heal_self", (int(m[1]), True)),))),
    (r"Heal from this Pokémon the same amount of damage you did to your opponent's Active Pokémon\.",
     lambda m: Program((Op("drain"),))),
    # special conditions
    (r"Your opponent's Active Pokémon is now (Asleep|Poisoned|Paralyzed|Confused|Burned)\.",
     lambda m: Program((Op("status", (m[1], False)),))),
    (r"Flip a coin\. If heads, your opponent's Active Pokémon is now (Asleep|Poisoned|Paralyzed|Confused|Burned)\.",
     lambda m: Program((Op("status", (m[1], True)),))),
    (r"This Pokémon is now (Asleep)\.", lambda m: Program((Op("self_status", (m[1],)),))),
    # energy
    (r"Discard (a|1|2) \{(\w)\} Energy from this Pokémon\.",
     lambda m: Program((Op("discard_own_energy", (_energy(m[2]), _COUNT[m[1]])),))),
    (r"Discard all Energy from this Pokémon\.", lambda m: Program((Op("discard_own_energy", ("", -1)),))),
    (r"Discard a random Energy from your opponent's Active Pokémon\.",
     lambda m: Program((Op("discard_opp_energy", (False,)),))),
    (r"Flip a coin\. If heads, discard a random Energy from your opponent's Active Pokémon\.",
     lambda m: Program((Op("discard_opp_energy", (True,)),))),
    (r"Take (?:a|1) \{(\w)\} Energy from your Energy Zone and attach it to this Pokémon\.",
     lambda m: Program((Op("zone_attach_self", (_energy(m[1]), 1)),))),
    (r"Take a \{(\w)\} Energy from your Energy Zone and attach it to 1 of your Benched \{(\w)\} Pokémon\.",
     lambda m: Program((Op("zone_attach_target", (_energy(m[1]), 1)),), target="own_bench_typed",
                      target_type=_energy(m[2]))),
    (r"Flip (\d) coins\. Take an amount of \{(\w)\} Energy from your Energy Zone equal to the number of heads and "
     r"attach it to your Benched \{\w\} Pokémon in any way you like\.",
     # the action names one benched Pokemon; every Energy goes there (README "Engine defaults")
     lambda m: Program((Op("zone_attach_coins_target", (_energy(m[2]), int(m[1]))),), target="own_bench_typed",
                       target_type=_energy(m[2]))),
    (r"Choose 2 of your Benched Pokémon\. For each of those Pokémon, take a \{(\w)\} Energy from your Energy Zone "
     r"and attach it to that Pokémon\.",
     lambda m: Program((Op("zone_attach_pair", (_energy(m[1]),)),), target="own_bench_pair")),
    # damage elsewhere
    (rf"This Pokémon also does {_N} damage to itself\.", lambda m: Program((Op("recoil", (int(m[1]),)),))),
    (rf"This attack also does {_N} damage to each of your opponent's Benched Pokémon\.",
     lambda m: Program((Op("bench_each", (int(m[1]),)),))),
    (rf"This attack does {_N} damage to 1 of your opponent's Benched Pokémon\.",
     lambda m: Program((Op("set_base", (int(m[1]),)),), target="opp_bench", damage_to_target=True)),
    (rf"This attack also does {_N} damage to 1 of your opponent's Benched Pokémon\.",
     lambda m: Program((Op("damage_target", (int(m[1]),)),), target="opp_bench")),
    (rf"This attack does {_N} damage to 1 of your opponent's Pokémon\.",
     lambda m: Program((Op("set_base", (int(m[1]),)),), target="opp_any", damage_to_target=True)),
    (rf"This attack also does {_N} damage to 1 of your Benched Pokémon\.",
     lambda m: Program((Op("damage_target", (int(m[1]),)),), target="own_bench")),
    (rf"This attack also does {_N} damage to 1 of your Pokémon\.",
     lambda m: Program((Op("damage_target", (int(m[1]),)),), target="own_any")),
    (rf"1 of your opponent's Pokémon is chosen at random {_N} times\. For each time a Pokémon was chosen, do {_N} damage to it\.",
     lambda m: Program((Op("random_hits", (int(m[1]), int(m[2]))),))),
    # next-turn effects
    (r"Your opponent can't use any Supporter cards from their hand during their next turn\.",
     lambda m: Program((Op("supporter_lock"),))),
    (r"Flip a coin\. If heads, the Defending Pokémon can't attack during your opponent's next turn\.",
     lambda m: Program((Op("defender_cant_attack", (True,)),))),
    (r"During your opponent's next turn, the Defending Pokémon can't attack\.",
     lambda m: Program((Op("defender_cant_attack", (False,)),))),
    (r"During your opponent's next turn, the Defending Pokémon can't retreat\.",
     lambda m: Program((Op("defender_cant_retreat"),))),
    (rf"During your opponent's next turn, attacks used by the Defending Pokémon do -{_N} damage\.",
     lambda m: Program((Op("defender_minus", (int(m[1]),)),))),
    (rf"During your opponent's next turn, this Pokémon takes -{_N} damage from attacks\.",
     lambda m: Program((Op("self_takes_minus", (int(m[1]),)),))),
    (r"Flip a coin\. If heads, during your opponent's next turn, prevent all damage from-and effects of-attacks "
     r"done to this Pokémon\.", lambda m: Program((Op("prevent_next_turn", (True,)),))),
    (r"Flip a coin\. If heads, during your opponent's next turn, prevent all damage done to this Pokémon by attacks\.",
     lambda m: Program((Op("prevent_next_turn", (False,)),))),
    (rf"During your opponent's next turn, if this Pokémon is damaged by an attack, do {_N} damage to the Attacking Pokémon\.",
     lambda m: Program((Op("counter_next_turn", (int(m[1]),)),))),
    (rf"During your next turn, this Pokémon's ([\w ]+) attack does \+{_N} damage\.",
     lambda m: Program((Op("next_turn_boost", (int(m[2]),)),))),
    # switching
    (r"Switch this Pokémon with 1 of your Benched Pokémon\.", lambda m: Program((Op("switch_self"),), target="own_bench")),
    (r"Switch out your opponent's Active Pokémon to the Bench\. \(Your opponent chooses the new Active Pokémon\.\)",
     lambda m: Program((Op("force_switch"),))),
    (r"Flip a coin\. If heads, switch in 1 of your opponent's Benched Pokémon to the Active Spot\.",
     lambda m: Program((Op("gust", (True,)),), target="opp_bench")),
    (r"Flip a coin\. If heads, your opponent shuffles their Active Pokémon into their deck\.",
     lambda m: Program((Op("bounce", (True,)),))),
    # cards
    (r"Draw a card\.", lambda m: Program((Op("draw", (1,)),))),
    (r"Put (?:1|a) random \{(\w)\} Pokémon from your deck into your hand\.",
     lambda m: Program((Op("search_hand", (_energy(m[1]),)),))),
    (r"Put a random Pokémon from your deck into your hand\.", lambda m: Program((Op("search_hand", ("",)),))),
    (r"Put 1 random ([\w♀♂. ]+?) from your deck onto your Bench\.", lambda m: Program((Op("search_bench", (m[1],)),))),
    (r"Flip a coin\. If heads, discard a random card from your opponent's hand\.",
     lambda m: Program((Op("discard_opp_hand", (True,)),))),
    (r"Discard a random card from your opponent's hand\.", lambda m: Program((Op("discard_opp_hand", (False,)),))),
    (rf"Discard the top {_N} cards of each player's deck\.", lambda m: Program((Op("mill", (int(m[1]),)),))),
    # information only: no state change in this perfect-information engine
    (r"Your opponent reveals their hand\.", lambda m: Program((Op("noop"),))),
    # Ditto: the choice (which Pokemon, which attack, that attack's target) is the COPY action's
    # (actions.py); the copied attack's program then runs as this attack (engine._attack)
    (r"Choose 1 of your opponent's Pokémon's attacks and use it as this attack\. If this Pokémon doesn't have the "
     r"necessary Energy to use that attack, this attack does nothing\.",
     lambda m: Program((Op("copy_opponent_attack"),))),
]

ABILITY_PATTERNS: list[tuple[str, object]] = [
    (rf"Once during your turn, you may heal {_N} damage from each of your Pokémon\.",
     lambda m: Program((Op("heal_each_own", (int(m[1]),)),))),
    (r"If this Pokémon is in the Active Spot, once during your turn, you may switch in 1 of your opponent's Benched "
     r"Basic Pokémon to the Active Spot\.",
     lambda m: Program((Op("gust", (False,)),), target="opp_bench_basic", active_only=True)),
    (rf"Once during your turn, you may do {_N} damage to 1 of your opponent's Pokémon\.",
     lambda m: Program((Op("ability_damage", (int(m[1]),)),), target="opp_any")),
    (r"Once during your turn, you may take a \{(\w)\} Energy from your Energy Zone and attach it to this Pokémon\.",
     lambda m: Program((Op("zone_attach_self", (_energy(m[1]), 1)),))),
    (r"Once during your turn, you may flip a coin\. If heads, your opponent's Active Pokémon is now (Asleep)\.",
     lambda m: Program((Op("status", (m[1], True)),))),
    (r"Once during your turn, you may take 1 \{(\w)\} Energy from your Energy Zone and attach it to the \{\w\} "
     r"Pokémon in the Active Spot\.", lambda m: Program((Op("zone_attach_active_typed", (_energy(m[1]),)),))),
    (r"Once during your turn, if this Pokémon is in the Active Spot, you may make your opponent's Active Pokémon (Poisoned)\.",
     lambda m: Program((Op("status", (m[1], False)),), active_only=True)),
    (r"Once during your turn, you may switch out your opponent's Active Pokémon to the Bench\. \(Your opponent "
     r"chooses the new Active Pokémon\.\)", lambda m: Program((Op("force_switch"),))),
    (r"Once during your turn, you may look at the top card of your deck\.", lambda m: Program((Op("noop"),))),
]

# Abilities that are never "used": they change how something else resolves.
PASSIVE_PATTERNS: list[tuple[str, object]] = [
    (rf"This Pokémon takes -{_N} damage from attacks\.", lambda m: Op("passive_reduce", (int(m[1]),))),
    (rf"If this Pokémon is in the Active Spot and is damaged by an attack from your opponent's Pokémon, do {_N} "
     r"damage to the Attacking Pokémon\.", lambda m: Op("passive_counter", (int(m[1]),))),
    (r"As long as this Pokémon is in the Active Spot, your opponent can't use any Supporter cards from their hand\.",
     lambda m: Op("passive_supporter_lock")),
    # R-3.8-like: no Arceus exists in A1/P-A, so the reduction never applies
    (rf"If you have Arceus or Arceus ex in play, this Pokémon takes -{_N} damage from attacks\.",
     lambda m: Op("passive_reduce_if_arceus", (int(m[1]),))),
    (rf"Whenever you attach a \{{(\w)\}} Energy from your Energy Zone to this Pokémon, heal {_N} damage from this Pokémon\.",
     lambda m: Op("on_attach_heal", (_energy(m[1]), int(m[2])))),
    (rf"Whenever you attach a \{{(\w)\}} Energy from your Energy Zone to this Pokémon, do {_N} damage to your "
     r"opponent's Active Pokémon\.", lambda m: Op("on_attach_damage", (_energy(m[1]), int(m[2])))),
    (r"At the end of your first turn, take a \{(\w)\} Energy from your Energy Zone and attach it to this Pokémon\.",
     lambda m: Op("end_of_first_turn_attach", (_energy(m[1]),))),
]

TRAINER_PATTERNS: list[tuple[str, object]] = [
    (rf"Heal {_N} damage from 1 of your \{{(\w)\}} Pokémon\.",
     lambda m: Program((Op("heal_target", (int(m[1]),)),), target="own_typed", target_type=_energy(m[2]))),
    (rf"Heal {_N} damage from 1 of your Pokémon\.", lambda m: Program((Op("heal_target", (int(m[1]),)),), target="own_damaged")),
    (r"Choose 1 of your \{(\w)\} Pokémon, and flip a coin until you get tails\. For each heads, take a \{\w\} Energy "
     r"from your Energy Zone and attach it to that Pokémon\.",
     lambda m: Program((Op("zone_attach_until_tails_target", (_energy(m[1]),)),), target="own_typed",
                       target_type=_energy(m[1]))),
    (rf"During this turn, attacks used by your ([\w, ]+), or (\w+) do \+{_N} damage to your opponent's Active Pokémon\.",
     lambda m: Program((Op("turn_boost", (int(m[3]), tuple(n.strip() for n in m[1].split(",")) + (m[2],))),))),
    (rf"During this turn, attacks used by your Pokémon do \+{_N} damage to your opponent's Active Pokémon\.",
     lambda m: Program((Op("turn_boost", (int(m[1]), ())),))),
    (r"Put your (\w+) or (\w+) in the Active Spot into your hand\.", lambda m: Program((Op("return_active", ((m[1], m[2]),)),))),
    (r"Take 1 \{(\w)\} Energy from your Energy Zone and attach it to your (\w+) or (\w+)\.",
     lambda m: Program((Op("zone_attach_named_target", (_energy(m[1]), (m[2], m[3]))),), target="own_named")),
    (r"Switch out your opponent's Active Pokémon to the Bench\. \(Your opponent chooses the new Active Pokémon\.\)",
     lambda m: Program((Op("force_switch"),))),
    (r"Move all \{(\w)\} Energy from your Benched Pokémon to your ([\w, ]+), or (\w+) in the Active Spot\.",
     lambda m: Program((Op("move_energy_to_active", (_energy(m[1]), tuple(n.strip() for n in m[2].split(",")) + (m[3],))),))),
    (rf"During this turn, the Retreat Cost of your Active Pokémon is {_N} less\.",
     lambda m: Program((Op("retreat_discount", (int(m[1]),)),))),
    (r"Your opponent reveals their hand\.", lambda m: Program((Op("noop"),))),
    (rf"Look at the top {_N} cards of your deck\.", lambda m: Program((Op("noop"),))),
    (r"Put a random Basic Pokémon from your deck into your hand\.", lambda m: Program((Op("search_hand_basic"),))),
    (rf"Your opponent shuffles their hand into their deck and draws {_N} cards\.",
     lambda m: Program((Op("opp_hand_to_deck_draw", (int(m[1]),)),))),
    (rf"Draw {_N} cards\.", lambda m: Program((Op("draw", (int(m[1]),)),))),
]


def _match(patterns, text: str):
    text = normalise(text)
    for pattern, build in patterns:
        found = re.fullmatch(pattern, text)
        if found:
            return build(found)
    return None


def attack_program(text: Optional[str]) -> Program:
    if not text:
        return Program(())
    program = _match(ATTACK_PATTERNS, text)
    if program is None:
        raise Unsupported(f"attack text not implemented: {normalise(text)!r}")
    return program


def ability_program(text: str) -> tuple[Optional[Program], Optional[Op]]:
    """(activated program, None) or (None, passive op)."""
    program = _match(ABILITY_PATTERNS, text)
    if program is not None:
        return program, None
    passive = _match(PASSIVE_PATTERNS, text)
    if passive is not None:
        return None, passive
    raise Unsupported(f"ability text not implemented: {normalise(text)!r}")


def trainer_program(text: str) -> Program:
    program = _match(TRAINER_PATTERNS, text)
    if program is None:
        raise Unsupported(f"trainer text not implemented: {normalise(text)!r}")
    return program
