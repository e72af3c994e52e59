"""L1: the card pool and its compiled programs, checked against the data's own documentation
(data/README.md's counts and caveats, data/effect_families.json's text -> family map, which the data
provider made independently of this engine)."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import numpy as np

from envs.tcgjax.jax.tables import OP_KINDS, card_tables
from envs.tcgjax.reference import effects
from envs.tcgjax.reference.cards import load_pool
from envs.tcgjax.tests.components import TCGJAX

DATA = Path(__file__).resolve().parent.parent / "data"
POOL = load_pool()
# data/README.md: "P-A has 12 evolution cards whose pre-evolutions are only in later sets"
LINE_INCOMPLETE = {"Volcarona", "Cherrim", "Staraptor", "Floatzel", "Pawmot", "Lycanroc", "Alolan Ninetales",
                   "Toucannon", "Alcremie", "Greedent", "Houndoom", "Weavile"}
# Every family effect_families.md lists, and the op kinds that implement it (a family mapped to no op
# would be a family the engines ignore).
FAMILY_OPS = {
    "coin_gate": None,  # a modifier: any op with a coin flag
    "discard_own_energy": {"discard_own_energy"}, "coin_damage_per_heads": {"coins_per_heads"},
    "heal_self": {"heal_self"}, "status_poison": {"status"}, "coin_bonus_damage": {"coins_plus"},
    "self_damage": {"recoil", "coins_plus"}, "status_sleep": {"status", "self_status"},
    "bonus_if_condition": {"if_plus"}, "bonus_if_extra_energy": {"extra_energy_plus"},
    "snipe_any_opponent": {"set_base", "ability_damage"}, "coin_or_nothing": {"coin_or_nothing"},
    "discard_opponent_energy": {"discard_opp_energy"}, "force_opponent_switch": {"force_switch"},
    "status_paralyze": {"status"}, "supporter_lock": {"supporter_lock"}, "heal_target": {"heal_target", "heal_each_own"},
    "reveal_or_look": {"noop"}, "snipe_opponent_bench": {"set_base", "bench_each", "damage_target"},
    "defender_cant_attack": {"defender_cant_attack"}, "turn_damage_boost": {"turn_boost"},
    "search_deck_to_hand": {"search_hand", "search_hand_basic"}, "draw_cards": {"draw"},
    "coin_until_tails_damage": {"until_tails_per", "until_tails_plus"}, "damage_own_pokemon": {"damage_target"},
    "defender_attack_minus": {"defender_minus"}, "gust_opponent_bench": {"gust"}, "opponent_hand_discard": {"discard_opp_hand"},
    "prevent_all_damage_next_turn": {"prevent_next_turn"}, "random_multi_hit": {"random_hits"},
    "reduce_damage_taken_next_turn": {"self_takes_minus"}, "switch_self": {"switch_self"},
    "bounce_opponent_active_to_deck": {"bounce"}, "defender_cant_retreat": {"defender_cant_retreat"},
    "energy_move": {"move_energy_to_active"}, "heal_by_damage_dealt": {"drain"},
    "return_own_active_to_hand": {"return_active"}, "search_deck_to_bench": {"search_bench"},
    "energy_attach_from_zone": {"zone_attach_self", "zone_attach_target", "zone_attach_coins_target",
                                "zone_attach_pair", "zone_attach_until_tails_target", "zone_attach_named_target",
                                "zone_attach_active_typed"},
    "damage_per_count": {"per_own_bench", "per_defender_energy_plus", "per_own_bench_named_plus", "per_sweets_relay"},
    "status_confuse": {"status"}, "status_burn": {"status"}, "mill_decks": {"mill"},
    "next_turn_self_attack_boost": {"next_turn_boost"}, "opponent_hand_shuffle_draw": {"opp_hand_to_deck_draw"},
    "retreat_cost_reduction": {"retreat_discount"}, "copy_opponent_attack": {"copy_opponent_attack"},
}
# Abilities that are never "used" compile to a passive op instead.
for family, passives in {"passive_damage_reduction": {"passive_reduce", "passive_reduce_if_arceus"},
                         "counter_damage_when_hit": {"passive_counter", "counter_next_turn"},
                         "on_energy_attach_trigger": {"on_attach_heal", "on_attach_damage"},
                         "end_of_first_turn_trigger": {"end_of_first_turn_attach"},
                         "energy_attach_from_zone": {"end_of_first_turn_attach"},
                         "supporter_lock": {"passive_supporter_lock"}}.items():
    FAMILY_OPS[family] = (FAMILY_OPS.get(family) or set()) | passives


def _records():
    return json.loads((DATA / "cards_a1.json").read_text())


@TCGJAX.covers("cards")
def test_pool_counts_match_the_data_readme():
    records = _records()
    assert len(records) == 386  # "386 card records"
    assert sum(r["set"] == "A1" for r in records) == 286
    assert len({r["gameplay_id"] for r in records if r["set"] == "A1"}) == 225  # "225 distinct gameplay cards"
    assert len(POOL) == len({r["gameplay_id"] for r in records})
    # alternate arts and reprints share one gameplay card
    assert POOL.card("A1-227").gameplay_id == POOL.card("A1-001").gameplay_id or POOL.card("A1-227").name != "Bulbasaur"


@TCGJAX.covers("cards")
def test_exactly_the_incomplete_lines_are_excluded():
    """The issue's bar: every A1 and P-A card whose evolution line is complete in those sets (Ditto's
    Copy Anything included)."""
    excluded = {entry["name"] for entry in POOL.coverage()["excluded"]}
    assert excluded == LINE_INCOMPLETE
    assert POOL.card("Ditto").playable


@TCGJAX.covers("cards")
def test_every_family_text_compiles_to_the_family_ops():
    """effect_families.json maps each distinct normalised text to its families; each text of a playable
    card compiles to a program holding an op of each of its families."""
    families = json.loads((DATA / "effect_families.json").read_text())["text_to_families"]
    texts_of_playable = set()
    for record in _records():
        if not POOL.by_gameplay_id[record["gameplay_id"]].playable:
            continue
        for attack in record.get("attacks") or []:
            if attack.get("effect"):
                texts_of_playable.add((effects.normalise(attack["effect"]), "attack"))
        if record.get("ability"):
            texts_of_playable.add((effects.normalise(record["ability"]["effect"]), "ability"))
        if record["category"] == "Trainer" and record.get("trainer_subtype") != "Fossil":
            texts_of_playable.add((effects.normalise(record["effect"]), "trainer"))
    normalised = {effects.normalise(text): fams for text, fams in families.items()}
    checked = collections.Counter()
    for text, where in texts_of_playable:
        assert text in normalised, f"text missing from effect_families.json: {text!r}"
        if where == "attack":
            kinds = {op.kind for op in effects.attack_program(text).ops}
        elif where == "trainer":
            kinds = {op.kind for op in effects.trainer_program(text).ops}
        else:
            program, passive = effects.ability_program(text)
            kinds = {op.kind for op in program.ops} if program else {passive.kind}
        for family in normalised[text]:
            wanted = FAMILY_OPS.get(family)
            if family == "coin_gate":
                assert text.startswith(("Flip a coin", "Once during your turn, you may flip a coin")), text
                continue
            assert wanted is not None, f"family {family} has no op mapping in this test"
            assert kinds & wanted, f"{text!r}: family {family} wants one of {wanted}, compiled to {kinds}"
            checked[family] += 1
    assert len(checked) >= 45, sorted(checked)


@TCGJAX.covers("cards")
def test_printed_damage_anomalies_follow_the_text():
    """data/README: 7 P-A attacks print plain damage where the text implies + or x; engines follow the text."""
    rayquaza = POOL.card("P-A-063").attacks[0]
    assert rayquaza.base == 70 and rayquaza.program.ops[0].kind == "until_tails_plus"
    poipole = POOL.card("P-A-082").attacks[0]
    assert poipole.program.ops[0].kind == "coins_per_heads" and poipole.program.ops[0].params == (2, 20)


@TCGJAX.covers("cards")
def test_jax_tables_mirror_the_pool():
    tables = card_tables()
    records = {r["gameplay_id"]: r for r in _records()}
    for card in POOL.cards:
        record = records[card.gameplay_id]
        if card.is_pokemon:
            assert tables["hp"][card.index] == record["hp"]
            assert tables["retreat"][card.index] == record["retreat"]
            assert tables["is_ex"][card.index] == record["is_ex"]
        if card.playable and card.is_pokemon:
            for a, attack in enumerate(record["attacks"]):
                assert tables["cost_typed"][card.index, a].sum() + tables["cost_colorless"][card.index, a] == len(attack["cost"])
    assert set(np.unique(tables["attack_ops"][..., 0])) <= set(range(len(OP_KINDS)))
    assert tables["is_fossil"].sum() == 3 and tables["hp"][tables["is_fossil"]].tolist() == [40, 40, 40]
