"""L1: gen1randombattle's team generator in JAX (envs/pokejax/jax/teams.py) against Showdown's own.

From the same team seed, both PRNG kinds, the JAX team must be Showdown's set for set (species,
level, moves in order, IVs, EVs, and the rest of the set dict) and leave the generator's PRNG where
Showdown's does. Fixed seed lists go through one jit(vmap) batch per kind, hypothesis seeds through
jit one at a time, and in a battle p2's team must see p1's Ditto (the generator is shared)."""

from __future__ import annotations

import functools
import hashlib

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from envs.pokejax.jax import prng, teams
from envs.pokejax.jax.tables import gen1_tables
from envs.pokejax.tests.components import POKEJAX

FORMAT = "gen1randombattle"
HEX = "0123456789abcdef"
BATCH = 128  # seeds per kind in the fixed lists: one compiled batch shape per kind


def _digest(label: str, i: int) -> str:
    return hashlib.sha256(f"pokejax teams {label} {i}".encode()).hexdigest()


def _fixed_seeds(kind: str) -> list[str]:
    if kind == prng.SODIUM:
        edges = ["sodium,0", "sodium,1", "sodium," + "f" * 64, "sodium," + "0" * 63 + "1"]
        short = [f"sodium,{i:x}" for i in range(2, 42)]  # short seeds are zero-padded on the right
        full = ["sodium," + _digest(kind, i) for i in range(BATCH - len(edges) - len(short))]
        return edges + short + full
    edges = ["gen5," + "0" * 16, "gen5," + "f" * 16, "gen5,0000000000000001", "gen5,8000000000000000"]
    return edges + ["gen5," + _digest(kind, i)[:16] for i in range(BATCH - len(edges))]


@functools.cache
def _batched(kind: str):
    return jax.jit(jax.vmap(functools.partial(teams.generate_team, kind)))


@functools.cache
def _single(kind: str):
    return jax.jit(functools.partial(teams.generate_team, kind))


def _generate(seed: str, battle_has_ditto: bool = False) -> tuple[teams.Team, str]:
    kind, state = prng.parse_seed(seed)
    team, after = _single(kind)(jnp.asarray(state), jnp.bool_(battle_has_ditto))
    return team, prng.format_seed(kind, np.asarray(after))


def _assert_same_team(showdown, seed: str, team: teams.Team, seed_after: str) -> None:
    expected = showdown.generate_team(FORMAT, seed)
    assert int(team.size) == teams.TEAM_SIZE
    assert teams.team_to_sets(team) == expected, seed
    _, expected_after = showdown.generate_team_prng(FORMAT, seed)
    assert seed_after == expected_after, f"{seed}: the generator made a different number of draws"


@POKEJAX.covers("teams")
def test_fixed_seeds_in_a_vmapped_batch_match_showdown(showdown):
    compared = 0
    for kind in prng.KINDS:
        seeds = _fixed_seeds(kind)
        assert len(set(seeds)) == BATCH
        states = jnp.asarray(np.stack([prng.parse_seed(s)[1] for s in seeds]))
        batch, after = _batched(kind)(states, jnp.zeros(BATCH, dtype=bool))
        batch, after = jax.tree.map(np.asarray, batch), np.asarray(after)
        for i, seed in enumerate(seeds):
            team = jax.tree.map(lambda x, i=i: x[i], batch)
            _assert_same_team(showdown, seed, team, prng.format_seed(kind, after[i]))
            compared += 1
    assert compared == 2 * BATCH


sodium_seeds = st.text(HEX, min_size=1, max_size=64).map(lambda h: "sodium," + h)
gen5_seeds = st.text(HEX, min_size=16, max_size=16).map(lambda h: "gen5," + h)


@POKEJAX.covers("teams")
@settings(max_examples=60, deadline=None)
@given(seed=st.one_of(sodium_seeds, gen5_seeds))
def test_hypothesis_seeds_match_showdown(showdown, seed):
    team, after = _generate(seed)
    _assert_same_team(showdown, seed, team, after)


def _battle_team(snapshot: dict, side: int) -> list[tuple]:
    return [
        (p["species"], p["level"], [m["id"] for m in p["moves"]]) for p in snapshot["state"]["sides"][side]["pokemon"]
    ]


def _jax_battle_team(team: teams.Team) -> list[tuple]:
    t = gen1_tables()
    return [
        (t.species_ids[int(s)], int(lv), [t.move_ids[int(m)] for m in ms if m])
        for s, lv, ms in zip(np.asarray(team.species), np.asarray(team.level), np.asarray(team.moves), strict=True)
    ]


# Team seeds whose fresh team holds Ditto (found with the JAX generator; Showdown is the judge below).
DITTO_PAIRS = [
    ("sodium,6", "sodium,d"),
    ("gen5,454021de755d453b", "gen5,4e115049ec25924c"),
    ("sodium,21", "gen5,6526b0e96899feb5"),
]
PLAIN_PAIRS = [("sodium,2", "sodium,3"), ("gen5,000000000000000a", "gen5,000000000000000b")]


@POKEJAX.covers("teams")
def test_battle_teams_share_the_generator_and_its_ditto(showdown):
    ditto = teams.set_tables().ditto
    for n, (seed1, seed2) in enumerate(DITTO_PAIRS + PLAIN_PAIRS):
        team1, _ = _generate(seed1)
        fresh2, _ = _generate(seed2)
        team2, _ = _generate(seed2, bool(team1.has_ditto))
        if (seed1, seed2) in DITTO_PAIRS:
            # the case under test: without p1's Ditto remembered, p2 would have one too
            assert bool(team1.has_ditto) and ditto in np.asarray(fresh2.species).tolist()
            assert ditto not in np.asarray(team2.species).tolist()
        snap = showdown.start(f"teams-{n}", FORMAT, "sodium,1", {"seed": seed1}, {"seed": seed2})
        showdown.end(f"teams-{n}")
        assert _battle_team(snap, 0) == _jax_battle_team(team1), seed1
        assert _battle_team(snap, 1) == _jax_battle_team(team2), seed2


@POKEJAX.covers("teams")
def test_generator_tables_hold_published_facts():
    """Independent of Showdown's generator: Gen 1 type matchups and the sets file's shape."""
    t = teams.set_tables()
    g = gen1_tables()

    def weak_to(species: str) -> set[str]:
        row = t.weak[g.species_index(species)]
        return {name for name, w in zip(teams.SPAMMABLE_TYPES, row, strict=True) if w}

    assert weak_to("charizard") == {"Electric", "Water", "Ice"}  # Ground cannot hit it; Ice is neutral on Fire
    assert weak_to("gengar") == {"Psychic", "Ground"}
    assert weak_to("gyarados") == {"Electric"}  # Ground immune, Ice neutral on Water/Flying
    assert weak_to("snorlax") == set()
    assert weak_to("golem") == {"Water", "Ground", "Ice"}  # Rock/Ground: Electric does nothing
    assert len(t.pool_species) == len(set(t.pool_species.tolist())) > 100
    assert g.species_index("magikarp") not in t.pool_species.tolist()  # left out of Showdown's Gen 1 pool
    # Substitute users keep a max HP that is not a multiple of 4 (or stop at the lowest EV).
    for num in t.pool_species:
        ev, level, base = int(t.substitute_hp_ev[num]), int(t.level[num]), int(g.base_stats[num, 0])
        hp = (2 * base + 30 + ev // 4 + 100) * level // 100 + 10
        assert hp % 4 != 0 or ev <= 3
