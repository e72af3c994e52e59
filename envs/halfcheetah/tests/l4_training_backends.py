"""L4's two ways of training many seeds at once (policy_transfer's train_seeds), checked on a one-update
budget, and of scoring many policies at once (evaluate_many_*): each seed must get the same run and
each policy the same score however the work is grouped (a MuJoCo worker process as the parent, a
JAX seed or policy in any program of the set width as in any other), in the order asked, so that
the L4 verdict does not depend on how the work was spread. In the slow tier, with the L4 run that
uses them (about 3.5 minutes on 2 cores, mostly compiling PPO programs)."""

import dataclasses

import jax
import numpy as np
import pytest

from envs.halfcheetah import policy_transfer

pytestmark = pytest.mark.slow
ONE_UPDATE = dataclasses.replace(policy_transfer.L4Settings().ppo, total_timesteps=2048)


def same_params(first, second) -> bool:
    return all(np.array_equal(np.asarray(a), np.asarray(b))
               for a, b in zip(jax.tree.leaves(first), jax.tree.leaves(second), strict=True))


def test_mujoco_worker_processes_train_each_seed_as_one_process_does_and_keep_the_order():
    settings = dataclasses.replace(policy_transfer.L4Settings(), ppo=ONE_UPDATE, workers=2)
    together = policy_transfer.mujoco_backend(settings).train_seeds([3, 4])
    alone = [policy_transfer.train_on_mujoco(settings, seed) for seed in (3, 4)]
    assert same_params(together[0].policy, alone[0].policy)
    assert same_params(together[1].policy, alone[1].policy)
    assert not same_params(together[0].policy, together[1].policy)
    assert list(together[1].curve_steps) == [2048]


def test_a_jax_seed_trains_the_same_whichever_seeds_share_its_program():
    settings = dataclasses.replace(policy_transfer.L4Settings(), ppo=ONE_UPDATE, seeds_per_program=2)
    backend = policy_transfer.jax_backend(settings)
    three = backend.train_seeds([0, 1, 2])  # programs [0, 1] and [2, 2] (the last one padded)
    two = backend.train_seeds([0, 2])  # one program [0, 2]
    assert len(three) == 3 and len(two) == 2
    assert same_params(three[0].policy, two[0].policy)
    assert same_params(three[2].policy, two[1].policy)
    assert not same_params(three[0].policy, three[1].policy)
    assert not same_params(three[1].policy, three[2].policy)


def _moving_policies(count: int) -> list:
    """Fresh networks with weights scaled up, so that their mean actions make the cheetah move."""
    from shared.ppo.core import make_network, make_train_state

    ppo = policy_transfer.L4Settings().ppo
    network = make_network(ppo, 6)
    return [jax.tree.map(lambda x: np.asarray(x) * 3.0, policy_transfer.Policy.of(
        make_train_state(ppo, network, jax.random.PRNGKey(k), (17,)))) for k in range(count)]


def test_mujoco_scores_many_policies_in_workers_as_one_by_one():
    settings = dataclasses.replace(policy_transfer.L4Settings(), workers=2, eval_episodes=2, episode_steps=200)
    policies, seeds = _moving_policies(3), [10, 11, 12]
    together = policy_transfer.evaluate_many_on_mujoco(settings, policies, seeds)
    assert together == [policy_transfer.evaluate_on_mujoco(settings, p, s) for p, s in zip(policies, seeds, strict=False)]
    assert len(set(together)) == 3


def test_jax_scores_a_policy_alike_whichever_policies_share_its_program():
    """Bit for bit within one program width; within float rounding of the one-by-one score (the
    batched matmuls round differently)."""
    settings = dataclasses.replace(policy_transfer.L4Settings(), seeds_per_program=2, eval_episodes=2,
                                   episode_steps=200)
    policies, seeds = _moving_policies(3), [10, 11, 12]
    three = policy_transfer.evaluate_many_on_jax(settings, policies, seeds)  # programs [0, 1] and [2, 2]
    swapped = policy_transfer.evaluate_many_on_jax(settings, [policies[2], policies[0]], [12, 10])
    assert three[0] == swapped[1] and three[2] == swapped[0]
    one_by_one = [policy_transfer.evaluate_on_jax(settings, p, s) for p, s in zip(policies, seeds, strict=False)]
    np.testing.assert_allclose(three, one_by_one, rtol=1e-4, atol=1e-3)
    assert len(set(three)) == 3
