"""EpisodeSeeds draws what N single Gymnasium envs under SyncVectorEnv would use as episode seeds."""

import gymnasium
import numpy as np
import pytest

from shared.episode_seeds import EpisodeSeeds


class SeedRecorder(gymnasium.Env):
    """A single env that starts each episode from reset's seed, or from one its np_random draws."""

    observation_space = gymnasium.spaces.Discrete(1)
    action_space = gymnasium.spaces.Discrete(1)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.episode_seed = seed if seed is not None else int(self.np_random.integers(2**31))
        return 0, {}


def test_per_env_seeds():
    seeds = EpisodeSeeds(3)
    assert seeds.per_env(None) == [None, None, None]
    assert seeds.per_env(10) == [10, 11, 12]
    assert seeds.per_env(np.int64(10)) == [10, 11, 12]
    assert seeds.per_env([5, None, 7]) == [5, None, 7]
    assert seeds.per_env(np.array([5, 6, 7])) == [5, 6, 7]
    with pytest.raises(ValueError, match="expected 3 seeds"):
        seeds.per_env([1, 2])


@pytest.mark.parametrize("bad, message", [
    ([1.5, 2, 3], r"seed\[0\] must be an int or None, got 1.5"),
    ([1, 2, "3"], r"seed\[2\] must be an int or None, got '3'"),
    ([1, -2, 3], r"seed\[1\] must be non-negative"),
    (1.5, r"seed must be an int, a list of 3 ints or Nones"),
    ("123", r"seed must be an int, a list of 3 ints or Nones"),
    (-1, r"seed must be non-negative"),
])
def test_bad_seeds_are_refused_as_a_single_env_refuses_them(bad, message):
    with pytest.raises(ValueError, match=message):
        EpisodeSeeds(3).per_env(bad)
    # a single env refuses each of these too (Gymnasium's seeding), so refusing is what a
    # SyncVectorEnv of single envs does, not a stricter rule of ours
    with pytest.raises(gymnasium.error.Error):
        for single_seed in (bad if isinstance(bad, list) else [bad]):
            SeedRecorder().reset(seed=single_seed)


def test_a_bool_seed_is_refused():
    # stricter than Gymnasium, which takes True as seed 1: a bool in a seed list is a slip
    with pytest.raises(ValueError, match=r"seed\[1\] must be an int or None, got True"):
        EpisodeSeeds(3).per_env([1, True, 3])


def test_a_limit_names_the_env_and_the_place_of_a_seed_past_it():
    seeds = EpisodeSeeds(3, limit=100, limit_reason="the toy generator takes seeds below")
    assert seeds.per_env(97) == [97, 98, 99]
    with pytest.raises(ValueError, match=r"seed 98 seeds env i with seed \+ i, so with 3 envs it must be below 98 "
                                         r"\(the toy generator takes seeds below 100\)"):
        seeds.per_env(98)
    assert seeds.per_env([99, None, 0]) == [99, None, 0]
    with pytest.raises(ValueError, match=r"seed\[1\] must be below 100 \(the toy generator takes seeds below 100\), "
                                         r"got 100"):
        seeds.per_env([0, 100, None])


def test_a_single_envs_bool_seed_is_refused_as_a_listed_one_is():
    from shared.episode_seeds import refuse_bool_seed

    for seed in (None, 0, np.int64(7)):
        refuse_bool_seed(seed)
    for seed in (True, np.bool_(False)):
        with pytest.raises(ValueError, match="seed must be an int or None, got"):
            refuse_bool_seed(seed)
