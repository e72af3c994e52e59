"""Gen 1 accuracy, critical hits and damage, as Showdown's gen1 mod computes them
(data/mods/gen1/scripts.ts: tryMoveHit's accuracy check and getDamage), on int32 scalars.

Every function that draws takes and returns the step's prng.Draws, and draws exactly when Showdown does:
an immune target draws nothing; accuracy is one randomChance(a, 256) unless the move never misses;
the crit roll is one randomChance(c, 256) when c > 0; the damage roll is one random(217, 256) when
the damage before it is above 1.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from envs.pokejax.jax import prng
from envs.pokejax.jax.tables import ALWAYS_HITS

PHYSICAL, SPECIAL, STATUS = 0, 1, 2
TYPELESS = 15  # tables.TYPELESS's index: never STAB, neutral against everything


def chance_if(draws: prng.Draws, condition: jax.Array, numerator: jax.Array) -> tuple[prng.Draws, jax.Array]:
    """randomChance(numerator, 256) when `condition`, else no draw (and False)."""
    return prng.take_chance(draws, numerator, 256, condition)


def is_immune(chart_x2: jax.Array, move_type: jax.Array, target_types: jax.Array) -> jax.Array:
    """runImmunity: a 0 multiplier against either of the target's types."""
    return (chart_x2[move_type, target_types[0]] == 0) | (chart_x2[move_type, target_types[1]] == 0)


def accuracy_threshold(accuracy: jax.Array) -> jax.Array:
    """The 0-255 threshold of randomChance(a, 256): floor(acc * 255 / 100), then the accuracy and
    evasion stage multipliers (both 100/100 at stage 0), clamped to 1-255."""
    threshold = accuracy * 255 // 100
    return jnp.clip(threshold, 1, 255)


def roll_accuracy(
    draws: prng.Draws, accuracy: jax.Array, attempted: jax.Array, threshold: jax.Array | None = None
) -> tuple[prng.Draws, jax.Array]:
    """(draws, hit) of a move that reached its accuracy check (`attempted`); moves with accuracy
    `true` (ALWAYS_HITS) draw nothing and hit. `threshold` overrides accuracy_threshold(accuracy)."""
    never_misses = accuracy == ALWAYS_HITS
    threshold = accuracy_threshold(accuracy) if threshold is None else threshold
    draws, hit = chance_if(draws, attempted & ~never_misses, threshold)
    return draws, attempted & (never_misses | hit)


def crit_chance(base_speed: jax.Array, crit_ratio: jax.Array, focus_energy: jax.Array) -> jax.Array:
    """Gen 1's speed-based crit threshold (out of 256), with Showdown's Focus Energy bug (quarters it)."""
    chance = base_speed // 2
    chance = jnp.where(focus_energy, chance // 2, jnp.clip(chance * 2, 1, 255))
    chance = jnp.where(crit_ratio == 1, chance // 2, chance)
    return jnp.where(crit_ratio == 2, jnp.clip(chance * 4, 1, 255), chance)


def _gen1_stat_overflow(attack: jax.Array, defense: jax.Array, wrap: jax.Array | bool) -> tuple[jax.Array, jax.Array]:
    """Either stat at 256 or more: both divided by 4 and, if `wrap`, kept to 8 bits (Showdown's
    trunc(x, 8); the custom game's Math.trunc keeps them whole); attack at least 1, and Showdown
    also keeps defense at least 1, where the cartridge would divide by zero."""
    big = (attack >= 256) | (defense >= 256)
    small_attack = jnp.maximum(jnp.where(wrap, (attack // 4) % 256, attack // 4), 1)
    small_defense = jnp.maximum(jnp.where(wrap, (defense // 4) % 256, defense // 4), 1)
    return jnp.where(big, small_attack, attack), jnp.where(big, small_defense, defense)


def base_damage(
    level: jax.Array,
    power: jax.Array,
    attack: jax.Array,
    defense: jax.Array,
    crit: jax.Array,
    halve_defense: jax.Array | bool = False,
    wrap: jax.Array | bool = True,
) -> jax.Array:
    """The formula before STAB, type and the random roll; a crit doubles the level (kept to 8
    bits: levels here are at most 100, so Math.trunc agrees).
    `halve_defense`: Self-Destruct and Explosion against Defense (after the overflow, at least 1);
    `wrap`: stats of 1024 or more wrap (the standard format, see _gen1_stat_overflow)."""
    level = jnp.where(crit, level * 2, level) % 256
    attack, defense = _gen1_stat_overflow(attack, defense, wrap)
    defense = jnp.where(halve_defense, jnp.maximum(defense // 2, 1), defense)
    damage = level * 2 // 5 + 2
    damage = damage * power * attack // defense
    return jnp.clip(damage // 50, 0, 997) + 2


def apply_stab_and_types(
    damage: jax.Array, chart_x2: jax.Array, move_type: jax.Array, user_types: jax.Array, target_types: jax.Array
) -> jax.Array:
    """STAB (+50%, floored), then each of the target's distinct types in order: x2 or x0.5, floored."""
    stab = (move_type != TYPELESS) & ((user_types[0] == move_type) | (user_types[1] == move_type))
    damage = jnp.where(stab, damage + damage // 2, damage)
    for i in range(2):
        # a single-typed Pokemon stores its type twice; Showdown loops over one type
        counts = (i == 0) | (target_types[1] != target_types[0])
        multiplier = chart_x2[move_type, target_types[i]]
        damage = jnp.where(counts & (multiplier == 4), damage * 20 // 10, damage)
        damage = jnp.where(counts & (multiplier == 1), damage * 5 // 10, damage)
    return damage


def roll_damage(draws: prng.Draws, damage: jax.Array, hit: jax.Array) -> tuple[prng.Draws, jax.Array]:
    """The random factor of a move that hit: damage * random(217, 256) / 255, drawn only when
    damage > 1."""
    rolls = hit & (damage > 1)
    draws, factor = prng.take_range(draws, 217, 256, rolls)
    return draws, jnp.where(rolls, damage * factor // 255, damage)
