import warnings

import gymnasium
import pytest

from shared.gym_registration import register_once, submodules_loaded_by_import


def test_register_once_keeps_the_first_registration_without_a_warning():
    env_id = "envport-test/RegisterOnce-v0"
    try:
        register_once(env_id, "gymnasium.envs.classic_control:CartPoleEnv", max_episode_steps=7)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # gymnasium.register warns when it overrides an id
            register_once(env_id, "gymnasium.envs.classic_control:MountainCarEnv", max_episode_steps=9)
        spec = gymnasium.spec(env_id)
        assert (spec.entry_point, spec.max_episode_steps) == ("gymnasium.envs.classic_control:CartPoleEnv", 7)
        assert gymnasium.make(env_id).spec.max_episode_steps == 7
    finally:
        gymnasium.registry.pop(env_id, None)


def test_submodules_loaded_by_import_sees_what_a_package_imports():
    assert "json.decoder" in submodules_loaded_by_import("json")
    with pytest.raises(RuntimeError, match="import no_such_package_here failed"):
        submodules_loaded_by_import("no_such_package_here")
