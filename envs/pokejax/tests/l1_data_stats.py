"""L1: the generated Gen 1 tables, and stats/HP/PP in JAX against Showdown's Pokemon constructor."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from envs.pokejax.jax import battle, stats
from envs.pokejax.jax.tables import ALWAYS_HITS, NUM_MOVES, NUM_SPECIES, STAT_NAMES, STATUSES, gen1_tables
from envs.pokejax.tests.components import POKEJAX

SHOWDOWN_STATS = ("atk", "def", "spa", "spe")


@POKEJAX.covers("data")
def test_tables_hold_gen1_as_published():
    """Facts of Gen 1 looked up independently of Showdown (Bulbapedia's Gen 1 pages)."""
    t = gen1_tables()
    assert len(t.types) == 16 and t.types[-1] == "???"  # 15 types, and Bide's typelessness
    assert "Dark" not in t.types and "Steel" not in t.types and t.move_type[t.move_index("bide")] == 15
    mewtwo = t.species_index("mewtwo")
    assert mewtwo == 150
    assert t.base_stats[mewtwo].tolist() == [106, 110, 90, 154, 130]  # hp atk def special speed
    assert t.species_ids[25] == "pikachu" and t.species_ids[151] == "mew"
    assert [t.types[i] for i in t.species_types[6]] == ["Fire", "Flying"]  # Charizard
    assert [t.types[i] for i in t.species_types[25]] == ["Electric", "Electric"]

    def effectiveness(attacking: str, defending: str) -> float:
        return t.type_chart_x2[t.types.index(attacking), t.types.index(defending)] / 2

    assert effectiveness("Ghost", "Psychic") == 0  # the Gen 1 bug: Lick does nothing to Psychic types
    assert effectiveness("Bug", "Poison") == 2 and effectiveness("Poison", "Bug") == 2  # Gen 1 only
    assert effectiveness("Ice", "Fire") == 1  # neutral until Gen 2
    assert effectiveness("Normal", "Ghost") == 0 and effectiveness("Water", "Fire") == 2

    hyper_beam = t.move_index("hyperbeam")
    assert hyper_beam == 63 and t.move_power[hyper_beam] == 150 and t.move_accuracy[hyper_beam] == 90
    swift = t.move_index("swift")
    assert t.move_accuracy[swift] == ALWAYS_HITS
    assert t.move_crit_ratio[t.move_index("slash")] == 2 and t.move_priority[t.move_index("quickattack")] == 1
    assert t.move_ids[NUM_MOVES] == "struggle" and len(t.species_ids) == NUM_SPECIES + 1
    # the battle engine's constants that name rows of these tables
    assert battle.POISON_TYPE == t.types.index("Poison") and battle.GHOST_TYPE == t.types.index("Ghost")
    assert battle.GRASS_TYPE == t.types.index("Grass") and battle.NORMAL_TYPE == t.types.index("Normal")
    # the partial trapping moves: the trapped target's volatile and the user's lock, as Showdown's data gives them
    for trapping in ("bind", "wrap", "clamp", "firespin"):
        move = t.move_index(trapping)
        assert t.move_volatile[move] == battle.PARTIALLY_TRAPPED + 1
        assert t.move_self_volatile[move] == battle.TRAPPING_LOCK + 1
    assert battle.STRUGGLE == t.move_index("struggle") and battle.COUNTER == t.move_index("counter")
    assert battle.MIMIC == t.move_index("mimic") and battle.MIRROR_MOVE == t.move_index("mirrormove")
    assert battle.TRANSFORM == t.move_index("transform") and battle.METRONOME == t.move_index("metronome")
    assert battle.FISSURE == t.move_index("fissure")
    assert battle.COUNTERABLE_TYPES == (t.types.index("Normal"), t.types.index("Fighting"))
    statuses = (battle.PAR, battle.FNT, battle.BRN, battle.PSN, battle.SLP, battle.FRZ)
    statuses += (battle.TOX,)
    assert [STATUSES[i] for i in statuses] == ["par", "fnt", "brn", "psn", "slp", "frz", "tox"]
    assert (
        t.move_status[t.move_index("thunderwave")] == battle.PAR
        and t.move_status[t.move_index("poisongas")] == battle.PSN
    )
    assert t.move_secondary_chance[t.move_index("bodyslam")] == 30  # Gen 1 Body Slam: 30% paralysis
    assert t.move_ignores_immunity[t.move_index("glare")] and not t.move_ignores_immunity[t.move_index("thunderwave")]


sets = st.lists(
    st.fixed_dictionaries(
        {
            "species": st.integers(1, NUM_SPECIES),
            "level": st.integers(1, 100),
            "ivs": st.lists(st.integers(0, 31), min_size=5, max_size=5),
            "evs": st.lists(st.integers(0, 255), min_size=5, max_size=5),
            "moves": st.lists(st.integers(1, NUM_MOVES - 1), min_size=1, max_size=4, unique=True),
        }
    ),
    min_size=1,
    max_size=30,
)


def _showdown_set(t, s) -> dict:
    ivs = dict(zip(STAT_NAMES, s["ivs"], strict=False))
    evs = dict(zip(STAT_NAMES, s["evs"], strict=False))
    ivs["spd"], evs["spd"] = ivs["spa"], evs["spa"]  # one Special stat
    return {
        "species": t.species_ids[s["species"]],
        "level": s["level"],
        "ivs": ivs,
        "evs": evs,
        "moves": [t.move_ids[m] for m in s["moves"]],
    }


@POKEJAX.covers("stats", "data")
@settings(max_examples=25, deadline=None)
@given(team=sets)
def test_stats_hp_and_pp_equal_showdown(showdown, team):
    t = gen1_tables()
    built = showdown.make_pokemon([_showdown_set(t, s) for s in team])
    species = np.array([s["species"] for s in team])
    got = np.asarray(
        stats.stats(
            jnp.asarray(t.base_stats[species]),
            jnp.asarray(np.array([s["ivs"] for s in team])),
            jnp.asarray(np.array([s["evs"] for s in team])),
            jnp.asarray(np.array([s["level"] for s in team])),
        )
    )
    for i, (s, b) in enumerate(zip(team, built, strict=False)):
        assert b["species"] == t.species_ids[s["species"]]
        expected = [b["maxhp"]] + [b["storedStats"][name] for name in SHOWDOWN_STATS]
        assert got[i].tolist() == expected, f"set {s}"
        assert b["storedStats"]["spd"] == b["storedStats"]["spa"]
        pp = np.asarray(stats.max_pp(jnp.asarray(t.move_pp[s["moves"]])))
        assert pp.tolist() == [m["maxpp"] for m in b["moves"]] == [m["pp"] for m in b["moves"]]


@POKEJAX.covers("stats")
def test_formulas_worked_by_hand():
    """Values worked out on paper from the Gen 1 formulas (Bulbapedia, 'Stat'): Mewtwo at level 100
    with DV 15 (IV 30 in Showdown's units) and full stat experience."""
    base = jnp.asarray([106, 110, 90, 154, 130])
    ivs = jnp.full(5, 31)  # Showdown clears the low bit: 30
    evs = jnp.full(5, 255)  # floor(255 / 4) = 63
    # HP: (2*106 + 30 + 63 + 100) * 100 / 100 + 10 = 415; Attack: 2*110 + 30 + 63 + 5 = 318; Special: 2*154 + 30 + 63 + 5 = 406
    assert stats.stats(base, ivs, evs, 100).tolist() == [415, 318, 278, 406, 358]
    assert stats.max_pp(jnp.asarray([40, 35, 5])).tolist() == [61, 56, 8]
