"""Showdown's gen1randombattle team generator (data/random-battles/gen1/teams.ts, RandomGen1Teams) in
JAX: the same six sets, in the same order, from the same team seed, drawing Showdown's PRNG
(jax/prng.py) in exactly Showdown's order.

    team, state_after = generate_team("sodium", jnp.asarray(prng.parse_seed(seed)[1]))
    batch = jax.jit(jax.vmap(functools.partial(generate_team, "gen5")))(states)
    team_to_sets(team)   # Showdown-like set dicts of one team

What Showdown draws, in order (a "draw" is one rng.next(); random(n) = floor(next * n / 2^32)):
  1. sample(types) for a monotype type: drawn, then unused (gen1randombattle is not monotype).
  2. Until six are accepted or the pool is empty: sampleNoReplace on the species pool (random(len),
     then the last entry moves into the hole). The pool is the sets file's keys in their order. A
     species is refused (kept aside as a reject) when one of its types already has two team members,
     when it is weak to one of Electric/Psychic/Water/Ice/Ground/Fire that already has two weak
     members, or when it is a second level-100 species; accepted species get their set right away,
     so set draws interleave with pool draws.
  3. Only if the pool runs dry before six are accepted: sampleNoReplace on the rejects, no checks.
     No tested seed gets here (refusing all of 140-odd species with five members looks out of
     reach), so this path is written from the source but never compared with Showdown.
  A set draws: randomChance(1, 2) for its combo moves (only when it has a combo list); one sample of
  its exclusive moves (if it has them and fewer than four moves); the essential moves take no draw;
  then sampleNoReplace on its move list until four distinct moves or the list is empty (duplicates in
  the list are drawn but add nothing, which is how the data weights moves); then a Fisher-Yates
  shuffle of the moves, random(i, n) for i = 0 .. n-2.

Every loop is bounded by the size of what it draws from (146 species, 9 moves), so there is no
rejection loop to cap. The level, the Substitute HP-EV adjustment and the per-species weaknesses are
fixed per species and are tabulated on the host.

Battles share one generator for both players (sim/battle.ts getTeam), and the generator remembers
a Ditto accepted for p1 (`battleHasDitto`): p2's generation then drops Ditto from its pool without
keeping it as a reject. `battle_has_ditto` in, `Team.has_ditto` out carry that between the two calls;
a Ditto taken from the rejects does not set it, as in Showdown.

The tables come from the pinned package (the driver's `gen1_random_battle_data`: the sets file
data/random-battles/gen1/data.json and what the gen1 dex says of its moves), cached as JSON like
gen_data.py's, and from jax/tables.py for species numbers, types, base stats and the type chart.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from envs.pokejax import gen_data
from envs.pokejax.jax import prng
from envs.pokejax.jax.tables import NUM_MOVES, NUM_SPECIES, gen1_tables

TEAM_SIZE = 6
MAX_MOVES = 4
# Showdown's stat order for set ivs / evs.
SET_STATS = ("hp", "atk", "def", "spa", "spd", "spe")
# The types of the "spammable" attacks whose weak team members Showdown counts, in its order.
SPAMMABLE_TYPES = ("Electric", "Psychic", "Water", "Ice", "Ground", "Fire")
TYPE_LIMIT = 2  # at most two team members per type and per spammable weakness (limitFactor 1)
WEAKNESS_LIMIT = 2
MAX_LEVEL = 100
MAX_LEVEL_LIMIT = 1
DEFAULT_LEVEL = 80
FULL_EV = 255
FULL_IV = 30  # a DV of 15
LOW_ATTACK_IV = 2  # keeps the HP DV's parity bit while minimising confusion self-damage
SUBSTITUTE_STEP_EV = 4


# -- data (host side) -----------------------------------------------------------------------------


@functools.cache
def random_battle_data() -> dict[str, Any]:
    """The driver's gen1_random_battle_data, generated once per pinned package and driver."""
    return gen_data.load_showdown_data("gen1-random-battle", "gen1_random_battle_data")


@dataclasses.dataclass(frozen=True)
class SetTables:
    """The generator's data as fixed-size arrays; per-species rows are indexed by national number."""

    pool_species: np.ndarray  # int32 [P]: the species pool, in the sets file's key order
    level: np.ndarray  # int32 [152]
    has_combo: np.ndarray  # bool [152]: a combo list Showdown will roll for
    combo_moves: np.ndarray  # int32 [152, 4], 0-padded
    exclusive_moves: np.ndarray  # int32 [152, E], 0-padded
    exclusive_len: np.ndarray  # int32 [152]
    essential_moves: np.ndarray  # int32 [152, S], 0-padded
    move_pool: np.ndarray  # int32 [152, M], 0-padded, duplicates kept
    move_pool_len: np.ndarray  # int32 [152]
    types: np.ndarray  # int32 [152, 2]; -1 for a single-typed species' second type
    weak: np.ndarray  # bool [152, len(SPAMMABLE_TYPES)]
    substitute_hp_ev: np.ndarray  # int32 [152]: the HP EV of a Substitute user
    move_uses_attack: np.ndarray  # bool [166]: its damage depends on the Attack stat
    substitute: int
    mimic: int
    transform: int
    ditto: int
    species_names: tuple[str, ...]  # index -> Showdown name ("" at 0)


def _padded(rows: dict[int, list[int]], width: int) -> np.ndarray:
    table = np.zeros((NUM_SPECIES + 1, max(width, 1)), dtype=np.int32)
    for num, row in rows.items():
        table[num, : len(row)] = row
    return table


def _substitute_hp_ev(base_hp: int, level: int) -> int:
    # Showdown lowers the HP EV until max HP is not a multiple of 4, so that four Substitutes
    # (a quarter of max HP each, rounded down) do not exactly empty the HP bar.
    ev = FULL_EV
    while ev > SUBSTITUTE_STEP_EV - 1:
        hp = (2 * base_hp + FULL_IV + ev // 4 + 100) * level // 100 + 10
        if hp % 4 != 0:
            break
        ev -= SUBSTITUTE_STEP_EV
    return ev


@functools.cache
def set_tables() -> SetTables:
    data = random_battle_data()
    base = gen1_tables()
    gen1 = gen_data.gen1_data()
    move_num = {move_id: info["num"] for move_id, info in data["moves"].items()}
    for move_id, num in move_num.items():
        if base.move_ids[num] != move_id:
            raise ValueError(
                f"random-battle move {move_id} is number {num}, which the gen1 tables call {base.move_ids[num]}"
            )

    pool = [base.species_index(species_id) for species_id in data["species"]]
    level = np.zeros(NUM_SPECIES + 1, dtype=np.int32)
    has_combo = np.zeros(NUM_SPECIES + 1, dtype=bool)
    combo, exclusive, essential, moves = {}, {}, {}, {}
    for species_id, num in zip(data["species"], pool, strict=True):
        entry = data["sets"][species_id]
        # A missing or zero level falls back to the default, as `||`-style truthiness does in JS.
        level[num] = entry.get("level") or DEFAULT_LEVEL
        combo_ids = entry.get("comboMoves")
        # Showdown only rolls for a combo list that fits in a set; an empty list still rolls.
        if combo_ids is not None and len(combo_ids) <= MAX_MOVES:
            has_combo[num] = True
            combo[num] = [move_num[m] for m in combo_ids]
        if "exclusiveMoves" in entry:
            if not entry["exclusiveMoves"]:
                raise ValueError(f"{species_id}: Showdown cannot sample its empty exclusiveMoves")
            exclusive[num] = [move_num[m] for m in entry["exclusiveMoves"]]
        essential[num] = [move_num[m] for m in entry.get("essentialMoves", [])]
        moves[num] = [move_num[m] for m in entry.get("moves", [])]

    type_index = {name: i for i, name in enumerate(base.types)}
    chart = base.type_chart_x2
    types = np.full((NUM_SPECIES + 1, 2), -1, dtype=np.int32)
    weak = np.zeros((NUM_SPECIES + 1, len(SPAMMABLE_TYPES)), dtype=bool)
    substitute_hp_ev = np.full(NUM_SPECIES + 1, FULL_EV, dtype=np.int32)
    for num in pool:
        own = sorted(set(base.species_types[num].tolist()), key=base.species_types[num].tolist().index)
        types[num, : len(own)] = own
        for column, attacking in enumerate(SPAMMABLE_TYPES):
            multipliers = [int(chart[type_index[attacking], t]) for t in own]
            # Showdown sums per-type exponents (x2 -> +1, x0.5 -> -1) and checks immunity apart.
            exponent = sum({1: -1, 2: 0, 4: 1}.get(m, 0) for m in multipliers)
            weak[num, column] = 0 not in multipliers and exponent > 0
        substitute_hp_ev[num] = _substitute_hp_ev(int(base.base_stats[num, 0]), int(level[num]))

    move_uses_attack = np.zeros(NUM_MOVES + 1, dtype=bool)
    for info in data["moves"].values():
        fixed_damage = info["damageCallback"] or bool(info["damage"])
        move_uses_attack[info["num"]] = info["category"] == "Physical" and not fixed_damage

    names = [""] * (NUM_SPECIES + 1)
    for s in gen1["species"]:
        names[s["num"]] = s["name"]

    return SetTables(
        pool_species=np.asarray(pool, dtype=np.int32),
        level=level,
        has_combo=has_combo,
        combo_moves=_padded(combo, MAX_MOVES),
        exclusive_moves=_padded(exclusive, max(map(len, exclusive.values()), default=1)),
        exclusive_len=np.asarray([len(exclusive.get(n, [])) for n in range(NUM_SPECIES + 1)], dtype=np.int32),
        essential_moves=_padded(essential, max(map(len, essential.values()), default=1)),
        move_pool=_padded(moves, max(map(len, moves.values()), default=1)),
        move_pool_len=np.asarray([len(moves.get(n, [])) for n in range(NUM_SPECIES + 1)], dtype=np.int32),
        types=types,
        weak=weak,
        substitute_hp_ev=substitute_hp_ev,
        move_uses_attack=move_uses_attack,
        substitute=base.move_index("substitute"),
        mimic=base.move_index("mimic"),
        transform=base.move_index("transform"),
        ditto=base.species_index("ditto"),
        species_names=tuple(names),
    )


# -- the generator (JAX) --------------------------------------------------------------------------


@struct.dataclass
class Team:
    species: jax.Array  # int32 [6], national numbers in Showdown's team order (0 = empty slot)
    level: jax.Array  # int32 [6]
    moves: jax.Array  # int32 [6, 4], move numbers in the set's order (0 = empty)
    ivs: jax.Array  # int32 [6, 6], SET_STATS order, Showdown's even IVs (DV * 2)
    evs: jax.Array  # int32 [6, 6], SET_STATS order
    size: jax.Array  # int32: how many slots are filled (always 6 for gen1randombattle)
    has_ditto: jax.Array  # bool: the generator's battleHasDitto afterwards


def _draw_if(kind: str, state: jax.Array, n: jax.Array, enabled: jax.Array) -> tuple[jax.Array, jax.Array]:
    """random(n) when enabled; otherwise the state is left as it was (the value is then garbage)."""
    new_state, value = prng.random_below(kind, state, jnp.maximum(n, 1))
    return jnp.where(enabled, new_state, state), value


def _add_move(moves: jax.Array, size: jax.Array, move: jax.Array, enabled: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Set.add into a four-slot set that keeps insertion order."""
    slots = jnp.arange(MAX_MOVES)
    present = jnp.any((moves == move) & (slots < size))
    added = enabled & ~present & (size < MAX_MOVES) & (move > 0)
    return jnp.where(added & (slots == size), move, moves), size + added.astype(jnp.int32)


def _random_set(kind: str, t: SetTables, state: jax.Array, species: jax.Array):
    """RandomGen1Teams.randomSet: (state, moves [4], level, ivs [6], evs [6])."""
    moves = jnp.zeros(MAX_MOVES, dtype=jnp.int32)
    size = jnp.int32(0)

    has_combo = jnp.asarray(t.has_combo)[species]
    state, roll = _draw_if(kind, state, 2, has_combo)
    take_combo = has_combo & (roll < 1)
    combo = jnp.asarray(t.combo_moves)[species]
    for i in range(combo.shape[0]):
        moves, size = _add_move(moves, size, combo[i], take_combo)

    exclusive_len = jnp.asarray(t.exclusive_len)[species]
    roll_exclusive = (exclusive_len > 0) & (size < MAX_MOVES)
    state, pick = _draw_if(kind, state, exclusive_len, roll_exclusive)
    moves, size = _add_move(moves, size, jnp.asarray(t.exclusive_moves)[species, pick], roll_exclusive)

    essential = jnp.asarray(t.essential_moves)[species]
    for i in range(essential.shape[0]):
        moves, size = _add_move(moves, size, essential[i], jnp.bool_(True))

    def draw_from_pool(_, carry):
        state, moves, size, pool, pool_len = carry
        enabled = (size < MAX_MOVES) & (pool_len > 0)
        state, index = _draw_if(kind, state, pool_len, enabled)
        move = pool[index]
        last = jnp.maximum(pool_len - 1, 0)
        pool = jnp.where(enabled, pool.at[index].set(pool[last]), pool)
        moves, size = _add_move(moves, size, move, enabled)
        return state, moves, size, pool, pool_len - enabled.astype(jnp.int32)

    pool = jnp.asarray(t.move_pool)[species]
    pool_len = jnp.asarray(t.move_pool_len)[species]
    state, moves, size, _, _ = jax.lax.fori_loop(0, pool.shape[0], draw_from_pool, (state, moves, size, pool, pool_len))

    for start in range(MAX_MOVES - 1):
        enabled = start < size - 1
        state, offset = _draw_if(kind, state, size - start, enabled)
        other = jnp.where(enabled, start + offset, start)
        moves = moves.at[start].set(moves[other]).at[other].set(moves[start])

    level = jnp.asarray(t.level)[species]
    uses_substitute = jnp.any(moves == t.substitute)
    uses_attack = jnp.any(jnp.asarray(t.move_uses_attack)[moves])
    # Mimic and Transform can end up with physical moves, so those sets keep their Attack.
    needs_attack = uses_attack | jnp.any(moves == t.mimic) | jnp.any(moves == t.transform)
    hp_ev = jnp.where(uses_substitute, jnp.asarray(t.substitute_hp_ev)[species], FULL_EV)
    evs = jnp.full(len(SET_STATS), FULL_EV, dtype=jnp.int32).at[0].set(hp_ev)
    evs = evs.at[1].set(jnp.where(needs_attack, FULL_EV, 0))
    ivs = jnp.full(len(SET_STATS), FULL_IV, dtype=jnp.int32).at[1].set(jnp.where(needs_attack, FULL_IV, LOW_ATTACK_IV))
    return state, moves, level, ivs, evs


def _empty_team(has_ditto: jax.Array) -> Team:
    stats = (TEAM_SIZE, len(SET_STATS))
    return Team(
        species=jnp.zeros(TEAM_SIZE, dtype=jnp.int32),
        level=jnp.zeros(TEAM_SIZE, dtype=jnp.int32),
        moves=jnp.zeros((TEAM_SIZE, MAX_MOVES), dtype=jnp.int32),
        ivs=jnp.zeros(stats, dtype=jnp.int32),
        evs=jnp.zeros(stats, dtype=jnp.int32),
        size=jnp.int32(0),
        has_ditto=has_ditto,
    )


def _append(team: Team, enabled: jax.Array, species, moves, level, ivs, evs) -> Team:
    slot = jnp.minimum(team.size, TEAM_SIZE - 1)

    def put(array, value):
        return jnp.where(enabled, array.at[slot].set(value), array)

    return team.replace(
        species=put(team.species, species),
        level=put(team.level, level),
        moves=put(team.moves, moves),
        ivs=put(team.ivs, ivs),
        evs=put(team.evs, evs),
        size=team.size + enabled.astype(jnp.int32),
    )


def _pop(pool: jax.Array, length: jax.Array, index: jax.Array) -> tuple[jax.Array, jax.Array]:
    """sampleNoReplace's removal: the last entry fills the hole."""
    return pool.at[index].set(pool[length - 1]), length - 1


def generate_team(
    kind: str, prng_state: jax.Array, battle_has_ditto: jax.Array | bool = False
) -> tuple[Team, jax.Array]:
    """Showdown's gen1randombattle team from a team seed's PRNG state: (team, PRNG state after).

    `kind` is the static PRNG kind ("sodium" or "gen5"); `battle_has_ditto` is the shared generator's
    memory of an earlier team's Ditto (False for a fresh generator, as Teams.generate uses)."""
    t = set_tables()
    pool_size = t.pool_species.shape[0]
    state, _ = prng.next_u32(kind, prng_state)  # the unused monotype sample
    make_set = functools.partial(_random_set, kind, t)
    level_table = jnp.asarray(t.level)
    types_table = jnp.asarray(t.types)
    weak_table = jnp.asarray(t.weak)
    num_types = len(gen1_tables().types)

    def fill_from_pool(carry):
        state, pool, pool_len, rejects, rejects_len, team, type_count, weak_count, max_level_count = carry
        state, index = prng.random_below(kind, state, pool_len)
        species = pool[index]
        pool, pool_len = _pop(pool, pool_len, index)

        dropped = (species == t.ditto) & team.has_ditto
        own_types = types_table[species]
        type_full = jnp.any((own_types >= 0) & (type_count[jnp.maximum(own_types, 0)] >= TYPE_LIMIT))
        weak = weak_table[species]
        weak_full = jnp.any(weak & (weak_count >= WEAKNESS_LIMIT))
        is_max_level = level_table[species] == MAX_LEVEL
        max_level_full = is_max_level & (max_level_count >= MAX_LEVEL_LIMIT)
        rejected = ~dropped & (type_full | weak_full | max_level_full)
        accepted = ~dropped & ~rejected

        rejects = jnp.where(rejected, rejects.at[rejects_len].set(species), rejects)
        rejects_len = rejects_len + rejected.astype(jnp.int32)

        def with_set(state):
            return make_set(state, species)

        def without_set(state):
            blank = jnp.zeros(len(SET_STATS), dtype=jnp.int32)
            return state, jnp.zeros(MAX_MOVES, dtype=jnp.int32), jnp.int32(0), blank, blank

        state, moves, level, ivs, evs = jax.lax.cond(accepted, with_set, without_set, state)
        team = _append(team, accepted, species, moves, level, ivs, evs)
        team = team.replace(has_ditto=team.has_ditto | (accepted & (species == t.ditto)))
        new_types = (
            jnp.zeros(num_types, dtype=jnp.int32).at[jnp.maximum(own_types, 0)].add((own_types >= 0).astype(jnp.int32))
        )
        type_count = type_count + jnp.where(accepted, new_types, 0)
        weak_count = weak_count + (accepted & weak).astype(jnp.int32)
        max_level_count = max_level_count + (accepted & is_max_level).astype(jnp.int32)
        return state, pool, pool_len, rejects, rejects_len, team, type_count, weak_count, max_level_count

    def pool_left(carry):
        pool_len, team = carry[2], carry[5]
        return (pool_len > 0) & (team.size < TEAM_SIZE)

    carry = (
        state,
        jnp.asarray(t.pool_species),
        jnp.int32(pool_size),
        jnp.zeros(pool_size, dtype=jnp.int32),
        jnp.int32(0),
        _empty_team(jnp.asarray(battle_has_ditto, dtype=bool)),
        jnp.zeros(num_types, dtype=jnp.int32),
        jnp.zeros(len(SPAMMABLE_TYPES), dtype=jnp.int32),
        jnp.int32(0),
    )
    state, _, _, rejects, rejects_len, team, _, _, _ = jax.lax.while_loop(pool_left, fill_from_pool, carry)

    def fill_from_rejects(carry):
        state, rejects, rejects_len, team = carry
        state, index = prng.random_below(kind, state, rejects_len)
        species = rejects[index]
        rejects, rejects_len = _pop(rejects, rejects_len, index)
        state, moves, level, ivs, evs = make_set(state, species)
        return state, rejects, rejects_len, _append(team, jnp.bool_(True), species, moves, level, ivs, evs)

    def rejects_left(carry):
        return (carry[2] > 0) & (carry[3].size < TEAM_SIZE)

    state, _, _, team = jax.lax.while_loop(rejects_left, fill_from_rejects, (state, rejects, rejects_len, team))
    return team, state


# -- decoding (host side) -------------------------------------------------------------------------


def team_to_sets(team: Team) -> list[dict[str, Any]]:
    """One (unbatched) team as Showdown's set dicts, as Teams.generate returns them."""
    t = set_tables()
    move_ids = gen1_tables().move_ids
    species = np.asarray(team.species)
    moves = np.asarray(team.moves)
    levels = np.asarray(team.level)
    ivs = np.asarray(team.ivs)
    evs = np.asarray(team.evs)
    sets = []
    for slot in range(int(team.size)):
        name = t.species_names[int(species[slot])]
        sets.append(
            {
                "name": name,
                "species": name,
                "moves": [move_ids[int(m)] for m in moves[slot] if m],
                "ability": "No Ability",
                "evs": dict(zip(SET_STATS, evs[slot].tolist(), strict=True)),
                "ivs": dict(zip(SET_STATS, ivs[slot].tolist(), strict=True)),
                "item": "",
                "level": int(levels[slot]),
                "shiny": False,
                "gender": False,
            }
        )
    return sets
