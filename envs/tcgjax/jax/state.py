"""The JAX engine's game state: fixed-size arrays with sentinels (-1 for "no card"), one pytree per
game (vmap adds the batch axis). Field names follow reference/state.py; per-player fields have a
leading axis of 2, per-Pokemon fields [2, 4] (slot 0 the Active, 1-3 the Bench)."""

from __future__ import annotations

import jax.numpy as jnp
from flax import struct

DECK = 20
HAND = 10
STACK = 3  # Basic (or Fossil), Stage 1, Stage 2
SLOTS = 4
TYPES = 8
MAX_ZONE_TYPES = 3

# phases, resumes and pending promotions
SETUP, MAIN, PROMOTE, OVER = 0, 1, 2, 3
RESUME_MAIN, RESUME_END_TURN, RESUME_NEXT_TURN = 0, 1, 2
PENDING_NONE, PENDING_KO, PENDING_SWAP = 0, 1, 2
ONGOING, DRAW = -1, 2
NEVER = -1
NO_ENERGY = -1
ASLEEP, PARALYZED, CONFUSED = 1, 2, 3


@struct.dataclass
class GameState:
    keys: jnp.ndarray  # uint32[2]
    counter: jnp.ndarray  # uint32
    turn: jnp.ndarray
    current: jnp.ndarray
    first: jnp.ndarray
    phase: jnp.ndarray
    winner: jnp.ndarray
    resume: jnp.ndarray
    setup_done: jnp.ndarray  # bool[2]
    pending: jnp.ndarray  # int32[2]: PENDING_* per player (who promotes first: decision_player, R-5.3)
    # players
    deck: jnp.ndarray  # int32[2, DECK], top first
    deck_len: jnp.ndarray
    hand: jnp.ndarray  # int32[2, HAND]
    hand_len: jnp.ndarray
    discard: jnp.ndarray  # int32[2, DECK]
    discard_len: jnp.ndarray
    points: jnp.ndarray
    energy_types: jnp.ndarray  # int32[2, MAX_ZONE_TYPES]
    n_types: jnp.ndarray
    energy_current: jnp.ndarray
    energy_next: jnp.ndarray
    attached: jnp.ndarray
    supporter_played: jnp.ndarray
    retreated: jnp.ndarray
    retreat_discount: jnp.ndarray
    boost_all: jnp.ndarray  # this turn's "+N to your Pokemon's attacks" (Giovanni)
    boost_set: jnp.ndarray  # int32[2, name sets]: "+N for these names" (Blaine)
    supporter_lock_until: jnp.ndarray
    sweets_relay_turn: jnp.ndarray
    turns_taken: jnp.ndarray
    # Pokemon in play [2, SLOTS]
    stack: jnp.ndarray  # int32[2, SLOTS, STACK]
    stack_len: jnp.ndarray
    damage: jnp.ndarray
    energy: jnp.ndarray  # int32[2, SLOTS, TYPES]
    entered_turn: jnp.ndarray
    evolved_turn: jnp.ndarray
    ability_used_turn: jnp.ndarray
    poisoned: jnp.ndarray
    burned: jnp.ndarray
    exclusive: jnp.ndarray
    paralyzed_on_turn: jnp.ndarray
    cant_attack_until: jnp.ndarray
    cant_retreat_until: jnp.ndarray
    attack_minus_until: jnp.ndarray
    attack_minus: jnp.ndarray
    takes_minus_until: jnp.ndarray
    takes_minus: jnp.ndarray
    prevent_until: jnp.ndarray
    prevent_effects: jnp.ndarray
    counter_until: jnp.ndarray
    counter_damage: jnp.ndarray
    boost_turn: jnp.ndarray
    boost: jnp.ndarray


# Per-Pokemon fields, with the value an empty slot holds (and a Pokemon entering play starts from).
POKEMON_FIELDS = {
    "damage": 0, "entered_turn": 0, "evolved_turn": NEVER, "ability_used_turn": NEVER, "poisoned": False,
    "burned": False, "exclusive": 0, "paralyzed_on_turn": NEVER, "cant_attack_until": NEVER,
    "cant_retreat_until": NEVER, "attack_minus_until": NEVER, "attack_minus": 0, "takes_minus_until": NEVER,
    "takes_minus": 0, "prevent_until": NEVER, "prevent_effects": False, "counter_until": NEVER, "counter_damage": 0,
    "boost_turn": NEVER, "boost": 0,
}
# What leaving the Active Spot clears (reference InPlay.leave_active).
LEAVE_ACTIVE_FIELDS = ("poisoned", "burned", "exclusive", "paralyzed_on_turn", "cant_attack_until",
                       "cant_retreat_until", "attack_minus_until", "attack_minus", "takes_minus_until", "takes_minus",
                       "prevent_until", "prevent_effects", "counter_until", "counter_damage", "boost_turn", "boost")
CONDITION_FIELDS = ("poisoned", "burned", "exclusive", "paralyzed_on_turn")


def empty_state(n_name_sets: int) -> GameState:
    i32 = jnp.int32

    def per_pokemon(value):
        dtype = bool if isinstance(value, bool) else i32
        return jnp.full((2, SLOTS), value, dtype)

    return GameState(
        keys=jnp.zeros(2, jnp.uint32), counter=jnp.uint32(0), turn=i32(0), current=i32(0), first=i32(0),
        phase=i32(SETUP), winner=i32(ONGOING), resume=i32(RESUME_MAIN), setup_done=jnp.zeros(2, bool),
        pending=jnp.zeros(2, i32),
        deck=jnp.full((2, DECK), -1, i32), deck_len=jnp.zeros(2, i32), hand=jnp.full((2, HAND), -1, i32),
        hand_len=jnp.zeros(2, i32), discard=jnp.full((2, DECK), -1, i32), discard_len=jnp.zeros(2, i32),
        points=jnp.zeros(2, i32), energy_types=jnp.zeros((2, MAX_ZONE_TYPES), i32), n_types=jnp.ones(2, i32),
        energy_current=jnp.full(2, NO_ENERGY, i32), energy_next=jnp.full(2, NO_ENERGY, i32),
        attached=jnp.zeros(2, bool), supporter_played=jnp.zeros(2, bool), retreated=jnp.zeros(2, bool),
        retreat_discount=jnp.zeros(2, i32), boost_all=jnp.zeros(2, i32), boost_set=jnp.zeros((2, n_name_sets), i32),
        supporter_lock_until=jnp.full(2, NEVER, i32), sweets_relay_turn=jnp.full(2, NEVER, i32),
        turns_taken=jnp.zeros(2, i32),
        stack=jnp.full((2, SLOTS, STACK), -1, i32), stack_len=jnp.zeros((2, SLOTS), i32),
        energy=jnp.zeros((2, SLOTS, TYPES), i32),
        **{name: per_pokemon(value) for name, value in POKEMON_FIELDS.items()},
    )
