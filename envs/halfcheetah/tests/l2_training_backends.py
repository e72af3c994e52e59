"""L4's two ways of training many seeds at once (policy_transfer's train_seeds), checked on a one-update
budget: each seed must get the same run however the seeds are grouped (a MuJoCo worker process as the
parent, a JAX seed in any program of the set width as in any other), in the order asked, so that the L4 verdict does not
depend on how the work was spread."""

import dataclasses

import jax
import numpy as np

from envs.halfcheetah import policy_transfer

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
