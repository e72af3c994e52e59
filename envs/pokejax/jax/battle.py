"""A Gen 1 singles battle as Showdown runs it, as pure JAX functions over fixed-size arrays.

Scope of this version (battles whose teams know only SUPPORTED_MOVES): switching, fainting and
forced switches, battle end; damaging moves whose whole effect is their damage (PLAIN_MOVES:
accuracy, the speed-based crit, the damage formula with STAB and Gen 1's per-type effectiveness,
the damage roll, immunities, priority, PP); paralysis (PARALYSIS_MOVES: Thunder Wave, Stun Spore
and Glare, and the damaging moves with a paralysis chance; full paralysis, the speed drop on the
modified stat, Showdown's cached speeds); burn and poison (BURN_POISON_MOVES); sleep and freeze
(SLEEP_FREEZE_MOVES: Gen 1's "Fight" button, which runs the side's lastSelectedMove, the sleep
counter, thawing by fire). Toxic, volatiles, boosts and the special moves come next.

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
A sleeping or frozen Pokemon's side chooses "Fight" (action 0), which runs the side's
lastSelectedMove: its priority orders the turn, and a Pokemon thawed earlier in the turn uses it
(Showdown's "nomove" stand-in if the side never selected one).
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
PAR, FNT, BRN, PSN, SLP, FRZ = 1, 2, 3, 4, 5, 6  # tables.STATUSES
# Showdown's "nomove": what a Pokemon thawed before its action uses when its side never selected a
# move (a 102-power typeless special move with 100 * 81 / 256 % accuracy, Fissure's animation)
NOMOVE_POWER, NOMOVE_ACCURACY_THRESHOLD = 102, 80
POISON_TYPE = 11  # tables.TYPES.index("Poison"), checked by a test
FULL_PARALYSIS_CHANCE = 63  # out of 256, Showdown's gen1 par onBeforeMove
# The most draws one step can make: the action-order tie (1), BeforeTurn and its Update (2), two
# moves with full paralysis, accuracy, crit, damage roll, secondary and Update (6 each), the
# residual's Update (1).
STEP_DRAWS = 16  # + full paralysis and a secondary roll for each of the two moves
START_DRAWS = 4
# stat columns of `stats` (tables.STAT_NAMES)
HP, ATK, DEF, SPC, SPE = range(5)

PLAIN_MOVES = (
    "pound karatechop megapunch scratch visegrip cut gust wingattack slam vinewhip megakick hornattack "
    "tackle watergun hydropump surf peck drillpeck strength razorleaf rockthrow earthquake quickattack "
    "eggbomb waterfall swift dizzypunch crabhammer rockslide triattack slash"
).split()
# Moves whose effect is paralysis: the status moves, and damaging moves with a paralysis chance.
PARALYSIS_MOVES = "thunderwave stunspore glare bodyslam thunderbolt thunderpunch thundershock thunder lick".split()
# Burn and poison: the damaging moves with a chance, and the poison status moves.
BURN_POISON_MOVES = "ember firepunch flamethrower fireblast poisonsting sludge smog poisonpowder poisongas".split()
# Sleep (the five sleep moves) and freeze (the ice moves with a chance; fire moves thaw).
SLEEP_FREEZE_MOVES = "sleeppowder hypnosis sing lovelykiss spore icebeam blizzard icepunch".split()
SUPPORTED_MOVES = PLAIN_MOVES + PARALYSIS_MOVES + BURN_POISON_MOVES + SLEEP_FREEZE_MOVES


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
    move_status: jax.Array
    move_secondary_status: jax.Array
    move_secondary_chance: jax.Array
    move_ignores_immunity: jax.Array
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
    status: jax.Array  # int32[2, 6], index into tables.STATUSES (0 = healthy)
    sleep_turns: jax.Array  # int32[2, 6], Showdown's slp statusState.time
    last_move: jax.Array  # int32[2], side.lastSelectedMove (0 = "nomove"): what "Fight" runs
    last_slot: jax.Array  # int32[2], side.lastSelectedMoveSlot: the slot whose PP a move spends
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
        status=jnp.zeros_like(species),
        sleep_turns=jnp.zeros_like(species),
        last_move=jnp.zeros(NUM_SIDES, dtype=jnp.int32),
        last_slot=jnp.zeros(NUM_SIDES, dtype=jnp.int32),
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
    # Gen 1: a sleeping or frozen Pokemon only has the "Fight" button (move 1)
    helpless = (state.status[:, 0] == SLP) | (state.status[:, 0] == FRZ)
    usable_moves = jnp.where(helpless[:, None], jnp.arange(NUM_MOVE_SLOTS) == 0, usable_moves)
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

    # a fainted Pokemon leaving the field loses its "fnt" status (switchIn)
    leaving_status = state.status[side, 0]
    state = state.replace(status=state.status.at[side, 0].set(jnp.where(leaving_status == FNT, 0, leaving_status)))
    fields = ("species", "level", "types", "hp", "stats", "modified", "speed", "moves", "pp", "status", "sleep_turns")
    return state.replace(**{name: swap(getattr(state, name)) for name in fields})


def _move_action(
    draws: prng.Draws, state: BattleState, side: jax.Array, run: jax.Array, tables: Tables
) -> tuple[BattleState, prng.Draws, jax.Array, jax.Array]:
    """Side `side` uses its move on the foe's active Pokemon, if `run`; returns the state, the
    draws, whether the target fainted and whether the user fainted (burn or poison)."""
    foe = 1 - side
    # the move is the side's lastSelectedMove (set when the choice was committed), its PP comes
    # from the slot lastSelectedMoveSlot; "nomove" (0) is Showdown's stand-in, see NOMOVE_*
    move, slot = state.last_move[side], state.last_slot[side]
    nomove = move == 0
    move_type = jnp.where(nomove, dmg.TYPELESS, tables.move_type[move])
    category = jnp.where(nomove, dmg.SPECIAL, tables.move_category[move])
    power = jnp.where(nomove, NOMOVE_POWER, tables.move_power[move])
    crit_ratio = jnp.where(nomove, 1, tables.move_crit_ratio[move])
    user_types, target_types = state.types[side, 0], state.types[foe, 0]
    status_move = category == dmg.STATUS
    user_status = state.status[side, 0]
    # BeforeMove: frozen or asleep, the Pokemon does nothing (a sleeper counts a turn down, and
    # wakes, still idle, when it reaches 0); paralysed, it is fully paralysed with 63/256
    asleep = run & (user_status == SLP)
    sleep_left = jnp.where(asleep, state.sleep_turns[side, 0] - 1, state.sleep_turns[side, 0])
    draws, fully_paralysed = prng.take_chance(draws, FULL_PARALYSIS_CHANCE, 256, run & (user_status == PAR))
    acts = run & ~fully_paralysed & (user_status != SLP) & (user_status != FRZ)
    # runImmunity comes before the accuracy check and draws nothing; status moves skip it unless
    # they say otherwise (Thunder Wave does not)
    immune = ~tables.move_ignores_immunity[move] & dmg.is_immune(tables.type_chart_x2, move_type, target_types)
    accuracy = jnp.where(nomove, 0, tables.move_accuracy[move])
    threshold = jnp.where(nomove, NOMOVE_ACCURACY_THRESHOLD, dmg.accuracy_threshold(accuracy))
    draws, hit = dmg.roll_accuracy(draws, accuracy, acts & ~immune, threshold)
    damaging_hit = hit & ~status_move

    crit_threshold = dmg.crit_chance(tables.base_stats[state.species[side, 0], SPE], crit_ratio, jnp.bool_(False))
    draws, crit = dmg.chance_if(draws, damaging_hit & (crit_threshold > 0), crit_threshold)
    special = category == dmg.SPECIAL
    attack_column = jnp.where(special, SPC, ATK)
    defense_column = jnp.where(special, SPC, DEF)
    # a crit reads the stored stats, ignoring stage changes (and screens)
    attack = jnp.where(crit, state.stats[side, 0, attack_column], state.modified[side, 0, attack_column])
    defense = jnp.where(crit, state.stats[foe, 0, defense_column], state.modified[foe, 0, defense_column])
    amount = dmg.base_damage(state.level[side, 0], power, attack, defense, crit)
    amount = dmg.apply_stab_and_types(amount, tables.type_chart_x2, move_type, user_types, target_types)
    draws, amount = dmg.roll_damage(draws, amount, damaging_hit)
    dealt = jnp.where(damaging_hit, jnp.minimum(amount, state.hp[foe, 0]), 0)
    target_hp = state.hp[foe, 0] - dealt

    # A damaging move's secondary status rolls ceil(chance * 256 / 100) out of 256 when the target
    # is still standing, except that par/brn/frz never roll against a target of the move's type.
    secondary_status = jnp.where(nomove, 0, tables.move_secondary_status[move])
    chance = jnp.where(nomove, 0, tables.move_secondary_chance[move])
    shares_type = (target_types[0] == move_type) | (target_types[1] == move_type)
    type_blocked = ((secondary_status == PAR) | (secondary_status == BRN) | (secondary_status == FRZ)) & shares_type
    rolls = damaging_hit & (target_hp > 0) & (chance > 0) & ~type_blocked
    draws, secondary_lands = prng.take_chance(draws, (chance * 256 + 99) // 100, 256, rolls)
    inflicted = jnp.where(hit & status_move, tables.move_status[move], jnp.where(secondary_lands, secondary_status, 0))
    # a status lands only on a healthy target (a status move on a statused one just fails), and
    # Poison types cannot be poisoned (runStatusImmunity)
    poison_immune = (inflicted == PSN) & ((target_types[0] == POISON_TYPE) | (target_types[1] == POISON_TYPE))
    lands = (inflicted > 0) & (state.status[foe, 0] == 0) & (target_hp > 0) & ~poison_immune
    target_status = jnp.where(lands, inflicted, state.status[foe, 0])
    # sleep's onStart draws its length, 1-7 turns
    draws, sleep_length = prng.take_range(draws, 1, 8, lands & (inflicted == SLP))
    target_sleep = jnp.where(lands & (inflicted == SLP), sleep_length, state.sleep_turns[foe, 0])
    # AfterMoveSecondary: a frozen target hit by a move whose secondary is a burn thaws
    thaws = damaging_hit & (target_hp > 0) & (state.status[foe, 0] == FRZ) & (secondary_status == BRN)
    target_status = jnp.where(thaws, 0, target_status)
    # Gen 1 applies the paralysis speed drop and the burn attack drop to the modified stats
    modified = state.modified[foe, 0]
    paralysed_speed = jnp.maximum(modified[SPE] // 4, 1)
    burnt_attack = jnp.maximum(modified[ATK] // 2, 1)
    modified = modified.at[SPE].set(jnp.where(lands & (inflicted == PAR), paralysed_speed, modified[SPE]))
    modified = modified.at[ATK].set(jnp.where(lands & (inflicted == BRN), burnt_attack, modified[ATK]))
    # AfterMoveSelf (unless the target fell): burn and poison cost the user 1/16 of its max HP
    user_hp = state.hp[side, 0]
    hurts = run & (target_hp > 0) & ((state.status[side, 0] == BRN) | (state.status[side, 0] == PSN))
    residual = jnp.maximum(state.stats[side, 0, HP] // 16, 1)
    user_hp = jnp.where(hurts, jnp.maximum(user_hp - residual, 0), user_hp)
    # AfterMoveSelf also ends sleep whose count reached 0 (it runs when BeforeMove stopped the move)
    user_status = jnp.where(asleep & (sleep_left <= 0), 0, user_status)
    state = state.replace(
        hp=state.hp.at[foe, 0].set(target_hp).at[side, 0].set(user_hp),
        pp=state.pp.at[side, 0, slot].add(-acts.astype(jnp.int32)),
        status=state.status.at[foe, 0].set(target_status).at[side, 0].set(user_status),
        sleep_turns=state.sleep_turns.at[foe, 0].set(target_sleep).at[side, 0].set(sleep_left),
        modified=state.modified.at[foe, 0].set(modified),
    )
    return state, draws, damaging_hit & (target_hp == 0), hurts & (user_hp == 0)


def _update_speeds(state: BattleState) -> BattleState:
    """Battle.updateSpeed: every active Pokemon still standing caches its current (modified) speed."""
    standing = state.hp[:, 0] > 0
    return state.replace(
        speed=state.speed.at[:, 0].set(jnp.where(standing, state.modified[:, 0, SPE], state.speed[:, 0]))
    )


def _faint(state: BattleState, fainted_side: jax.Array) -> BattleState:
    """The fainted side is asked for a switch (the other waits), or loses if it has no one left."""
    lost = ~jnp.any(state.hp[fainted_side] > 0)
    request = jnp.where(jnp.arange(NUM_SIDES) == fainted_side, REQUEST_SWITCH, REQUEST_WAIT).astype(jnp.int32)
    # checkFainted marks the fainted Pokemon "fnt" when it asks for the replacement (not at the end)
    status = state.status.at[fainted_side, 0].set(jnp.where(lost, state.status[fainted_side, 0], FNT))
    return state.replace(
        status=status,
        request=jnp.where(lost, REQUEST_NONE, request),
        ended=lost,
        winner=jnp.where(lost, 1 - fainted_side, NO_WINNER).astype(jnp.int32),
    )


def _run_action(
    draws: prng.Draws,
    state: BattleState,
    side: jax.Array,
    action: jax.Array,
    run: jax.Array,
    tables: Tables,
    replacement: bool = False,
) -> tuple[BattleState, prng.Draws, jax.Array]:
    """One queued action, if `run`; returns the state, the draws and whether the turn goes on.
    `replacement`: a switch that replaces a Pokemon fainted this turn."""
    is_switch = action >= NUM_MOVE_SLOTS
    switched = _swap_in(state, side, jnp.clip(action - NUM_MOVE_SLOTS + 1, 1, TEAM_SIZE - 1))
    # Gen 1 runSwitch: the side's lastSelectedMoveSlot goes back to the first slot
    switched = switched.replace(last_slot=switched.last_slot.at[side].set(0))
    switch_draws = _each_event(draws, switched)  # Update after the switch action
    # runSwitch: unless its side had a faint this turn, a burned or poisoned Pokemon coming in
    # loses 1/16 of its max HP (Showdown's Gen 1-2 AfterSwitchInSelf)
    hurt = ~replacement & ((switched.status[side, 0] == BRN) | (switched.status[side, 0] == PSN))
    loss = jnp.where(hurt, jnp.maximum(switched.stats[side, 0, HP] // 16, 1), 0)
    incoming_hp = jnp.maximum(switched.hp[side, 0] - loss, 0)
    switched = switched.replace(hp=switched.hp.at[side, 0].set(incoming_hp))
    switch_fainted = incoming_hp == 0
    switched = _select(switch_fainted, _faint(switched, side), switched)
    switch_draws = _select(switch_fainted, switch_draws, _each_event(switch_draws, switched))  # Update after runSwitch
    moved, move_draws, foe_fainted, user_fainted = _move_action(draws, state, side, run & ~is_switch, tables)
    # a faint asks for the replacement before the Update (at most one: burn and poison do not hurt
    # a user whose move felled its target)
    moved = _select(foe_fainted, _faint(moved, 1 - side), moved)
    moved = _select(user_fainted, _faint(moved, side), moved)
    move_fainted = foe_fainted | user_fainted
    move_draws = _select(move_fainted, move_draws, _each_event(move_draws, moved))
    after = _select(is_switch, (switched, switch_draws), (moved, move_draws))
    state, draws = _select(run, after, (state, draws))
    return state, draws, run & ~jnp.where(is_switch, switch_fainted, move_fainted)


def _end_turn(state: BattleState, run: jax.Array) -> BattleState:
    """endTurn: the next turn, both sides asked to move."""
    ended_turn = state.replace(turn=state.turn + 1, request=jnp.full(NUM_SIDES, REQUEST_MOVE, dtype=jnp.int32))
    return _select(run, ended_turn, state)


def _commit_moves(state: BattleState, actions: jax.Array) -> BattleState:
    """Gen 1's side.commitChoices: a chosen move becomes lastSelectedMove (and its slot
    lastSelectedMoveSlot); "Fight" from a sleeping or frozen Pokemon changes neither, so it runs
    whatever its side last selected."""
    chose_move = (actions < NUM_MOVE_SLOTS) & (state.request == REQUEST_MOVE)
    helpless = (state.status[:, 0] == SLP) | (state.status[:, 0] == FRZ)
    selects = chose_move & ~helpless
    slot = jnp.clip(actions, 0, NUM_MOVE_SLOTS - 1)
    chosen = jnp.take_along_axis(state.moves[:, 0], slot[:, None], axis=1)[:, 0]
    return state.replace(
        last_move=jnp.where(selects, chosen, state.last_move),
        last_slot=jnp.where(selects, slot, state.last_slot),
    )


def _action_key(state: BattleState, side: int, action: jax.Array, tables: Tables) -> tuple:
    is_switch = action >= NUM_MOVE_SLOTS
    order = jnp.where(is_switch, ORDER_SWITCH, ORDER_MOVE)
    priority = jnp.where(is_switch, 0, tables.move_priority[state.last_move[side]])
    return order, priority, state.speed[side, 0]


def _full_turn(
    draws: prng.Draws, state: BattleState, actions: jax.Array, tables: Tables
) -> tuple[BattleState, prng.Draws]:
    state = _commit_moves(state, actions)
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
    # the residual action (updateSpeed, no residual effects yet, its Update), then endTurn
    residual = _update_speeds(state)
    state, draws = _select(goes_on, (residual, _each_event(draws, residual)), (state, draws))
    return _end_turn(state, goes_on), draws


def _forced_switch(
    draws: prng.Draws, state: BattleState, actions: jax.Array, tables: Tables
) -> tuple[BattleState, prng.Draws]:
    side = jnp.where(state.request[0] == REQUEST_SWITCH, 0, 1)
    state, draws, goes_on = _run_action(draws, state, side, actions[side], jnp.bool_(True), tables, replacement=True)
    # In Gen 1 a faint ends the turn: Showdown drops the rest of the queue (the residual included),
    # so the replacement's switch-in is followed directly by endTurn.
    return _end_turn(state, goes_on), draws


def step(kind: str, state: BattleState, actions: jax.Array, tables: Tables) -> BattleState:
    """Both sides' choices (int32[2]; ignored for a side that waits), as Showdown's makeChoices."""
    draws = prng.prefetch(kind, state.rng, STEP_DRAWS)
    state = _update_speeds(state)  # commitChoices
    both_move = (state.request[0] == REQUEST_MOVE) & (state.request[1] == REQUEST_MOVE)
    after, draws = _select(
        both_move, _full_turn(draws, state, actions, tables), _forced_switch(draws, state, actions, tables)
    )
    after = after.replace(rng=draws.rng, prng_overflow=state.prng_overflow | draws.overflowed)
    return _select(state.ended, state, after)
