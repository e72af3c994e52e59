"""The card pool as arrays for the JAX engine, generated from the reference's CardPool (so the two
engines read the same cards and the same compiled effect programs): per card its stats, attacks,
Ability, passive and Trainer program, each program a fixed [MAX_OPS, 4] int table of
(op kind, p0, p1, p2)."""

from __future__ import annotations

import functools

import numpy as np

from envs.tcgjax.jax.state import HAND, MAX_ZONE_TYPES
from envs.tcgjax.reference.cards import ENERGY_TYPES, POKEMON_TYPES, CardPool, load_pool
from envs.tcgjax.reference.config import RuleConfig
from envs.tcgjax.reference.effects import TARGETS, Op, Program

MAX_OPS = 1  # every program of A1 / P-A is one op (card_tables raises if one needs more)
MAX_ATTACKS = 2
STATUS_IDS = {"Poisoned": 0, "Burned": 1, "Asleep": 2, "Paralyzed": 3, "Confused": 4}
CONDITION_IDS = {"defender_damaged": 0, "self_damaged": 1, "defender_poisoned": 2, "defender_evolution": 3,
                 "evolved_this_turn": 4, "has_tool": 5, "sweets_relay_last_turn": 6}
OP_KINDS = (
    "none", "noop",
    # damage stage (attacks)
    "coins_per_heads", "until_tails_per", "until_tails_plus", "coins_plus", "coin_or_nothing", "extra_energy_plus",
    "if_plus", "per_own_bench", "per_defender_energy_plus", "per_own_bench_named_plus", "set_base",
    # effects
    "heal_self", "drain", "status", "self_status", "discard_own_energy", "discard_opp_energy", "zone_attach_self",
    "zone_attach_target", "zone_attach_coins_target", "zone_attach_pair", "zone_attach_until_tails_target",
    "zone_attach_named_target", "zone_attach_active_typed", "recoil", "bench_each", "damage_target", "random_hits",
    "supporter_lock", "defender_cant_attack", "defender_cant_retreat", "defender_minus", "self_takes_minus",
    "prevent_next_turn", "counter_next_turn", "next_turn_boost", "switch_self", "force_switch", "gust", "bounce",
    "draw", "search_hand", "search_hand_basic", "search_bench", "discard_opp_hand", "mill", "heal_each_own",
    "ability_damage", "heal_target", "turn_boost", "return_active", "move_energy_to_active", "retreat_discount",
    "opp_hand_to_deck_draw", "copy_opponent_attack",
)
OP = {name: i for i, name in enumerate(OP_KINDS)}
DAMAGE_STAGE = ("coins_per_heads", "until_tails_per", "until_tails_plus", "coins_plus", "coin_or_nothing",
                "extra_energy_plus", "if_plus", "per_own_bench", "per_defender_energy_plus",
                "per_own_bench_named_plus", "set_base")
PASSIVES = ("none", "passive_reduce", "passive_counter", "passive_supporter_lock", "passive_reduce_if_arceus",
            "on_attach_heal", "on_attach_damage", "end_of_first_turn_attach")
PASSIVE = {name: i for i, name in enumerate(PASSIVES)}
TARGET = {name: i for i, name in enumerate(TARGETS)}


def _energy(name: str) -> int:
    return ENERGY_TYPES.index(name) if name else -1


class _Names:
    """Name ids, and name sets (for the ops that name cards: Brock, Koga, Blaine, Lt. Surge, ...)."""

    def __init__(self, pool: CardPool):
        self.ids = {name: i for i, name in enumerate(sorted({c.name for c in pool.cards}))}
        self.sets: list[tuple[str, ...]] = []

    def set_id(self, names: tuple[str, ...]) -> int:
        if not names:
            return -1
        names = tuple(names)
        if names not in self.sets:
            for name in names:
                if name not in self.ids:
                    raise ValueError(f"{name!r} names no card of the pool")
            self.sets.append(names)
        return self.sets.index(names)


def _encode_op(op: Op, names: _Names) -> tuple[int, int, int, int]:
    k, p = op.kind, op.params
    if k in ("noop", "coin_or_nothing", "drain", "supporter_lock", "defender_cant_retreat",
             "switch_self", "force_switch", "search_hand_basic", "copy_opponent_attack"):
        args = ()
    elif k in ("coins_per_heads", "coins_plus", "until_tails_per", "until_tails_plus", "set_base", "recoil",
               "bench_each", "damage_target", "random_hits", "defender_minus", "self_takes_minus",
               "counter_next_turn", "next_turn_boost", "draw", "mill", "heal_each_own", "ability_damage",
               "heal_target", "retreat_discount", "opp_hand_to_deck_draw", "per_defender_energy_plus"):
        args = tuple(int(x) for x in p)
    elif k == "extra_energy_plus":
        args = (_energy(p[0]), p[1], p[2])
    elif k == "if_plus":
        args = (CONDITION_IDS[p[0]], p[1])
    elif k == "per_own_bench":
        args = (_energy(p[0]), p[1])
    elif k == "per_own_bench_named_plus":
        args = (names.ids[p[0]], p[1])
    elif k in ("heal_self", "discard_opp_energy", "defender_cant_attack", "prevent_next_turn", "gust", "bounce",
               "discard_opp_hand"):
        args = tuple(int(x) for x in p)
    elif k == "status":
        args = (STATUS_IDS[p[0]], int(p[1]))
    elif k == "self_status":
        args = (STATUS_IDS[p[0]],)
    elif k == "discard_own_energy":
        args = (_energy(p[0]), p[1])
    elif k in ("zone_attach_self", "zone_attach_target", "zone_attach_coins_target"):
        args = (_energy(p[0]), p[1])
    elif k in ("zone_attach_pair", "zone_attach_until_tails_target", "zone_attach_active_typed"):
        args = (_energy(p[0]),)
    elif k == "zone_attach_named_target":
        args = (_energy(p[0]), names.set_id(p[1]))
    elif k == "search_hand":
        args = (_energy(p[0]),)
    elif k == "search_bench":
        args = (names.ids[p[0]],)
    elif k == "turn_boost":
        args = (p[0], names.set_id(p[1]))
    elif k == "return_active":
        args = (names.set_id(p[0]),)
    elif k == "move_energy_to_active":
        args = (_energy(p[0]), names.set_id(p[1]))
    else:
        raise ValueError(f"no JAX encoding for op {k!r}")
    args = tuple(int(a) for a in args) + (0,) * (3 - len(args))
    return (OP[k],) + args


def _program(program: Program | None, names: _Names) -> np.ndarray:
    table = np.zeros((MAX_OPS, 4), np.int32)
    if program is None:
        return table
    if len(program.ops) > MAX_OPS:
        raise ValueError(f"a program of {len(program.ops)} ops: raise MAX_OPS")
    for i, op in enumerate(program.ops):
        table[i] = _encode_op(op, names)
    return table


def check_capacity(config: RuleConfig) -> None:
    """The flags the JAX engine's fixed-size state bounds: a hand holds HAND cards, a deck's Energy Zone
    MAX_ZONE_TYPES types. Anything beyond is a clear error, not silently clipped."""
    if config.hand_limit > HAND:
        raise ValueError(f"hand_limit {config.hand_limit}: the JAX engine's hands hold at most {HAND} cards "
                         f"(state.HAND); the reference engine has no such bound")
    if config.max_energy_types > MAX_ZONE_TYPES:
        raise ValueError(f"max_energy_types {config.max_energy_types}: the JAX engine's Energy Zone holds at most "
                         f"{MAX_ZONE_TYPES} types (state.MAX_ZONE_TYPES); the reference engine has no such bound")


def rule_tables(config: RuleConfig = RuleConfig()) -> dict[str, np.ndarray]:
    """RuleConfig's flags that act during play, as 0-d arrays the engine reads from its tables: values,
    not shapes, so one compiled engine serves every config when the tables are jit arguments (closed
    over, each config compiles its own). The deck-building flags (max_energy_types,
    fossil_counts_as_basic_for_deck) act in Deck.validate, which both engines' deck banks go through."""
    check_capacity(config)
    return {
        "rule_opening_hand": np.int32(config.opening_hand_size),
        "rule_mulligan_draws": np.bool_(config.opening_hand == "seven_with_mulligan"),
        "rule_basic_on_top": np.bool_(config.basic_guarantee == "basic_on_top"),
        "rule_energy_active_costs": np.bool_(config.energy_choice == "active_costs"),
        "rule_evolve_once_per_turn": np.bool_(config.evolve_once_per_turn),
        "rule_turn_player_promotes_first": np.bool_(config.turn_player_promotes_first),
        "rule_weakness_on_ability_damage": np.bool_(config.weakness_on_ability_damage),
        "rule_effects_end_on_leaving_active": np.bool_(config.effects_end_on_leaving_active),
        "rule_first_player_draws_turn1": np.bool_(config.first_player_draws_turn1),
        "rule_supporter_on_turn1": np.bool_(config.supporter_on_turn1),
        "rule_attack_on_turn1": np.bool_(config.attack_on_turn1),
        "rule_energy_carries_over": np.bool_(config.unused_energy_carries_over),
        "rule_hand_limit": np.int32(config.hand_limit),
        "rule_max_turns": np.int32(config.max_turns),
        # the observation's turn feature: reference/observation._scale's float32 reciprocal
        "rule_max_turns_reciprocal": np.float32(1.0 / config.max_turns),
        "rule_tie_count_conditions": np.bool_(config.tie_policy == "count_conditions"),
        "rule_bonuses_need_damage": np.bool_(config.bonuses_need_damage),
    }


def engine_tables(config: RuleConfig = RuleConfig()) -> dict[str, np.ndarray]:
    """Everything the engine reads besides the state: the card tables and the rules of `config`."""
    return {**card_tables(), **rule_tables(config)}


@functools.lru_cache(maxsize=1)
def card_tables(pool: CardPool | None = None) -> dict[str, np.ndarray]:
    pool = pool or load_pool()
    names = _Names(pool)
    n = len(pool)
    t = {
        "hp": np.zeros(n, np.int32), "type": np.full(n, -1, np.int32), "weakness": np.full(n, -1, np.int32),
        "stage": np.zeros(n, np.int32), "is_pokemon": np.zeros(n, bool), "is_basic": np.zeros(n, bool),
        "is_fossil": np.zeros(n, bool), "is_ex": np.zeros(n, bool), "retreat": np.zeros(n, np.int32),
        "name": np.zeros(n, np.int32), "evolve_from": np.full(n, -1, np.int32), "trainer": np.zeros(n, np.int32),
        "n_attacks": np.zeros(n, np.int32), "cost_typed": np.zeros((n, MAX_ATTACKS, 8), np.int32),
        "cost_colorless": np.zeros((n, MAX_ATTACKS), np.int32), "attack_base": np.zeros((n, MAX_ATTACKS), np.int32),
        "attack_ops": np.zeros((n, MAX_ATTACKS, MAX_OPS, 4), np.int32),
        "attack_target": np.zeros((n, MAX_ATTACKS), np.int32), "attack_to_target": np.zeros((n, MAX_ATTACKS), bool),
        "attack_sweets_relay": np.zeros((n, MAX_ATTACKS), bool), "attack_copies": np.zeros((n, MAX_ATTACKS), bool),
        "attack_target_type": np.full((n, MAX_ATTACKS), -1, np.int32), "trainer_target_type": np.full(n, -1, np.int32),
        "has_ability": np.zeros(n, bool), "ability_ops": np.zeros((n, MAX_OPS, 4), np.int32),
        "ability_target": np.zeros(n, np.int32), "ability_active_only": np.zeros(n, bool), "passive": np.zeros(n, np.int32),
        "passive_params": np.zeros((n, 2), np.int32), "trainer_ops": np.zeros((n, MAX_OPS, 4), np.int32),
        "trainer_target": np.zeros(n, np.int32), "playable": np.zeros(n, bool),
    }
    for c in pool.cards:
        i = c.index
        t["name"][i] = names.ids[c.name]
        t["playable"][i] = c.playable
        t["is_pokemon"][i], t["is_basic"][i], t["is_fossil"][i] = c.is_pokemon, c.is_basic, c.is_fossil
        if c.is_pokemon or c.is_fossil:
            t["hp"][i], t["type"][i] = c.hp, POKEMON_TYPES.index(c.type)
            t["weakness"][i] = POKEMON_TYPES.index(c.weakness) if c.weakness else -1
            t["stage"][i] = {"Basic": 0, "Stage1": 1, "Stage2": 2}.get(c.stage, 0)
            t["is_ex"][i], t["retreat"][i] = c.is_ex, c.retreat
        if c.category == "Trainer":
            t["trainer"][i] = 2 if c.trainer_type == "Supporter" else 1
        if not c.playable:
            continue
        if c.evolve_from:
            t["evolve_from"][i] = names.ids[c.evolve_from]
        t["n_attacks"][i] = len(c.attacks)
        for a, attack in enumerate(c.attacks):
            for symbol in attack.cost:
                if symbol == "Colorless":
                    t["cost_colorless"][i, a] += 1
                else:
                    t["cost_typed"][i, a, ENERGY_TYPES.index(symbol)] += 1
            t["attack_base"][i, a] = attack.base
            t["attack_ops"][i, a] = _program(attack.program, names)
            t["attack_target"][i, a] = TARGET[attack.program.target]
            t["attack_to_target"][i, a] = attack.program.damage_to_target
            t["attack_sweets_relay"][i, a] = attack.name == "Sweets Relay"
            t["attack_copies"][i, a] = any(op.kind == "copy_opponent_attack" for op in attack.program.ops)
            t["attack_target_type"][i, a] = _energy(attack.program.target_type)
        if c.ability is not None:
            t["has_ability"][i] = True
            t["ability_ops"][i] = _program(c.ability, names)
            t["ability_target"][i] = TARGET[c.ability.target]
            t["ability_active_only"][i] = c.ability.active_only
        if c.passive is not None:
            t["passive"][i] = PASSIVE[c.passive.kind]
            params = [(_energy(x) if isinstance(x, str) else int(x)) for x in c.passive.params]
            t["passive_params"][i, :len(params)] = params
        if c.program is not None:
            t["trainer_ops"][i] = _program(c.program, names)
            t["trainer_target"][i] = TARGET[c.program.target]
            t["trainer_target_type"][i] = _energy(c.program.target_type)
        if c.ability is not None and c.ability.target_type:
            raise ValueError(f"{c.name}: a typed Ability target has no table column yet")
    sets = np.zeros((max(1, len(names.sets)), len(names.ids)), bool)
    for s, members in enumerate(names.sets):
        for name in members:
            sets[s, names.ids[name]] = True
    t["name_sets"] = sets
    return t
