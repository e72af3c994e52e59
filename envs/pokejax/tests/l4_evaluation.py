"""L4's evaluation (slow tier, with L4): a policy plays the very same battles on PokeJAX (all at
once, a jitted while loop) and on Showdown (the Gymnasium env), so that L4 compares each policy's
two win rates over equal battles. It runs whenever L4 does: ./pants --tag=slow test envs/pokejax/tests:l4
(its evaluation loop alone took ~250 s to compile on 2 cores, too much for the default tier)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from envs.pokejax import policy_transfer
from envs.pokejax.jax.env import OBS_SIZE
from envs.pokejax.tests.components import POKEJAX
from shared.ppo.core import make_network

pytestmark = pytest.mark.slow  # (also the Pants target's tag)

BATTLES = 8


@POKEJAX.covers("battle")
def test_a_policy_wins_the_same_battles_in_as_many_decisions_on_both_backends():
    settings = policy_transfer.L4Settings(eval_battles=BATTLES)
    network = make_network(settings.jax_ppo, 9)
    # an untrained network: greedy on its small random logits, masked to the legal actions
    params = network.init(jax.random.PRNGKey(7), jnp.zeros(OBS_SIZE))
    seeds = policy_transfer.eval_battle_seeds(settings, 3)
    on_jax = policy_transfer.jax_battle_outcomes(settings, params, seeds)
    on_showdown = policy_transfer.showdown_battle_outcomes(settings, params, seeds)  # raises on an illegal action
    assert on_jax.decisions.shape == (BATTLES,) and np.all(on_jax.decisions > 0)
    np.testing.assert_array_equal(on_jax.won, on_showdown.won)
    np.testing.assert_array_equal(on_jax.decisions, on_showdown.decisions)


def test_evaluation_seeds_stay_gymnasium_seeds():
    settings = policy_transfer.L4Settings(eval_battles=500)
    seeds = policy_transfer.eval_battle_seeds(settings, 10_009)
    assert len(set(seeds.tolist())) == 500 and seeds.max() < 2**31
    assert not set(seeds.tolist()) & set(policy_transfer.eval_battle_seeds(settings, 10_008).tolist())
    try:
        policy_transfer.eval_battle_seeds(settings, 30_000)
    except ValueError as error:
        assert "2**31" in str(error)
    else:
        raise AssertionError("a seed past 2**31 was accepted")
