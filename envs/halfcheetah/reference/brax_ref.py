"""Brax's `halfcheetah` env on its `generalized` backend, as a speed comparison only.

Brax's halfcheetah is Brax's own port of the model (its own half_cheetah.xml, loaded by
brax.io.mjcf, stepped by Brax's generalized pipeline): close to Gymnasium's HalfCheetah-v5 in
spirit, not bit-identical to it, so it is never compared for accuracy, only timed beside MJX, MuJoCo
C and ours. Brax's `env.step` already applies its frame skip (n_frames = 5) and computes reward and
observation; it does not auto-reset (Brax does that in a training wrapper). float32, as Brax runs by
default (jax_enable_x64 off). Version pinned in 3rdparty/python/jax-requirements.txt.
"""

from __future__ import annotations

import functools
import warnings

import jax

from .mjx_ref import warp_notices_dropped
from .mujoco_messages import known_notices_silenced


@functools.lru_cache(maxsize=1)
def brax_env():
    with warnings.catch_warnings(), warp_notices_dropped():
        # Brax says at every model load that it is no longer maintained: known, it is a speed comparison
        warnings.filterwarnings("ignore", message="Brax System, piplines and environments are not actively",
                                category=UserWarning)
        from brax import envs

        with known_notices_silenced():  # Brax's xml has the same `settotalmass`
            return envs.get_environment("halfcheetah", backend="generalized")


def make_batched_reset():
    """jit(keys (B, 2)) -> brax State (B,): Brax's own reset noise, one key per env."""
    return jax.jit(jax.vmap(brax_env().reset))


def make_batched_step():
    """jit(state (B,), actions (B, 6)) -> state: one env step (with frame skip) of B envs."""
    return jax.jit(jax.vmap(brax_env().step))


def make_batched_rollout():
    """jit(state (B,), actions (K, B, 6)) -> state: K env steps of B envs fused in one lax.scan
    (how the benchmark times every JAX backend). Nothing is donated: donating the carried state
    made our env's batch-1 rollout 1.7x slower at run time (same compiled program), and every
    backend is called the same way."""
    batched_step = jax.vmap(brax_env().step)

    def rollout(state, actions):
        return jax.lax.scan(lambda s, a: (batched_step(s, a), None), state, actions)[0]

    return jax.jit(rollout)
