"""L2: the JAX env's step_batch, which PPO steps, against the env's own step applied game by game (its
own file: step_batch is a program of its own, minutes to compile on 2 cores)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from envs.tcgjax import l3_games
from envs.tcgjax.gym_envs import episode_decks
from envs.tcgjax.reference import actions as A
from envs.tcgjax.tests.components import TCGJAX


def _stack(trees):
    return jax.tree_util.tree_map(lambda *leaves: np.stack(leaves), *trees)


@TCGJAX.covers("env")
def test_step_batch_is_step_game_by_game():
    """step_batch (what PPO steps) gives what step gives each game alone (the observations, states,
    rewards, dones and infos, bit for bit), through auto-resets, cut episodes and illegal actions, both
    when every game loops and when only the few still looping are gathered (compact=4 of 32 games:
    both kinds of pass occur). Game by game, not against vmap(step): vmap is what step_batch is made
    of, and the single-game step is the program l2_envs' episodes compare with the reference."""
    from envs.tcgjax.jax.env import TcgJaxEnv, deck_bank

    env, batch = TcgJaxEnv(), 32
    # two random legal decks (a bank of two, the shape the single-game programs are compiled for),
    # and a cut at 30 decisions so that cut episodes occur too
    params = deck_bank(list(episode_decks("random", 5))).replace(max_decisions=30)
    start, step = l3_games._env_functions()
    batched = jax.jit(lambda k, s, a, p: env.step_batch(k, s, a, p, compact=4))
    rng = np.random.default_rng(0)
    games = [start(jnp.asarray(rng.integers(0, 2, 2), jnp.int32), jnp.uint32(rng.integers(2**32)),
                   jnp.uint32(rng.integers(2**32)), params) for _ in range(batch)]
    obs, state = _stack([jax.device_get(g) for g in games])
    key, passes, cuts, illegal_seen = jax.random.PRNGKey(1), 0, 0, 0
    for _ in range(60):
        key, choose, illegal, step_key = jax.random.split(key, 4)
        mask = obs[:, -A.NUM_ACTIONS:] > 0.5
        actions = np.asarray(jax.random.categorical(choose, jnp.where(mask, 0.0, -jnp.inf)), np.int32)
        actions = np.where(np.asarray(jax.random.uniform(illegal, (batch,))) < 0.02, A.NUM_ACTIONS, actions)
        keys = np.asarray(jax.random.split(step_key, batch))
        got = jax.device_get(batched(keys, state, jnp.asarray(actions, jnp.int32), params))
        expected = _stack([jax.device_get(step(keys[i], jax.tree_util.tree_map(lambda x, i=i: x[i], state),
                                               int(actions[i]), params)) for i in range(batch)])
        jax.tree_util.tree_map(np.testing.assert_array_equal, expected, got)
        obs, state = got[0], got[1]
        passes += int(np.sum(got[3]))
        cuts += int(np.sum(got[4]["truncated"]))
        illegal_seen += int(np.sum(got[4]["illegal_action"]))
    # episodes ended (and auto-reset) within the comparison, some cut, some by an illegal action
    assert passes > 10 and cuts > 0 and illegal_seen > 0, (passes, cuts, illegal_seen)
