"""A Gen 1 singles battle as Showdown runs it, as pure JAX functions over fixed-size arrays.

Scope of this version ("plain" battles): switching, fainting and forced switches, battle end, and
damaging moves whose whole effect is their damage (PLAIN_MOVES: accuracy, the speed-based crit,
the damage formula with STAB and Gen 1's per-type effectiveness, the damage roll, immunities,
priority, PP). Status, volatiles, boosts and the special moves come next; the state already has
the fields their handlers will need.

Showdown's side.pokemon is kept in Showdown's own order, which a switch changes by swapping the
active Pokemon (slot 0) with the one switched in: "switch N" means slot N-1 of that order, and the
state can be compared with Showdown's field by field.

The PRNG is consumed exactly as Showdown consumes it, including the draws that decide nothing:
 - sorting the turn's two actions (order, then priority, then the Pokemon's cached `speed`):
   one random(0, 2) when they tie;
 - every eachEvent (BeforeTurn at the start of the turn; Update after each action, in Gens 1-4):
   one random(0, 2) when the two active Pokemon's cached speeds tie;
 - inserting the second runSwitch at the start of the battle: one random(0, 2) on a speed tie;
 - then each move's accuracy, crit and damage rolls (damage.py).
An action that ends in a faint asks the fainted side for a switch before its Update, and ends the
turn: after the replacement switches in (with its two Updates), the next turn starts with no
residual.

Actions: 0-3 use move slot 1-4; 4-8 switch to slot 2-6 of Showdown's current order.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from envs.pokejax.jax import damage as dmg
from envs.pokejax.jax import prng, stats
from envs.pokejax.jax.tables import gen1_tables

NUM_SIDES, TEAM_SIZE, NUM_MOVE_SLOTS = 2, 6, 4
NUM_ACTIONS = NUM_MOVE_SLOTS + TEAM_SIZE - 1
REQUEST_MOVE, REQUEST_SWITCH, REQUEST_WAIT, REQUEST_NONE = 0, 1, 2, 3
NO_WINNER, P1_WINS, P2_WINS = -1, 0, 1
ORDER_SWITCH, ORDER_MOVE = 103, 200
# The most draws one step can make: the action-order tie (1), BeforeTurn and its Update (2), two
# moves with accuracy, crit, damage roll and Update (4 each), the residual's Update (1).
STEP_DRAWS = 12
START_DRAWS = 4
# stat columns of `stats` (tables.STAT_NAMES)
HP, ATK, DEF, SPC, SPE = range(5)

PLAIN_MOVES = (
    "pound karatechop megapunch scratch visegrip cut gust wingattack slam vinewhip megakick hornattack "
    "tackle watergun hydropump surf peck drillpeck strength razorleaf rockthrow earthquake quickattack "
    "eggbomb waterfall swift dizzypunch crabhammer rockslide triattack slash"
).split()


@struct.dataclass
class Tables:
    """The Gen 1 data the battle reads, as device arrays (a pytree, so it can be closed over or passed)."""

    base_stats: jax.Array
    species_types: jax.Array
    move_power: jax.Array
    move_accuracy: jax.Array
    move_type: jax.Array
    move_category: jax.Array
    move_priority: jax.Array
    move_crit_ratio: jax.Array
    move_pp: jax.Array
    type_chart_x2: jax.Array

    @classmethod
    def load(cls) -> Tables:
        t = gen1_tables()
        return cls(**{f.name: jnp.asarray(getattr(t, f.name)) for f in cls.__dataclass_fields__.values()})


@struct.dataclass
class BattleState:
    rng: jax.Array  # uint32[8], Showdown's battle PRNG
    turn: jax.Array  # int32, Showdown's battle.turn
    species: jax.Array  # int32[2, 6], national number, in Showdown's current order per side
    level: jax.Array  # int32[2, 6]
    types: jax.Array  # int32[2, 6, 2]
    hp: jax.Array  # int32[2, 6]
    stats: jax.Array  # int32[2, 6, 5], stored: hp, atk, def, special, speed
    modified: jax.Array  # int32[2, 6, 5], Gen 1's modifiedStats (column 0 unused)
    speed: jax.Array  # int32[2, 6], Showdown's cached Pokemon.speed (decides speed ties)
    moves: jax.Array  # int32[2, 6, 4], move numbers, 0 = empty slot
    pp: jax.Array  # int32[2, 6, 4]
    request: jax.Array  # int32[2], REQUEST_*
    winner: jax.Array  # int32, NO_WINNER until the battle ends
    ended: jax.Array  # bool
    prng_overflow: jax.Array  # bool: a step wanted more draws than it prefetched (never, if correct)


def _tie_draw(draws: prng.Draws, tie: jax.Array) -> tuple[prng.Draws, jax.Array]:
    """Showdown's shuffle of two tied entries: one random(0, 2) on a tie; True means they swap."""
    draws, value = prng.take_range(draws, 0, 2, tie)
    return draws, value == 1


def _each_event(draws: prng.Draws, state: BattleState) -> prng.Draws:
    """eachEvent: sorting the active Pokemon by cached speed draws once on a tie."""
    draws, _ = _tie_draw(draws, state.speed[0, 0] == state.speed[1, 0])
    return draws


def _select(condition: jax.Array, new, old):
    return jax.tree_util.tree_map(lambda a, b: jnp.where(condition, a, b), new, old)


def new_battle(
    kind: str,
    rng: jax.Array,
    species: jax.Array,
    level: jax.Array,
    moves: jax.Array,
    ivs: jax.Array,
    evs: jax.Array,
    tables: Tables,
) -> BattleState:
    """The battle after Showdown's start: both leads switched in, turn 1, both sides asked to move.

    rng: the Showdown seed as prng state; species/level: int32[2, 6]; moves: int32[2, 6, 4];
    ivs/evs: int32[2, 6, 5] in STAT_NAMES order."""
    base = tables.base_stats[species]
    stored = stats.stats(base, ivs, evs, level)
    pp = jnp.where(moves > 0, stats.max_pp(tables.move_pp[moves]), 0)
    state = BattleState(
        rng=rng,
        turn=jnp.int32(1),
        species=species,
        level=level,
        types=tables.species_types[species],
        hp=stored[..., HP],
        stats=stored,
        modified=stored,
        speed=stored[..., SPE],
        moves=moves,
        pp=pp,
        request=jnp.full(NUM_SIDES, REQUEST_MOVE, dtype=jnp.int32),
        winner=jnp.int32(NO_WINNER),
        ended=jnp.bool_(False),
        prng_overflow=jnp.bool_(False),
    )
    draws = prng.prefetch(kind, rng, START_DRAWS)
    # start action: both leads switch in, each queueing its runSwitch; the second ties the first
    # on equal speed. Then Update after the start action and after each runSwitch.
    draws, _ = _tie_draw(draws, state.speed[0, 0] == state.speed[1, 0])
    for _ in range(3):
        draws = _each_event(draws, state)
    return state.replace(rng=draws.rng, prng_overflow=draws.overflowed)


# -- legality ---------------------------------------------------------------------------------------


def legal_actions(state: BattleState) -> jax.Array:
    """bool[2, 9]: what each side's current request allows (nothing for a side that waits)."""
    alive_bench = state.hp[:, 1:] > 0
    usable_moves = (state.moves[:, 0] > 0) & (state.pp[:, 0] > 0)
    moves_ok = (state.request == REQUEST_MOVE)[:, None] & usable_moves
    switches_ok = ((state.request == REQUEST_MOVE) | (state.request == REQUEST_SWITCH))[:, None] & alive_bench
    return jnp.concatenate([moves_ok, switches_ok], axis=1)


# -- actions ------------------------------------------------------------------------------------------


def _swap_in(state: BattleState, side: jax.Array, slot: jax.Array) -> BattleState:
    """switchIn: the Pokemon at `slot` and the active one trade places in Showdown's order."""

    def swap(array: jax.Array) -> jax.Array:
        row = array[side]
        active, incoming = row[0], row[slot]
        row = row.at[0].set(incoming).at[slot].set(active)
        return array.at[side].set(row)

    fields = ("species", "level", "types", "hp", "stats", "modified", "speed", "moves", "pp")
    return state.replace(**{name: swap(getattr(state, name)) for name in fields})


def _move_action(
    draws: prng.Draws, state: BattleState, side: jax.Array, slot: jax.Array, run: jax.Array, tables: Tables
) -> tuple[BattleState, prng.Draws, jax.Array]:
    """Side `side` uses move slot `slot` on the foe's active Pokemon, if `run`; returns the state,
    the draws and whether the target fainted."""
    foe = 1 - side
    move = state.moves[side, 0, slot]
    move_type = tables.move_type[move]
    user_types, target_types = state.types[side, 0], state.types[foe, 0]
    # runImmunity comes before the accuracy check and draws nothing
    immune = dmg.is_immune(tables.type_chart_x2, move_type, target_types)
    draws, hit = dmg.roll_accuracy(draws, tables.move_accuracy[move], run & ~immune)

    crit_threshold = dmg.crit_chance(
        tables.base_stats[state.species[side, 0], SPE], tables.move_crit_ratio[move], jnp.bool_(False)
    )
    draws, crit = dmg.chance_if(draws, hit & (crit_threshold > 0), crit_threshold)
    special = tables.move_category[move] == dmg.SPECIAL
    attack_column = jnp.where(special, SPC, ATK)
    defense_column = jnp.where(special, SPC, DEF)
    # a crit reads the stored stats, ignoring stage changes (and screens)
    attack = jnp.where(crit, state.stats[side, 0, attack_column], state.modified[side, 0, attack_column])
    defense = jnp.where(crit, state.stats[foe, 0, defense_column], state.modified[foe, 0, defense_column])
    amount = dmg.base_damage(state.level[side, 0], tables.move_power[move], attack, defense, crit)
    amount = dmg.apply_stab_and_types(amount, tables.type_chart_x2, move_type, user_types, target_types)
    draws, amount = dmg.roll_damage(draws, amount, hit)
    dealt = jnp.where(hit, jnp.minimum(amount, state.hp[foe, 0]), 0)
    target_hp = state.hp[foe, 0] - dealt
    state = state.replace(
        hp=state.hp.at[foe, 0].set(target_hp),
        pp=state.pp.at[side, 0, slot].add(-run.astype(jnp.int32)),
    )
    return state, draws, hit & (target_hp == 0)


def _faint(state: BattleState, fainted_side: jax.Array) -> BattleState:
    """The fainted side is asked for a switch (the other waits), or loses if it has no one left."""
    lost = ~jnp.any(state.hp[fainted_side] > 0)
    request = jnp.where(jnp.arange(NUM_SIDES) == fainted_side, REQUEST_SWITCH, REQUEST_WAIT).astype(jnp.int32)
    return state.replace(
        request=jnp.where(lost, REQUEST_NONE, request),
        ended=lost,
        winner=jnp.where(lost, 1 - fainted_side, NO_WINNER).astype(jnp.int32),
    )


def _run_action(
    draws: prng.Draws, state: BattleState, side: jax.Array, action: jax.Array, run: jax.Array, tables: Tables
) -> tuple[BattleState, prng.Draws, jax.Array]:
    """One queued action, if `run`; returns the state, the draws and whether the turn goes on."""
    is_switch = action >= NUM_MOVE_SLOTS
    switched = _swap_in(state, side, jnp.clip(action - NUM_MOVE_SLOTS + 1, 1, TEAM_SIZE - 1))
    switch_draws = _each_event(draws, switched)  # Update after the switch action
    switch_draws = _each_event(switch_draws, switched)  # Update after the runSwitch it queued
    moved, move_draws, fainted = _move_action(
        draws, state, side, jnp.clip(action, 0, NUM_MOVE_SLOTS - 1), run & ~is_switch, tables
    )
    # a faint asks for the replacement before the Update
    moved = _select(fainted, _faint(moved, 1 - side), moved)
    move_draws = _select(fainted, move_draws, _each_event(move_draws, moved))
    after = _select(is_switch, (switched, switch_draws), (moved, move_draws))
    state, draws = _select(run, after, (state, draws))
    return state, draws, run & (is_switch | ~fainted)


def _end_turn(state: BattleState, run: jax.Array) -> BattleState:
    """endTurn: the next turn, both sides asked to move."""
    ended_turn = state.replace(turn=state.turn + 1, request=jnp.full(NUM_SIDES, REQUEST_MOVE, dtype=jnp.int32))
    return _select(run, ended_turn, state)


def _action_key(state: BattleState, side: int, action: jax.Array, tables: Tables) -> tuple:
    is_switch = action >= NUM_MOVE_SLOTS
    move = state.moves[side, 0, jnp.clip(action, 0, NUM_MOVE_SLOTS - 1)]
    order = jnp.where(is_switch, ORDER_SWITCH, ORDER_MOVE)
    priority = jnp.where(is_switch, 0, tables.move_priority[move])
    return order, priority, state.speed[side, 0]


def _full_turn(
    draws: prng.Draws, state: BattleState, actions: jax.Array, tables: Tables
) -> tuple[BattleState, prng.Draws]:
    (order0, priority0, speed0), (order1, priority1, speed1) = (
        _action_key(state, side, actions[side], tables) for side in range(NUM_SIDES)
    )
    p1_before = (order0 < order1) | (
        (order0 == order1) & ((priority0 > priority1) | ((priority0 == priority1) & (speed0 > speed1)))
    )
    tie = (order0 == order1) & (priority0 == priority1) & (speed0 == speed1)
    draws, swap = _tie_draw(draws, tie)
    p1_first = jnp.where(tie, ~swap, p1_before)
    draws = _each_event(draws, state)  # beforeTurn: eachEvent('BeforeTurn')
    draws = _each_event(draws, state)  # and the Update after it
    first = jnp.where(p1_first, 0, 1)
    state, draws, goes_on = _run_action(draws, state, first, actions[first], jnp.bool_(True), tables)
    state, draws, goes_on = _run_action(draws, state, 1 - first, actions[1 - first], goes_on, tables)
    # the residual action (nothing to do in plain battles but its Update), then endTurn
    draws = _select(goes_on, _each_event(draws, state), draws)
    return _end_turn(state, goes_on), draws


def _forced_switch(
    draws: prng.Draws, state: BattleState, actions: jax.Array, tables: Tables
) -> tuple[BattleState, prng.Draws]:
    side = jnp.where(state.request[0] == REQUEST_SWITCH, 0, 1)
    state, draws, goes_on = _run_action(draws, state, side, actions[side], jnp.bool_(True), tables)
    # In Gen 1 a faint ends the turn: Showdown drops the rest of the queue (the residual included),
    # so the replacement's switch-in is followed directly by endTurn.
    return _end_turn(state, goes_on), draws


def step(kind: str, state: BattleState, actions: jax.Array, tables: Tables) -> BattleState:
    """Both sides' choices (int32[2]; ignored for a side that waits), as Showdown's makeChoices."""
    draws = prng.prefetch(kind, state.rng, STEP_DRAWS)
    both_move = (state.request[0] == REQUEST_MOVE) & (state.request[1] == REQUEST_MOVE)
    after, draws = _select(
        both_move, _full_turn(draws, state, actions, tables), _forced_switch(draws, state, actions, tables)
    )
    after = after.replace(rng=draws.rng, prng_overflow=state.prng_overflow | draws.overflowed)
    return _select(state.ended, state, after)
