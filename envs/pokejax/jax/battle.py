"""A Gen 1 singles battle as Showdown runs it, as pure JAX functions over fixed-size arrays.

Scope: all of Gen 1's 164 selectable moves (SUPPORTED_MOVES; the lists below say which mechanics
each group brings) and Struggle: switching, fainting and forced switches (one side or both),
battle end (a draw when both last Pokemon fall together, and the Endless Battle Clause's Gen 1
rule and turn limit); the damage formula and everything around it (PLAIN_MOVES,
DAMAGE_VARIANT_MOVES); the five statuses and toxic; stat stages (boosts.py); the volatiles in
tables.VOLATILES (screens, Focus Energy, Mist, confusion, flinch, Hyper Beam's recharge, Leech
Seed, Toxic's counter, two-turn moves and Dig/Fly's invulnerability, Substitute, Disable,
Thrash's and Rage's locks, partial trapping, Bide); Haze; Counter with battle.lastDamage and each
side's choice memory; Mimic; Mirror Move with each Pokemon's lastMove; Transform; Metronome.
Two formats: gen1customgame (no clauses, Math.trunc) and gen1randombattle's Standard ruleset
(BattleState.standard_format: Sleep and Freeze Clause Mods, 8- and 6-bit truncation).

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
import numpy as np
from flax import struct

from envs.pokejax.jax import boosts as stages
from envs.pokejax.jax import damage as dmg
from envs.pokejax.jax import prng, stats
from envs.pokejax.jax.tables import (
    ALWAYS_HITS,
    CODED_EFFECTS,
    LEVEL_DAMAGE,
    NUM_MOVES,
    SAMPLED_HITS,
    VOLATILES,
    gen1_tables,
)

NUM_SIDES, TEAM_SIZE, NUM_MOVE_SLOTS = 2, 6, 4
NUM_ACTIONS = NUM_MOVE_SLOTS + TEAM_SIZE - 1
REQUEST_MOVE, REQUEST_SWITCH, REQUEST_WAIT, REQUEST_NONE = 0, 1, 2, 3
NO_WINNER, P1_WINS, P2_WINS = -1, 0, 1
ORDER_SWITCH, ORDER_MOVE = 103, 200
PAR, FNT, BRN, PSN, SLP, FRZ, TOX = 1, 2, 3, 4, 5, 6, 7  # tables.STATUSES
# Showdown's "nomove": what a Pokemon thawed before its action uses when its side never selected a
# move (a 102-power typeless special move with 100 * 81 / 256 % accuracy, Fissure's animation)
NOMOVE_POWER, NOMOVE_ACCURACY_THRESHOLD = 102, 80
# Showdown's sample for 2-5 hits; NumPy, so that importing the module does not start JAX (boosts.py)
SAMPLED_HIT_COUNTS = np.array([2, 2, 2, 3, 3, 3, 4, 5], dtype=np.int32)
OHKO_DAMAGE = 65535
# move_coded_effect values
(
    PSYWAVE,
    SUPER_FANG,
    NEEDS_SLEEPING_TARGET,
    HEAL_HALF,
    REST,
    CRASH,
    CONVERSION,
    FAILS_ON_GRASS,
    CHARGE,
    CHARGE_INVULNERABLE,
    HITS_INVULNERABLE,
    MAKE_SUBSTITUTE,
    HAZE,
    COUNTER_EFFECT,
    BIDE_EFFECT,
    MIMIC_EFFECT,
    TRANSFORM_EFFECT,
) = (
    CODED_EFFECTS.index(effect) + 1
    for effect in (
        "psywave",
        "superfang",
        "needs_sleeping_target",
        "heal_half",
        "rest",
        "crash",
        "conversion",
        "fails_on_grass",
        "charge",
        "charge_invulnerable",
        "hits_invulnerable",
        "substitute",
        "haze",
        "counter",
        "bide",
        "mimic",
        "transform",
    )
)
GRASS_TYPE = 7  # tables.TYPES.index("Grass"), checked by a test
REFLECT, LIGHT_SCREEN, FOCUS_ENERGY, MIST, CONFUSION, FLINCH, MUST_RECHARGE, LEECH_SEED, RESIDUAL_DAMAGE = (
    VOLATILES.index(v)
    for v in (
        "reflect",
        "lightscreen",
        "focusenergy",
        "mist",
        "confusion",
        "flinch",
        "mustrecharge",
        "leechseed",
        "residualdmg",
    )
)
TWO_TURN_MOVE, INVULNERABLE, SUBSTITUTE = (VOLATILES.index(v) for v in ("twoturnmove", "invulnerability", "substitute"))
DISABLE, LOCKED_MOVE, RAGE = (VOLATILES.index(v) for v in ("disable", "lockedmove", "rage"))
# partial trapping: the trapped Pokemon's volatile, the trapper's lock, and the one-turn
# afterglow both get when a lock of 2-4 turns runs out
PARTIALLY_TRAPPED, TRAPPING_LOCK, FAKE_TRAPPED = (
    VOLATILES.index(v) for v in ("partiallytrapped", "partialtrappinglock", "fakepartiallytrapped")
)
BIDE = VOLATILES.index("bide")
# the volatiles whose DisableMove handlers share priority 0 and the Condition sub-order, so that
# one Pokemon holding two of them has them shuffled at every endTurn
DISABLE_MOVE_TIES = np.array([TRAPPING_LOCK, DISABLE, BIDE])
TRAPPED_DURATION = 2  # partiallytrapped's and fakepartiallytrapped's duration (restarted by each use)
NO_AFTERGLOW_LOCK = 5  # a lock that lasted 5 turns leaves no fakepartiallytrapped
NORMAL_TYPE = 10  # tables.TYPES.index("Normal"), checked by a test
MAX_RAGE_BOOSTS = 5  # one per hit of the foe's move: at most a 2-5 hit move's five
# the volatiles that lock the Pokemon into one move (the request offers it alone, no switching)
LOCKING_VOLATILES = np.array([MUST_RECHARGE, TWO_TURN_MOVE, LOCKED_MOVE, RAGE])
# Thrash and Petal Dance: the lock lasts random(2, 4) more uses; a lock's accuracy starts at 255
LOCK_ACCURACY = 255
# the volatiles Haze removes from both active Pokemon (Showdown's gen1 haze onHit)
HAZE_REMOVES = np.array(
    [
        v in ("disable", "confusion", "mist", "focusenergy", "leechseed", "lightscreen", "reflect", "residualdmg")
        for v in VOLATILES
    ]
)
CONFUSION_SNAP_OUT_CHANCE = 128  # out of 256: the confused Pokemon acts (gen1 confusion onBeforeMove)
REST_SLEEP_TURNS = 2
GHOST_TYPE = 6  # tables.TYPES.index("Ghost"), checked by a test
TURN_LIMIT = 1000  # Showdown ties every battle that passes turn 1000
STRUGGLE = NUM_MOVES  # Struggle's move number (the last of Gen 1's), checked by a test
COUNTER = 68  # Counter's move number, checked by a test
MIMIC = 102  # Mimic's move number, checked by a test
MIRROR_MOVE = 119  # Mirror Move's move number, checked by a test
METRONOME = 118  # Metronome's move number, checked by a test
# calls resolved in one move: Metronome -> Mirror Move -> (the foe's last move) Metronome -> Mirror
# Move; a fifth would need Metronome to pick Mirror Move twice (1 in 163^2) after the foe used
# Metronome
CALL_DEPTH = 4
TRANSFORM = 144  # Transform's move number, checked by a test
TRANSFORMED_PP = 5  # a transformed Pokemon's copied moves have min(5, base PP) PP
PP_BITS = 63  # Gen 1 keeps PP in 6 bits
FISSURE = 90  # Fissure's move number (Showdown's "nomove" is Fissure's move object), checked by a test
COUNTERABLE_TYPES = (NORMAL_TYPE, 3)  # Normal and Fighting (tables.TYPES), checked by a test
# side.lastEnemySelectedMove / lastEnemyMove values that are not move numbers
CANNOT_MOVE = -1  # "cannotmove" (Haze, or partial trapping)
NOMOVE_USED = -1  # Showdown's "nomove" stand-in was used (it is Fissure's move object, "???"-typed)
POISON_TYPE = 11  # tables.TYPES.index("Poison"), checked by a test
FULL_PARALYSIS_CHANCE = 63  # out of 256, Showdown's gen1 par onBeforeMove
# The most draws a step prefetches: the action-order tie (1), BeforeTurn and its Update (2), two
# moves with up to 10 each (confusion's and paralysis's checks, two Metronome picks, accuracy, the
# crit and the roll, a secondary's chance, the length of the confusion it starts or the standard
# format's SetStatus shuffle, the Update after it; a 2-5 hit count, Psywave's damage, Rest's and
# sleep's lengths, a trapping lock's length, Bide's length, Mimic's pick and Disable's pick
# replace some of these and never add to them). Replacements on both sides make at most 5. The draws after the actions (the Residual's shuffles, the residual's Update, endTurn's
# DisableMove shuffles) are not prefetched: no value of theirs is read (prng.skip, prng.settle).
STEP_DRAWS = 23
START_DRAWS = 4
# stat columns of `stats` (tables.STAT_NAMES)
HP, ATK, DEF, SPC, SPE = range(5)

PLAIN_MOVES = (
    "pound karatechop megapunch scratch visegrip cut gust wingattack slam vinewhip megakick hornattack "
    "tackle watergun hydropump surf peck drillpeck strength razorleaf rockthrow earthquake quickattack "
    "eggbomb waterfall swift dizzypunch crabhammer rockslide triattack slash payday"
).split()
# Moves whose effect is paralysis: the status moves, and damaging moves with a paralysis chance.
PARALYSIS_MOVES = "thunderwave stunspore glare bodyslam thunderbolt thunderpunch thundershock thunder lick".split()
# Burn and poison: the damaging moves with a chance, and the poison status moves.
BURN_POISON_MOVES = "ember firepunch flamethrower fireblast poisonsting sludge smog poisonpowder poisongas".split()
# Sleep (the five sleep moves) and freeze (the ice moves with a chance; fire moves thaw).
SLEEP_FREEZE_MOVES = "sleeppowder hypnosis sing lovelykiss spore icebeam blizzard icepunch".split()
# Stat stages: the status moves that raise the user's or lower the foe's, and the damaging moves
# with a chance to lower the target's.
BOOST_MOVES = (
    "swordsdance growth amnesia agility harden withdraw defensecurl barrier acidarmor sharpen meditate "
    "doubleteam minimize growl leer tailwhip stringshot sandattack smokescreen kinesis flash screech "
    "acid aurorabeam bubble bubblebeam constrict psychic"
).split()
# Damage that is not (only) the formula: fixed damage, one-hit KOs, multi-hit, recoil, drain, and
# the moves that fell their user.
DAMAGE_VARIANT_MOVES = (
    "seismictoss nightshade sonicboom dragonrage psywave superfang fissure guillotine horndrill "
    "doubleslap cometpunch furyattack pinmissile spikecannon barrage furyswipes doublekick bonemerang "
    "twineedle takedown doubleedge submission absorb megadrain leechlife dreameater selfdestruct explosion"
).split()
# The user's own volatiles (screens, Focus Energy, Mist), healing and Rest, the crash of the jump
# kicks, Conversion, Haze, and the moves that do nothing in Gen 1 Showdown but roll their accuracy.
SELF_MOVES = (
    "reflect lightscreen focusenergy mist recover softboiled rest jumpkick highjumpkick conversion "
    "splash teleport roar whirlwind haze"
).split()
# Moves that read what happened before them: Counter (battle.lastDamage and the foe's last move),
# Bide (battle.lastDamage, summed over 2-3 turns and returned twice over), Mimic (the foe's moves),
# Mirror Move (the foe's last move, used again)
MEMORY_MOVES = ["counter", "bide", "mimic", "mirrormove"]
# Metronome: one of the other 163 moves, picked at random and used at once
METRONOME_MOVES = ["metronome"]
# Disable: a random one of the foe's moves with PP, for 1-8 of its move attempts
DISABLE_MOVES = ["disable"]
# Thrash and Petal Dance: locked in for 2-3 more turns, then confused; Rage: locked in until it
# leaves, its Attack rising with every hit it takes
LOCKED_MOVES = ["thrash", "petaldance", "rage"]
# Partial trapping: the first hit locks the user into the move for 2-5 turns, each later turn
# repeating its damage without a roll, while the target can do nothing but switch
TRAPPING_MOVES = "bind wrap clamp firespin".split()
# Confusion (Confuse Ray, Supersonic, and Psybeam's and Confusion's 10% secondary) and flinch (the
# damaging moves with a flinch chance).
VOLATILE_MOVES = (
    "confuseray supersonic psybeam confusion bite headbutt stomp rollingkick lowkick boneclub hyperfang hyperbeam "
    "toxic leechseed substitute"
).split()
# Two-turn moves (a charging turn, then locked in; Dig and Fly hide the user meanwhile)
TWO_TURN_MOVES = "razorwind skullbash skyattack solarbeam dig fly".split()
# Transform: the user becomes a copy of the foe (species, types, stats, stages, moves with 5 PP)
# until it leaves the field
TRANSFORM_MOVES = ["transform"]
SUPPORTED_MOVES = (
    PLAIN_MOVES
    + PARALYSIS_MOVES
    + BURN_POISON_MOVES
    + SLEEP_FREEZE_MOVES
    + BOOST_MOVES
    + DAMAGE_VARIANT_MOVES
    + SELF_MOVES
    + VOLATILE_MOVES
    + TWO_TURN_MOVES
    + MEMORY_MOVES
    + DISABLE_MOVES
    + LOCKED_MOVES
    + TRAPPING_MOVES
    + TRANSFORM_MOVES
    + METRONOME_MOVES
)


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
    move_targets_self: jax.Array
    move_fixed_damage: jax.Array
    move_ohko: jax.Array
    move_selfdestruct: jax.Array
    move_recoil: jax.Array
    move_drain: jax.Array
    move_hits: jax.Array
    move_coded_effect: jax.Array
    move_keeps_last_damage: jax.Array
    move_volatile: jax.Array
    move_secondary_volatile: jax.Array
    move_self_volatile: jax.Array
    move_boosts: jax.Array
    move_secondary_boosts: jax.Array
    type_chart_x2: jax.Array
    metronome_moves: jax.Array

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
    boosts: jax.Array  # int32[2, 6], the active Pokemon's stat stages (boosts.py columns)
    volatiles: jax.Array  # bool[2, len(VOLATILES)], the active Pokemon's volatiles
    toxic_counter: jax.Array  # int32[2], the counter of the active Pokemon's residualdmg volatile
    substitute_hp: jax.Array  # int32[2], the active Pokemon's substitute's HP
    confusion_turns: jax.Array  # int32[2], the active Pokemon's confusion counter (Showdown's time)
    disable_slot: jax.Array  # int32[2], the move slot Disable disabled (Showdown's slotIndex)
    disable_turns: jax.Array  # int32[2], Disable's counter (Showdown's time)
    locked_turns: jax.Array  # int32[2], Thrash's or Petal Dance's lockedmove counter (time)
    # int32[2], the accuracy a lock (lockedmove or rage) keeps, boosted anew at each use
    locked_accuracy: jax.Array
    # partial trapping, int32[2] each: the trapper's partialtrappinglock (its duration, the
    # duration it started with, and the damage every later turn repeats); the trapped Pokemon's
    # partiallytrapped duration and (bool[2]) its maybeLocked mark; fakepartiallytrapped's duration
    trap_turns: jax.Array
    trap_total: jax.Array
    trap_damage: jax.Array
    trapped_turns: jax.Array
    trapped_maybe_locked: jax.Array
    fake_trapped_turns: jax.Array
    # int32[2] each: Bide's turns left (Showdown's time) and the damage it has stored
    bide_turns: jax.Array
    bide_damage: jax.Array
    # int32[2, 4]: for each of the active Pokemon's move slots that Mimic replaced, the move it held
    # before (0: not replaced), which comes back when it leaves the field (the PP is the slot's)
    mimic_base: jax.Array
    # Transform, per side (the active Pokemon): the species it turned into (0: not transformed);
    # its storedStats, copied from the target (the own ones stay in `stats`: Showdown's
    # baseStoredStats, which crits read); its own moves and their PP (baseMoveSlots), which come
    # back when it leaves the field, while `moves` and `pp` hold the copies
    transformed_into: jax.Array  # int32[2]
    transform_stats: jax.Array  # int32[2, 5]
    base_moves: jax.Array  # int32[2, 4]
    base_pp: jax.Array  # int32[2, 4]
    # int32[2, 6]: the speed DV (as Showdown's even IV) plus a quarter of the speed stat
    # experience, from which Transform recomputes a cached speed (setSpecies on the target's species)
    speed_bonus: jax.Array
    # bool[2, 6]: the Pokemon's sleep came from a foe's move (statusState.source), not from Rest
    slept_by_foe: jax.Array
    # bool: the battle follows gen1randombattle's Standard ruleset: Sleep Clause Mod (no foe's sleep
    # move lands while a Pokemon of the target's side that a foe put to sleep still sleeps),
    # Freeze Clause Mod (no freeze while one is frozen), and Showdown's trunc(x, bits) (stats past
    # 1023 wrap in the damage formula, PP below 0 wraps to 63). gen1customgame has no clause and
    # replaces trunc with Math.trunc (no wrapping; a PP can reach -1).
    standard_format: jax.Array
    # int32[2]: the active Pokemon's lastMove (0 none; Mirror Move uses the foe's); sleep, freeze
    # and leaving the field clear it, a two-turn move's charging turn leaves it
    used_move: jax.Array
    last_move: jax.Array  # int32[2], side.lastSelectedMove (0 = "nomove"): what "Fight" runs
    last_slot: jax.Array  # int32[2], side.lastSelectedMoveSlot: the slot whose PP a move spends
    last_damage: jax.Array  # int32, battle.lastDamage: what Counter and Bide read
    # int32[2], side.lastEnemySelectedMove: the move the foe saw this side select (0 "nomove",
    # CANNOT_MOVE), and side.lastEnemyMove: the move this side last used (0 none, NOMOVE_USED)
    enemy_selected: jax.Array
    last_used: jax.Array
    # bool[2]: side.lastSelectedMove is "cannotmove" (Haze cured a sleeping or frozen foe): the
    # side's next "Fight" does nothing until it selects a move again
    cannot_move: jax.Array
    request: jax.Array  # int32[2], REQUEST_*
    winner: jax.Array  # int32, NO_WINNER until the battle ends
    ended: jax.Array  # bool
    # bool: a step wanted more draws than it prefetched, or a call chain deeper than CALL_DEPTH
    # (never, if correct: the step is then not exact)
    prng_overflow: jax.Array


def _tie_draw(draws: prng.Draws, tie: jax.Array) -> tuple[prng.Draws, jax.Array]:
    """Showdown's shuffle of two tied entries: one random(0, 2) on a tie; True means they swap."""
    draws, value = prng.take_range(draws, 0, 2, tie)
    return draws, value == 1


def _each_event_ties(state: BattleState) -> jax.Array:
    """eachEvent sorts the active Pokemon by cached speed and draws once on a tie (a fainted one
    is not among them)."""
    both_standing = (state.hp[0, 0] > 0) & (state.hp[1, 0] > 0)
    return both_standing & (state.speed[0, 0] == state.speed[1, 0])


def _each_event(draws: prng.Draws, state: BattleState) -> prng.Draws:
    draws, _ = _tie_draw(draws, _each_event_ties(state))
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
    standard_format: bool | jax.Array = False,
) -> BattleState:
    """The battle after Showdown's start: both leads switched in, turn 1, both sides asked to move.
    `standard_format`: the rules of gen1randombattle (see BattleState.standard_format) rather than
    those of gen1customgame.

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
        boosts=jnp.zeros((NUM_SIDES, stages.NUM_BOOSTS), dtype=jnp.int32),
        volatiles=jnp.zeros((NUM_SIDES, len(VOLATILES)), dtype=bool),
        confusion_turns=jnp.zeros(NUM_SIDES, dtype=jnp.int32),
        disable_slot=jnp.zeros(NUM_SIDES, dtype=jnp.int32),
        disable_turns=jnp.zeros(NUM_SIDES, dtype=jnp.int32),
        locked_turns=jnp.zeros(NUM_SIDES, dtype=jnp.int32),
        locked_accuracy=jnp.zeros(NUM_SIDES, dtype=jnp.int32),
        trap_turns=jnp.zeros(NUM_SIDES, dtype=jnp.int32),
        trap_total=jnp.zeros(NUM_SIDES, dtype=jnp.int32),
        trap_damage=jnp.zeros(NUM_SIDES, dtype=jnp.int32),
        trapped_turns=jnp.zeros(NUM_SIDES, dtype=jnp.int32),
        trapped_maybe_locked=jnp.zeros(NUM_SIDES, dtype=bool),
        fake_trapped_turns=jnp.zeros(NUM_SIDES, dtype=jnp.int32),
        bide_turns=jnp.zeros(NUM_SIDES, dtype=jnp.int32),
        bide_damage=jnp.zeros(NUM_SIDES, dtype=jnp.int32),
        mimic_base=jnp.zeros((NUM_SIDES, NUM_MOVE_SLOTS), dtype=jnp.int32),
        transformed_into=jnp.zeros(NUM_SIDES, dtype=jnp.int32),
        transform_stats=jnp.zeros((NUM_SIDES, 5), dtype=jnp.int32),
        base_moves=jnp.zeros((NUM_SIDES, NUM_MOVE_SLOTS), dtype=jnp.int32),
        base_pp=jnp.zeros((NUM_SIDES, NUM_MOVE_SLOTS), dtype=jnp.int32),
        speed_bonus=stats.normalise_ivs(ivs[..., SPE]) + stats.normalise_evs(evs[..., SPE]) // 4,
        slept_by_foe=jnp.zeros_like(species, dtype=bool),
        standard_format=jnp.asarray(standard_format, dtype=bool),
        used_move=jnp.zeros(NUM_SIDES, dtype=jnp.int32),
        toxic_counter=jnp.zeros(NUM_SIDES, dtype=jnp.int32),
        substitute_hp=jnp.zeros(NUM_SIDES, dtype=jnp.int32),
        last_move=jnp.zeros(NUM_SIDES, dtype=jnp.int32),
        last_slot=jnp.zeros(NUM_SIDES, dtype=jnp.int32),
        last_damage=jnp.int32(0),
        enemy_selected=jnp.zeros(NUM_SIDES, dtype=jnp.int32),
        last_used=jnp.zeros(NUM_SIDES, dtype=jnp.int32),
        cannot_move=jnp.zeros(NUM_SIDES, dtype=bool),
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


def _usable_moves(state: BattleState) -> jax.Array:
    """bool[2, 4]: the active Pokemon's moves with PP left and not disabled."""
    disabled = state.volatiles[:, DISABLE, None] & (jnp.arange(NUM_MOVE_SLOTS) == state.disable_slot[:, None])
    return (state.moves[:, 0] > 0) & (state.pp[:, 0] > 0) & ~disabled


def legal_actions(state: BattleState) -> jax.Array:
    """bool[2, 9]: what each side's current request allows (nothing for a side that waits)."""
    alive_bench = state.hp[:, 1:] > 0
    # no usable move leaves Struggle, offered as move 1
    usable_moves = _usable_moves(state)
    usable_moves = usable_moves | ((jnp.arange(NUM_MOVE_SLOTS) == 0) & ~jnp.any(usable_moves, axis=1, keepdims=True))
    # Gen 1: a sleeping or frozen Pokemon only has the "Fight" button (move 1)
    helpless = (state.status[:, 0] == SLP) | (state.status[:, 0] == FRZ)
    # a Pokemon locked into a move (recharge, a charged two-turn move, Thrash, Rage) is offered it alone,
    # and is trapped
    locked = jnp.any(state.volatiles[:, LOCKING_VOLATILES], axis=1)
    # partial trapping and Bide offer one button but let the Pokemon switch: the trapper and Bide
    # their move, the trapped Pokemon "Fight" (which does nothing); except that once Showdown marks
    # a trapper or its target maybeLocked (the lock is past its second turn) the request lists every
    # move, all of which do the same
    trapper_fixed = state.volatiles[:, TRAPPING_LOCK] & (state.trap_total - state.trap_turns <= 1)
    trapped_fixed = state.volatiles[:, PARTIALLY_TRAPPED] & ~state.trapped_maybe_locked
    one_button = helpless | locked | trapper_fixed | trapped_fixed | state.volatiles[:, BIDE]
    usable_moves = jnp.where(one_button[:, None], jnp.arange(NUM_MOVE_SLOTS) == 0, usable_moves)
    moves_ok = (state.request == REQUEST_MOVE)[:, None] & usable_moves
    may_switch = ((state.request == REQUEST_MOVE) & ~locked) | (state.request == REQUEST_SWITCH)
    switches_ok = may_switch[:, None] & alive_bench
    return jnp.concatenate([moves_ok, switches_ok], axis=1)


# -- actions ------------------------------------------------------------------------------------------


def _status_drops(modified: jax.Array, status: jax.Array) -> jax.Array:
    """Gen 1's modifyStat for a status, on one Pokemon's modified stats (int32[5]): paralysis
    quarters the speed, burn halves the attack (each at least 1); other statuses change nothing.
    Applied when the status lands, when clearVolatile rebuilds the stats, and (Gen 1's quirk) to
    the user's foe after any stage change from a move."""
    modified = modified.at[SPE].set(jnp.where(status == PAR, jnp.maximum(modified[SPE] // 4, 1), modified[SPE]))
    return modified.at[ATK].set(jnp.where(status == BRN, jnp.maximum(modified[ATK] // 2, 1), modified[ATK]))


def base_moves(state: BattleState, side: jax.Array) -> jax.Array:
    """int32[4]: the active Pokemon's baseMoveSlots' moves (its own, before Mimic and Transform)."""
    own = jnp.where(state.mimic_base[side] > 0, state.mimic_base[side], state.moves[side, 0])
    return jnp.where(state.transformed_into[side] > 0, state.base_moves[side], own)


def stored_stats(state: BattleState) -> jax.Array:
    """int32[2, 5]: the active Pokemon's storedStats (a transformed one's are the target's), which
    stage changes, Rage and Haze recompute the modified stats from."""
    transformed = (state.transformed_into > 0)[:, None]
    return jnp.where(transformed, state.transform_stats, state.stats[:, 0])


def current_species(state: BattleState) -> jax.Array:
    """int32[2, 6]: each Pokemon's species as Showdown's `species` (a transformed one's target's)."""
    species = jnp.asarray(state.species)
    return species.at[:, 0].set(jnp.where(state.transformed_into > 0, state.transformed_into, species[:, 0]))


def _clear_volatiles(state: BattleState, side: jax.Array, tables: Tables) -> BattleState:
    """clearVolatile on the side's active Pokemon (leaving the field, or fainting): its stages and
    volatiles go, and setSpecies restores its species' types, recomputes its modified stats,
    re-applies paralysis and burn, and resets the cached speed to the stored (unmodified) one."""
    stored = state.stats[side, 0]
    modified = _status_drops(stored, state.status[side, 0])
    transformed = state.transformed_into[side] > 0
    return state.replace(
        modified=state.modified.at[side, 0].set(modified),
        boosts=state.boosts.at[side].set(0),
        volatiles=state.volatiles.at[side].set(False),
        confusion_turns=state.confusion_turns.at[side].set(0),
        disable_slot=state.disable_slot.at[side].set(0),
        disable_turns=state.disable_turns.at[side].set(0),
        locked_turns=state.locked_turns.at[side].set(0),
        locked_accuracy=state.locked_accuracy.at[side].set(0),
        trap_turns=state.trap_turns.at[side].set(0),
        trap_total=state.trap_total.at[side].set(0),
        trap_damage=state.trap_damage.at[side].set(0),
        trapped_turns=state.trapped_turns.at[side].set(0),
        trapped_maybe_locked=state.trapped_maybe_locked.at[side].set(False),
        fake_trapped_turns=state.fake_trapped_turns.at[side].set(0),
        bide_turns=state.bide_turns.at[side].set(0),
        bide_damage=state.bide_damage.at[side].set(0),
        # (moveSlots back to baseMoveSlots: a transformed Pokemon's own moves and PP, Mimic's slot's move)
        moves=state.moves.at[side, 0].set(base_moves(state, side)),
        pp=state.pp.at[side, 0].set(jnp.where(transformed, state.base_pp[side], state.pp[side, 0])),
        mimic_base=state.mimic_base.at[side].set(0),
        transformed_into=state.transformed_into.at[side].set(0),
        transform_stats=state.transform_stats.at[side].set(0),
        base_moves=state.base_moves.at[side].set(0),
        base_pp=state.base_pp.at[side].set(0),
        used_move=state.used_move.at[side].set(0),
        toxic_counter=state.toxic_counter.at[side].set(0),
        substitute_hp=state.substitute_hp.at[side].set(0),
        types=state.types.at[side, 0].set(tables.species_types[state.species[side, 0]]),
        speed=state.speed.at[side, 0].set(stored[SPE]),
    )


def _swap_in(state: BattleState, side: jax.Array, slot: jax.Array, tables: Tables) -> BattleState:
    """switchIn: the Pokemon at `slot` and the active one trade places in Showdown's order."""

    def swap(array: jax.Array) -> jax.Array:
        row = array[side]
        active, incoming = row[0], row[slot]
        row = row.at[0].set(incoming).at[slot].set(active)
        return array.at[side].set(row)

    # (a fainted one was cleared when it fainted, and switchIn does not clear it again)
    state = _select(state.hp[side, 0] > 0, _clear_volatiles(state, side, tables), state)
    # a fainted Pokemon leaving the field loses its "fnt" status (switchIn)
    leaving_status = state.status[side, 0]
    state = state.replace(status=state.status.at[side, 0].set(jnp.where(leaving_status == FNT, 0, leaving_status)))
    fields = (
        "species",
        "level",
        "types",
        "hp",
        "stats",
        "modified",
        "speed",
        "moves",
        "pp",
        "status",
        "sleep_turns",
        "speed_bonus",
        "slept_by_foe",
    )
    state = state.replace(**{name: swap(getattr(state, name)) for name in fields})
    # queueing the incoming Pokemon's runSwitch (insertChoice) caches its current speed, and its
    # SwitchIn turns toxic into plain poison (the counter went with the volatiles)
    incoming_status = jnp.where(state.status[side, 0] == TOX, PSN, state.status[side, 0])
    return state.replace(
        speed=state.speed.at[side, 0].set(state.modified[side, 0, SPE]),
        status=state.status.at[side, 0].set(incoming_status),
    )


def _move_action(
    draws: prng.Draws, state: BattleState, side: jax.Array, run: jax.Array, foe_switched: jax.Array, tables: Tables
) -> tuple[BattleState, prng.Draws, jax.Array]:
    """Side `side` uses its move on the foe's active Pokemon, if `run`; returns the state, the
    draws and which sides' active Pokemon fainted (bool[2]: the target to the move, the user to
    recoil, Self-Destruct, burn or poison). `foe_switched`: the foe switched earlier this turn."""
    foe = 1 - side
    # "cannotmove" (Haze cured this side's sleeping or frozen Pokemon) skips everything but
    # AfterMoveSelf: `run` still drives that, `moving` the rest
    moving = run & ~state.cannot_move[side]
    # the move is the side's lastSelectedMove (set when the choice was committed), its PP comes
    # from the slot lastSelectedMoveSlot; "nomove" (0) is Showdown's stand-in, see NOMOVE_*
    selected, slot = state.last_move[side], state.last_slot[side]
    user_types, target_types = state.types[side, 0], state.types[foe, 0]
    user_status = state.status[side, 0]
    was_transformed = state.transformed_into[side] > 0
    # BeforeMove, by handler priority: frozen (12) or asleep (10), the Pokemon does nothing (a sleeper
    # counts a turn down, and wakes, still idle, when it reaches 0); flinched (8), nothing either;
    # confused (3), it counts a turn down (at 0 it snaps out and acts), then hurts itself with
    # 128/256; paralysed (2), it is fully paralysed with 63/256
    asleep = moving & (user_status == SLP)
    sleep_left = jnp.where(asleep, state.sleep_turns[side, 0] - 1, state.sleep_turns[side, 0])
    # partially trapped (9), it does nothing either
    # (sleep's and freeze's handlers also clear the Pokemon's lastMove)
    helpless_status = (user_status == SLP) | (user_status == FRZ)
    helpless = helpless_status | state.volatiles[side, PARTIALLY_TRAPPED]
    flinched = moving & ~helpless & state.volatiles[side, FLINCH]
    # mustrecharge (7): the turn after Hyper Beam is spent recharging
    recharges = moving & ~helpless & ~flinched & state.volatiles[side, MUST_RECHARGE]
    # Disable (6) counts a move attempt down; at 0 it ends and the move goes on, otherwise the
    # disabled move is stopped (a charging two-turn move with it)
    disable_checked = moving & ~helpless & ~flinched & ~recharges & state.volatiles[side, DISABLE]
    disable_left = jnp.where(disable_checked, state.disable_turns[side] - 1, state.disable_turns[side])
    still_disabled = state.volatiles[side, DISABLE] & ~(disable_checked & (disable_left == 0))
    disabled_out = disable_checked & still_disabled & (selected == state.moves[side, 0, state.disable_slot[side]])
    confused = moving & ~helpless & ~flinched & ~recharges & ~disabled_out & (state.confusion_turns[side] > 0)
    confusion_left = jnp.where(confused, state.confusion_turns[side] - 1, state.confusion_turns[side])
    still_confused = confused & (confusion_left > 0)
    draws, snaps_out = prng.take_chance(draws, CONFUSION_SNAP_OUT_CHANCE, 256, still_confused)
    hurts_itself = still_confused & ~snaps_out
    draws, fully_paralysed = prng.take_chance(
        draws,
        FULL_PARALYSIS_CHANCE,
        256,
        moving & ~helpless & ~flinched & ~recharges & ~disabled_out & ~hurts_itself & (user_status == PAR),
    )
    acts = moving & ~fully_paralysed & ~helpless & ~flinched & ~recharges & ~disabled_out & ~hurts_itself
    # partialtrappinglock (0): a trapper whose target has switched out loses its lock, and its move
    # runs afresh (with PP, accuracy, crit and roll); full paralysis and a confusion self-hit
    # above end the lock too
    had_trap_lock = state.volatiles[side, TRAPPING_LOCK]
    trap_lock_lost = acts & had_trap_lock & foe_switched
    holds_trap_lock = had_trap_lock & ~trap_lock_lost & ~fully_paralysed & ~hurts_itself
    # Bide (0) stops every move of its holder: each attempt adds battle.lastDamage to what it
    # stored and counts a turn down; at 0 Bide ends, failing if nothing is stored, otherwise
    # hitting the foe for twice the total (moveHit: no accuracy, crit or roll, through Dig/Fly, a
    # Ghost not immune). Full paralysis and a confusion self-hit above end it.
    bide_attempt = acts & state.volatiles[side, BIDE]
    bide_total = state.bide_damage[side] + state.last_damage
    bide_left = state.bide_turns[side] - 1
    bide_ends = bide_attempt & (bide_left == 0)
    bide_releases = bide_ends & (bide_total > 0)
    keeps_bide = state.volatiles[side, BIDE] & ~bide_ends & ~fully_paralysed & ~hurts_itself
    acts = acts & ~bide_attempt
    # Metronome and Mirror Move call another move (targets themselves, no accuracy draw). Metronome's
    # onHit samples one of the 163 moves with the metronome flag (one draw); Mirror Move's takes the
    # foe's active Pokemon's lastMove, unless there is none or it is Mirror Move (then it fails).
    # Either makes the move the side's lastSelectedMove and lastEnemySelectedMove and uses it at
    # once (useMove: no BeforeMove, no PP of its own; only the innermost move's AfterMove and
    # AfterMoveSelf run). A called move may call again (Metronome -> Mirror Move -> the foe's
    # Metronome -> ...): CALL_DEPTH calls are resolved, deeper chains flag the step as inexact.
    # From here on `move` is the move used, `caller` the last move that called (0: none).
    calls_another = acts & ((selected == METRONOME) | (selected == MIRROR_MOVE))
    mirrored = state.used_move[foe]
    mirror_works = (mirrored > 0) & (mirrored != MIRROR_MOVE)
    move, caller, calls = selected, jnp.int32(0), jnp.int32(0)
    calling = acts
    for _ in range(CALL_DEPTH):
        metronome_calls = calling & (move == METRONOME)
        draws, metronome_pick = prng.take_below(draws, tables.metronome_moves.shape[0], metronome_calls)
        mirror_calls = calling & (move == MIRROR_MOVE) & mirror_works
        calling = metronome_calls | mirror_calls
        caller = jnp.where(calling, move, caller)
        calls = calls + calling
        move = jnp.where(
            metronome_calls, tables.metronome_moves[metronome_pick], jnp.where(mirror_calls, mirrored, move)
        )
    unresolved_call = calling & ((move == METRONOME) | ((move == MIRROR_MOVE) & mirror_works))
    nomove = move == 0
    move_type = jnp.where(nomove, dmg.TYPELESS, tables.move_type[move])
    category = jnp.where(nomove, dmg.SPECIAL, tables.move_category[move])
    power = jnp.where(nomove, NOMOVE_POWER, tables.move_power[move])
    crit_ratio = jnp.where(nomove, 1, tables.move_crit_ratio[move])
    status_move = category == dmg.STATUS
    # useMove: the move becomes the side's lastEnemyMove (a charging turn included)
    last_used = jnp.where(acts, jnp.where(nomove, NOMOVE_USED, move), state.last_used[side])
    # a two-turn move's first turn (its onTryMove) only charges, spending no PP: Dig and Fly also
    # make the user invulnerable; the second turn, locked in, uses it. Full paralysis ends the
    # charge (but not the invulnerability: Showdown's Gen 1 quirk), hurting itself in confusion
    # ends both.
    effect = jnp.where(nomove, 0, tables.move_coded_effect[move])
    two_turn = (effect == CHARGE) | (effect == CHARGE_INVULNERABLE)
    charges = acts & two_turn & ~state.volatiles[side, TWO_TURN_MOVE]
    unleashes = acts & two_turn & state.volatiles[side, TWO_TURN_MOVE]
    # (a move the Pokemon is locked into costs no PP)
    raging = state.volatiles[side, RAGE]
    was_locked = state.volatiles[side, LOCKED_MOVE] | raging | holds_trap_lock
    spends_pp = acts & (selected != STRUGGLE) & ~was_locked
    # moveUsed: the Pokemon's lastMove (each calling move's, then the move called); not on a
    # charging turn; "nomove" is Fissure's object
    used_move = jnp.where(moving & helpless_status, 0, state.used_move[side])
    used_move = jnp.where(caller > 0, caller, used_move)
    used_move = jnp.where(acts & ~charges, jnp.where(nomove, FISSURE, move), used_move)
    acts = acts & ~charges
    # runImmunity comes before the accuracy check and draws nothing; status moves skip it unless
    # they say otherwise (Thunder Wave does not)
    immune = ~tables.move_ignores_immunity[move] & dmg.is_immune(tables.type_chart_x2, move_type, target_types)
    # Invulnerability (the foe is underground or in the air) comes first: a miss, with no draw,
    # except for Swift, Transform and moves on the user itself
    reaches = (effect == HITS_INVULNERABLE) | (effect == TRANSFORM_EFFECT)
    unreachable = state.volatiles[foe, INVULNERABLE] & ~tables.move_targets_self[move] & ~reaches
    immune = immune | unreachable
    # TryImmunity: Dream Eater only works on a sleeping target
    foe_sub = state.volatiles[foe, SUBSTITUTE]
    dream_fails = (effect == NEEDS_SLEEPING_TARGET) & ((state.status[foe, 0] != SLP) | foe_sub)
    # and Leech Seed not on a Grass type
    dream_fails = dream_fails | ((effect == FAILS_ON_GRASS) & jnp.any(target_types == GRASS_TYPE))
    # a one-hit KO move fails against a faster target (modified speeds), before its accuracy check
    ohko = ~nomove & tables.move_ohko[move]
    ohko_fails = ohko & (state.modified[foe, 0, SPE] > state.modified[side, 0, SPE])
    accuracy = jnp.where(nomove, 0, tables.move_accuracy[move])
    # a sleep move never misses a target that must recharge (tryMoveHit)
    sleep_on_recharging = (tables.move_status[move] == SLP) & state.volatiles[foe, MUST_RECHARGE]
    accuracy = jnp.where(sleep_on_recharging, ALWAYS_HITS, accuracy)
    base_threshold = jnp.where(nomove, NOMOVE_ACCURACY_THRESHOLD, accuracy * 255 // 100)
    # Thrash and Petal Dance (tryMoveHit, before anything can miss): the first use starts the lock
    # (random(2, 4) more uses, accuracy 255), each later one counts down and at 0 confuses the user
    # afresh (random(2, 6)); the lock ends after that move. A locked move's accuracy is the stored
    # one, boosted by the stages again and stored back: Gen 1's compounding accuracy.
    self_volatile = jnp.where(nomove, 0, tables.move_self_volatile[move])
    thrashes = acts & (self_volatile == LOCKED_MOVE + 1)
    starts_lock = thrashes & ~state.volatiles[side, LOCKED_MOVE]
    draws, lock_length = prng.take_range(draws, 2, 4, starts_lock)
    locked_left = jnp.where(
        thrashes & state.volatiles[side, LOCKED_MOVE],
        state.locked_turns[side] - 1,
        jnp.where(starts_lock, lock_length, state.locked_turns[side]),
    )
    lock_confuses = thrashes & state.volatiles[side, LOCKED_MOVE] & (locked_left == 0)
    draws, lock_confusion_length = prng.take_range(draws, 2, 6, lock_confuses)
    stored_accuracy = jnp.where(starts_lock, LOCK_ACCURACY, state.locked_accuracy[side])
    # (Rage keeps one the same way, from the turn after it started)
    base_threshold = jnp.where(thrashes | raging, stored_accuracy, base_threshold)
    threshold = stages.accuracy_threshold(
        base_threshold, state.boosts[side, stages.ACCURACY], state.boosts[foe, stages.EVASION]
    )
    checks_accuracy = acts & ~immune & ~dream_fails & ~ohko_fails
    stored_accuracy = jnp.where((thrashes | raging) & checks_accuracy, threshold, stored_accuracy)
    # the Accuracy event: a foe partially trapped by this Pokemon is hit by any of its moves, with no
    # draw (whenever this side moves, the foe's partiallytrapped comes from its active Pokemon)
    sure_hit = state.volatiles[foe, PARTIALLY_TRAPPED]
    draws, hit = dmg.roll_accuracy(draws, accuracy, checks_accuracy & ~sure_hit, threshold)
    missed = checks_accuracy & ~sure_hit & (accuracy != ALWAYS_HITS) & ~hit
    hit = hit | (checks_accuracy & sure_hit)
    # (a miss ends a trapping lock: Showdown's tryMoveHit)
    holds_trap_lock = holds_trap_lock & ~missed
    # (Bide's first use hits no one: it only starts Bide; its release hits)
    bide_move = effect == BIDE_EFFECT
    hit = hit | bide_releases
    damaging_hit = (hit & ~status_move & ~bide_move) | bide_releases
    # A substitute's TryHit (after the accuracy check): a status move that poisons, lowers the
    # target's stages or confuses fails against it; a damaging move hits the substitute instead
    targets_foe = ~tables.move_targets_self[move]
    sub_blocks = (
        status_move
        & targets_foe
        & foe_sub
        & (
            (tables.move_status[move] == PSN)
            | (tables.move_status[move] == TOX)
            | jnp.any(tables.move_boosts[move] != 0)
            | (tables.move_volatile[move] == CONFUSION + 1)
        )
    )
    hit = hit & ~sub_blocks
    # a 2-5 hit move draws its number of hits right after the accuracy check
    hits = jnp.where(nomove, 1, tables.move_hits[move])
    sampled = hits == SAMPLED_HITS
    draws, sample = prng.take_below(draws, SAMPLED_HIT_COUNTS.shape[0], damaging_hit & sampled)
    hits = jnp.where(sampled, jnp.asarray(SAMPLED_HIT_COUNTS)[sample], hits)

    # getDamage returns fixed damage (OHKO, damage: N or level, damage callbacks) before the crit roll
    fixed = jnp.where(nomove, 0, tables.move_fixed_damage[move])
    # Counter: twice battle.lastDamage, if the foe's side last used a Normal or Fighting move with
    # power and the foe's last selection (as this side saw it) was not Counter; otherwise it fails
    counter = effect == COUNTER_EFFECT
    foe_used = state.last_used[foe]
    counterable = (foe_used > 0) & jnp.isin(tables.move_type[jnp.maximum(foe_used, 0)], jnp.array(COUNTERABLE_TYPES))
    counterable = counterable & (tables.move_power[jnp.maximum(foe_used, 0)] > 0)
    # (Metronome and Mirror Move reset battle.lastDamage before the move they call: a Counter they
    # call always fails)
    damage_seen = jnp.where(calls_another, 0, state.last_damage)
    counter_fails = counter & ~(counterable & (state.enemy_selected[foe] != COUNTER) & (damage_seen > 0))
    damaging_hit = damaging_hit & ~counter_fails
    # partial trapping: Bind and Wrap do 0 to a Ghost (they ignore immunity, so they still hit and
    # trap); a held lock repeats the damage it stored; neither draws a crit or a roll
    trapping = self_volatile == TRAPPING_LOCK + 1
    ghost_trapped = trapping & (move_type == NORMAL_TYPE) & jnp.any(target_types == GHOST_TYPE)
    repeats_trap_damage = ~ghost_trapped & holds_trap_lock
    formula = damaging_hit & ~ohko & (fixed == 0) & (effect != PSYWAVE) & (effect != SUPER_FANG) & ~counter
    formula = formula & ~ghost_trapped & ~repeats_trap_damage & ~bide_move
    crit_threshold = dmg.crit_chance(
        tables.base_stats[state.species[side, 0], SPE], crit_ratio, state.volatiles[side, FOCUS_ENERGY]
    )
    draws, crit = dmg.chance_if(draws, formula & (crit_threshold > 0), crit_threshold)
    special = category == dmg.SPECIAL
    attack_column = jnp.where(special, SPC, ATK)
    defense_column = jnp.where(special, SPC, DEF)
    # a crit reads the stored stats, ignoring stage changes (and screens)
    attack = jnp.where(crit, state.stats[side, 0, attack_column], state.modified[side, 0, attack_column])
    screened = jnp.where(special, state.volatiles[foe, LIGHT_SCREEN], state.volatiles[foe, REFLECT])
    screened_defense = jnp.where(screened, 2, 1) * state.modified[foe, 0, defense_column]
    defense = jnp.where(crit, state.stats[foe, 0, defense_column], screened_defense)
    selfdestruct = ~nomove & tables.move_selfdestruct[move]
    amount = dmg.base_damage(
        state.level[side, 0],
        power,
        attack,
        defense,
        crit,
        halve_defense=selfdestruct & ~special,
        wrap=state.standard_format,
    )
    amount = dmg.apply_stab_and_types(amount, tables.type_chart_x2, move_type, user_types, target_types)
    draws, amount = dmg.roll_damage(draws, amount, formula)
    # Psywave: random(1, floor(1.5 * level)); it fails outright when (level * 1.5) % 256 < 2
    user_level = state.level[side, 0]
    psywave = effect == PSYWAVE
    psywave_top = user_level + user_level // 2
    psywave_fails = psywave & (psywave_top % 256 < 2)
    draws, psywave_damage = prng.take_range(
        draws, 1, jnp.maximum(psywave_top, 2), damaging_hit & psywave & ~psywave_fails
    )
    amount = jnp.where(ohko, OHKO_DAMAGE, amount)
    amount = jnp.where(fixed > 0, fixed, jnp.where(fixed == LEVEL_DAMAGE, user_level, amount))
    amount = jnp.where(psywave, psywave_damage, amount)
    amount = jnp.where(effect == SUPER_FANG, jnp.maximum(state.hp[foe, 0] // 2, 1), amount)
    amount = jnp.where(counter, 2 * damage_seen, amount)
    amount = jnp.where(ghost_trapped, 0, jnp.where(repeats_trap_damage, state.trap_damage[side], amount))
    amount = jnp.where(bide_releases, 2 * bide_total, amount)
    damaging_hit = damaging_hit & ~psywave_fails
    # Against a substitute every hit takes the first hit's full damage off it until it breaks; the
    # Pokemon behind takes nothing, and only a substitute that survives lets recoil, drain, a
    # confusion secondary and Hyper Beam's recharge happen (no other secondary does)
    into_sub = damaging_hit & foe_sub
    sub_hp = state.substitute_hp[foe]
    sub_breaks = into_sub & (amount > 0) & (amount * hits >= sub_hp)
    sub_hp = jnp.where(into_sub, jnp.where(sub_breaks, 0, sub_hp - amount * hits), sub_hp)
    sub_stands = into_sub & ~sub_breaks
    hits_pokemon = damaging_hit & ~into_sub
    # every hit after the first deals the first hit's damage again (Showdown keeps it in move.damage)
    first_hit = jnp.minimum(amount, state.hp[foe, 0])
    dealt = jnp.where(hits_pokemon, jnp.minimum(first_hit * hits, state.hp[foe, 0]), 0)
    # recoil and drain count the damage dealt, or against a standing substitute the full damage
    drained = jnp.where(sub_stands, amount, dealt)
    target_hp = state.hp[foe, 0] - dealt
    # drain heals the user, recoil hurts it (each at least 1), from the damage dealt
    user_hp = state.hp[side, 0]
    # confusion's self-hit: a typeless 40-power physical hit on itself from its modified stats, with
    # no crit, roll or overflow handling
    user_stats = state.modified[side, 0]
    confusion_damage = ((2 * state.level[side, 0] // 5 + 2) * user_stats[ATK] * 40 // user_stats[DEF]) // 50 + 2
    # (a Pokemon behind a substitute takes none of it: the foe's substitute does, if it has one)
    own_sub = state.volatiles[side, SUBSTITUTE]
    user_hp = jnp.where(hurts_itself & ~own_sub, jnp.maximum(user_hp - confusion_damage, 0), user_hp)
    self_hit_on_foe_sub = (hurts_itself & own_sub & foe_sub).astype(jnp.int32) * confusion_damage
    max_hp = state.stats[side, 0, HP]
    drain_share, drain_whole = tables.move_drain[move, 0], tables.move_drain[move, 1]
    drains = ((dealt > 0) | sub_stands) & (drain_share > 0)
    heal = jnp.where(drains, jnp.maximum(drained * drain_share // drain_whole, 1), 0)
    user_hp = jnp.minimum(user_hp + heal, jnp.maximum(max_hp, user_hp))
    recoil_share, recoil_whole = tables.move_recoil[move, 0], tables.move_recoil[move, 1]
    # (floored: the gen4 mod's applyRecoilDamage, which gens 1-3 inherit)
    recoil = jnp.where((drained > 0) & (recoil_share > 0), jnp.maximum(drained * recoil_share // recoil_whole, 1), 0)
    user_hp = jnp.maximum(user_hp - recoil, 0)
    # Self-Destruct and Explosion fell the user once the move is used, hit or miss, unless they
    # broke a substitute
    user_hp = jnp.where(acts & selfdestruct & ~sub_breaks, 0, user_hp)
    # the jump kicks' onMoveFail (a miss, or an immune target): 1 HP of crash damage (with the same
    # substitute rule as confusion)
    crashes = acts & ~hit & (effect == CRASH)
    user_hp = jnp.where(crashes & ~own_sub, jnp.maximum(user_hp - 1, 0), user_hp)
    self_hit_on_foe_sub = self_hit_on_foe_sub + (crashes & own_sub & foe_sub)
    sub_hp = jnp.maximum(sub_hp - self_hit_on_foe_sub, 0)
    sub_breaks = sub_breaks | (foe_sub & (self_hit_on_foe_sub > 0) & (sub_hp == 0))
    # battle.lastDamage: 0 when the move starts (unless it is one of KEEP_LAST_DAMAGE) and on a miss;
    # then the last hit's damage to the Pokemon (capped by its HP), or the full damage to a
    # substitute; a drain's heal; the damage of a confusion self-hit or a crash (uncapped)
    # (Metronome and Mirror Move reset it themselves before the move they call)
    last_damage = jnp.where(
        (acts & ~tables.move_keeps_last_damage[move]) | calls_another | missed, 0, state.last_damage
    )
    hits_done = jnp.minimum(hits, (state.hp[foe, 0] + amount - 1) // jnp.maximum(amount, 1))
    last_hit = jnp.minimum(amount, state.hp[foe, 0] - amount * (hits_done - 1))
    last_damage = jnp.where(hits_pokemon, last_hit, jnp.where(into_sub, amount, last_damage))
    last_damage = jnp.where(drains, heal, last_damage)
    last_damage = jnp.where(hurts_itself, confusion_damage, jnp.where(crashes, 1, last_damage))
    # partialtrappinglock, the move's `self` effect, follows any hit (a substitute's too) of a
    # trapper that holds no lock: its durationCallback draws the length even when the target
    # fell, and then its onStart fails. It stores battle.lastDamage for the later turns.
    draws_trap_lock = damaging_hit & trapping & ~holds_trap_lock
    draws, trap_pick = prng.take_below(draws, SAMPLED_HIT_COUNTS.shape[0], draws_trap_lock)
    # Bide's first use adds the bide volatile, whose onStart draws its length, random(2, 4)
    starts_bide = acts & hit & bide_move
    draws, bide_length = prng.take_range(draws, 2, 4, starts_bide)
    # Mimic's onHit: the user's slot lastSelectedMoveSlot becomes one of the foe's moves (a
    # `sample`), keeping the slot's PP, until the user leaves the field
    mimics = hit & (effect == MIMIC_EFFECT)
    foe_moves = state.moves[foe, 0]
    foe_has = foe_moves > 0
    draws, mimic_pick = prng.take_below(draws, jnp.maximum(jnp.sum(foe_has), 1), mimics)
    mimicked_move = foe_moves[jnp.argmax(foe_has & (jnp.cumsum(foe_has) - 1 == mimic_pick))]
    starts_trap = draws_trap_lock & (target_hp > 0)
    trap_turns = jnp.where(starts_trap, jnp.asarray(SAMPLED_HIT_COUNTS)[trap_pick], state.trap_turns[side])
    trap_total = jnp.where(starts_trap, trap_turns, state.trap_total[side])
    trap_damage = jnp.where(starts_trap, last_damage, state.trap_damage[side])
    # the target's partiallytrapped (duration 2, or restarted): the move's own volatileStatus when
    # it hit the Pokemon, the new lock's onStart when it hit a substitute
    traps_target = trapping & (target_hp > 0) & (hits_pokemon | starts_trap)
    # the lock's AfterMove: a fallen target ends it; on its last turn (duration 1) both Pokemon get
    # fakepartiallytrapped unless it lasted 5; otherwise the target's partiallytrapped restarts and,
    # from the lock's second turn, is marked maybeLocked
    after_move_lock = acts & (holds_trap_lock | starts_trap)
    keeps_trap_lock = (holds_trap_lock | starts_trap) & ~(after_move_lock & (target_hp <= 0))
    trap_runs_out = after_move_lock & (target_hp > 0) & (trap_turns == 1)
    afterglow = trap_runs_out & (trap_total != NO_AFTERGLOW_LOCK)
    restarts_trap = after_move_lock & (target_hp > 0) & (trap_turns != 1)
    foe_was_trapped = state.volatiles[foe, PARTIALLY_TRAPPED]
    foe_trapped_anew = (traps_target | restarts_trap) & ~foe_was_trapped
    foe_maybe_locked = (state.trapped_maybe_locked[foe] & ~foe_trapped_anew) | (
        restarts_trap & (trap_total - trap_turns > 0)
    )
    # Substitute: fails if the user has one or under a quarter of its max HP; it costs
    # floor(max / 4) (which can make the user faint) and has floor(max / 4) + 1 HP
    makes_sub = hit & (effect == MAKE_SUBSTITUTE) & ~own_sub & (4 * user_hp >= max_hp)
    user_sub_hp = jnp.where(makes_sub, max_hp // 4 + 1, state.substitute_hp[side])
    sub_cost = jnp.where(max_hp > 3, jnp.maximum(max_hp // 4, 1), 0)
    user_hp = jnp.where(makes_sub, jnp.maximum(user_hp - sub_cost, 0), user_hp)
    # Recover and Soft-Boiled heal half the max HP, Rest sleeps two turns and heals it all; all
    # fail at full HP and, Gen 1's bug, when max - hp is 255 or 511 (unless hp is a multiple of 256)
    user_status = state.status[side, 0]
    heal_blocked = (user_hp == max_hp) | (
        ((user_hp == max_hp - 255) | (user_hp == max_hp - 511)) & (user_hp % 256 != 0)
    )
    heals_half = hit & (effect == HEAL_HALF) & ~heal_blocked
    user_hp = jnp.where(heals_half, jnp.minimum(user_hp + max_hp // 2, max_hp), user_hp)
    rests = hit & (effect == REST) & ~heal_blocked & (user_status != SLP)
    # (setStatus runs sleep's onStart, which draws a length that Rest then overwrites; in the
    # standard format its SetStatus event first shuffles the clauses' two handlers, one draw)
    draws, _ = _tie_draw(draws, rests & state.standard_format)
    draws, _ = prng.take_range(draws, 1, 8, rests)
    user_hp = jnp.where(rests, max_hp, user_hp)
    user_status = jnp.where(rests, SLP, user_status)
    sleep_left = jnp.where(rests, REST_SLEEP_TURNS, sleep_left)

    # A damaging move's secondary status rolls ceil(chance * 256 / 100) out of 256 when the target
    # is still standing, except that par/brn/frz never roll against a target of the move's type.
    secondary_status = jnp.where(nomove, 0, tables.move_secondary_status[move])
    chance = jnp.where(nomove, 0, tables.move_secondary_chance[move])
    shares_type = (target_types[0] == move_type) | (target_types[1] == move_type)
    type_blocked = ((secondary_status == PAR) | (secondary_status == BRN) | (secondary_status == FRZ)) & shares_type
    secondary_volatile = jnp.where(nomove, 0, tables.move_secondary_volatile[move])
    rolls = jnp.where(
        into_sub, sub_stands & (secondary_volatile == CONFUSION + 1), damaging_hit & (target_hp > 0) & ~type_blocked
    ) & (chance > 0)
    # (a confusion secondary's chance is one less out of 256)
    secondary_threshold = (chance * 256 + 99) // 100 - (secondary_volatile == CONFUSION + 1)
    draws, secondary_lands = prng.take_chance(draws, secondary_threshold, 256, rolls)
    inflicted = jnp.where(hit & status_move, tables.move_status[move], jnp.where(secondary_lands, secondary_status, 0))
    # a status lands only on a healthy target (a status move on a statused one just fails), and
    # Poison types cannot be poisoned (runStatusImmunity)
    poison_immune = ((inflicted == PSN) | (inflicted == TOX)) & jnp.any(target_types == POISON_TYPE)
    # (except that sleep overrides any other status of a target that must recharge, and ends the
    # recharge)
    overrides = (inflicted == SLP) & sleep_on_recharging & (state.status[foe, 0] != SLP)
    # Sleep Clause Mod and Freeze Clause Mod, in the standard format (SetStatus, before sleep's
    # onStart draws its length)
    foe_team_sleeps = (state.hp[foe] > 0) & (state.status[foe] == SLP) & state.slept_by_foe[foe]
    clause_blocks = state.standard_format & (
        ((inflicted == SLP) & jnp.any(foe_team_sleeps)) | ((inflicted == FRZ) & jnp.any(state.status[foe] == FRZ))
    )
    lands = (inflicted > 0) & ((state.status[foe, 0] == 0) | overrides) & (target_hp > 0) & ~poison_immune
    # (there runEvent('SetStatus') holds the two clauses' handlers, of equal priority: speedSort
    # shuffles them, one draw, before either can block)
    draws, _ = _tie_draw(draws, lands & state.standard_format)
    lands = lands & ~clause_blocks
    target_status = jnp.where(lands, inflicted, state.status[foe, 0])
    # confusion (Confuse Ray, Supersonic, or a secondary) on a target not yet confused draws its
    # length, 2-5 turns, when it starts
    volatile = jnp.where(nomove, 0, tables.move_volatile[move])
    given = jnp.where(hit & status_move, volatile, jnp.where(secondary_lands, secondary_volatile, 0))
    confuses = targets_foe & (given == CONFUSION + 1) & (state.confusion_turns[foe] == 0) & (target_hp > 0)
    draws, confusion_length = prng.take_range(draws, 2, 6, confuses)
    flinches = targets_foe & (given == FLINCH + 1) & (target_hp > 0)
    seeds = targets_foe & (given == LEECH_SEED + 1) & (target_hp > 0)
    # Disable (on a foe not yet disabled, with a move that has PP) picks one of those moves with
    # sample(), then its length with random(1, 9)
    with_pp = (state.moves[foe, 0] > 0) & (state.pp[foe, 0] > 0)
    disables = targets_foe & (given == DISABLE + 1) & jnp.any(with_pp) & ~state.volatiles[foe, DISABLE]
    draws, pick = prng.take_below(draws, jnp.maximum(jnp.sum(with_pp), 1), disables)
    draws, disable_length = prng.take_range(draws, 1, 9, disables)
    disabled_slot = jnp.argmax(with_pp & (jnp.cumsum(with_pp) - 1 == pick))
    # toxic's onStart gives the target the residualdmg volatile (if it has none) with its counter at 0
    badly_poisons = lands & (inflicted == TOX)
    # sleep's onStart draws its length, 1-7 turns
    draws, sleep_length = prng.take_range(draws, 1, 8, lands & (inflicted == SLP))
    target_sleep = jnp.where(lands & (inflicted == SLP), sleep_length, state.sleep_turns[foe, 0])
    # AfterMoveSecondary: a frozen target hit by a move whose secondary is a burn thaws
    thaws = damaging_hit & (target_hp > 0) & (state.status[foe, 0] == FRZ) & (secondary_status == BRN)
    target_status = jnp.where(thaws, 0, target_status)
    # Gen 1 applies the paralysis speed drop and the burn attack drop to the modified stats
    # A raging foe gains +1 Attack from each hit of a damaging move (its Hit event, before the
    # secondaries; not through a substitute, not Self-Destruct's), and from Self-Destruct or Disable
    # aimed at it, hit or miss
    aimed_at_rage = acts & (selfdestruct | (tables.move_volatile[move] == DISABLE + 1))
    rage_boosts = jnp.where(hits_pokemon & ~selfdestruct, hits_done, 0) + aimed_at_rage
    rage_boosts = jnp.where(state.volatiles[foe, RAGE], rage_boosts, 0)
    rage_stage, rage_attack = _rage(
        state.boosts[foe, stages.ATTACK], state.modified[foe, 0, ATK], stored_stats(state)[foe, ATK], rage_boosts
    )
    modified = _status_drops(state.modified[foe, 0].at[ATK].set(rage_attack), jnp.where(lands, inflicted, 0))
    # AfterMoveSelf (after a move stopped before it started, or unless the move's target fell), by
    # handler priority: Toxic's counter (residualdmg, 100) counts up for a burned or poisoned
    # Pokemon; burn, poison and toxic (2) cost 1/16 of the max HP, times the counter if there is
    # one; Leech Seed (1) counts the counter up again and moves 1/16 (times the counter) to the foe,
    # healing it by that much whatever the seeded Pokemon had left.
    # (a stage change happens in the hit, before AfterMoveSelf: it counts who stands then)
    hp_after_hit = jnp.where(jnp.arange(NUM_SIDES) == side, user_hp, target_hp)
    # (a move stopped in BeforeMove always gets it: a Bide that felled its target too)
    after_move_self = run & ((target_hp > 0) | bide_attempt)
    poisoned = (user_status == BRN) | (user_status == PSN) | (user_status == TOX)
    # (Haze has taken the counter and the seed away by then: _haze below)
    hazes = hit & (effect == HAZE)
    # (Haze turns its user's toxic into poison with setStatus: in the standard format the SetStatus
    # event's shuffle draws once; Haze draws nothing after it)
    draws, _ = _tie_draw(draws, hazes & state.standard_format & (state.status[side, 0] == TOX))
    has_counter = state.volatiles[side, RESIDUAL_DAMAGE] & ~hazes
    counter = state.toxic_counter[side] + (after_move_self & has_counter & poisoned)
    sixteenth = jnp.maximum(state.stats[side, 0, HP] // 16, 1)
    hurts = after_move_self & (user_hp > 0) & poisoned
    residual = jnp.where(has_counter, sixteenth * counter, sixteenth)
    user_hp = jnp.where(hurts, jnp.maximum(user_hp - residual, 0), user_hp)
    leeches = after_move_self & state.volatiles[side, LEECH_SEED] & ~hazes & (target_hp > 0)
    counter = counter + (leeches & has_counter)
    to_leech = jnp.where(has_counter, sixteenth * counter, sixteenth)
    user_hp = jnp.where(leeches, jnp.maximum(user_hp - to_leech, 0), user_hp)
    foe_max_hp = state.stats[foe, 0, HP]
    target_hp = jnp.where(leeches & (target_hp < foe_max_hp), jnp.minimum(target_hp + to_leech, foe_max_hp), target_hp)
    # AfterMoveSelf also ends sleep whose count reached 0 (it runs when BeforeMove stopped the move)
    user_status = jnp.where(asleep & (sleep_left <= 0), 0, user_status)
    state = state.replace(
        last_damage=last_damage,
        last_used=state.last_used.at[side].set(last_used),
        hp=state.hp.at[foe, 0].set(target_hp).at[side, 0].set(user_hp),
        # (Gen 1's deductPP keeps 6 bits in the standard format: a move used at 0 PP, by a trapper
        # whose target left, has 63; the custom game's Math.trunc leaves it at -1)
        pp=state.pp.at[side, 0, slot].set(
            jnp.where(
                spends_pp & ~charges,
                _deduct_pp(state.pp[side, 0, slot], state.standard_format),
                state.pp[side, 0, slot],
            )
        ),
        status=state.status.at[foe, 0].set(target_status).at[side, 0].set(user_status),
        sleep_turns=state.sleep_turns.at[foe, 0].set(target_sleep).at[side, 0].set(sleep_left),
        slept_by_foe=state.slept_by_foe.at[foe, 0]
        .set(state.slept_by_foe[foe, 0] | (lands & (inflicted == SLP)))
        .at[side, 0]
        .set(state.slept_by_foe[side, 0] & ~rests),
        modified=state.modified.at[foe, 0].set(modified),
        boosts=state.boosts.at[foe, stages.ATTACK].set(rage_stage),
        moves=state.moves.at[side, 0, slot].set(jnp.where(mimics, mimicked_move, state.moves[side, 0, slot])),
        mimic_base=state.mimic_base.at[side, slot].set(
            jnp.where(
                mimics & (state.mimic_base[side, slot] == 0), state.moves[side, 0, slot], state.mimic_base[side, slot]
            )
        ),
        used_move=state.used_move.at[side].set(used_move),
        last_move=state.last_move.at[side].set(jnp.where(calls > 0, move, state.last_move[side])),
        enemy_selected=state.enemy_selected.at[side].set(jnp.where(calls > 0, move, state.enemy_selected[side])),
    )
    # Hyper Beam's recharge starts when it hits, and ends at once (AfterMove) if the target fell;
    # flinch and sleep take it away from a target
    must_recharge = (damaging_hit & ~sub_breaks & (self_volatile == MUST_RECHARGE + 1) & (target_hp > 0)) | (
        state.volatiles[side, MUST_RECHARGE] & ~recharges
    )
    # (as do the partial trapping moves' onTryMove, hit or miss)
    target_recharge = (
        state.volatiles[foe, MUST_RECHARGE] & ~flinches & ~(lands & (inflicted == SLP)) & ~(acts & trapping)
    )
    # Rage locks its user in once it hits (as Hyper Beam's recharge, not if it broke a substitute),
    # even if the target fell
    starts_rage = damaging_hit & ~sub_breaks & (self_volatile == RAGE + 1) & ~raging
    state = state.replace(
        volatiles=state.volatiles.at[foe, CONFUSION]
        .set(state.volatiles[foe, CONFUSION] | confuses)
        .at[foe, FLINCH]
        .set(state.volatiles[foe, FLINCH] | flinches)
        .at[foe, MUST_RECHARGE]
        .set(target_recharge)
        .at[side, MUST_RECHARGE]
        .set(must_recharge)
        .at[side, CONFUSION]
        .set(jnp.where(confused, confusion_left > 0, state.volatiles[side, CONFUSION]) | lock_confuses)
        .at[side, LOCKED_MOVE]
        .set((state.volatiles[side, LOCKED_MOVE] | starts_lock) & ~lock_confuses & ~fully_paralysed & ~hurts_itself)
        .at[side, RAGE]
        .set(raging | starts_rage)
        .at[foe, LEECH_SEED]
        .set(state.volatiles[foe, LEECH_SEED] | seeds)
        .at[foe, DISABLE]
        .set(state.volatiles[foe, DISABLE] | disables)
        .at[side, DISABLE]
        .set(still_disabled)
        .at[foe, RESIDUAL_DAMAGE]
        .set(state.volatiles[foe, RESIDUAL_DAMAGE] | badly_poisons)
        .at[foe, SUBSTITUTE]
        .set(foe_sub & ~sub_breaks)
        .at[side, SUBSTITUTE]
        .set(own_sub | makes_sub)
        .at[side, TRAPPING_LOCK]
        .set(keeps_trap_lock)
        .at[foe, PARTIALLY_TRAPPED]
        .set(foe_was_trapped | traps_target | restarts_trap)
        .at[side, PARTIALLY_TRAPPED]
        .set(state.volatiles[side, PARTIALLY_TRAPPED] & ~makes_sub)  # a new substitute frees it
        .at[side, FAKE_TRAPPED]
        .set(state.volatiles[side, FAKE_TRAPPED] | afterglow)
        .at[side, BIDE]
        .set(keeps_bide | starts_bide)
        .at[foe, FAKE_TRAPPED]
        .set(state.volatiles[foe, FAKE_TRAPPED] | afterglow)
        .at[side, TWO_TURN_MOVE]
        .set(
            (state.volatiles[side, TWO_TURN_MOVE] | charges)
            & ~unleashes
            & ~fully_paralysed
            & ~hurts_itself
            & ~disabled_out
        )
        .at[side, INVULNERABLE]
        .set(
            (state.volatiles[side, INVULNERABLE] | (charges & (effect == CHARGE_INVULNERABLE)))
            & ~unleashes
            & ~hurts_itself
        ),
        disable_slot=state.disable_slot.at[foe].set(jnp.where(disables, disabled_slot, state.disable_slot[foe])),
        disable_turns=state.disable_turns.at[foe]
        .set(jnp.where(disables, disable_length, state.disable_turns[foe]))
        .at[side]
        .set(jnp.where(still_disabled, disable_left, 0)),
        confusion_turns=state.confusion_turns.at[foe]
        .set(jnp.where(confuses, confusion_length, state.confusion_turns[foe]))
        .at[side]
        .set(jnp.where(lock_confuses, lock_confusion_length, confusion_left)),
        locked_turns=state.locked_turns.at[side].set(locked_left),
        locked_accuracy=state.locked_accuracy.at[side].set(jnp.where(starts_rage, LOCK_ACCURACY, stored_accuracy)),
        trap_turns=state.trap_turns.at[side].set(trap_turns),
        trap_total=state.trap_total.at[side].set(trap_total),
        trap_damage=state.trap_damage.at[side].set(trap_damage),
        trapped_turns=state.trapped_turns.at[foe].set(
            jnp.where(traps_target | restarts_trap, TRAPPED_DURATION, state.trapped_turns[foe])
        ),
        trapped_maybe_locked=state.trapped_maybe_locked.at[foe].set(foe_maybe_locked),
        bide_turns=state.bide_turns.at[side].set(
            jnp.where(starts_bide, bide_length, jnp.where(bide_attempt, bide_left, state.bide_turns[side]))
        ),
        bide_damage=state.bide_damage.at[side].set(
            jnp.where(starts_bide, 0, jnp.where(bide_attempt, bide_total, state.bide_damage[side]))
        ),
        # (fakepartiallytrapped has no onRestart: one already there keeps its duration)
        fake_trapped_turns=state.fake_trapped_turns.at[side]
        .set(
            jnp.where(
                afterglow & ~state.volatiles[side, FAKE_TRAPPED], TRAPPED_DURATION, state.fake_trapped_turns[side]
            )
        )
        .at[foe]
        .set(
            jnp.where(afterglow & ~state.volatiles[foe, FAKE_TRAPPED], TRAPPED_DURATION, state.fake_trapped_turns[foe])
        ),
        substitute_hp=state.substitute_hp.at[foe].set(jnp.where(sub_breaks, 0, sub_hp)).at[side].set(user_sub_hp),
        toxic_counter=state.toxic_counter.at[foe]
        .set(jnp.where(badly_poisons, 0, state.toxic_counter[foe]))
        .at[side]
        .set(counter),
    )
    state, boosted = _stage_changes(state, side, move, hit & status_move, secondary_lands, hp_after_hit, tables)
    # the user's own volatile (Reflect, Light Screen, Focus Energy, Mist; Minimize and Defense Curl
    # only when their boost worked); one it already has stays as it is
    has_boosts = jnp.any(tables.move_boosts[move] != 0)
    gains = hit & status_move & ~targets_foe & (volatile > 0) & (boosted | ~has_boosts) & (effect != MAKE_SUBSTITUTE)
    gained = state.volatiles[side].at[jnp.maximum(volatile - 1, 0)].set(True)
    state = state.replace(volatiles=state.volatiles.at[side].set(jnp.where(gains, gained, state.volatiles[side])))
    # Conversion: the user takes the target's current types
    converts = hit & (effect == CONVERSION)
    state = state.replace(types=state.types.at[side, 0].set(jnp.where(converts, target_types, user_types)))
    state = _select(hazes, _haze(state, side), state)
    state = _select(hit & (effect == TRANSFORM_EFFECT), _transform(state, side, tables), state)
    # useMove for a move Metronome or Mirror Move calls: a transformed user gets one PP back (mod
    # 64) in its own move of the selected slot, if it has one there (Showdown's gen1 useMove)
    refunds = calls * (was_transformed & (state.base_moves[side, slot] > 0))
    state = state.replace(base_pp=state.base_pp.at[side, slot].set((state.base_pp[side, slot] + refunds) & PP_BITS))
    user_fainted = run & (state.hp[side, 0] == 0)
    target_fainted = damaging_hit & (target_hp == 0)
    state = state.replace(prng_overflow=state.prng_overflow | unresolved_call)
    return state, draws, jnp.where(jnp.arange(NUM_SIDES) == side, user_fainted, target_fainted)


def _deduct_pp(pp: jax.Array, standard_format: jax.Array) -> jax.Array:
    return jnp.where(standard_format, (pp - 1) & PP_BITS, pp - 1)


def _transform(state: BattleState, side: jax.Array, tables: Tables) -> BattleState:
    """transformInto the foe's active Pokemon: its species, types, storedStats, modified stats,
    stages and moves (min(5, base PP) each) become the user's; its own moves and their PP (after
    Transform's own PP) wait in base_moves/base_pp, its HP, status and volatiles stay. setSpecies
    on the target's species caches a speed from the target's base speed and the user's own DV,
    stat experience and level (then transformInto overwrites the stats, not that speed)."""
    foe = 1 - side
    target_species = current_species(state)[foe, 0]
    speed = (2 * tables.base_stats[target_species, SPE] + state.speed_bonus[side, 0]) * state.level[side, 0] // 100 + 5
    copied = state.moves[foe, 0]
    transformed = state.transformed_into[side] > 0
    return state.replace(
        transformed_into=state.transformed_into.at[side].set(target_species),
        transform_stats=state.transform_stats.at[side].set(
            stored_stats(state)[foe].at[HP].set(state.stats[side, 0, HP])
        ),
        base_moves=state.base_moves.at[side].set(base_moves(state, side)),
        base_pp=state.base_pp.at[side].set(jnp.where(transformed, state.base_pp[side], state.pp[side, 0])),
        mimic_base=state.mimic_base.at[side].set(0),
        moves=state.moves.at[side, 0].set(copied),
        pp=state.pp.at[side, 0].set(jnp.where(copied > 0, jnp.minimum(TRANSFORMED_PP, tables.move_pp[copied]), 0)),
        types=state.types.at[side, 0].set(state.types[foe, 0]),
        modified=state.modified.at[side, 0, ATK:].set(state.modified[foe, 0, ATK:]),
        boosts=state.boosts.at[side].set(state.boosts[foe]),
        speed=state.speed.at[side, 0].set(speed),
    )


def _rage(stage: jax.Array, attack: jax.Array, stored: jax.Array, boosts: jax.Array) -> tuple[jax.Array, jax.Array]:
    """(Attack stage, modified Attack) after `boosts` of Rage's onHit: +1 each, recomputed from the
    stored stat (so a burn's halving goes; at 999 the Gen 1 quirk), none past +6. No par/brn
    re-application: that follows only a move's own stage changes."""
    for index in range(MAX_RAGE_BOOSTS):
        stage, attack, _ = stages.boost_stat(stage, attack, stored, jnp.where(index < boosts, 1, 0), jnp.bool_(True))
    return stage, attack


def _haze(state: BattleState, side: jax.Array) -> BattleState:
    """Haze's onHit (the user's AfterMoveSelf already ran without the volatiles it removes): both
    active Pokemon lose their stages (modified stats back to stored: a paralysed or burned
    Pokemon's drop goes too) and HAZE_REMOVES; the foe is cured of any status, the user's toxic
    becomes poison; both cache their speed. A foe that was asleep or frozen has its side's last
    selected move become "cannotmove" (and its action this turn, if still to come)."""
    foe = 1 - side
    modified = state.modified.at[:, 0, ATK:].set(stored_stats(state)[:, ATK:])
    foe_helpless = (state.status[foe, 0] == SLP) | (state.status[foe, 0] == FRZ)
    status = state.status.at[foe, 0].set(0)
    status = status.at[side, 0].set(jnp.where(status[side, 0] == TOX, PSN, status[side, 0]))
    return state.replace(
        boosts=jnp.zeros_like(state.boosts),
        modified=modified,
        speed=state.speed.at[:, 0].set(modified[:, 0, SPE]),
        status=status,
        sleep_turns=state.sleep_turns.at[foe, 0].set(0),
        volatiles=state.volatiles & ~HAZE_REMOVES,
        confusion_turns=jnp.zeros_like(state.confusion_turns),
        disable_slot=jnp.zeros_like(state.disable_slot),
        disable_turns=jnp.zeros_like(state.disable_turns),
        toxic_counter=jnp.zeros_like(state.toxic_counter),
        cannot_move=state.cannot_move.at[foe].set(state.cannot_move[foe] | foe_helpless),
        enemy_selected=state.enemy_selected.at[foe].set(
            jnp.where(foe_helpless, CANNOT_MOVE, state.enemy_selected[foe])
        ),
    )


def _stage_changes(
    state: BattleState,
    side: jax.Array,
    move: jax.Array,
    primary: jax.Array,
    secondary: jax.Array,
    hp_after_hit: jax.Array,
    tables: Tables,
) -> tuple[BattleState, jax.Array]:
    """A status move's stage changes (on the user or the foe) when it hit, or a damaging move's
    secondary ones on the foe when they rolled; then, if any stage changed, the Gen 1 re-application
    of paralysis and burn to the user's foe (boosts.py). Returns the state and whether any changed."""
    foe = 1 - side
    target = jnp.where(tables.move_targets_self[move], side, foe)
    deltas = jnp.where(primary, tables.move_boosts[move], jnp.where(secondary, tables.move_secondary_boosts[move], 0))
    # Mist's onTryBoost: a foe's status move lowers nothing (damaging moves' secondaries still do)
    misted = primary & (target == foe) & state.volatiles[foe, MIST]
    deltas = jnp.where(misted, jnp.maximum(deltas, 0), deltas)
    new_stages, new_modified, changed = stages.apply_boosts(
        state.boosts[target], state.modified[target, 0, ATK:], stored_stats(state)[target, ATK:], deltas
    )
    # (a stat stuck at 999 or 1 still moves its stage, though the boost fails)
    # (a user that burn, poison or Leech Seed then fells still boosted itself)
    standing = hp_after_hit[target] > 0
    state = state.replace(
        boosts=state.boosts.at[target].set(jnp.where(standing, new_stages, state.boosts[target])),
        modified=state.modified.at[target, 0, ATK:].set(
            jnp.where(standing, new_modified, state.modified[target, 0, ATK:])
        ),
    )
    changed = changed & standing
    foe_modified = _status_drops(state.modified[foe, 0], jnp.where(changed, state.status[foe, 0], 0))
    return state.replace(modified=state.modified.at[foe, 0].set(foe_modified)), changed


def _update_speeds(state: BattleState) -> BattleState:
    """Battle.updateSpeed: every active Pokemon still standing caches its current (modified) speed."""
    standing = state.hp[:, 0] > 0
    return state.replace(
        speed=state.speed.at[:, 0].set(jnp.where(standing, state.modified[:, 0, SPE], state.speed[:, 0]))
    )


def _faint(state: BattleState, fainted: jax.Array, tables: Tables) -> BattleState:
    """faintMessages and checkWin for the sides whose active Pokemon fainted (bool[2]): a side with
    no one left loses (both: a tie); otherwise each fainted side is asked for a switch, the other
    waits."""
    for side in range(NUM_SIDES):
        state = _select(fainted[side], _clear_volatiles(state, side, tables), state)
    lost = fainted & ~jnp.any(state.hp > 0, axis=1)
    ended = jnp.any(lost)
    winner = jnp.where(lost[0] & lost[1], NO_WINNER, jnp.where(lost[0], P2_WINS, P1_WINS))
    request = jnp.where(fainted, REQUEST_SWITCH, REQUEST_WAIT).astype(jnp.int32)
    # checkFainted marks the fainted Pokemon "fnt" when it asks for replacements (not at the end)
    status = state.status.at[:, 0].set(jnp.where(fainted & ~ended, FNT, state.status[:, 0]))
    return state.replace(
        status=status,
        request=jnp.where(ended, REQUEST_NONE, request).astype(jnp.int32),
        ended=ended,
        winner=jnp.where(ended, winner, NO_WINNER).astype(jnp.int32),
    )


def _metronome_trap_rule(state: BattleState, side: jax.Array) -> BattleState:
    """Gen 1's runSwitch for the Pokemon that came in on `side`: a foe holding a partial trapping
    lock whose selected slot holds Metronome gets "metronome" back as its side's lastSelectedMove
    and lastEnemySelectedMove (and so as its action this turn, if still to come: the lock is lost
    with its target, and Metronome runs afresh)."""
    foe = 1 - side
    applies = state.volatiles[foe, TRAPPING_LOCK] & (state.moves[foe, 0, state.last_slot[foe]] == METRONOME)
    return state.replace(
        last_move=state.last_move.at[foe].set(jnp.where(applies, METRONOME, state.last_move[foe])),
        enemy_selected=state.enemy_selected.at[foe].set(jnp.where(applies, METRONOME, state.enemy_selected[foe])),
        cannot_move=state.cannot_move.at[foe].set(state.cannot_move[foe] & ~applies),
    )


def _run_action(
    draws: prng.Draws,
    state: BattleState,
    side: jax.Array,
    action: jax.Array,
    run: jax.Array,
    tables: Tables,
    replacement: bool = False,
    foe_switched: jax.Array | bool = False,
) -> tuple[BattleState, prng.Draws, jax.Array]:
    """One queued action, if `run`; returns the state, the draws and whether the turn goes on.
    `replacement`: a switch that replaces a Pokemon fainted this turn; `foe_switched`: the foe's
    action this turn was a switch (which comes first)."""
    is_switch = action >= NUM_MOVE_SLOTS
    switched = _swap_in(state, side, jnp.clip(action - NUM_MOVE_SLOTS + 1, 1, TEAM_SIZE - 1), tables)
    # Gen 1 runSwitch: the side's lastSelectedMoveSlot goes back to the first slot, and both active
    # Pokemon's lastMove is cleared
    switched = switched.replace(last_slot=switched.last_slot.at[side].set(0), used_move=jnp.zeros_like(state.used_move))
    switched = _metronome_trap_rule(switched, side)
    switch_draws = _each_event(draws, switched)  # Update after the switch action
    # runSwitch: unless its side had a faint this turn, a burned or poisoned Pokemon coming in
    # loses 1/16 of its max HP (Showdown's Gen 1-2 AfterSwitchInSelf)
    hurt = (not replacement) & ((switched.status[side, 0] == BRN) | (switched.status[side, 0] == PSN))
    loss = jnp.where(hurt, jnp.maximum(switched.stats[side, 0, HP] // 16, 1), 0)
    incoming_hp = jnp.maximum(switched.hp[side, 0] - loss, 0)
    switched = switched.replace(hp=switched.hp.at[side, 0].set(incoming_hp))
    switch_fainted = incoming_hp == 0
    switched = _select(switch_fainted, _faint(switched, jnp.arange(NUM_SIDES) == side, tables), switched)
    switch_draws = _select(switch_fainted, switch_draws, _each_event(switch_draws, switched))  # Update after runSwitch
    if replacement:  # a replacement is always a switch: no move code to compile
        state, draws = _select(run, (switched, switch_draws), (state, draws))
        return state, draws, run & ~switch_fainted
    moved, move_draws, fainted = _move_action(draws, state, side, run & ~is_switch, jnp.asarray(foe_switched), tables)
    # a faint asks for the replacements before the Update
    move_fainted = jnp.any(fainted)
    moved = _select(move_fainted, _faint(moved, fainted, tables), moved)
    move_draws = _select(move_fainted, move_draws, _each_event(move_draws, moved))
    after = _select(is_switch, (switched, switch_draws), (moved, move_draws))
    state, draws = _select(run, after, (state, draws))
    return state, draws, run & ~jnp.where(is_switch, switch_fainted, move_fainted)


def _residual(state: BattleState) -> tuple[BattleState, jax.Array]:
    """The Residual event (fieldEvent), in a turn that reaches it. Its handlers are the active
    Pokemon's volatiles that have a duration (flinch, partiallytrapped, partialtrappinglock,
    fakepartiallytrapped), sorted by their holder's cached speed; speedSort shuffles each group
    of equals (one draw for every member after the first), though no order changes anything
    here. Then each duration counts down, and a volatile whose duration reaches 0 ends. Returns
    the state and the number of those draws (the step makes them at its end: prng.skip)."""
    vol = state.volatiles
    timed = vol[:, FLINCH].astype(jnp.int32) + vol[:, PARTIALLY_TRAPPED] + vol[:, TRAPPING_LOCK] + vol[:, FAKE_TRAPPED]
    tie = state.speed[0, 0] == state.speed[1, 0]
    shuffles = jnp.where(
        tie, jnp.maximum(timed[0] + timed[1] - 1, 0), jnp.maximum(timed[0] - 1, 0) + jnp.maximum(timed[1] - 1, 0)
    )
    trap_turns = jnp.where(vol[:, TRAPPING_LOCK], state.trap_turns - 1, state.trap_turns)
    trapped_turns = jnp.where(vol[:, PARTIALLY_TRAPPED], state.trapped_turns - 1, state.trapped_turns)
    fake_turns = jnp.where(vol[:, FAKE_TRAPPED], state.fake_trapped_turns - 1, state.fake_trapped_turns)
    vol = (
        vol.at[:, FLINCH]
        .set(False)
        .at[:, TRAPPING_LOCK]
        .set(vol[:, TRAPPING_LOCK] & (trap_turns > 0))
        .at[:, PARTIALLY_TRAPPED]
        .set(vol[:, PARTIALLY_TRAPPED] & (trapped_turns > 0))
        .at[:, FAKE_TRAPPED]
        .set(vol[:, FAKE_TRAPPED] & (fake_turns > 0))
    )
    state = state.replace(
        volatiles=vol, trap_turns=trap_turns, trapped_turns=trapped_turns, fake_trapped_turns=fake_turns
    )
    return state, shuffles


def _end_turn(draws: prng.Draws, state: BattleState, run: jax.Array) -> tuple[BattleState, prng.Draws]:
    """endTurn: the next turn, both sides asked to move; or a tie by the Endless Battle Clause.

    Gen 1's partial trapping cleanup comes first, p1's Pokemon then p2's: a lock whose target fell
    or is no longer partially trapped ends, a partiallytrapped whose source fell or holds no lock
    ends, and a fakepartiallytrapped whose counterpart has none ends. Then each side's DisableMove
    event: its handlers of equal priority on one Pokemon are shuffled when it holds two of a
    trapping lock, Disable and Bide, or both partiallytrapped and fakepartiallytrapped."""
    vol = state.volatiles
    for side in range(NUM_SIDES):
        foe = 1 - side
        foe_fell = state.hp[foe, 0] <= 0
        vol = vol.at[side, TRAPPING_LOCK].set(vol[side, TRAPPING_LOCK] & ~foe_fell & vol[foe, PARTIALLY_TRAPPED])
        vol = vol.at[side, PARTIALLY_TRAPPED].set(vol[side, PARTIALLY_TRAPPED] & ~foe_fell & vol[foe, TRAPPING_LOCK])
        vol = vol.at[side, FAKE_TRAPPED].set(vol[side, FAKE_TRAPPED] & ~foe_fell & vol[foe, FAKE_TRAPPED])
    ended_turn = state.replace(
        volatiles=vol, turn=state.turn + 1, request=jnp.full(NUM_SIDES, REQUEST_MOVE, dtype=jnp.int32)
    )
    # (one draw per member after the first of each tie group)
    shuffles = jnp.maximum(jnp.sum(vol[:, DISABLE_MOVE_TIES], axis=1) - 1, 0)
    shuffles = shuffles + (vol[:, PARTIALLY_TRAPPED] & vol[:, FAKE_TRAPPED])
    ended_draws = prng.skip(draws, jnp.sum(shuffles))
    tie = _no_progress_possible(ended_turn) | (ended_turn.turn > TURN_LIMIT)
    tied = ended_turn.replace(
        request=jnp.full(NUM_SIDES, REQUEST_NONE, dtype=jnp.int32), ended=jnp.bool_(True), winner=jnp.int32(NO_WINNER)
    )
    return _select(run, (_select(tie, tied, ended_turn), ended_draws), (state, draws))


def _no_progress_possible(state: BattleState) -> jax.Array:
    """Showdown's Gen 1 Endless Battle Clause: on both sides every Pokemon has fainted, is frozen
    (nothing thaws it but the foe's fire), has no PP left while every foe is a Ghost (Struggle
    cannot touch it), or knows only Transform while every foe does too (a transformed Pokemon
    knows the moves it copied)."""
    fainted = state.hp <= 0
    ghost = jnp.any(state.types == GHOST_TYPE, axis=2)
    all_ghosts = jnp.all(fainted | ghost, axis=1)  # [side]
    no_pp = jnp.all((state.moves == 0) | (state.pp == 0), axis=2)
    only_transform = jnp.all((state.moves == 0) | (state.moves == TRANSFORM), axis=2)
    all_transform = jnp.all(fainted | only_transform, axis=1)  # [side]
    stuck = fainted | (state.status == FRZ) | (no_pp & all_ghosts[::-1, None])
    stuck = stuck | (only_transform & all_transform[::-1, None])
    return jnp.all(stuck)


def _commit_moves(state: BattleState, actions: jax.Array) -> BattleState:
    """Gen 1's side.commitChoices: a chosen move becomes lastSelectedMove (and its slot
    lastSelectedMoveSlot); "Fight" from a sleeping or frozen Pokemon changes neither, so it runs
    whatever its side last selected; "Fight" from a partially trapped one makes it "cannotmove"."""
    chose_move = (actions < NUM_MOVE_SLOTS) & (state.request == REQUEST_MOVE)
    helpless = (state.status[:, 0] == SLP) | (state.status[:, 0] == FRZ)
    # "Recharge", a charged two-turn move, a trapper's move and Bide are locked moves, which select
    # nothing: the action runs lastSelectedMove
    semi_locked = state.volatiles[:, TRAPPING_LOCK] | state.volatiles[:, BIDE]
    locked = jnp.any(state.volatiles[:, LOCKING_VOLATILES], axis=1) | semi_locked
    trapped_fight = chose_move & ~helpless & ~locked & state.volatiles[:, PARTIALLY_TRAPPED]
    selects = chose_move & ~helpless & ~locked & ~trapped_fight
    # with no PP left the only choice is Struggle, which becomes lastSelectedMove (its slot stays)
    struggles = selects & ~jnp.any(_usable_moves(state), axis=1)
    slot = jnp.clip(actions, 0, NUM_MOVE_SLOTS - 1)
    chosen = jnp.take_along_axis(state.moves[:, 0], slot[:, None], axis=1)[:, 0]
    last_slot = jnp.where(selects & ~struggles, slot, state.last_slot)
    # what the foe sees: the active Pokemon's move in the side's slot (for a sleeper too, whatever
    # its side last selected), or Struggle
    in_slot = jnp.take_along_axis(state.moves[:, 0], last_slot[:, None], axis=1)[:, 0]
    seen = jnp.where(struggles, STRUGGLE, in_slot)
    return state.replace(
        last_move=jnp.where(struggles, STRUGGLE, jnp.where(selects, chosen, state.last_move)),
        last_slot=last_slot,
        cannot_move=(state.cannot_move & ~selects) | trapped_fight,
        enemy_selected=jnp.where(trapped_fight, CANNOT_MOVE, jnp.where(chose_move, seen, state.enemy_selected)),
    )


def _action_key(state: BattleState, side: int, action: jax.Array, tables: Tables) -> tuple:
    is_switch = action >= NUM_MOVE_SLOTS
    order = jnp.where(is_switch, ORDER_SWITCH, ORDER_MOVE)
    # ("cannotmove" is no move: priority 0)
    priority = jnp.where(is_switch | state.cannot_move[side], 0, tables.move_priority[state.last_move[side]])
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

    # the two actions in turn order; a scan compiles the (large) move code once, not twice
    def run_next(carry, order):
        state, draws, goes_on = carry
        side = jnp.where(order == 0, first, 1 - first)
        foe_switched = actions[1 - side] >= NUM_MOVE_SLOTS
        return _run_action(draws, state, side, actions[side], goes_on, tables, foe_switched=foe_switched), None

    (state, draws, goes_on), _ = jax.lax.scan(run_next, (state, draws, jnp.bool_(True)), jnp.arange(NUM_SIDES))
    # the residual action (updateSpeed, the Residual event, its Update), then endTurn; a turn
    # that a faint ended has none
    # (from here on no draw's value matters: the step makes them at its end, prng.skip)
    residual, shuffles = _residual(_update_speeds(state))
    residual_draws = prng.skip(draws, shuffles + _each_event_ties(residual))
    state, draws = _select(goes_on, (residual, residual_draws), (state, draws))
    return _end_turn(draws, state, goes_on)


def _forced_switch(
    draws: prng.Draws, state: BattleState, actions: jax.Array, tables: Tables
) -> tuple[BattleState, prng.Draws]:
    """The replacements for Pokemon that fainted (Showdown's "instaswitch" choices), then endTurn.

    One side: its instaswitch and the Update after it, its runSwitch and the Update after that.
    Both sides: the two instaswitches are sorted by the fainted Pokemon's (modified) speed, a tie
    shuffled; the first runs with no Update (an instaswitch follows it); inserting the second's
    runSwitch next to the first's draws random(0, 2) when their cached speeds tie; then one Update
    after the second instaswitch and one after each runSwitch. (A replacement takes no burn or
    poison damage, so nothing can faint here.)"""
    switching = state.request == REQUEST_SWITCH
    both = switching[0] & switching[1]
    side = jnp.where(switching[0], 0, 1)
    single, single_draws, goes_on = _run_action(
        draws, state, side, actions[side], jnp.bool_(True), tables, replacement=True
    )
    speed = state.modified[:, 0, SPE]
    double_draws, swap = _tie_draw(draws, speed[0] == speed[1])
    p1_first = jnp.where(speed[0] == speed[1], ~swap, speed[0] > speed[1])
    double = state
    for order in range(NUM_SIDES):
        mover = jnp.where(p1_first, order, 1 - order)
        slot = jnp.clip(actions[mover] - NUM_MOVE_SLOTS + 1, 1, TEAM_SIZE - 1)
        double = _swap_in(double, mover, slot, tables)
        double = double.replace(last_slot=double.last_slot.at[mover].set(0), used_move=jnp.zeros_like(double.used_move))
        double = _metronome_trap_rule(double, mover)
    double_draws, _ = _tie_draw(double_draws, double.speed[0, 0] == double.speed[1, 0])
    for _ in range(3):
        double_draws = _each_event(double_draws, double)
    state, draws = _select(both, (double, double_draws), (single, single_draws))
    # In Gen 1 a faint ends the turn: Showdown drops the rest of the queue (the residual included),
    # so the replacements' switch-ins are followed directly by endTurn.
    return _end_turn(draws, state, both | goes_on)


def step(kind: str, state: BattleState, actions: jax.Array, tables: Tables) -> BattleState:
    """Both sides' choices (int32[2]; ignored for a side that waits), as Showdown's makeChoices."""
    draws = prng.prefetch(kind, state.rng, STEP_DRAWS)
    state = _update_speeds(state)  # commitChoices
    both_move = (state.request[0] == REQUEST_MOVE) & (state.request[1] == REQUEST_MOVE)
    after, draws = _select(
        both_move, _full_turn(draws, state, actions, tables), _forced_switch(draws, state, actions, tables)
    )
    after = after.replace(rng=prng.settle(kind, draws), prng_overflow=state.prng_overflow | draws.overflowed)
    return _select(state.ended, state, after)
