"""L4's evaluation (slow tier, with L4): it meets the same 36 episodes (one per pair of fixed decks)
on both backends. It runs whenever L4 does: ./pants --tag=slow test envs/tcgjax/tests:l4
(its jitted evaluation loop alone took ~500 s to trace and compile on 2 cores, too much for the
default tier)."""

import numpy as np
import pytest

from envs.tcgjax.reference import actions as A
from envs.tcgjax.reference.observation import OBS_SIZE
from envs.tcgjax.tests.components import TCGJAX

pytestmark = pytest.mark.slow  # (also the Pants target's tag)


@TCGJAX.covers("env")
def test_l4_episodes_are_the_same_on_both_backends():
    """L4's evaluation meets the same 36 episodes (one per pair of fixed decks) on both backends: an
    untrained greedy policy wins the same ones after the same number of its decisions."""
    import jax
    import jax.numpy as jnp

    from envs.tcgjax import policy_transfer as L4
    from envs.tcgjax.gym_envs import fixed_pair
    from shared.ppo.core import make_network

    settings = L4.L4Settings(eval_episodes=36)
    network = make_network(settings.jax_ppo, A.NUM_ACTIONS)
    params = network.init(jax.random.PRNGKey(3), jnp.zeros((1, OBS_SIZE)))
    seeds = L4.eval_episode_seeds(settings, 3)
    assert {fixed_pair(int(s)) for s in seeds} == {(i, j) for i in range(6) for j in range(6)}
    on_jax = L4.jax_episode_outcomes(settings, params, seeds)
    on_reference = L4.reference_episode_outcomes(settings, params, seeds)
    assert on_jax.decisions.min() > 0
    np.testing.assert_array_equal(on_jax.won, on_reference.won)
    np.testing.assert_array_equal(on_jax.decisions, on_reference.decisions)
