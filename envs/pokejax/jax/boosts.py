"""Gen 1 stat stages as Showdown's gen1 mod keeps them (data/mods/gen1/scripts.ts: boostBy, boost,
modifyStat, and the accuracy check of tryMoveHit), on int32 arrays.

Gen 1 has one Special stat; Showdown stores it as spa and spd and every move that changes one
changes both by the same amount, so one SPECIAL column stands for the pair (the L3 harness checks
that Showdown's two stay equal).

A stage change recomputes the modified stat from the stored one, so it wipes the paralysis speed
quarter and the burn attack half; Showdown then (after any successful boost from a move) re-applies
them to the *user's foe*, whoever was boosted: that is the Gen 1 quirk by which Agility frees the
foe of nothing and a paralysed foe's speed is quartered again.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from envs.pokejax.jax.tables import BOOST_KEYS

# boost columns
ATTACK, DEFENSE, SPECIAL, SPEED, ACCURACY, EVASION = range(6)
NUM_BOOSTS = len(BOOST_KEYS)
MAX_STAGE = 6
STAT_CAP = 999
# Tables as NumPy arrays, made JAX arrays where used: a jnp.array here would start JAX's backends
# when envs.pokejax is imported, and a process forked after that cannot run JAX.
# the multiplier of a lowered stat, in hundredths, by -stage (modifyStat's [100, 66, 50, ...] / 100)
_LOWERED_PERCENT = np.array([100, 66, 50, 40, 33, 28, 25], dtype=np.int32)
# tryMoveHit's accuracy table, in hundredths, by stage + 6
_ACCURACY_PERCENT = np.array([25, 28, 33, 40, 50, 66, 100, 150, 200, 250, 300, 350, 400], dtype=np.int32)


def staged_stat(stored: jax.Array, stage: jax.Array) -> jax.Array:
    """The stat at `stage` (not capped): stored * (2 + stage) / 2 when raised, stored * 66/100 ...
    when lowered, floored, at least 1. (The floats Showdown multiplies by are all at or above their
    decimal values, so integer arithmetic floors to the same numbers.)"""
    raised = stored * (2 + jnp.maximum(stage, 0)) // 2
    lowered = stored * jnp.asarray(_LOWERED_PERCENT)[jnp.clip(-stage, 0, MAX_STAGE)] // 100
    return jnp.maximum(jnp.where(stage >= 0, raised, lowered), 1)


def boost_stat(
    stage: jax.Array, modified: jax.Array, stored: jax.Array, delta: jax.Array, is_stat: jax.Array
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Gen 1 boostBy for one column: (new stage, new modified stat, changed).

    A stat already at 999 that is raised (or at 1 that is lowered) keeps its value and ends one
    stage short of where it would be, and the boost counts as failed; `is_stat` is False for
    accuracy and evasion, which are stages only."""
    blocked = (delta == 0) | ((delta > 0) & (stage >= MAX_STAGE)) | ((delta < 0) & (stage <= -MAX_STAGE))
    target_stage = jnp.clip(stage + delta, -MAX_STAGE, MAX_STAGE)
    stuck = is_stat & (((delta > 0) & (modified == STAT_CAP)) | ((delta < 0) & (modified == 1)))
    new_stage = jnp.where(stuck, target_stage - jnp.sign(delta), target_stage)
    changed = ~blocked & ~stuck
    recomputed = staged_stat(stored, new_stage)
    recomputed = jnp.where(delta > 0, jnp.minimum(recomputed, STAT_CAP), recomputed)
    new_modified = jnp.where(changed & is_stat, recomputed, modified)
    return jnp.where(blocked, stage, new_stage), new_modified, changed


def apply_boosts(
    stages: jax.Array, modified: jax.Array, stored: jax.Array, deltas: jax.Array
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Showdown's battle.boost on one Pokemon: every column of `deltas` (int32[6]) in turn.

    stages: int32[6] (boost columns); modified/stored: int32[4], the atk, def, special, speed
    columns. Returns the new stages, the new modified stats and whether any column changed (the
    move's boost succeeded)."""
    new_stages, new_modified, changed = [], [], []
    for column in range(NUM_BOOSTS):
        is_stat = column < ACCURACY
        stat_column = min(column, SPEED)
        stage, mod, ok = boost_stat(
            stages[column], modified[stat_column], stored[stat_column], deltas[column], jnp.bool_(is_stat)
        )
        new_stages.append(stage)
        changed.append(ok)
        if is_stat:
            new_modified.append(mod)
    return jnp.stack(new_stages), jnp.stack(new_modified), jnp.any(jnp.stack(changed))


def accuracy_threshold(base_threshold: jax.Array, accuracy_stage: jax.Array, evasion_stage: jax.Array) -> jax.Array:
    """The user's accuracy stage, then the target's evasion stage (negated), each floored; 1-255."""
    threshold = base_threshold * jnp.asarray(_ACCURACY_PERCENT)[accuracy_stage + MAX_STAGE] // 100
    threshold = threshold * jnp.asarray(_ACCURACY_PERCENT)[MAX_STAGE - evasion_stage] // 100
    return jnp.clip(threshold, 1, 255)
