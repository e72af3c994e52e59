"""L2: the JAX env's step_batch, which PPO steps, against vmap(step) (its own file: it compiles the
engine step three times, some minutes on 2 cores)."""

from __future__ import annotations

import numpy as np

from envs.tcgjax.reference import actions as A
from envs.tcgjax.tests.components import TCGJAX


@TCGJAX.covers("env")
def test_step_batch_is_vmapped_step():
    """step_batch (what PPO steps) gives vmap(step)'s observations, states, rewards, dones and infos,
    bit for bit, through auto-resets and illegal actions, both when every game loops and when only
    the few still looping are gathered (compact=4 of 32 games: both kinds of pass occur)."""
    import jax
    import jax.numpy as jnp

    from envs.tcgjax.jax.env import TcgJaxEnv

    env, batch = TcgJaxEnv(bank="random"), 32
    params = env.default_params.replace(max_decisions=30)  # cut episodes too
    vmapped = jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0, None)))
    batched = jax.jit(lambda k, s, a, p: env.step_batch(k, s, a, p, compact=4))
    obs, state = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(jax.random.PRNGKey(0), batch), params)
    key, passes = jax.random.PRNGKey(1), 0
    for _ in range(60):
        key, choose, illegal, step_key = jax.random.split(key, 4)
        mask = obs[:, -A.NUM_ACTIONS:] > 0.5
        actions = jax.random.categorical(choose, jnp.where(mask, 0.0, -jnp.inf)).astype(jnp.int32)
        actions = jnp.where(jax.random.uniform(illegal, (batch,)) < 0.02, A.NUM_ACTIONS, actions)
        keys = jax.random.split(step_key, batch)
        expected, got = vmapped(keys, state, actions, params), batched(keys, state, actions, params)
        jax.tree_util.tree_map(np.testing.assert_array_equal, expected, got)
        obs, state = got[0], got[1]
        passes += int(jnp.sum(got[3]))
    assert passes > 10  # episodes ended (and auto-reset) within the comparison
