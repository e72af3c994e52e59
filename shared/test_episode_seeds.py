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
    with pytest.raises(ValueError, match="expected 3 seeds"):
        seeds.per_env([1, 2])


def test_episode_seeds_are_the_single_envs():
    seeds, envs = EpisodeSeeds(2), [SeedRecorder(), SeedRecorder()]
    for index, seed in enumerate(seeds.per_env(40)):
        envs[index].reset(seed=seed)
        assert seeds.episode_seed(index, seed) == envs[index].episode_seed == 40 + index
    drawn = []
    for _ in range(5):  # autoresets: each env draws from its own generator, seeded by the first reset
        for index, env in enumerate(envs):
            env.reset()
            drawn.append(seeds.episode_seed(index, None))
            assert drawn[-1] == env.episode_seed
    assert len(set(drawn)) == len(drawn)
    # an env never seeded draws from fresh entropy, not from a fixed default
    assert len({EpisodeSeeds(1).episode_seed(0, None) for _ in range(4)}) > 1
