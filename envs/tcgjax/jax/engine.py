"""The JAX engine: reference/engine.py as pure functions over a GameState, for one game (vmap adds
the batch). Every function mirrors the reference function of the same name, and draws from the
game's stream in the same order, so that equal seeds and equal actions give equal states (L3).

    state = new_game(tables, decks, energy_types, n_types, seed_low, seed_high)
    mask = legal_mask(tables, state)          # bool[NUM_ACTIONS] (111)
    state = step(tables, state, action)       # action must be legal (the env checks the mask)

Branches on traced values are `jnp.where` / `lax.cond` / `lax.switch`; effect programs dispatch
their ops with `lax.switch` over the handlers below."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from envs.tcgjax.jax import tables as T
from envs.tcgjax.jax.rng import Stream
from envs.tcgjax.jax.state import (
    ASLEEP,
    CONDITION_FIELDS,
    CONFUSED,
    DECK,
    DRAW,
    HAND,
    LEAVE_ACTIVE_FIELDS,
    MAIN,
    MAX_ZONE_TYPES,
    NEVER,
    NO_ENERGY,
    OVER,
    PARALYZED,
    PENDING_KO,
    PENDING_NONE,
    PENDING_SWAP,
    POKEMON_FIELDS,
    PROMOTE,
    RESUME_END_TURN,
    RESUME_MAIN,
    RESUME_NEXT_TURN,
    SETUP,
    SLOTS,
    STACK,
    TYPES,
    GameState,
    empty_state,
)
from envs.tcgjax.reference import actions as A
from envs.tcgjax.reference.engine import POINTS_TO_WIN

i32 = jnp.int32
# The rules (RuleConfig) reach the engine through its tables: tables["rule_*"] (jax/tables.py rule_tables).


# ----------------------------------------------------------------------------------------------
# Small array helpers

def _index_mask(shape, index):
    """bool of shape[:len(index)]: True at `index` (scalars, traced or not)."""
    mask = jnp.bool_(True)
    for d, i in enumerate(index):
        axis = jnp.arange(shape[d]).reshape((-1,) + (1,) * (len(index) - 1 - d))
        mask = mask & (axis == i)
    return mask


def _get(array, index):
    """array[index] for scalar indices (traced or not) into the leading axes, as a select and a sum:
    under vmap an indexed read at a per-game index is a gather, which XLA's CPU backend runs element
    by element (most of a step's time, measured); a select over these small arrays vectorises."""
    index = index if isinstance(index, tuple) else (index,)
    mask = _index_mask(array.shape, index)
    mask = mask.reshape(mask.shape + (1,) * (array.ndim - len(index)))
    axes = tuple(range(len(index)))
    if array.dtype == jnp.bool_:
        return jnp.any(mask & array, axis=axes)
    return jnp.sum(jnp.where(mask, array, jnp.zeros((), array.dtype)), axis=axes, dtype=array.dtype)


def _gather_row(row, positions):
    """row[positions] for a vector of per-game positions (clipped to the row), by one-hot selects:
    the vectorising form of a shift by a per-game offset (see _get)."""
    positions = jnp.clip(positions, 0, row.shape[0] - 1)
    hit = positions[:, None] == jnp.arange(row.shape[0])[None, :]
    return jnp.sum(jnp.where(hit, row[None, :], jnp.zeros((), row.dtype)), axis=1, dtype=row.dtype)


def _put(array, index, value, where=True):
    """array.at[index].set(value) as a select: under vmap a scatter at a traced index is slow on CPU,
    a select over these small arrays is not."""
    mask = _index_mask(array.shape, index) & where
    mask = mask.reshape(mask.shape + (1,) * (array.ndim - len(index)))
    return jnp.where(mask, jnp.asarray(value, array.dtype), array)


def _add(array, index, delta, where=True):
    mask = _index_mask(array.shape, index) & where
    mask = mask.reshape(mask.shape + (1,) * (array.ndim - len(index)))
    return array + jnp.where(mask, jnp.asarray(delta, array.dtype), 0).astype(array.dtype)


def _upd(array, index, value, where=True):
    """array.at[index].set(value) where `where` holds, else array."""
    return _put(array, index if isinstance(index, tuple) else (index,), value, where)


def _remove_at(row, length, i):
    """Remove row[i] (i < length), shifting the rest left; the freed end becomes -1."""
    idx = jnp.arange(row.shape[0])
    shifted = jnp.concatenate([row[1:], row[-1:]])
    out = jnp.where(idx >= i, shifted, row)
    return jnp.where(idx >= length - 1, -1, out)


def _append(row, length, value, where=True):
    ok = jnp.logical_and(where, length < row.shape[0])
    return jnp.where(ok, _put(row, (jnp.minimum(length, row.shape[0] - 1),), value), row), length + ok.astype(i32)


def _occupied(state, p):
    return _get(state.stack_len, (p,)) > 0


def _top(state, p, slot):
    return _get(state.stack, (p, slot, jnp.maximum(_get(state.stack_len, (p, slot,)) - 1, 0)))


def _tops(state, p):
    return jax.vmap(lambda s: _top(state, p, s))(jnp.arange(SLOTS))


def _coin(state, active=True):
    head, counter = Stream.coin(state.keys, state.counter, active)
    return head, state.replace(counter=counter)


def _below(state, n, active=True):
    value, counter = Stream.below(state.keys, state.counter, n, active)
    return value, state.replace(counter=counter)


def _until_tails(state, active=True):
    heads, counter = Stream.coins_until_tails(state.keys, state.counter, active)
    return heads, state.replace(counter=counter)


def _shuffle_deck(state, p, active=True):
    deck, counter = Stream.shuffle(state.keys, state.counter, _get(state.deck, (p,)), _get(state.deck_len, (p,)), active)
    return state.replace(deck=_put(state.deck, (p,), deck), counter=counter)


def _pokemon_set(state, p, slot, where=True, **values):
    """Set per-Pokemon fields of (p, slot) where `where` holds."""
    out = {}
    for name, value in values.items():
        array = getattr(state, name)
        out[name] = _upd(array, (p, slot), value, where)
    return state.replace(**out)


def _clear_slot(state, p, slot, where=True):
    values = {name: value for name, value in POKEMON_FIELDS.items()}
    state = _pokemon_set(state, p, slot, where, **values)
    return state.replace(stack=_upd(state.stack, (p, slot), jnp.full(STACK, -1, i32), where),
                         stack_len=_upd(state.stack_len, (p, slot), 0, where),
                         energy=_upd(state.energy, (p, slot), jnp.zeros(8, i32), where))


def _leave_active(tables, state, p, where=True):
    """Special Conditions end (R-3.10); the other effects too under effects_end_on_leaving_active
    (reference InPlay.leave_active)."""
    state = _clear_conditions(state, p, 0, where)
    values = {name: POKEMON_FIELDS[name] for name in LEAVE_ACTIVE_FIELDS if name not in CONDITION_FIELDS}
    return _pokemon_set(state, p, 0, where & tables["rule_effects_end_on_leaving_active"], **values)


def _clear_conditions(state, p, slot, where=True):
    return _pokemon_set(state, p, slot, where, poisoned=False, burned=False, exclusive=0, paralyzed_on_turn=NEVER)


def _swap_slots(state, p, a, b, where=True):
    """Exchange every per-Pokemon field of slots a and b of player p."""
    out = {}
    for name in ("stack", "stack_len", "energy", *POKEMON_FIELDS):
        array = getattr(state, name)
        va, vb = _get(array, (p, a)), _get(array, (p, b))
        out[name] = jnp.where(where, _put(_put(array, (p, a), vb), (p, b), va), array)
    return state.replace(**out)


def _move_slot(state, p, src, dst, where=True):
    """Slot dst takes slot src's Pokemon; src becomes empty."""
    out = {}
    for name in ("stack", "stack_len", "energy", *POKEMON_FIELDS):
        array = getattr(state, name)
        out[name] = jnp.where(where, _put(array, (p, dst,), _get(array, (p, src))), array)
    return _clear_slot(state.replace(**out), p, src, where)


def _free_bench(state, p):
    """The first empty bench slot, or -1."""
    empty = ~_occupied(state, p)[1:]
    return jnp.where(jnp.any(empty), jnp.argmax(empty) + 1, -1).astype(i32)


def _put_in_play(state, p, slot, card, where=True):
    state = _clear_slot(state, p, slot, where)
    return state.replace(stack=_upd(state.stack, (p, slot, 0), card, where),
                         stack_len=_upd(state.stack_len, (p, slot), 1, where),
                         entered_turn=_upd(state.entered_turn, (p, slot), state.turn, where))


def _zone_remove(state, zone, p, i, where=True):
    """Remove card i of player p's `zone` ("hand" or "deck"), shifting the rest up."""
    cards, length = getattr(state, zone), getattr(state, zone + "_len")
    row = _remove_at(_get(cards, (p,)), _get(length, (p,)), i)
    return state.replace(**{zone: _upd(cards, p, row, where), zone + "_len": _add(length, (p,), -jnp.asarray(where, i32))})


def _zone_add(state, zone, p, card, where=True):
    """Append a card to player p's `zone` ("hand", "deck" or "discard")."""
    cards, length = getattr(state, zone), getattr(state, zone + "_len")
    row, new_length = _append(_get(cards, (p,)), _get(length, (p,)), card, where)
    return state.replace(**{zone: _put(cards, (p,), row), zone + "_len": _put(length, (p,), new_length)})


def _hand_remove(state, p, h, where=True):
    return _zone_remove(state, "hand", p, h, where)


def _hand_add(state, p, card, where=True):
    return _zone_add(state, "hand", p, card, where)


def _deck_remove(state, p, i, where=True):
    return _zone_remove(state, "deck", p, i, where)


def _deck_add(state, p, card, where=True):
    return _zone_add(state, "deck", p, card, where)


def _discard_add(state, p, card, where=True):
    return _zone_add(state, "discard", p, card, where)


def _stack_to(state, p, slot, where, add):
    """Each card of (p, slot)'s stack, bottom first, through `add(state, p, card, where)`."""
    for level in range(STACK):
        state = add(state, p, _get(state.stack, (p, slot, level,)),
                    jnp.logical_and(where, level < _get(state.stack_len, (p, slot,))))
    return state


# ----------------------------------------------------------------------------------------------
# Setup

def new_game(tables, decks, energy_types, n_types, seed_low, seed_high) -> GameState:
    """decks int32[2, 20]; energy_types int32[2, 3] (n_types[p] of them used); the seed's two halves."""
    from envs.tcgjax.jax.rng import seed_keys

    state = empty_state(tables["name_sets"].shape[0])
    key0, key1 = seed_keys(seed_low, seed_high)
    state = state.replace(keys=jnp.stack([key0, key1]), deck=decks.astype(i32), deck_len=jnp.full(2, DECK, i32),
                          energy_types=energy_types.astype(i32), n_types=n_types.astype(i32))
    head, state = _coin(state)
    state = state.replace(first=jnp.where(head, 0, 1).astype(i32))
    size = tables["rule_opening_hand"]  # 5, or 7 under seven_with_mulligan
    redraws = []
    for p in (0, 1):
        state, redrew = _shuffle_opening(tables, state, p, size)
        redraws.append(redrew)
        deck, h, d = _get(state.deck, (p,)), jnp.arange(HAND), jnp.arange(DECK)
        hand = jnp.where(h < size, deck[:HAND], -1)  # HAND < DECK
        deck = jnp.where(d < DECK - size, _gather_row(deck, d + size), -1)
        state = state.replace(hand=_put(state.hand, (p,), hand), hand_len=_put(state.hand_len, (p,), size),
                              deck=_put(state.deck, (p,), deck), deck_len=_put(state.deck_len, (p,), DECK - size))
    for p in (0, 1):  # seven_with_mulligan: one card per redraw of the opponent, player 0 first
        state = _draw_n(tables, state, p, jnp.where(tables["rule_mulligan_draws"], redraws[1 - p], 0))
    for p in (0, 1):
        energy, state = _roll_energy(tables, state, p)
        state = state.replace(energy_next=_put(state.energy_next, (p,), energy))
    return state.replace(current=state.first, phase=i32(SETUP))


def _shuffle_opening(tables, state, p, size):
    """(state, shuffles after the first) once the top `size` cards hold a Basic (reference
    _shuffle_opening: option A reshuffles, option B puts a Basic on top)."""
    return jax.lax.cond(tables["rule_basic_on_top"], lambda s: _basic_on_top(tables, s, p),
                        lambda s: _reshuffle_until_basic(tables, s, p, size), state)


def _reshuffle_until_basic(tables, state, p, size):
    def has_basic(carry):
        state, _ = carry
        top = jnp.arange(DECK) < size
        return jnp.any(top & tables["is_basic"][jnp.maximum(_get(state.deck, (p,)), 0)])

    def body(carry):
        state, redraws = carry
        return _shuffle_deck(state, p), redraws + 1

    state = _shuffle_deck(state, p)
    return jax.lax.while_loop(lambda c: ~has_basic(c), body, (state, i32(0)))


def _basic_on_top(tables, state, p):
    """R-2.2 option B: the `below(copies)`-th Basic Pokemon of the deck list on top, the other 19 shuffled
    under it (Fisher-Yates over the 19 in their list order)."""
    deck, d = _get(state.deck, (p,)), jnp.arange(DECK)
    basic = (deck >= 0) & tables["is_basic"][jnp.maximum(deck, 0)]
    pick, state = _below(state, jnp.sum(basic))
    position = jnp.sum(jnp.where(basic & (jnp.cumsum(basic) - 1 == pick), d, 0))
    chosen = jnp.sum(jnp.where(d == position, deck, 0))
    rest = jnp.where(d < DECK - 1, _gather_row(deck, d + (d >= position)), -1)
    rest, counter = Stream.shuffle(state.keys, state.counter, rest, DECK - 1)
    deck = jnp.where(d == 0, chosen, _gather_row(rest, d - 1))
    return state.replace(deck=_put(state.deck, (p,), deck), counter=counter), i32(0)


def _roll_energy(tables, state, p, active=True):
    """R-3.3 (reference _roll_energy): one `below(candidates)`; the candidates are the zone's types, or
    under energy_choice="active_costs" those the Active's attack costs name (all when none does), taken
    in zone order."""
    types = _get(state.energy_types, (p,))
    zone = jnp.arange(MAX_ZONE_TYPES) < _get(state.n_types, (p,))
    named = jnp.any(tables["cost_typed"][jnp.maximum(_top(state, p, 0), 0)] > 0, axis=0)  # bool[TYPES]
    costed = zone & jnp.any((types[:, None] == jnp.arange(TYPES)[None, :]) & named[None, :], axis=1)
    use_costs = tables["rule_energy_active_costs"] & (_get(state.stack_len, (p, 0)) > 0) & jnp.any(costed)
    candidates = jnp.where(use_costs, costed, zone)
    pick, state = _below(state, jnp.sum(candidates), active)
    chosen = candidates & (jnp.cumsum(candidates) - 1 == pick)
    return jnp.sum(jnp.where(chosen, types, 0), dtype=i32), state


# ----------------------------------------------------------------------------------------------
# Costs, targets, legality

def cost_met(energy, typed, colorless):
    """R-3.11 (reference cost_met): each typed need from its type, Colorless from what is left."""
    return jnp.logical_and(jnp.all(energy >= typed), jnp.sum(energy - typed) >= colorless)


def _retreat_cost(tables, state, p):
    return jnp.maximum(0, tables["retreat"][_top(state, p, 0)] - _get(state.retreat_discount, (p,)))


def _valid_targets(tables, state, p, target_kind, target_type, first_op, ops_p1):
    """bool[4] for each target kind of effects.TARGETS (reference _valid_targets)."""
    o = 1 - p
    own, opp = _occupied(state, p), _occupied(state, o)
    bench = jnp.array([False, True, True, True])
    own_tops, opp_tops = _tops(state, p), _tops(state, o)
    own_type = tables["type"][own_tops]
    opp_stage = tables["stage"][opp_tops]
    damaged = _get(state.damage, (p,)) > 0
    names = tables["name"][own_tops]
    named = tables["name_sets"][jnp.maximum(ops_p1, 0)][names]
    pair_ok = jnp.array([False, own[1] & own[2], own[1] & own[3], own[2] & own[3]])
    options = jnp.stack([
        jnp.zeros(4, bool),  # none
        opp,  # opp_any
        opp & bench,  # opp_bench
        opp & bench & (opp_stage == 0),  # opp_bench_basic
        own,  # own_any
        own & bench,  # own_bench
        own & bench & (own_type == target_type),  # own_bench_typed
        own & (own_type == target_type) & jnp.where(first_op == T.OP["heal_target"], damaged, True),  # own_typed
        own & named,  # own_named
        own & damaged,  # own_damaged
        pair_ok,  # own_bench_pair
    ])
    return _get(options, (target_kind,))


# Constant tables of this module are NumPy arrays, made JAX arrays where used: a jnp.array at import
# would start JAX's backends when the env is made, and a process forked after that cannot run JAX.
_NEEDS_TARGET = np.array([T.TARGETS.index(k) for k in ("own_typed", "own_named", "own_damaged", "opp_bench_basic")],
                         dtype=np.int32)


def _program_ok(tables, state, p, ops, target_kind, target_type, target, attack: bool = False):
    """bool: reference _why_program_inapplicable is None (an Ability's active_only is checked by the
    caller). `attack` (static): an attack is never refused for an effect part with nothing to act on."""
    o = 1 - p
    valid = _valid_targets(tables, state, p, target_kind, target_type, ops[0, 0], ops[0, 2])
    any_valid = jnp.any(valid)
    needs = jnp.any(target_kind == jnp.asarray(_NEEDS_TARGET))
    ok = jnp.where(target_kind == 0, target == 0,
                   jnp.where(any_valid, _get(valid, (target,)), jnp.logical_and(~needs, target == 0)))
    active_top = _top(state, p, 0)
    for i in range(T.MAX_OPS):
        kind, p0, p1 = ops[i, 0], ops[i, 1], ops[i, 2]
        bad = jnp.logical_and(kind == T.OP["force_switch"], ~jnp.any(_occupied(state, o)[1:]) & (not attack))
        bad |= jnp.logical_and(kind == T.OP["zone_attach_active_typed"], tables["type"][active_top] != p0)
        in_set = tables["name_sets"][jnp.maximum(p0, 0), tables["name"][active_top]]
        too_many = _get(state.hand_len, (p,)) - 1 + _get(state.stack_len, (p, 0,)) > tables["rule_hand_limit"]
        bad |= jnp.logical_and(kind == T.OP["return_active"],
                               ~in_set | ~jnp.any(_occupied(state, p)[1:]) | too_many)
        in_set1 = tables["name_sets"][jnp.maximum(p1, 0), tables["name"][active_top]]
        bad |= jnp.logical_and(kind == T.OP["move_energy_to_active"], ~in_set1)
        ok &= ~bad
    return ok


def _spellbound(tables, state, o):
    return jnp.logical_and(_occupied(state, o)[0],
                           tables["passive"][_top(state, o, 0)] == T.PASSIVE["passive_supporter_lock"])


def legal_mask(tables, state: GameState) -> jnp.ndarray:
    """bool[NUM_ACTIONS]: the decision player's legal actions (reference action_mask)."""
    setup = _setup_mask(tables, state)
    main = _main_mask(tables, state)
    promote = _promote_mask(tables, state)
    return jnp.where(state.phase == SETUP, setup,
                     jnp.where(state.phase == MAIN, main,
                               jnp.where(state.phase == PROMOTE, promote, jnp.zeros(A.NUM_ACTIONS, bool))))


def decision_player(tables, state):
    """Who acts next (reference Game.decision_player): in the promotion phase the player owing one, the
    turn player first unless turn_player_promotes_first is off (R-5.3 ⚠); else the turn player."""
    first = jnp.where(tables["rule_turn_player_promotes_first"], state.current, 1 - state.current)
    first_owes = _get(state.pending, (first,)) != PENDING_NONE
    return jnp.where(state.phase == PROMOTE, jnp.where(first_owes, first, 1 - first), state.current).astype(i32)


def _promote_mask(tables, state):
    p = decision_player(tables, state)
    mask = jnp.zeros(A.NUM_ACTIONS, bool)
    return mask.at[A.PROMOTE:A.PROMOTE + 3].set(_occupied(state, p)[1:])


def _setup_mask(tables, state):
    p = state.current
    has_active = _occupied(state, p)[0]
    room = ~has_active | (_free_bench(state, p) >= 0)
    h = jnp.arange(HAND)
    basic = (h < _get(state.hand_len, (p,))) & tables["is_basic"][jnp.maximum(_get(state.hand, (p,)), 0)]
    mask = jnp.zeros(A.NUM_ACTIONS, bool).at[A.END_TURN].set(has_active)
    return mask.at[A.PLAY + 4 * h].set(basic & room)


def _main_mask(tables, state):
    p, o, turn = state.current, 1 - state.current, state.turn
    occupied = _occupied(state, p)
    mask = jnp.zeros(A.NUM_ACTIONS, bool).at[A.END_TURN].set(True)
    can_attach = (_get(state.energy_current, (p,)) != NO_ENERGY) & ~_get(state.attached, (p,))
    mask = mask.at[A.ATTACH:A.ATTACH + 4].set(occupied & can_attach)
    # play (hand index, target)
    hand_ok = jnp.arange(HAND) < _get(state.hand_len, (p,))

    def play_ok(h, t):
        card = jnp.maximum(_get(state.hand, (p, h,)), 0)
        basic_like = tables["is_basic"][card] | tables["is_fossil"][card]
        basic_ok = (t == 0) & (_free_bench(state, p) >= 0)
        top = _top(state, p, t)
        evolve_ok = (occupied[t] & (turn > 2) & (tables["name"][top] == tables["evolve_from"][card])
                     & (_get(state.entered_turn, (p, t,)) < turn))
        supporter = tables["trainer"][card] == 2
        supporter_ok = ~supporter | (~_get(state.supporter_played, (p,)) & ((turn != 1) | tables["rule_supporter_on_turn1"])
                                     & ~(_get(state.supporter_lock_until, (p,)) >= turn) & ~_spellbound(tables, state, o))
        trainer_ok = supporter_ok & _program_ok(tables, state, p, tables["trainer_ops"][card],
                                                tables["trainer_target"][card], tables["trainer_target_type"][card],
                                                t)
        ok = jnp.where(basic_like, basic_ok, jnp.where(tables["is_pokemon"][card], evolve_ok, trainer_ok))
        return _get(hand_ok, (h,)) & ok

    hs, ts = jnp.meshgrid(jnp.arange(HAND), jnp.arange(4), indexing="ij")
    plays = jax.vmap(jax.vmap(play_ok))(hs, ts).reshape(-1)
    mask = mask.at[A.PLAY:A.PLAY + 4 * HAND].set(plays)
    # retreat
    active_top = _top(state, p, 0)
    can_retreat = (~_get(state.retreated, (p,)) & ~tables["is_fossil"][active_top]
                   & (_get(state.exclusive, (p, 0,)) != ASLEEP) & (_get(state.exclusive, (p, 0,)) != PARALYZED)
                   & ~(_get(state.cant_retreat_until, (p, 0,)) >= turn)
                   & (jnp.sum(_get(state.energy, (p, 0,))) >= _retreat_cost(tables, state, p)))
    mask = mask.at[A.RETREAT:A.RETREAT + 3].set(occupied[1:] & can_retreat)

    # abilities (slot, target)
    def ability_ok(s, t):
        top = _top(state, p, s)
        return (occupied[s] & tables["has_ability"][top] & (_get(state.ability_used_turn, (p, s,)) != turn)
                & (~tables["ability_active_only"][top] | (s == 0))
                & _program_ok(tables, state, p, tables["ability_ops"][top], tables["ability_target"][top], -1, t))

    ss, ts4 = jnp.meshgrid(jnp.arange(4), jnp.arange(4), indexing="ij")
    mask = mask.at[A.ABILITY:A.ABILITY + 16].set(jax.vmap(jax.vmap(ability_ok))(ss, ts4).reshape(-1))

    # attacks (index, target)
    def can_attack(i):  # reference _why_active_cannot_attack
        return ((i < tables["n_attacks"][active_top]) & ((turn != 1) | tables["rule_attack_on_turn1"])
                & (_get(state.exclusive, (p, 0,)) != ASLEEP) & (_get(state.exclusive, (p, 0,)) != PARALYZED)
                & ~(_get(state.cant_attack_until, (p, 0,)) >= turn)
                & cost_met(_get(state.energy, (p, 0,)), tables["cost_typed"][active_top, i],
                           tables["cost_colorless"][active_top, i]))

    def attack_program_ok(top, i, t):
        return _program_ok(tables, state, p, tables["attack_ops"][top, i], tables["attack_target"][top, i],
                           tables["attack_target_type"][top, i], t, attack=True)

    def attack_ok(i, t):
        return can_attack(i) & ~tables["attack_copies"][active_top, i] & attack_program_ok(active_top, i, t)

    is2, ts2 = jnp.meshgrid(jnp.arange(2), jnp.arange(4), indexing="ij")
    mask = mask.at[A.ATTACK:A.ATTACK + 8].set(jax.vmap(jax.vmap(attack_ok))(is2, ts2).reshape(-1))
    # copy (opponent's slot, its attack index, target): reference _why_no_copy
    own_copy = _copying_index(tables, active_top)
    copy_usable = jnp.any(tables["attack_copies"][active_top]) & can_attack(own_copy)
    opponent_occupied = _occupied(state, o)

    def copy_ok(s, i, t):
        top = _top(state, o, s)
        return (opponent_occupied[s] & (i < tables["n_attacks"][top]) & ~tables["attack_copies"][top, i]
                & attack_program_ok(top, i, t))

    ss3, is3, ts3 = jnp.meshgrid(jnp.arange(4), jnp.arange(2), jnp.arange(4), indexing="ij")
    copies = jax.vmap(jax.vmap(jax.vmap(copy_ok)))(ss3, is3, ts3).reshape(-1)
    mask = mask.at[A.COPY:A.COPY + 32].set(copy_usable & copies)
    fossils = occupied & tables["is_fossil"][_tops(state, p)]
    return mask.at[A.DISCARD_FOSSIL:A.DISCARD_FOSSIL + 4].set(fossils)


# ----------------------------------------------------------------------------------------------
# Step

def step(tables, state: GameState, action) -> GameState:
    """Apply a legal action of the decision player (reference step).

    One pass in four stages, so that each big piece is compiled once: the action's own part (a
    lax.switch over the action kinds), then the card program it starts (a Trainer, an Ability or
    an attack: one runner), then the Knock-Out and win check, then the continuation (promotions
    owed, the end of the turn with its Checkup, the next turn)."""
    action = jnp.asarray(action, i32)
    is_play = (action >= A.PLAY) & (action < A.RETREAT)
    kind = jnp.select(
        [state.phase == OVER, state.phase == SETUP, state.phase == PROMOTE, action == A.END_TURN,
         action < A.PLAY, is_play, action < A.ABILITY, action < A.ATTACK, action < A.DISCARD_FOSSIL,
         action < A.PROMOTE],
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 10)
    p = state.current
    slot_or_hand, target = (action - A.PLAY) // 4, (action - A.PLAY) % 4
    branches = [
        lambda s: (s, _no_program()),
        lambda s: (_setup_step(tables, s, action), _no_program()),
        lambda s: (_promote(tables, s, action - A.PROMOTE + 1), _no_program(cont=True)),
        lambda s: (s.replace(resume=i32(RESUME_END_TURN)), _no_program(cont=True)),
        lambda s: _attach_action(tables, s, action - A.ATTACH),
        lambda s: _play_card(tables, s, slot_or_hand, target),
        lambda s: (_retreat(tables, s, action - A.RETREAT + 1), _no_program()),
        lambda s: _ability(tables, s, (action - A.ABILITY) // 4, (action - A.ABILITY) % 4),
        lambda s: _attack(tables, s, (action - A.ATTACK) // 4, (action - A.ATTACK) % 4),
        lambda s: _discard_fossil(s, action - A.DISCARD_FOSSIL),
        lambda s: _copy_attack(tables, s, (action - A.COPY) // 8, (action - A.COPY) // 4 % 2, (action - A.COPY) % 4),
    ]
    state, prog = jax.lax.switch(kind, branches, state)
    state = jax.lax.cond(prog["run"], lambda s: _run_program(tables, s, prog), lambda s: s, state)
    state = state.replace(discard=_discard_after(state, p, prog["discard_card"]),
                          discard_len=_add(state.discard_len, (p,), (prog["discard_card"] >= 0).astype(i32)))
    state = state.replace(sweets_relay_turn=_upd(state.sweets_relay_turn, p, state.turn, prog["sweets_relay"]))

    def check(state):
        state = _knock_outs(tables, state)
        state, over = _decide(tables, state)
        return state.replace(resume=jnp.where(over, state.resume, prog["resume"]).astype(i32)), over

    state, over = jax.lax.cond(prog["after"], check, lambda s: (s, jnp.bool_(False)), state)
    go_on = (prog["after"] & ~over) | prog["cont"]
    return jax.lax.cond(go_on, lambda s: _continue(tables, s), lambda s: s, state)


def _discard_after(state, p, card):
    return _put(state.discard, (p,), _append(_get(state.discard, (p,)), _get(state.discard_len, (p,)), card, card >= 0)[0])


def _no_program(cont=False, after=False, resume=RESUME_MAIN):
    """What an action starts: a card program to run (or not), a Knock-Out check, a continuation."""
    zero = i32(0)
    return {"run": jnp.bool_(False), "ops": jnp.zeros((T.MAX_OPS, 4), i32), "target_kind": zero,
            "target_type": i32(-1), "source": i32(-1), "target": zero, "attack": jnp.bool_(False), "top": zero,
            "index": zero, "discard_card": i32(-1), "sweets_relay": jnp.bool_(False), "after": jnp.asarray(after),
            "resume": i32(resume), "cont": jnp.asarray(cont)}


def _program(ops, target_kind, target_type, source, target, resume, attack=False, top=0, index=0,
             discard_card=-1, run=True, sweets_relay=False):
    prog = _no_program(after=True, resume=resume)
    prog.update(run=jnp.asarray(run), ops=ops, target_kind=jnp.asarray(target_kind, i32),
                target_type=jnp.asarray(target_type, i32), source=jnp.asarray(source, i32),
                target=jnp.asarray(target, i32), attack=jnp.asarray(attack), top=jnp.asarray(top, i32),
                index=jnp.asarray(index, i32), discard_card=jnp.asarray(discard_card, i32),
                sweets_relay=jnp.asarray(sweets_relay))
    return prog


def _setup_step(tables, state, action):
    p = state.current

    def place(state):
        h = (action - A.PLAY) // 4
        card = _get(state.hand, (p, h,))
        state = _hand_remove(state, p, h)
        slot = jnp.where(_occupied(state, p)[0], _free_bench(state, p), 0)
        return _put_in_play(state, p, slot, card)  # turn 0: entered_turn 0

    def done(state):
        state = state.replace(setup_done=_put(state.setup_done, (p,), True))
        both = jnp.all(state.setup_done)
        return jax.lax.cond(both, lambda s: _start_turn(tables, s.replace(phase=i32(MAIN)), s.first),
                            lambda s: s.replace(current=1 - s.current), state)

    return jax.lax.cond(action == A.END_TURN, done, place, state)


def _start_turn(tables, state, who):
    """R-3.1, R-3.3 (reference _start_turn)."""
    turn = state.turn + 1
    state = state.replace(turn=turn, current=jnp.asarray(who, i32),
                          attached=_put(state.attached, (who,), False),
                          supporter_played=_put(state.supporter_played, (who,), False),
                          retreated=_put(state.retreated, (who,), False),
                          retreat_discount=_put(state.retreat_discount, (who,), 0),
                          boost_all=_put(state.boost_all, (who,), 0),
                          boost_set=_put(state.boost_set, (who,), 0))
    # no Energy on turn 1; with unused_energy_carries_over the current slot is refilled only
    # when it is empty (reference _start_turn)
    refill = (_get(state.energy_current, (who,)) == NO_ENERGY) | ~tables["rule_energy_carries_over"]
    gets_energy = (turn > 1) & refill
    energy, state = _roll_energy(tables, state, who, gets_energy)
    state = state.replace(
        energy_current=_upd(state.energy_current, who, _get(state.energy_next, (who,)), gets_energy),
        energy_next=_upd(state.energy_next, who, energy, gets_energy))
    draws = jnp.logical_or(turn > 1, tables["rule_first_player_draws_turn1"])
    return _draw(tables, state, who, 1, draws).replace(phase=i32(MAIN))


def _draw(tables, state, p, count, where=True):
    """R-3.1 / R-3.2 (reference _draw): up to `count` cards while the deck and hand allow."""
    def one(_, state):
        ok = jnp.logical_and(where, (_get(state.deck_len, (p,)) > 0)
                             & (_get(state.hand_len, (p,)) < tables["rule_hand_limit"]))
        card = _get(state.deck, (p, 0,))
        state = _deck_remove(state, p, 0, ok)
        return _hand_add(state, p, card, ok)

    return jax.lax.fori_loop(0, count, one, state)


def _attach_action(tables, state, slot):
    p = state.current
    energy = _get(state.energy_current, (p,))
    state = state.replace(energy_current=_put(state.energy_current, (p,), NO_ENERGY),
                          attached=_put(state.attached, (p,), True))
    state = _attach_from_zone(tables, state, p, slot, energy, 1)
    return state, _no_program(after=True)


def _play_card(tables, state, h, target):
    p = state.current
    card = _get(state.hand, (p, h,))
    basic_like = tables["is_basic"][card] | tables["is_fossil"][card]
    is_evolution = tables["is_pokemon"][card] & ~basic_like

    def play_basic(state):
        slot = _free_bench(state, p)
        return _put_in_play(_hand_remove(state, p, h), p, slot, card), _no_program()

    def evolve(state):
        state = _hand_remove(state, p, h)
        level = _get(state.stack_len, (p, target,))
        state = state.replace(stack=_put(state.stack, (p, target, level,), card),
                              stack_len=_add(state.stack_len, (p, target,), 1),
                              entered_turn=_put(state.entered_turn, (p, target,), state.turn,
                                                tables["rule_evolve_once_per_turn"]),  # R-3.6(c)
                              evolved_turn=_put(state.evolved_turn, (p, target,), state.turn))
        return _clear_conditions(state, p, target), _no_program()

    def trainer(state):
        # the card leaves the hand, its effect resolves, then it goes to the discard pile
        state = _hand_remove(state, p, h)
        supporter = tables["trainer"][card] == 2
        state = state.replace(supporter_played=_put(state.supporter_played, (p,), _get(state.supporter_played, (p,)) | supporter))
        return state, _program(tables["trainer_ops"][card], tables["trainer_target"][card],
                               tables["trainer_target_type"][card], -1, target, RESUME_MAIN, discard_card=card)

    return jax.lax.switch(jnp.where(basic_like, 0, jnp.where(is_evolution, 1, 2)), [play_basic, evolve, trainer],
                          state)


def _retreat(tables, state, bench):
    """R-3.10: pay (the most plentiful type first), then swap."""
    p = state.current

    def pay(_, energy):
        most = jnp.argmax(energy)  # argmax takes the first maximum: the lower type index on ties
        return _add(energy, (most,), -(_get(energy, (most,)) > 0).astype(i32))

    cost = _retreat_cost(tables, state, p)
    energy = jax.lax.fori_loop(0, cost, pay, _get(state.energy, (p, 0,)))
    state = state.replace(energy=_put(state.energy, (p, 0,), energy), retreated=_put(state.retreated, (p,), True))
    return _swap_slots(_leave_active(tables, state, p), p, 0, bench)


def _ability(tables, state, slot, target):
    p = state.current
    top = _top(state, p, slot)
    state = state.replace(ability_used_turn=_put(state.ability_used_turn, (p, slot,), state.turn))
    return state, _program(tables["ability_ops"][top], tables["ability_target"][top], -1, slot, target, RESUME_MAIN)


def _discard_fossil(state, slot):
    p = state.current
    state = _stack_to(state, p, slot, True, _discard_add)
    state = _clear_slot(state, p, slot)
    state = state.replace(pending=_upd(state.pending, p, _merge_pending(_get(state.pending, (p,)), PENDING_KO), slot == 0))
    return state, _no_program(after=True)


def _merge_pending(current, new):
    """A Knock Out's promotion replaces a pending switch (reference _order_pending)."""
    return jnp.where(current == PENDING_KO, PENDING_KO, new)


def _attack(tables, state, index, target):
    return _use_attack(tables, state, _top(state, state.current, 0), index, target, copied=False)


def _copy_attack(tables, state, slot, index, target):
    """Copy Anything used as the attack `index` of the opponent's Pokemon in `slot` (reference _attack
    with `copy`): that attack's cost, base damage and program; the Active's type, boosts and Energy."""
    return _use_attack(tables, state, _top(state, 1 - state.current, slot), index, target, copied=True)


def _copying_index(tables, top):
    """The index of the card's copying attack (0 when it has none)."""
    return jnp.argmax(tables["attack_copies"][top]).astype(i32)


def _use_attack(tables, state, top, index, target, copied):
    """The attack `index` of card `top`, used by the Active. R-6.5: a Confused attacker flips first;
    tails, nothing happens (and the turn ends). A copied attack whose cost the Active's Energy does
    not cover does nothing (Copy Anything)."""
    p = state.current
    confused = _get(state.exclusive, (p, 0,)) == CONFUSED
    head, state = _coin(state, confused)
    works = ~confused | head
    if copied:
        works &= cost_met(_get(state.energy, (p, 0,)), tables["cost_typed"][top, index],
                          tables["cost_colorless"][top, index])
    return state, _program(tables["attack_ops"][top, index], tables["attack_target"][top, index],
                           tables["attack_target_type"][top, index], 0, target, RESUME_END_TURN, attack=True, top=top,
                           index=index, run=works, sweets_relay=works & tables["attack_sweets_relay"][top, index])


# ----------------------------------------------------------------------------------------------
# Card programs: Trainers, Abilities and attacks

def _ctx(p, source, target, target_kind):
    """What one program run knows: the acting player, the source slot (-1: a Trainer), the target
    (-1 when the program's target kind has no valid target), the target kind, and for attacks the
    running recoil and the damage done to the Defending Pokemon."""
    return {"p": p, "source": source, "target": target, "target_kind": target_kind, "recoil": i32(0),
            "dealt": i32(0)}


def _effective_target(tables, state, p, ops, target_kind, target_type, target):
    valid = _valid_targets(tables, state, p, target_kind, target_type, ops[0, 0], ops[0, 2])
    return jnp.where(_get(valid, (target,)), target, -1).astype(i32)


def _run_program(tables, state, prog):
    """reference _run_program: for an attack, the damage stage (R-4.1 step 1), the damage to the main
    target, then the other ops in text order (those on the Defending Pokemon skipped under Dig), then
    recoil (R-4.4); for a Trainer or an Ability, the ops in order."""
    p, o = state.current, 1 - state.current
    ops, attack, top, index = prog["ops"], prog["attack"], prog["top"], prog["index"]
    target = _effective_target(tables, state, p, ops, prog["target_kind"], prog["target_type"], prog["target"])
    ctx = _ctx(p, prog["source"], target, prog["target_kind"])

    def damage_stage(i, carry):
        state, ctx, damage, nothing = carry
        op = jnp.where(attack, ops[i], jnp.zeros(4, i32))
        return _damage_op(tables, state, ctx, op, damage, nothing, top, index)

    damage = jnp.where(attack, tables["attack_base"][top, index], 0)
    state, ctx, damage, nothing = jax.lax.fori_loop(0, T.MAX_OPS, damage_stage,
                                                    (state, ctx, damage, jnp.bool_(False)))
    to_target = tables["attack_to_target"][top, index]
    # an attack without damage (base 0, none computed, no damage to a target) deals none at all: with
    # bonuses_need_damage=False its boosts would otherwise apply (reference _run_program)
    deals = (damage > 0) | (tables["attack_base"][top, index] > 0) | to_target
    main_slot = jnp.where(attack & ~nothing & deals, jnp.where(to_target, ctx["target"], 0), -1)
    prevented = attack & (_get(state.prevent_until, (o, 0,)) >= state.turn) & _get(state.prevent_effects, (o, 0,))
    state, dealt = jax.lax.cond(main_slot >= 0,
                                lambda s: _attack_damage(tables, s, p, 0, jnp.maximum(main_slot, 0), damage),
                                lambda s: (s, i32(0)), state)
    ctx = dict(ctx, dealt=jnp.where(main_slot == 0, dealt, 0))

    def effects(i, carry):
        state, ctx = carry
        skip = nothing | (prevented & jnp.asarray(_ON_DEFENDER)[ops[i, 0]]) | (attack & jnp.asarray(_IS_DAMAGE_STAGE)[ops[i, 0]])
        return _effect(tables, state, ctx, jnp.where(skip, jnp.zeros(4, i32), ops[i]))

    state, ctx = jax.lax.fori_loop(0, T.MAX_OPS, effects, (state, ctx))
    return state.replace(damage=_add(state.damage, (p, 0,), jnp.where(attack & ~nothing, ctx["recoil"], 0)))


_IS_DAMAGE_STAGE = np.array([name in T.DAMAGE_STAGE for name in T.OP_KINDS])
_ON_DEFENDER = np.array([name in ("status", "discard_opp_energy", "defender_cant_attack", "defender_cant_retreat",
                                   "defender_minus", "bounce", "force_switch") for name in T.OP_KINDS])


def _damage_op(tables, state, ctx, op, damage, nothing, top, index):
    """R-4.1 step 1: one op of the damage stage (others leave damage alone)."""
    p, o = ctx["p"], 1 - ctx["p"]
    kind, p0, p1, p2 = op[0], op[1], op[2], op[3]

    def coins_per_heads(state):
        def flip(k, carry):
            state, heads = carry
            head, state = _coin(state, k < p0)
            return state, heads + (head & (k < p0)).astype(i32)
        state, heads = jax.lax.fori_loop(0, 4, flip, (state, i32(0)))
        return state, p1 * heads, nothing, i32(0)

    def until_tails(state, plus):
        heads, state = _until_tails(state)
        return state, jnp.where(plus, damage, 0) + p0 * heads, nothing, i32(0)

    def coins_plus(state):
        def flip(k, carry):
            state, all_heads = carry
            head, state = _coin(state, k < p0)
            return state, all_heads & (head | (k >= p0))
        state, all_heads = jax.lax.fori_loop(0, 2, flip, (state, jnp.bool_(True)))
        return state, damage + jnp.where(all_heads, p1, 0), nothing, jnp.where(all_heads, 0, p2)

    def coin_or_nothing(state):
        head, state = _coin(state)
        return state, damage, nothing | ~head, i32(0)

    def extra_energy_plus(state):
        energy = _get(state.energy, (p, 0,))
        typed = tables["cost_typed"][top, index]
        colorless = tables["cost_colorless"][top, index]
        others = jnp.sum(energy) - _get(energy, (p0,))
        extra = _get(energy, (p0,)) - _get(typed, (p0,)) - jnp.maximum(0, colorless - others)
        return state, damage + jnp.where(extra >= p1, p2, 0), nothing, i32(0)

    def if_plus(state):
        return state, damage + jnp.where(_condition(tables, state, p0, p, o), p1, 0), nothing, i32(0)

    def per_own_bench(state):
        own = _occupied(state, p)[1:]
        types = tables["type"][_tops(state, p)][1:]
        count = jnp.sum(own & ((p0 < 0) | (types == p0)))
        return state, p1 * count, nothing, i32(0)

    def per_defender_energy_plus(state):
        return state, damage + p0 * jnp.sum(_get(state.energy, (o, 0,))), nothing, i32(0)

    def per_own_bench_named_plus(state):
        own = _occupied(state, p)[1:]
        names = tables["name"][_tops(state, p)][1:]
        return state, damage + p1 * jnp.sum(own & (names == p0)), nothing, i32(0)

    def set_base(state):
        return state, p0, nothing, i32(0)

    def identity(state):
        return state, damage, nothing, i32(0)

    handlers = {
        "coins_per_heads": coins_per_heads, "until_tails_per": lambda s: until_tails(s, False),
        "until_tails_plus": lambda s: until_tails(s, True), "coins_plus": coins_plus,
        "coin_or_nothing": coin_or_nothing, "extra_energy_plus": extra_energy_plus, "if_plus": if_plus,
        "per_own_bench": per_own_bench, "per_defender_energy_plus": per_defender_energy_plus,
        "per_own_bench_named_plus": per_own_bench_named_plus, "set_base": set_base,
    }
    table = [handlers.get(name, identity) for name in T.OP_KINDS]
    state, damage, nothing, recoil = jax.lax.switch(kind, table, state)
    return state, dict(ctx, recoil=ctx["recoil"] + recoil), damage, nothing


def _condition(tables, state, which, p, o):
    top_o = _top(state, o, 0)
    return jnp.select(
        [which == T.CONDITION_IDS[name] for name in T.CONDITION_IDS],
        [_get(state.damage, (o, 0,)) > 0, _get(state.damage, (p, 0,)) > 0, _get(state.poisoned, (o, 0,)), _get(state.stack_len, (o, 0,)) > 1,
         _get(state.evolved_turn, (p, 0,)) == state.turn, jnp.bool_(False), _get(state.sweets_relay_turn, (p,)) == state.turn - 2],
        False) & (top_o >= 0)


def _attack_damage(tables, state, p, src_slot, slot, damage, where=True):
    """R-4.1 on the opponent's Active; a Benched target takes the base damage (R-4.3). Returns
    (state, damage dealt); nothing changes where `where` is False."""
    o = 1 - p
    attacker_top = _top(state, p, src_slot)
    defender_top = _top(state, o, slot)
    on_active = slot == 0
    bonuses = on_active & ((damage > 0) | ~tables["rule_bonuses_need_damage"])
    names_in = tables["name_sets"][:, tables["name"][attacker_top]]
    boost = _get(state.boost_all, (p,)) + jnp.sum(jnp.where(names_in, _get(state.boost_set, (p,)), 0))
    boost += jnp.where(_get(state.boost_turn, (p, src_slot,)) == state.turn, _get(state.boost, (p, src_slot,)), 0)
    boost -= jnp.where(_get(state.attack_minus_until, (p, src_slot,)) >= state.turn, _get(state.attack_minus, (p, src_slot,)), 0)
    # Weakness only on a result above 0, whatever bonuses_need_damage says of the boosts
    weak = on_active & (damage > 0) & (tables["weakness"][defender_top] == tables["type"][attacker_top])
    reduction = _passive_reduction(tables, defender_top)
    reduction += jnp.where(_get(state.takes_minus_until, (o, slot,)) >= state.turn, _get(state.takes_minus, (o, slot,)), 0)
    full = damage + jnp.where(bonuses, boost, 0) + jnp.where(weak, 20, 0) - reduction
    full = jnp.where(_get(state.prevent_until, (o, slot,)) >= state.turn, 0, full)
    dealt = jnp.where(on_active, jnp.maximum(0, full), jnp.maximum(0, damage - _passive_reduction(tables, defender_top)))
    dealt = jnp.where(where, dealt, 0)
    state = state.replace(damage=_add(state.damage, (o, slot,), dealt))
    # Counterattack / Bristling Spikes (reference _counter_damage)
    ability_weak = tables["rule_weakness_on_ability_damage"] & (tables["weakness"][attacker_top]
                                                                 == tables["type"][defender_top])
    counter = jnp.where(tables["passive"][defender_top] == T.PASSIVE["passive_counter"],
                        tables["passive_params"][defender_top, 0] + jnp.where(ability_weak, 20, 0), 0)
    counter += jnp.where(_get(state.counter_until, (o, slot,)) >= state.turn, _get(state.counter_damage, (o, slot,)), 0)
    hit_back = on_active & (dealt > 0)
    return state.replace(damage=_add(state.damage, (p, src_slot,), jnp.where(hit_back, counter, 0))), dealt


def _passive_reduction(tables, top):
    return jnp.where(tables["passive"][top] == T.PASSIVE["passive_reduce"], tables["passive_params"][top, 0], 0)


def _plain_attack_damage(tables, state, p, slot, amount, where=True):
    """Attack damage with no Weakness or boosts (reference _plain_attack_damage)."""
    dealt = jnp.maximum(0, amount - _passive_reduction(tables, _top(state, p, slot)))
    return state.replace(damage=_add(state.damage, (p, slot,), jnp.where(where, dealt, 0)))


def _attach_from_zone(tables, state, p, slot, energy, count, where=True):
    """Energy from the zone, and the Abilities it triggers (reference _attach_from_zone)."""
    o = 1 - p
    slot = jnp.maximum(slot, 0)
    ok = jnp.logical_and(where, _get(_occupied(state, p), (slot,)) & (count > 0))
    state = state.replace(energy=_add(state.energy, (p, slot, energy,), jnp.where(ok, count, 0)))
    top = _top(state, p, slot)
    passive, params = tables["passive"][top], tables["passive_params"][top]
    triggered = ok & (params[0] == energy)
    heal = triggered & (passive == T.PASSIVE["on_attach_heal"])
    hurt = triggered & (passive == T.PASSIVE["on_attach_damage"])
    healed = jnp.maximum(0, _get(state.damage, (p, slot,)) - params[1] * count)  # count heals of params[1], floored
    state = state.replace(damage=_upd(state.damage, (p, slot), healed, heal))
    return state.replace(damage=_add(state.damage, (o, 0,), jnp.where(hurt, params[1] * count, 0)))


def _heal_slot(state, p, slot, amount, where=True):
    healed = jnp.maximum(0, _get(state.damage, (p, slot,)) - amount)
    return state.replace(damage=_upd(state.damage, (p, slot), healed, jnp.logical_and(where, slot >= 0)))


def _apply_condition(state, p, slot, condition, where=True):
    """R-6.2 (reference _apply_condition); condition: tables.STATUS_IDS."""
    w = jnp.logical_and(where, _get(_occupied(state, p), (slot,)))
    exclusive = jnp.select([condition == 2, condition == 3, condition == 4], [ASLEEP, PARALYZED, CONFUSED], 0)
    is_exclusive = condition >= 2
    state = state.replace(
        poisoned=_upd(state.poisoned, (p, slot), True, w & (condition == 0)),
        burned=_upd(state.burned, (p, slot), True, w & (condition == 1)),
        exclusive=_upd(state.exclusive, (p, slot), exclusive, w & is_exclusive))
    return state.replace(paralyzed_on_turn=_upd(state.paralyzed_on_turn, (p, slot), state.turn, w & (condition == 3)))


def _discard_random_energy(state, p, slot, where=True):
    energy = _get(state.energy, (p, slot,))
    total = jnp.sum(energy)
    live = jnp.logical_and(where, total > 0)
    pick, state = _below(state, total, live)
    cumulative = jnp.cumsum(energy)
    t = jnp.argmax(cumulative > pick)
    return state.replace(energy=_add(state.energy, (p, slot, t,), -live.astype(i32)))


def _owe(state, who, mode, where=True):
    return state.replace(pending=_upd(state.pending, who, _merge_pending(_get(state.pending, (who,)), mode), where))


def _nth_true(mask, n):
    """The index of mask's n-th True (n from 0): a cumulative count instead of a nonzero, which is
    slow under vmap."""
    return jnp.argmax(jnp.cumsum(mask) > n).astype(i32)


def _random_hits(tables, state, p, times, each, where):
    o = 1 - p
    occupied = _occupied(state, o)
    count = jnp.sum(occupied)

    def hit(k, carry):
        state, hits = carry
        live = where & (k < times)
        pick, state = _below(state, count, live)
        return state, hits + jnp.where(live & (jnp.arange(SLOTS) == _nth_true(occupied, pick)), 1, 0)

    state, hits = jax.lax.fori_loop(0, 4, hit, (state, jnp.zeros(SLOTS, i32)))
    for slot in range(SLOTS):
        state, _ = _attack_damage(tables, state, p, 0, slot, each * hits[slot], hits[slot] > 0)
    return state


def _search(tables, state, p, matches, where):
    """reference _search_to_hand / _search_to_bench's pick: below(number of matches) where there is
    one and `where` holds; returns (state, deck index of the pick, picked?)."""
    count = jnp.sum(matches)
    live = where & (count > 0)
    pick, state = _below(state, count, live)
    return state, _nth_true(matches, pick), live


# ops whose handler flips one coin first: the coin flag's parameter (0: p0, 1: p1), or 2 = always
_GATE = {"heal_self": 1, "status": 1, "discard_opp_energy": 0, "defender_cant_attack": 0, "gust": 0, "bounce": 0,
         "discard_opp_hand": 0, "prevent_next_turn": 2}
_GATE_PARAM = np.array([_GATE.get(name, -1) for name in T.OP_KINDS], dtype=np.int32)


def _effect(tables, state, ctx, op):
    """One op after the damage, or one Trainer / Ability op (reference _run_effect).

    Under vmap a lax.switch computes every branch and selects whole states, so the handlers run here
    one after the other instead, each changing only its own fields and only where its kind is the op's
    (the kinds exclude each other): the cost is the sum of what the handlers touch, not 60 states.
    The draws keep the reference's order: a handler's coin comes first (hoisted: one coin for all
    gated kinds), a deck search's pick, then its shuffle (one shuffle for all kinds that shuffle),
    and Red Card's draw after its shuffle."""
    p, o = ctx["p"], 1 - ctx["p"]
    kind, p0, p1 = op[0], op[1], op[2]
    src, target, turn = jnp.maximum(ctx["source"], 0), ctx["target"], state.turn
    has_target = target >= 0
    tgt = jnp.maximum(target, 0)
    ON = {name: kind == T.OP[name] for name in T.OP}
    bench_mask = jnp.array([False, True, True, True])

    gate = jnp.asarray(_GATE_PARAM)[kind]
    gated = (gate == 2) | ((gate == 0) & (p0 == 1)) | ((gate == 1) & (p1 == 1))
    head, state = _coin(state, gated)
    go = ~gated | head

    # heal
    state = _heal_slot(state, p, src, p0, ON["heal_self"] & go)
    state = _heal_slot(state, p, src, ctx["dealt"], ON["drain"])
    state = _heal_slot(state, p, tgt, p0, ON["heal_target"])
    healed = jnp.maximum(0, _get(state.damage, (p,)) - p0)
    state = state.replace(damage=_put(state.damage, (p,),
        jnp.where(ON["heal_each_own"] & _occupied(state, p), healed, _get(state.damage, (p,)))))
    # Special Conditions
    state = _apply_condition(state, o, 0, p0, ON["status"] & go)
    state = _apply_condition(state, p, src, p0, ON["self_status"])
    # Energy
    energy = _get(state.energy, (p, src,))
    typed = _add(energy, (jnp.maximum(p0, 0),), -jnp.minimum(p1, _get(energy, (jnp.maximum(p0, 0),))))
    discarded = jnp.where(p1 < 0, jnp.zeros(8, i32), typed)
    state = state.replace(energy=_upd(state.energy, (p, src), discarded, ON["discard_own_energy"]))
    state = _discard_random_energy(state, o, 0, ON["discard_opp_energy"] & go)
    state = _attach_from_zone(tables, state, p, src, p0, p1, ON["zone_attach_self"])
    state = _attach_from_zone(tables, state, p, tgt, p0, p1, ON["zone_attach_target"] & has_target)

    def flip(k, carry):
        state, heads = carry
        live = ON["zone_attach_coins_target"] & (k < p1)
        head, state = _coin(state, live)
        return state, heads + (head & live).astype(i32)

    state, heads = jax.lax.fori_loop(0, 3, flip, (state, i32(0)))
    state = _attach_from_zone(tables, state, p, tgt, p0, heads, ON["zone_attach_coins_target"] & has_target & (heads > 0))
    pairs = jnp.array([[0, 0], [1, 2], [1, 3], [2, 3]])
    bench = _occupied(state, p)[1:]
    for slot in (1, 2, 3):
        chosen = jnp.where(has_target, jnp.any(_get(pairs, (tgt,)) == slot), bench[slot - 1])
        state = _attach_from_zone(tables, state, p, slot, p0, 1, ON["zone_attach_pair"] & chosen)
    misty_heads, state = _until_tails(state, ON["zone_attach_until_tails_target"])
    state = _attach_from_zone(tables, state, p, tgt, p0, misty_heads,
                              ON["zone_attach_until_tails_target"] & (misty_heads > 0))
    state = _attach_from_zone(tables, state, p, tgt, p0, 1, ON["zone_attach_named_target"])
    state = _attach_from_zone(tables, state, p, 0, p0, 1, ON["zone_attach_active_typed"])
    kind_type = jnp.arange(8) == p0
    from_bench = (bench_mask & _occupied(state, p))[:, None] & kind_type[None, :]  # [4, 8]
    total = jnp.sum(jnp.where(from_bench, _get(state.energy, (p,)), 0))
    mine = jnp.where(from_bench, 0, _get(state.energy, (p,)))
    mine = mine + jnp.where((jnp.arange(SLOTS) == 0)[:, None] & kind_type[None, :], total, 0)
    moved = _put(state.energy, (p,), mine)
    state = state.replace(energy=jnp.where(ON["move_energy_to_active"], moved, state.energy))
    # damage elsewhere
    ctx = dict(ctx, recoil=ctx["recoil"] + jnp.where(ON["recoil"], p0, 0))
    for slot in (1, 2, 3):
        state = _plain_attack_damage(tables, state, o, slot, p0, ON["bench_each"] & _occupied(state, o)[slot])
    side = jnp.where(jnp.asarray(ctx["target_kind"]) <= T.TARGET["opp_bench_basic"], o, p)
    state = _plain_attack_damage(tables, state, side, tgt, p0, ON["damage_target"] & has_target)
    weak = (tables["rule_weakness_on_ability_damage"] & (tgt == 0)  # ⚠: on the Active, under the flag
            & (tables["weakness"][_top(state, o, 0)] == tables["type"][_top(state, p, src)]))
    state = state.replace(damage=_add(state.damage, (o, tgt,),
                                      jnp.where(ON["ability_damage"] & has_target, p0 + jnp.where(weak, 20, 0), 0)))
    state = _random_hits(tables, state, p, p0, p1, ON["random_hits"])
    # timed effects and this turn's modifiers
    state = state.replace(supporter_lock_until=_upd(state.supporter_lock_until, o, turn + 1, ON["supporter_lock"]))
    state = _pokemon_set(state, o, 0, ON["defender_cant_attack"] & go, cant_attack_until=turn + 1)
    state = _pokemon_set(state, o, 0, ON["defender_cant_retreat"], cant_retreat_until=turn + 1)
    state = _pokemon_set(state, o, 0, ON["defender_minus"], attack_minus_until=turn + 1, attack_minus=p0)
    state = _pokemon_set(state, p, src, ON["self_takes_minus"], takes_minus_until=turn + 1, takes_minus=p0)
    state = _pokemon_set(state, p, src, ON["prevent_next_turn"] & go, prevent_until=turn + 1, prevent_effects=p0 == 1)
    state = _pokemon_set(state, p, src, ON["counter_next_turn"], counter_until=turn + 1, counter_damage=p0)
    state = _pokemon_set(state, p, src, ON["next_turn_boost"], boost_turn=turn + 2, boost=p0)
    state = state.replace(boost_all=_add(state.boost_all, (p,), jnp.where(ON["turn_boost"] & (p1 < 0), p0, 0)),
                          boost_set=_add(state.boost_set, (p, jnp.maximum(p1, 0),),
                              jnp.where(ON["turn_boost"] & (p1 >= 0), p0, 0)))
    state = state.replace(retreat_discount=_add(state.retreat_discount, (p,), jnp.where(ON["retreat_discount"], p0, 0)))
    # switching
    switch_self = ON["switch_self"] & has_target
    state = _swap_slots(_leave_active(tables, state, p, switch_self), p, 0, tgt, switch_self)
    forced = ON["force_switch"] & jnp.any(_occupied(state, o)[1:])
    state = _owe(_leave_active(tables, state, o, forced), o, PENDING_SWAP, forced)
    gust = ON["gust"] & go & has_target
    state = _swap_slots(_leave_active(tables, state, o, gust), o, 0, tgt, gust)
    # cards: draws, searches, discards, mill (shuffles after, in one place)
    state = _draw_n(tables, state, p, jnp.where(ON["draw"], p0, 0))
    deck_p = jnp.maximum(_get(state.deck, (p,)), 0)
    in_deck = jnp.arange(DECK) < _get(state.deck_len, (p,))
    wanted = jnp.where(ON["search_hand_basic"], tables["is_basic"][deck_p],
                       tables["is_pokemon"][deck_p] & ((p0 < 0) | (tables["type"][deck_p] == p0)))
    to_hand = ON["search_hand"] | ON["search_hand_basic"]
    state, index, picked = _search(tables, state, p, in_deck & wanted, to_hand & (_get(state.hand_len, (p,)) < tables["rule_hand_limit"]))
    card = _get(state.deck, (p, index,))
    state = _hand_add(_deck_remove(state, p, index, picked), p, card, picked)
    free = _free_bench(state, p)
    named = in_deck & (tables["name"][deck_p] == p0)
    state, index, picked = _search(tables, state, p, named, ON["search_bench"] & (free >= 0))
    card = _get(state.deck, (p, index,))
    state = _put_in_play(_deck_remove(state, p, index, picked), p, jnp.maximum(free, 0), card, picked)
    live = ON["discard_opp_hand"] & go & (_get(state.hand_len, (o,)) > 0)
    pick, state = _below(state, _get(state.hand_len, (o,)), live)
    card = _get(state.hand, (o, pick,))
    state = _discard_add(_hand_remove(state, o, pick, live), o, card, live)
    for who in (p, o):
        state = _mill(state, who, jnp.where(ON["mill"], p0, 0))
    # whole cards leaving play
    bounce = ON["bounce"] & go
    state = _stack_to(state, o, 0, bounce, _deck_add)
    state = _owe(_clear_slot(state, o, 0, bounce), o, PENDING_KO, bounce)
    back = ON["return_active"]
    state = _stack_to(state, p, 0, back, _hand_add)
    state = _owe(_clear_slot(state, p, 0, back), p, PENDING_KO, back)
    red_card = ON["opp_hand_to_deck_draw"]
    state = _hand_to_deck(state, o, red_card)
    # the one shuffle: a searched deck (searches always shuffle), a bounced Pokemon's, Red Card's
    searched = ON["search_hand"] | ON["search_hand_basic"] | ON["search_bench"]
    shuffle_who = jnp.where(searched, p, o)
    state = _shuffle_deck(state, shuffle_who, searched | bounce | red_card)
    state = _draw_n(tables, state, o, jnp.where(red_card, p0, 0))
    return state, ctx


def _draw_n(tables, state, p, count):
    """Up to `count` draws, stopping as _draw does (an empty deck, a full hand): the k cards that move
    are the deck's first k, appended to the hand in order."""
    deck, hand = _get(state.deck, (p,)), _get(state.hand, (p,))
    deck_len, hand_len = _get(state.deck_len, (p,)), _get(state.hand_len, (p,))
    k = jnp.maximum(0, jnp.minimum(jnp.minimum(count, deck_len), tables["rule_hand_limit"] - hand_len))
    h = jnp.arange(HAND)
    new_hand = jnp.where((h >= hand_len) & (h < hand_len + k), _gather_row(deck, h - hand_len), hand)
    d = jnp.arange(DECK)
    new_deck = jnp.where(d < deck_len - k, _gather_row(deck, d + k), -1)
    return state.replace(hand=_put(state.hand, (p,), new_hand), deck=_put(state.deck, (p,), new_deck),
                         hand_len=_add(state.hand_len, (p,), k), deck_len=_add(state.deck_len, (p,), -k))


def _mill(state, who, count):
    """The deck's first min(count, its size) cards to the discard pile, in order."""
    deck, discard = _get(state.deck, (who,)), _get(state.discard, (who,))
    deck_len, discard_len = _get(state.deck_len, (who,)), _get(state.discard_len, (who,))
    k = jnp.maximum(0, jnp.minimum(count, deck_len))
    d = jnp.arange(DECK)
    new_discard = jnp.where((d >= discard_len) & (d < discard_len + k), _gather_row(deck, d - discard_len),
                            discard)
    new_deck = jnp.where(d < deck_len - k, _gather_row(deck, d + k), -1)
    return state.replace(discard=_put(state.discard, (who,), new_discard), deck=_put(state.deck, (who,), new_deck),
                         discard_len=_add(state.discard_len, (who,), k), deck_len=_add(state.deck_len, (who,), -k))


def _hand_to_deck(state, who, where):
    """Red Card's first half: the whole hand to the bottom of the deck, in hand order."""
    deck, hand = _get(state.deck, (who,)), _get(state.hand, (who,))
    deck_len, hand_len = _get(state.deck_len, (who,)), jnp.where(where, _get(state.hand_len, (who,)), 0)
    d = jnp.arange(DECK)
    new_deck = jnp.where((d >= deck_len) & (d < deck_len + hand_len), _gather_row(hand, d - deck_len), deck)
    return state.replace(deck=_put(state.deck, (who,), new_deck), deck_len=_add(state.deck_len, (who,), hand_len),
                         hand=_put(state.hand, (who,), jnp.full(HAND, -1, i32), where),
                         hand_len=_put(state.hand_len, (who,), 0, where))


# ----------------------------------------------------------------------------------------------
# Knock Outs, promotion, the end of a turn, winning

def _knock_outs(tables, state):
    """R-5.1, R-5.2 (reference _knock_outs): the turn player's Pokemon first, slots in order; each
    Knocked-Out stack goes to the discard pile bottom card first. Vectorised over the 4 slots."""
    levels = jnp.arange(STACK)
    for k in range(2):
        who = jnp.where(k == 0, state.current, 1 - state.current)
        tops = _tops(state, who)
        out = _occupied(state, who) & (_get(state.damage, (who,)) >= tables["hp"][tops])
        valid = (out[:, None] & (levels[None, :] < _get(state.stack_len, (who,))[:, None])).reshape(-1)
        positions = _get(state.discard_len, (who,)) + jnp.cumsum(valid) - 1
        lands = valid[:, None] & (positions[:, None] == jnp.arange(DECK)[None, :])  # [12, DECK]
        discard = jnp.where(jnp.any(lands, axis=0),
                            jnp.sum(jnp.where(lands, _get(state.stack, (who,)).reshape(-1)[:, None], 0), axis=0),
                            _get(state.discard, (who,)))
        scored = jnp.sum(jnp.where(out, jnp.where(tables["is_ex"][tops], 2, 1), 0))
        state = state.replace(discard=_put(state.discard, (who,), discard),
                              discard_len=_add(state.discard_len, (who,), jnp.sum(valid)),
                              points=_add(state.points, (1 - who,), scored))
        state = _clear_slots(state, who, out)
        state = _owe(state, who, PENDING_KO, out[0])
    return state


def _clear_slots(state, p, which):
    """_clear_slot on every slot of player p where `which` (bool[4]) holds."""
    out = {}
    for name, value in POKEMON_FIELDS.items():
        array = getattr(state, name)
        out[name] = _put(array, (p,), jnp.where(which, value, _get(array, (p,))))
    out["stack"] = _put(state.stack, (p,), jnp.where(which[:, None], -1, _get(state.stack, (p,))))
    out["stack_len"] = _put(state.stack_len, (p,), jnp.where(which, 0, _get(state.stack_len, (p,))))
    out["energy"] = _put(state.energy, (p,), jnp.where(which[:, None], 0, _get(state.energy, (p,))))
    return state.replace(**out)


def _decide(tables, state):
    """R-5.4, R-5.5 (reference _decide); returns (state, over)."""
    points = state.points >= POINTS_TO_WIN
    empty = ~jnp.any(state.stack_len > 0, axis=1)
    ended = jnp.any(points) | jnp.any(empty)
    # tie_policy "count_conditions": each player scores a condition met; else "empty_board_loses"
    score = points.astype(i32) + empty[::-1].astype(i32)
    by_count = jnp.where(score[0] > score[1], 0, jnp.where(score[1] > score[0], 1, DRAW))
    by_board = jnp.where(jnp.all(empty), DRAW, jnp.where(jnp.any(empty), jnp.where(empty[0], 1, 0),
                         jnp.where(jnp.all(points), DRAW, jnp.where(points[0], 0, 1))))
    winner = jnp.where(tables["rule_tie_count_conditions"], by_count, by_board)
    state = state.replace(winner=jnp.where(ended, winner, state.winner).astype(i32),
                          phase=jnp.where(ended, OVER, state.phase).astype(i32),
                          pending=jnp.where(ended, 0, state.pending).astype(i32))
    return state, ended


def _continue(tables, state):
    """Promotions owed first, then `resume` (reference _continue)."""
    pending = jnp.any(state.pending != PENDING_NONE)
    resume = state.resume
    state = state.replace(phase=jnp.where(pending, PROMOTE, state.phase).astype(i32),
                          resume=jnp.where(pending, resume, RESUME_MAIN).astype(i32))
    state = state.replace(phase=jnp.where(~pending & (resume == RESUME_MAIN), MAIN, state.phase).astype(i32))
    state = jax.lax.cond(~pending & (resume == RESUME_END_TURN), lambda s: _end_turn(tables, s), lambda s: s, state)
    return jax.lax.cond(~pending & (resume == RESUME_NEXT_TURN),
                        lambda s: _start_turn(tables, s, 1 - s.current), lambda s: s, state)


def _promote(tables, state, bench):
    who = decision_player(tables, state)
    mode = _get(state.pending, (who,))
    swap = mode == PENDING_SWAP
    state = _swap_slots(state, who, 0, bench, swap)
    state = _move_slot(state, who, bench, 0, ~swap)
    return state.replace(pending=_put(state.pending, (who,), PENDING_NONE))


def _end_turn(tables, state):
    """R-3.3, end-of-first-turn Abilities, the Checkup (R-6.8), then R-5 and the turn limit (R-5.7)."""
    p = state.current
    state = state.replace(energy_current=_upd(state.energy_current, p, NO_ENERGY, ~tables["rule_energy_carries_over"]),
                          turns_taken=_add(state.turns_taken, (p,), 1))
    first_turn = _get(state.turns_taken, (p,)) == 1
    for slot in range(SLOTS):
        top = _top(state, p, slot)
        fires = (first_turn & _occupied(state, p)[slot]
                 & (tables["passive"][top] == T.PASSIVE["end_of_first_turn_attach"]))
        state = _attach_from_zone(tables, state, p, slot, tables["passive_params"][top, 0], 1, fires)
    state = _checkup(state)
    state = _knock_outs(tables, state)
    state, over = _decide(tables, state)
    limit = ~over & (state.turn >= tables["rule_max_turns"])
    state = state.replace(winner=jnp.where(limit, DRAW, state.winner).astype(i32),
                          phase=jnp.where(limit, OVER, state.phase).astype(i32),
                          pending=jnp.where(limit, 0, state.pending).astype(i32))
    going = ~over & ~limit
    pending = jnp.any(state.pending != PENDING_NONE)
    state = state.replace(phase=jnp.where(going & pending, PROMOTE, state.phase).astype(i32),
                          resume=jnp.where(going & pending, RESUME_NEXT_TURN, state.resume).astype(i32))
    return jax.lax.cond(going & ~pending, lambda s: _start_turn(tables, s, 1 - s.current), lambda s: s, state)


def _checkup(state):
    for k in range(2):
        who = jnp.where(k == 0, state.current, 1 - state.current)
        here = _get(state.stack_len, (who, 0,)) > 0
        damage = _get(state.damage, (who, 0,)) + jnp.where(here & _get(state.poisoned, (who, 0,)), 10, 0)
        burned = here & _get(state.burned, (who, 0,))
        damage = damage + jnp.where(burned, 20, 0)
        state = state.replace(damage=_put(state.damage, (who, 0,), damage))
        head, state = _coin(state, burned)
        state = state.replace(burned=_upd(state.burned, (who, 0), False, burned & head))
        asleep = here & (_get(state.exclusive, (who, 0,)) == ASLEEP)
        head, state = _coin(state, asleep)
        state = state.replace(exclusive=_upd(state.exclusive, (who, 0), 0, asleep & head))
        wears_off = (here & (_get(state.exclusive, (who, 0,)) == PARALYZED) & (who == state.current)
                     & (state.turn > _get(state.paralyzed_on_turn, (who, 0,))))
        state = _pokemon_set(state, who, 0, wears_off, exclusive=0, paralyzed_on_turn=NEVER)
    return state
