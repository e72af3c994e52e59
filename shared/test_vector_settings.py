"""The settings every native vector env takes: good values pass through, bad ones are refused."""

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from shared.vector_settings import checked_autoreset_mode, checked_max_episode_steps, checked_num_envs


def test_good_settings_pass_through():
    assert checked_num_envs(3) == 3 and checked_num_envs(np.int64(2)) == 2
    assert checked_max_episode_steps(None) is None and checked_max_episode_steps(np.int32(7)) == 7
    assert checked_autoreset_mode("SameStep") == AutoresetMode.SAME_STEP
    assert checked_autoreset_mode(AutoresetMode.NEXT_STEP) == AutoresetMode.NEXT_STEP


@pytest.mark.parametrize("check, bad, message", [
    (checked_num_envs, 0, "num_envs must be a positive int, got 0"),
    (checked_num_envs, 2.0, "num_envs must be a positive int, got 2.0"),
    (checked_num_envs, True, "num_envs must be a positive int, got True"),
    (checked_max_episode_steps, 0, "max_episode_steps must be a positive int or None, got 0"),
    (checked_max_episode_steps, 10.5, "max_episode_steps must be a positive int or None"),
    (checked_autoreset_mode, AutoresetMode.DISABLED, "DISABLED is not supported"),
    (checked_autoreset_mode, "sometimes", r"must be AutoresetMode.NEXT_STEP or AutoresetMode.SAME_STEP .*got .sometimes."),
])
def test_bad_settings_are_refused(check, bad, message):
    with pytest.raises(ValueError, match=message):
        check(bad)
