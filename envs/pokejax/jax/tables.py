"""Gen 1 data as fixed-size NumPy tables, indexed the way the JAX state stores things.

Built from the JSON that envs/pokejax/gen_data.py generates from the pinned Showdown. Species and
moves are indexed by their national / move number (index 0 is "none", a sentinel for empty slots),
types by their position in TYPES (Showdown's Gen 1 types, alphabetical).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from envs.pokejax import gen_data

NUM_SPECIES = 151
NUM_MOVES = 165
# Gen 1 has one Special stat; Showdown stores it as both spa and spd.
STAT_NAMES = ("hp", "atk", "def", "spa", "spe")
CATEGORIES = ("Physical", "Special", "Status")
ALWAYS_HITS = 255  # accuracy sentinel for Showdown's `accuracy: true`
# Statuses as the battle state stores them (0 = none); like Showdown, a Pokemon that faints has
# status "fnt" until it leaves the field.
STATUSES = ("", "par", "fnt", "brn", "psn", "slp", "frz", "tox")
# Stat stage columns (jax/boosts.py) and Showdown's boost keys for each: Gen 1's one Special stat is
# Showdown's spa and spd, which every move changes together.
BOOST_KEYS = (("atk",), ("def",), ("spa", "spd"), ("spe",), ("accuracy",), ("evasion",))
# move_fixed_damage's marker for "damage: level" (Seismic Toss, Night Shade)
LEVEL_DAMAGE = -1
# move_hits' marker for Showdown's 2-5 hits, drawn as sample([2, 2, 2, 3, 3, 3, 4, 5])
SAMPLED_HITS = -1
# The volatiles the battle keeps for each active Pokemon (Showdown's volatile ids); stat-only ones
# (minimize, defensecurl) are kept because Showdown keeps them and L3 compares the sets.
VOLATILES = (
    "reflect",
    "lightscreen",
    "focusenergy",
    "mist",
    "minimize",
    "defensecurl",
    "confusion",
    "flinch",
    "mustrecharge",
    "leechseed",
    "residualdmg",
    "twoturnmove",
    "invulnerability",
    "substitute",
    "disable",
    "lockedmove",
    "rage",
    "partiallytrapped",
    "partialtrappinglock",
    "fakepartiallytrapped",
    "bide",
)
# Effects Showdown writes as code (callbacks such as damageCallback, onTryImmunity, onHit,
# onMoveFail), not as data, and the moves that have them: the battle engine implements each.
CODED_MOVES = {
    "psywave": "psywave",
    "superfang": "superfang",
    "dreameater": "needs_sleeping_target",
    "recover": "heal_half",
    "softboiled": "heal_half",
    "rest": "rest",
    "jumpkick": "crash",
    "highjumpkick": "crash",
    "conversion": "conversion",
    "leechseed": "fails_on_grass",
    "razorwind": "charge",
    "skullbash": "charge",
    "skyattack": "charge",
    "solarbeam": "charge",
    "dig": "charge_invulnerable",
    "fly": "charge_invulnerable",
    "swift": "hits_invulnerable",
    "substitute": "substitute",
    "haze": "haze",
    "counter": "counter",
    "bide": "bide",
    "mimic": "mimic",
    "transform": "transform",
}
CODED_EFFECTS = tuple(dict.fromkeys(CODED_MOVES.values()))
# The moves whose use leaves battle.lastDamage as it was (SKIP_LASTDAMAGE in the gen1 mod's
# scripts): every other move that gets past BeforeMove and its charging turn sets it to 0 first.
KEEP_LAST_DAMAGE = (
    "confuseray conversion counter focusenergy glare haze leechseed lightscreen mimic mist poisongas "
    "poisonpowder recover reflect rest softboiled splash stunspore substitute supersonic teleport "
    "thunderwave toxic transform"
).split()
# Showdown's Gen 1 Bide is typeless ("???"): an extra type, neutral against everything.
TYPELESS = "???"


@dataclasses.dataclass(frozen=True)
class Gen1Tables:
    types: tuple[str, ...]
    species_ids: tuple[str, ...]  # index -> Showdown id ("" at 0)
    move_ids: tuple[str, ...]
    base_stats: np.ndarray  # int32 [152, 5] in STAT_NAMES order
    species_types: np.ndarray  # int32 [152, 2]; a single-typed species repeats its type
    move_power: np.ndarray  # int32 [166]
    move_accuracy: np.ndarray  # int32 [166]; ALWAYS_HITS for moves that skip the accuracy check
    move_pp: np.ndarray  # int32 [166], base PP before PP Ups
    move_type: np.ndarray  # int32 [166]
    move_category: np.ndarray  # int32 [166], index into CATEGORIES
    move_priority: np.ndarray  # int32 [166]
    move_crit_ratio: np.ndarray  # int32 [166]; 2 for the high-crit moves
    move_status: np.ndarray  # int32 [166]: the status a status move inflicts (index into STATUSES)
    move_secondary_status: np.ndarray  # int32 [166]: a damaging move's secondary status
    move_secondary_chance: np.ndarray  # int32 [166]: its chance in percent (0: none)
    move_ignores_immunity: np.ndarray  # bool [166]: type immunity skipped (Showdown's ignoreImmunity)
    move_targets_self: np.ndarray  # bool [166]: Showdown's target "self"
    move_fixed_damage: np.ndarray  # int32 [166]: Showdown's `damage` (0: none, LEVEL_DAMAGE: the user's level)
    move_ohko: np.ndarray  # bool [166]
    move_selfdestruct: np.ndarray  # bool [166]: the user faints after using it
    move_recoil: np.ndarray  # int32 [166, 2]: recoil as a fraction of the damage dealt (0/1: none)
    move_drain: np.ndarray  # int32 [166, 2]: the share of the damage dealt the user heals (0/1: none)
    move_hits: np.ndarray  # int32 [166]: 1, a fixed number of hits, or SAMPLED_HITS for 2-5
    move_coded_effect: np.ndarray  # int32 [166]: 1 + the index in CODED_EFFECTS (0: none)
    move_keeps_last_damage: np.ndarray  # bool [166]: in KEEP_LAST_DAMAGE
    move_volatile: np.ndarray  # int32 [166]: 1 + the index in VOLATILES of the volatile it gives (user or target)
    move_secondary_volatile: np.ndarray  # int32 [166]: the same for a damaging move's secondary
    move_self_volatile: np.ndarray  # int32 [166]: the same for its `self` effect (Hyper Beam's recharge)
    move_boosts: np.ndarray  # int32 [166, 6]: a status move's stage changes, in BOOST_KEYS columns
    move_secondary_boosts: np.ndarray  # int32 [166, 6]: a damaging move's secondary stage changes
    type_chart_x2: np.ndarray  # int32 [16, 16] attacking x defending, effectiveness times 2 (0, 1, 2, 4)
    # int32 [163]: the moves Metronome samples from (the `metronome` flag: all but Metronome and
    # Struggle), by number, as its onHit sorts them
    metronome_moves: np.ndarray

    def species_index(self, species_id: str) -> int:
        return self.species_ids.index(species_id)

    def move_index(self, move_id: str) -> int:
        return self.move_ids.index(move_id)


def _status_index(status: str | None) -> int:
    """The engine's index of a status; statuses it does not model yet map to -1 (tests keep the
    moves that inflict them out of the battles they play)."""
    if not status:
        return 0
    return STATUSES.index(status) if status in STATUSES else -1


@functools.cache
def gen1_tables() -> Gen1Tables:
    data = gen_data.gen1_data()
    types = tuple(data["types"]) + (TYPELESS,)
    type_index = {name: i for i, name in enumerate(types)}

    species = sorted(data["species"], key=lambda s: s["num"])
    if [s["num"] for s in species] != list(range(1, NUM_SPECIES + 1)):
        raise ValueError("the generated data does not hold species 1-151 exactly")
    base_stats = np.zeros((NUM_SPECIES + 1, len(STAT_NAMES)), dtype=np.int32)
    species_types = np.zeros((NUM_SPECIES + 1, 2), dtype=np.int32)
    for s in species:
        if s["baseStats"]["spa"] != s["baseStats"]["spd"]:
            raise ValueError(f"{s['id']}: Gen 1 has one Special stat, but spa != spd")
        base_stats[s["num"]] = [s["baseStats"][name] for name in STAT_NAMES]
        first = type_index[s["types"][0]]
        species_types[s["num"]] = [first, type_index[s["types"][-1]]]

    moves = sorted(data["moves"], key=lambda m: m["num"])
    if [m["num"] for m in moves] != list(range(1, NUM_MOVES + 1)):
        raise ValueError("the generated data does not hold moves 1-165 exactly")

    def column(getter) -> np.ndarray:
        values = np.zeros(NUM_MOVES + 1, dtype=np.int32)
        for m in moves:
            values[m["num"]] = getter(m)
        return values

    chart = np.full((len(types), len(types)), 2, dtype=np.int32)
    for attacking, row in data["typeChart"].items():
        for defending, multiplier in row.items():
            chart[type_index[attacking], type_index[defending]] = int(round(2 * multiplier))

    return Gen1Tables(
        types=types,
        species_ids=("",) + tuple(s["id"] for s in species),
        move_ids=("",) + tuple(m["id"] for m in moves),
        base_stats=base_stats,
        species_types=species_types,
        move_power=column(lambda m: m["basePower"]),
        move_accuracy=column(lambda m: ALWAYS_HITS if m["accuracy"] is True else m["accuracy"]),
        move_pp=column(lambda m: m["pp"]),
        move_type=column(lambda m: type_index[m["type"]]),
        move_category=column(lambda m: CATEGORIES.index(m["category"])),
        move_priority=column(lambda m: m["priority"]),
        move_crit_ratio=column(lambda m: m["critRatio"]),
        move_status=column(lambda m: _status_index(m["status"])),
        move_secondary_status=column(lambda m: _status_index((m["secondary"] or {}).get("status"))),
        move_secondary_chance=column(lambda m: (m["secondary"] or {}).get("chance") or 0),
        # useMoveInner: an unset ignoreImmunity becomes true for status moves
        move_ignores_immunity=column(
            lambda m: m["ignoreImmunity"] is True or (m["ignoreImmunity"] is None and m["category"] == "Status")
        ).astype(bool),
        move_targets_self=column(lambda m: m["target"] == "self").astype(bool),
        move_fixed_damage=column(_fixed_damage),
        move_ohko=column(lambda m: m["ohko"]).astype(bool),
        move_selfdestruct=column(lambda m: bool(m["selfdestruct"])).astype(bool),
        move_recoil=_fraction_table(moves, "recoil"),
        move_drain=_fraction_table(moves, "drain"),
        move_hits=column(_hits),
        move_coded_effect=column(
            lambda m: CODED_EFFECTS.index(CODED_MOVES[m["id"]]) + 1 if m["id"] in CODED_MOVES else 0
        ),
        move_keeps_last_damage=column(lambda m: m["id"] in KEEP_LAST_DAMAGE).astype(bool),
        move_volatile=column(lambda m: _volatile_index(m["volatileStatus"])),
        move_secondary_volatile=column(lambda m: _volatile_index((m["secondary"] or {}).get("volatileStatus"))),
        move_self_volatile=column(lambda m: _volatile_index((m["self"] or {}).get("volatileStatus"))),
        move_boosts=_boost_table(moves, lambda m: m["boosts"]),
        move_secondary_boosts=_boost_table(moves, lambda m: (m["secondary"] or {}).get("boosts")),
        type_chart_x2=chart,
        metronome_moves=np.array([m["num"] for m in moves if "metronome" in m["flags"]], dtype=np.int32),
    )


def _volatile_index(volatile: str | None) -> int:
    return VOLATILES.index(volatile) + 1 if volatile in VOLATILES else 0


def _fixed_damage(move: dict) -> int:
    damage = move["damage"]
    if damage is None:
        return 0
    if damage == "level":
        return LEVEL_DAMAGE
    if not isinstance(damage, int) or damage <= 0:
        raise ValueError(f"{move['id']}: unexpected fixed damage {damage!r}")
    return damage


def _hits(move: dict) -> int:
    hits = move["multihit"]
    if hits is None:
        return 1
    if hits == [2, 5]:
        return SAMPLED_HITS
    if isinstance(hits, int):
        return hits
    raise ValueError(f"{move['id']}: multihit {hits!r} is not one Gen 1 knows")


def _fraction_table(moves: list[dict], key: str) -> np.ndarray:
    table = np.zeros((NUM_MOVES + 1, 2), dtype=np.int32)
    table[:, 1] = 1
    for m in moves:
        if m[key]:
            table[m["num"]] = m[key]
    return table


def _boost_table(moves: list[dict], getter) -> np.ndarray:
    """int32[166, 6]: each move's stage changes in BOOST_KEYS columns (spa and spd must agree)."""
    table = np.zeros((NUM_MOVES + 1, len(BOOST_KEYS)), dtype=np.int32)
    for m in moves:
        changes = getter(m) or {}
        if changes.get("spa") != changes.get("spd"):
            raise ValueError(f"{m['id']}: Gen 1 has one Special stat, but its spa and spd boosts differ")
        for column, keys in enumerate(BOOST_KEYS):
            table[m["num"], column] = changes.get(keys[0], 0)
        unknown = set(changes) - {key for keys in BOOST_KEYS for key in keys}
        if unknown:
            raise ValueError(f"{m['id']}: boosts of unknown stats {sorted(unknown)}")
    return table
