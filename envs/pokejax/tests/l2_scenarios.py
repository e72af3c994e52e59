"""L2: scripted battles that set up one interaction each (Mist against stat drops, a Substitute
under recoil, drain, multi-hit and confusion, Toxic with Leech Seed and Rest, Dig and Fly against
Swift, Hyper Beam's recharge against sleep and flinch, Haze on a sleeping foe, Counter, Disable,
Thrash, Rage, partial trapping across switches, Bide, Mimic, Mirror Move (calling Counter too),
Transform, Metronome, a PP run below 0, Struggle; and in gen1randombattle's rules the Sleep and
Freeze Clauses, PP below 0 and Haze from a badly poisoned user), played on Showdown and on the JAX
engine from several seeds and compared after every decision, as L3 compares random battles.

Each side plays its scripted action whenever it is legal and a random legal one otherwise, so the
interactions recur across turns, switches and faints. Every scenario must actually produce its
interaction in at least one of its seeds (counted from Showdown's log and state), or the test
fails."""

from __future__ import annotations

import collections

import numpy as np
import pytest

from envs.pokejax import l3_battles
from envs.pokejax.jax.tables import gen1_tables
from envs.pokejax.tests.components import POKEJAX

SEEDS = ("sodium,{:032x}", "gen5,{:016x}", "sodium,{:032x}", "gen5,{:016x}")
FILLER = ("rattata", ["tackle", "quickattack"])


def _team(members: list[tuple[str, list[str]]], level: int) -> l3_battles.Team:
    """Six Pokemon: the scenario's, then fillers; best DVs and stat experience."""
    t = gen1_tables()
    members = members + [FILLER] * (6 - len(members))
    moves = np.zeros((6, 4), dtype=np.int64)
    for i, (_, known) in enumerate(members):
        moves[i, : len(known)] = [t.move_index(m) for m in known]
    return l3_battles.Team(
        species=np.array([t.species_index(s) for s, _ in members]),
        level=np.full(6, level),
        moves=moves,
        ivs=np.full((6, 5), 30),
        evs=np.full((6, 5), 255),
    )


# name: (p1 members, p2 members, p1 script, p2 script, the event or events it must produce[, the
# format: gen1customgame unless given])
SCENARIOS = {
    "mist": (
        [("mewtwo", ["mist", "psychic", "recover"])],
        [("machamp", ["growl", "leer", "screech", "sandattack"])],
        [0, 1, 1, 2, 1, 1],
        [0, 1, 2, 3],
        "Mist blocking a drop",
    ),
    "substitute": (
        [("alakazam", ["substitute", "psychic", "recover", "confuseray"])],
        # a weak attacker, so that hits land on the substitute without breaking it
        [("caterpie", ["doubleedge", "pinmissile", "absorb", "psybeam"]), ("tauros", ["doubleedge", "hyperbeam"])],
        [0, 2, 1, 0, 3],
        [0, 1, 2, 3],
        "substitute hit",
    ),
    "toxic and leech seed": (
        [("venusaur", ["toxic", "leechseed", "razorleaf", "rest"])],
        [("snorlax", ["rest", "bodyslam", "toxic", "leechseed"])],
        [0, 1, 2, 2, 3, 2],
        [1, 1, 0, 2, 3],
        "leech seed",
    ),
    "dig and fly": (
        [("dugtrio", ["dig", "slash"]), ("pidgeot", ["fly", "quickattack"])],
        [("starmie", ["swift", "thunderwave", "surf"])],
        [0, 0, 1, 0],
        [1, 0, 2, 0],
        "two-turn charge",
    ),
    "hyper beam": (
        [("tauros", ["hyperbeam", "bodyslam"])],
        # a bulky target, so that Hyper Beam leaves it standing and its user must recharge
        [("chansey", ["sing", "softboiled", "headbutt"]), ("dodrio", ["hyperbeam", "drillpeck"])],
        [0, 0, 1, 0],
        [2, 0, 1, 2],
        "Hyper Beam recharge",
    ),
    "haze": (
        # Haze on a foe put to sleep (by Hypnosis, or its own Rest) makes its side's move "cannotmove"
        [("gengar", ["hypnosis", "haze", "toxic", "confuseray"])],
        [("snorlax", ["amnesia", "rest", "bodyslam", "toxic"])],
        [0, 1, 2, 3, 1, 0, 1],
        [0, 3, 1, 2],
        l3_battles.CANNOT_MOVE_EVENT,
    ),
    "counter": (
        # Normal and Fighting hits to counter, Counter on both sides (a Counter is not counterable),
        # and a Psychic move and switches in between
        [("chansey", ["counter", "softboiled", "seismictoss"]), ("hitmonlee", ["counter", "highjumpkick"])],
        [("tauros", ["bodyslam", "counter", "earthquake"]), ("machamp", ["submission", "counter", "psychic"])],
        [0, 0, 1, 0, 2, 0],
        [0, 1, 0, 2, 0],
        l3_battles.COUNTER_EVENT,
    ),
    "disable": (
        # Disable against a foe that keeps choosing its moves: stopped moves, counts running out,
        # Disable ended by a switch
        [("hypno", ["disable", "psychic", "hypnosis", "headbutt"])],
        [("machamp", ["submission", "earthquake", "rockslide"]), ("golem", ["earthquake", "disable"])],
        [0, 1, 3, 0, 1, 0],
        [0, 1, 2, 0, 4],
        "a disabled move stopped",
    ),
    "thrash": (
        # Thrash and Petal Dance locks against Sand-Attack (the compounding accuracy), Dig, a Ghost
        # and paralysis, ending in confusion
        [("nidoking", ["thrash", "earthquake"]), ("vileplume", ["petaldance", "stunspore"])],
        [("dugtrio", ["sandattack", "dig", "slash"]), ("gengar", ["confuseray", "hypnosis", "nightshade"])],
        [0, 0, 0, 1, 4, 0],
        [0, 0, 1, 2, 4],
        "Thrash / Petal Dance lock ended in confusion",
    ),
    "rage": (
        # Rage against multi-hit moves, Disable and Explosion (each a +1 Attack), and a substitute
        [("primeape", ["rage", "lowkick"]), ("tauros", ["rage", "bodyslam"])],
        [
            ("beedrill", ["twineedle", "pinmissile", "disable", "substitute"]),
            ("electrode", ["explosion", "thunderbolt"]),
        ],
        [0, 0, 1, 0, 4, 0],
        [0, 1, 2, 3, 4, 0],
        l3_battles.RAGE_EVENT,
    ),
    "partial trapping": (
        # Wrap, Fire Spin, Clamp and Bind against a foe that switches out while trapped, a trapper
        # that switches out while locked, a Ghost (Wrap and Bind do 0 but trap), a substitute, and
        # Hyper Beam's recharge (which a trapping move ends)
        [("dragonite", ["wrap", "firespin", "clamp", "bind"]), ("arbok", ["wrap", "glare"])],
        [
            ("tauros", ["hyperbeam", "bodyslam"]),
            ("gengar", ["substitute", "hypnosis", "nightshade"]),
            ("snorlax", ["bodyslam", "rest"]),
        ],
        [0, 0, 1, 0, 4, 0, 2, 3],
        [0, 4, 0, 5, 1, 4],
        (
            l3_battles.TRAP_STARTED_EVENT,
            l3_battles.TRAP_TARGET_SWITCHED_EVENT,
            l3_battles.TRAPPER_SWITCHED_EVENT,
            "held by partial trapping",
        ),
    ),
    "trapping under disable": (
        # a fast foe disables one of the trapper's two moves first; when it is Slam, Wrap's lock
        # and Disable coexist, and endTurn's DisableMove shuffles their two handlers (one draw)
        [("dragonite", ["wrap", "slam"]), ("arbok", ["wrap", "glare"])],
        [("electrode", ["disable", "thunderbolt"]), ("jolteon", ["disable", "thunderbolt"])],
        [0],
        [0, 0, 1, 4],
        l3_battles.TRAP_DISABLED_EVENT,
    ),
    "bide": (
        # Bide storing the damage of Body Slam, Dig (released while the foe is underground),
        # Night Shade from a Ghost (not immune to Bide), a substitute taking the release
        [("chansey", ["bide", "softboiled"]), ("snorlax", ["bide", "bodyslam"])],
        [("tauros", ["bodyslam", "dig", "substitute"]), ("gengar", ["nightshade", "substitute"])],
        [0, 0, 0, 1, 0, 4],
        [0, 1, 2, 0, 4, 1],
        ("Bide started", "Bide released"),
    ),
    "mimic": (
        # Mimic copying one of four moves (a sample), the copy used with Mimic's PP, Mimic again on
        # the copied slot, Mimic back after a switch; against a substitute and Dig
        [("alakazam", ["mimic", "psychic", "recover"]), ("mrmime", ["mimic", "barrier"])],
        [("tauros", ["bodyslam", "hyperbeam", "earthquake", "blizzard"]), ("dugtrio", ["dig", "substitute"])],
        [0, 0, 0, 4, 0, 0, 4],
        [0, 1, 2, 3, 4, 1, 0],
        "Mimic",
    ),
    "mirror move": (
        # Mirror Move calling the foe's last move: a damaging move, Fly (charged, then locked in),
        # Swords Dance (on the user), Wrap, Mirror Move against Mirror Move (it fails), a sleeping
        # foe (its lastMove cleared: it fails), and a switch (which clears it too)
        [("pidgeot", ["mirrormove", "quickattack"]), ("fearow", ["mirrormove", "drillpeck"])],
        [
            ("dodrio", ["fly", "swordsdance", "drillpeck", "rest"]),
            ("arbok", ["wrap", "mirrormove", "hypnosis"]),
        ],
        [0, 0, 0, 1, 0, 4],
        [0, 1, 2, 3, 0, 4, 1, 0],
        "Mirror Move calling a move",
    ),
    "mirror move calling counter": (
        # a slow foe's Counter hitting back a Quick Attack, then, while the foe selects Seismic Toss,
        # the faster Mirror Move calling Counter: it would hit back (the foe's side last used a
        # counterable move and did not select Counter), but Mirror Move resets battle.lastDamage
        # first, so the Counter it calls fails
        [("pidgeot", ["mirrormove", "quickattack"])],
        [("chansey", ["counter", "seismictoss", "softboiled"])],
        [1, 0],
        [0, 1],
        "Counter called by Mirror Move or Metronome",
    ),
    "mirror move calling metronome": (
        # a slow Mirror Move user against a Metronome user: when Metronome calls a two-turn move,
        # its user's lastMove stays Metronome for the charging turn, so Mirror Move calls
        # Metronome, which calls a move of its own (a chain of calls, found by L3 battle 7463)
        [("snorlax", ["mirrormove"])],
        [("clefable", ["metronome"])],
        [0],
        [0],
        "Metronome called by Mirror Move",
    ),
    "transform": (
        # Transform copying a foe's species, types, stats, stages (after Swords Dance) and moves
        # (5 PP each, used up, then Struggle), into a paralysed foe's modified Speed, into Fly's
        # invulnerable user (Transform still reaches it), Ditto against Ditto (a transformed
        # target), Mirror Move used while transformed (a PP back in the user's own slot), and
        # switches that give the own moves and PP back
        [("ditto", ["transform"]), ("mew", ["transform", "mirrormove", "swordsdance", "psychic"])],
        [
            ("pidgeot", ["swordsdance", "fly", "mirrormove", "quickattack"]),
            ("ditto", ["transform"]),
            ("jolteon", ["thunderwave", "agility", "thunderbolt"]),
        ],
        [0, 0, 0, 4, 0, 1, 0, 4],
        [0, 1, 2, 4, 0, 5, 0, 1],
        "Transform",
    ),
    "transformed mirror move": (
        # Mew transformed into Pidgeot uses the copied Mirror Move, which calls Quick Attack: a
        # transformed user gets one PP back in its own move of that slot (Transform's, here)
        [("mew", ["transform", "psychic"])],
        [("pidgeot", ["quickattack", "mirrormove"])],
        [0, 0, 0, 1],
        [0],
        "Mirror Move calling a move",
    ),
    "metronome": (
        # Metronome calling any of 163 moves (two-turn moves, locks, Mirror Move, Transform, ...)
        # on both sides, against a foe that switches often (once out of a trapping lock that
        # Metronome called, which runSwitch turns back into Metronome)
        [("clefable", ["metronome"]), ("clefairy", ["metronome", "doubleslap"])],
        [("snorlax", ["metronome", "rest"]), ("wigglytuff", ["metronome", "bodyslam"])],
        [0, 0, 0, 4, 0],
        [0, 4, 0, 0, 4, 1],
        ("Metronome calling a move", l3_battles.METRONOME_TRAP_EVENT),
    ),
    "pp underflow": (
        # Clamp (16 PP) used whenever it can be, against bulky foes that switch out whenever they
        # can: each switch ends the lock and Clamp runs afresh, and a lock started with the last PP
        # and lost that way runs Clamp at 0 PP (Gen 1: -1 here, in the custom game)
        [("cloyster", ["clamp"])],
        [("snorlax", ["rest", "amnesia"]), ("chansey", ["softboiled", "growl"]), ("slowbro", ["amnesia", "rest"])],
        [0],
        [4, 5],
        l3_battles.PP_UNDERFLOW_EVENT,
    ),
    "pp underflow, standard format": (
        # the same in gen1randombattle's rules, where Gen 1's 6-bit PP wraps -1 to 63
        [("cloyster", ["clamp"])],
        [("snorlax", ["rest", "amnesia"]), ("chansey", ["softboiled", "growl"]), ("slowbro", ["amnesia", "rest"])],
        [0],
        [4, 5],
        l3_battles.PP_UNDERFLOW_EVENT,
        l3_battles.RANDOM_FORMAT,
    ),
    "sleep clause": (
        # gen1randombattle's Sleep Clause Mod: no second foe put to sleep while one sleeps, against
        # a side that switches its sleepers out and uses Rest (which the clause does not count)
        [("jynx", ["lovelykiss", "psychic"]), ("gengar", ["hypnosis", "nightshade"])],
        [("snorlax", ["rest", "bodyslam"]), ("chansey", ["softboiled", "seismictoss"]), ("slowbro", ["rest", "surf"])],
        [0, 0, 1, 0, 4],
        [4, 5, 0, 1],
        "Sleep Clause Mod stopping a sleep",
        l3_battles.RANDOM_FORMAT,
    ),
    "freeze clause": (
        # gen1randombattle's Freeze Clause Mod: no second freeze while a Pokemon of the side is
        # frozen, against a side that keeps switching
        [("lapras", ["blizzard", "icebeam"]), ("dewgong", ["blizzard", "icebeam"]), ("jynx", ["blizzard", "icebeam"])],
        [
            ("snorlax", ["bodyslam", "amnesia"]),
            ("chansey", ["softboiled", "seismictoss"]),
            ("slowbro", ["surf", "amnesia"]),
        ],
        [0, 1],
        [4, 5],
        "Freeze Clause Mod stopping a freeze",
        l3_battles.RANDOM_FORMAT,
    ),
    "haze from a toxic user, standard format": (
        # Haze turning its badly poisoned user's toxic into poison: a setStatus, whose SetStatus
        # event shuffles the two clauses' handlers in gen1randombattle's rules
        [("snorlax", ["haze", "bodyslam", "rest"])],
        [("gengar", ["toxic", "nightshade", "hypnosis"])],
        [1, 0, 0, 1],
        [0, 1],
        l3_battles.HAZE_TOXIC_EVENT,
        l3_battles.RANDOM_FORMAT,
    ),
    "struggle": (
        # one move with 8 PP, used whenever possible
        [("mewtwo", ["skyattack"])],
        [("chansey", ["softboiled", "splash"])],
        [0],
        [0, 1],
        "Struggle",
    ),
}


@POKEJAX.covers("battle")
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_scenario_equals_showdown(showdown, name):
    p1, p2, p1_script, p2_script, event, *format = SCENARIOS[name]
    counts: collections.Counter = collections.Counter()
    for i, seed_format in enumerate(SEEDS):
        index = 9000 + 10 * list(SCENARIOS).index(name) + i
        seed = seed_format.format(index * 0x9E3779B97F4A7C15 % 2 ** (128 if seed_format[0] == "s" else 64))
        teams = [_team(p1, 100), _team(p2, 100)]
        l3_battles.play_teams(
            showdown,
            index,
            seed,
            teams,
            np.random.default_rng(index),
            max_decisions=150,
            counts=counts,
            preferred=[p1_script, p2_script],
            format=format[0] if format else l3_battles.FORMAT,
        )
    for wanted in event if isinstance(event, tuple) else (event,):
        assert counts[wanted] > 0, f"the {name!r} scenario never produced {wanted!r}: {dict(counts)}"
