"""The observation both TCG engines give an agent: one float32 vector from the view of the player
who decides next, with everything that player may see (its own hand; of the opponent only counts:
no hidden card leaks) and, last, the legal-action mask (what masked PPO reads: `MASK_SLICE`).
During setup the opponent's placement is face down (R-2.3's engine default: neither placement is
visible to the other until both are done): its board slots read as empty and its hand size as before
it placed.

Layout (OBS_SIZE = 715 floats, each in [0, 1]):
    GLOBAL      20   turn / max_turns, my turn?, phase (setup, main, promote), points (me, foe) / 3,
                     deck sizes / 20, hand sizes / 10, discard sizes / 20, this turn's attach,
                     Supporter and retreat used, retreat discount / 2, Supporter-locked?, turn
                     boost / 40, am I the first player?
    ZONE        42   my current Energy (8 types + none), my next (8), the foe's next (8), my zone's
                     types (8), the foe's zone's types (8), one flag: current Energy already used
    BOARD   8 x 59   my slots 0-3 then the foe's 0-3 (0 = Active); per slot POKEMON_FEATURES
    HAND    10 x 7   my hand: present, card index / pool size, Basic, evolution, Item, Supporter, Fossil
    MASK       111   legal actions (actions.py)
"""

from __future__ import annotations

import numpy as np

from envs.tcgjax.reference import actions as A
from envs.tcgjax.reference.cards import ENERGY_TYPES, POKEMON_TYPES
from envs.tcgjax.reference.engine import action_mask, cost_met
from envs.tcgjax.reference.state import ASLEEP, CONFUSED, NO_ENERGY, PARALYZED, Game, InPlay

MAX_HP = 250.0
MAX_DAMAGE = 300.0
GLOBAL_SIZE = 20
ZONE_SIZE = 42
POKEMON_FEATURES = (
    # present, card index / pool size, HP, damage, HP left, type (10), Weakness (10), stage (3), Fossil,
    # ex, retreat / 4, Energy per type / 5 (8), Energy total / 10, Poisoned, Burned, Asleep, Paralyzed,
    # Confused, can't attack, can't retreat, attack minus, takes minus, prevent, counter, boost,
    # entered this turn (evolving counts under evolve_once_per_turn, R-3.6(c)), has an Ability, Ability used this turn, per attack (2): cost met,
    # base damage / 200
    59
)
BOARD_SIZE = 8 * POKEMON_FEATURES
HAND_FEATURES = 7
HAND_SIZE = A.HAND_SLOTS * HAND_FEATURES
MASK_START = GLOBAL_SIZE + ZONE_SIZE + BOARD_SIZE + HAND_SIZE
OBS_SIZE = MASK_START + A.NUM_ACTIONS
MASK_SLICE = (MASK_START, OBS_SIZE)
STAGE_INDEX = {"Basic": 0, "Stage1": 1, "Stage2": 2}


def _scale(value: int, denominator: float) -> float:
    """value times the float32 reciprocal, in float32: the JAX engine does the same multiplication
    (XLA turns a division by a constant into one, which can round differently from a division)."""
    return float(np.float32(value) * np.float32(1.0 / denominator))


def _one_hot(index: int, size: int) -> list[float]:
    out = [0.0] * size
    if 0 <= index < size:
        out[index] = 1.0
    return out


def _pokemon(game: Game, pokemon: InPlay | None) -> list[float]:
    if pokemon is None:
        return [0.0] * POKEMON_FEATURES
    pool, turn = game.pool, game.turn
    card = pool[pokemon.top]
    features = [1.0, _scale(card.index, len(pool)), _scale(card.hp, MAX_HP), _scale(min(pokemon.damage, MAX_DAMAGE), MAX_DAMAGE),
                _scale(max(0, card.hp - pokemon.damage), MAX_HP)]
    features += _one_hot(POKEMON_TYPES.index(card.type), 10)
    features += _one_hot(POKEMON_TYPES.index(card.weakness) if card.weakness else -1, 10)
    features += _one_hot(STAGE_INDEX.get(card.stage, 0), 3)
    features += [float(card.is_fossil), float(card.is_ex), _scale(card.retreat, 4)]
    features += [_scale(min(e, 5), 5) for e in pokemon.energy] + [_scale(min(sum(pokemon.energy), 10), 10)]
    features += [float(pokemon.poisoned), float(pokemon.burned), float(pokemon.exclusive == ASLEEP),
                 float(pokemon.exclusive == PARALYZED), float(pokemon.exclusive == CONFUSED)]
    features += [float(pokemon.cant_attack_until >= turn), float(pokemon.cant_retreat_until >= turn),
                 float(pokemon.attack_minus_until >= turn), float(pokemon.takes_minus_until >= turn),
                 float(pokemon.prevent_until >= turn), float(pokemon.counter_until >= turn),
                 float(pokemon.boost_turn >= turn)]
    features += [float(pokemon.entered_turn == turn), float(card.ability is not None),
                 float(pokemon.ability_used_turn == turn)]
    for i in range(2):
        if i < len(card.attacks):
            features += [float(cost_met(pokemon.energy, card.attacks[i].cost)), _scale(min(card.attacks[i].base, 200), 200)]
        else:
            features += [0.0, 0.0]
    return features


def observe(game: Game, viewer: int | None = None) -> np.ndarray:
    """The observation of `viewer` (default: the player who decides next)."""
    viewer = game.decision_player if viewer is None else viewer
    me, foe = game.players[viewer], game.players[1 - viewer]
    pool, config = game.pool, game.config
    phase = {"setup": 0, "main": 1, "promote": 2}.get(game.phase, -1)
    boost = sum(amount for amount, _ in me.turn_boosts) if game.current == viewer else 0
    face_down = game.phase == "setup"  # the foe's placement is not shown until both have placed
    foe_hand = len(foe.hand) + (len(foe.in_play()) if face_down else 0)
    values = [_scale(min(game.turn, config.max_turns), config.max_turns), float(game.current == viewer)]
    values += _one_hot(phase, 3)
    values += [_scale(min(me.points, 3), 3), _scale(min(foe.points, 3), 3), _scale(len(me.deck), 20), _scale(len(foe.deck), 20),
               _scale(len(me.hand), 10), _scale(foe_hand, 10), _scale(min(len(me.discard), 20), 20),
               _scale(min(len(foe.discard), 20), 20), float(me.attached), float(me.supporter_played), float(me.retreated),
               _scale(min(me.retreat_discount, 2), 2), float(me.supporter_lock_until >= game.turn), _scale(min(boost, 40), 40),
               float(game.first == viewer)]
    values += _one_hot(me.energy_current if me.energy_current != NO_ENERGY else 8, 9)
    values += _one_hot(me.energy_next, 8) + _one_hot(foe.energy_next, 8)
    values += [float(t in me.energy_types) for t in range(len(ENERGY_TYPES))]
    values += [float(t in foe.energy_types) for t in range(len(ENERGY_TYPES))]
    values += [float(me.attached)]
    for player in (me, foe):
        for slot in range(4):
            values += _pokemon(game, None if face_down and player is foe else player.board[slot])
    for h in range(A.HAND_SLOTS):
        if h < len(me.hand):
            card = pool[me.hand[h]]
            values += [1.0, _scale(card.index, len(pool)), float(card.is_basic), float(card.is_pokemon and not card.is_basic),
                       float(card.trainer_type == "Item" and not card.is_fossil),
                       float(card.trainer_type == "Supporter"), float(card.is_fossil)]
        else:
            values += [0.0] * HAND_FEATURES
    mask = action_mask(game) if viewer == game.decision_player else [False] * A.NUM_ACTIONS
    values += [float(m) for m in mask]
    out = np.asarray(values, dtype=np.float32)
    if out.shape != (OBS_SIZE,):
        raise AssertionError(f"observation has {out.shape[0]} values, the layout says {OBS_SIZE}")
    return out
