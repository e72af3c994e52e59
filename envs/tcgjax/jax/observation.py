"""reference/observation.py in JAX: the same 715 floats from the decision player's view (the layout
is documented there; L3 checks the two are equal after every action)."""

from __future__ import annotations

import jax.numpy as jnp

from envs.tcgjax.jax import engine as J
from envs.tcgjax.jax.state import ASLEEP, CONFUSED, HAND, MAIN, NO_ENERGY, PARALYZED, PROMOTE, SETUP, SLOTS
from envs.tcgjax.reference.observation import MAX_DAMAGE, MAX_HP, OBS_SIZE

f32 = jnp.float32


def _scale(value, denominator):
    """reference/observation._scale: value times the float32 reciprocal."""
    return jnp.asarray(value).astype(f32) * f32(1.0 / denominator)


def _one_hot(index, size):
    return (jnp.arange(size) == index).astype(f32)


def _pokemon(tables, state, p, slot, n_cards):
    turn = state.turn
    present = state.stack_len[p, slot] > 0
    top = J._top(state, p, slot)
    hp = tables["hp"][top]
    damage = state.damage[p, slot]
    energy = state.energy[p, slot]
    n_attacks = tables["n_attacks"][top]
    attacks = []
    for i in range(2):
        has = i < n_attacks
        met = J.cost_met(energy, tables["cost_typed"][top, i], tables["cost_colorless"][top, i])
        attacks += [jnp.where(has, met, False).astype(f32)[None],
                    jnp.where(has, _scale(jnp.minimum(tables["attack_base"][top, i], 200), 200), 0.0)[None]]
    exclusive = state.exclusive[p, slot]
    parts = [
        jnp.stack([f32(1.0), _scale(top, n_cards), _scale(hp, MAX_HP), _scale(jnp.minimum(damage, MAX_DAMAGE), MAX_DAMAGE),
                   _scale(jnp.maximum(0, hp - damage), MAX_HP)]),
        _one_hot(tables["type"][top], 10), _one_hot(tables["weakness"][top], 10), _one_hot(tables["stage"][top], 3),
        jnp.stack([tables["is_fossil"][top].astype(f32), tables["is_ex"][top].astype(f32),
                   _scale(tables["retreat"][top], 4)]),
        _scale(jnp.minimum(energy, 5), 5), _scale(jnp.minimum(jnp.sum(energy), 10), 10)[None],
        jnp.stack([state.poisoned[p, slot], state.burned[p, slot], exclusive == ASLEEP, exclusive == PARALYZED,
                   exclusive == CONFUSED]).astype(f32),
        jnp.stack([state.cant_attack_until[p, slot] >= turn, state.cant_retreat_until[p, slot] >= turn,
                   state.attack_minus_until[p, slot] >= turn, state.takes_minus_until[p, slot] >= turn,
                   state.prevent_until[p, slot] >= turn, state.counter_until[p, slot] >= turn,
                   state.boost_turn[p, slot] >= turn]).astype(f32),
        jnp.stack([state.entered_turn[p, slot] == turn, tables["has_ability"][top],
                   state.ability_used_turn[p, slot] == turn]).astype(f32),
        *attacks,
    ]
    features = jnp.concatenate(parts)
    return jnp.where(present, features, jnp.zeros_like(features))


def observe(tables, state, viewer=None) -> jnp.ndarray:
    """float32[OBS_SIZE] (715) for `viewer` (default: the decision player)."""
    viewer = J.decision_player(tables, state) if viewer is None else jnp.asarray(viewer, jnp.int32)
    me, foe = viewer, 1 - viewer
    n_cards = tables["hp"].shape[0]
    phase = jnp.select([state.phase == SETUP, state.phase == MAIN, state.phase == PROMOTE], [0, 1, 2], -1)
    boost = jnp.where(state.current == viewer, state.boost_all[me] + jnp.sum(state.boost_set[me]), 0)
    face_down = state.phase == SETUP  # the foe's placement is not shown until both have placed
    foe_hand = state.hand_len[foe] + jnp.where(face_down, jnp.sum(J._occupied(state, foe)), 0)
    glob = jnp.concatenate([
        jnp.stack([jnp.minimum(state.turn, tables["rule_max_turns"]).astype(f32) * tables["rule_max_turns_reciprocal"],
                   (state.current == viewer).astype(f32)]),
        _one_hot(phase, 3),
        jnp.stack([_scale(jnp.minimum(state.points[me], 3), 3), _scale(jnp.minimum(state.points[foe], 3), 3),
                   _scale(state.deck_len[me], 20), _scale(state.deck_len[foe], 20), _scale(state.hand_len[me], 10),
                   _scale(foe_hand, 10), _scale(jnp.minimum(state.discard_len[me], 20), 20),
                   _scale(jnp.minimum(state.discard_len[foe], 20), 20), state.attached[me].astype(f32),
                   state.supporter_played[me].astype(f32), state.retreated[me].astype(f32),
                   _scale(jnp.minimum(state.retreat_discount[me], 2), 2),
                   (state.supporter_lock_until[me] >= state.turn).astype(f32), _scale(jnp.minimum(boost, 40), 40),
                   (state.first == viewer).astype(f32)]),
    ])
    types = jnp.arange(8)

    def zone_types(p):
        used = jnp.arange(state.energy_types.shape[1]) < state.n_types[p]
        return jnp.any((state.energy_types[p][None, :] == types[:, None]) & used[None, :], axis=1).astype(f32)

    current = jnp.where(state.energy_current[me] == NO_ENERGY, 8, state.energy_current[me])
    zone = jnp.concatenate([_one_hot(current, 9), _one_hot(state.energy_next[me], 8), _one_hot(state.energy_next[foe], 8),
                            zone_types(me), zone_types(foe), state.attached[me].astype(f32)[None]])
    mine = jnp.concatenate([_pokemon(tables, state, me, slot, n_cards) for slot in range(SLOTS)])
    theirs = jnp.concatenate([_pokemon(tables, state, foe, slot, n_cards) for slot in range(SLOTS)])
    board = jnp.concatenate([mine, jnp.where(face_down, jnp.zeros_like(theirs), theirs)])

    def hand_slot(h):
        card = jnp.maximum(state.hand[me, h], 0)
        present = h < state.hand_len[me]
        is_pokemon, is_basic, fossil = tables["is_pokemon"][card], tables["is_basic"][card], tables["is_fossil"][card]
        features = jnp.stack([f32(1.0), _scale(card, n_cards), is_basic.astype(f32), (is_pokemon & ~is_basic).astype(f32),
                              ((tables["trainer"][card] == 1) & ~fossil).astype(f32),
                              (tables["trainer"][card] == 2).astype(f32), fossil.astype(f32)])
        return jnp.where(present, features, jnp.zeros_like(features))

    hand = jnp.concatenate([hand_slot(h) for h in range(HAND)])
    mask = jnp.where(viewer == J.decision_player(tables, state), J.legal_mask(tables, state), False).astype(f32)
    out = jnp.concatenate([glob, zone, board, hand, mask])
    assert out.shape == (OBS_SIZE,), out.shape
    return out

