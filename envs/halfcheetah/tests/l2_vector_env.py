"""The native vector env (make_vec("envport/HalfCheetahJax-v0", num_envs=N): one vmapped step) plays
the episodes of Gymnasium's SyncVectorEnv of single envs: the same starts, truncations, autoresets and
info, and the same physics up to the order XLA sums in when batched (the README's bound)."""

from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import envs.halfcheetah  # noqa: F401 - registers the ids
from shared.verification.components import Components
from shared.verification.vector_info import assert_same_vector_info

CHEETAH = Components.from_translation_toml(Path(__file__).resolve().parents[1] / "translation.toml")
NUM_ENVS = 3
EPISODE = 25  # short episodes, so that the test crosses two truncations and their autoresets
# the README's bound for the same float32 program batched (measured here: observations bit-equal,
# rewards within one float32 rounding, 6e-8)
RELATIVE_BOUND = 1e-5


def _close(native, single) -> bool:
    return bool(np.all(np.abs(native - single) <= RELATIVE_BOUND * np.maximum(1.0, np.abs(single))))


@CHEETAH.covers("env")
@pytest.mark.parametrize("autoreset_mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP], ids=lambda m: m.name)
@pytest.mark.parametrize("kwargs", [{}, {"exclude_current_positions_from_observation": False, "frame_skip": 3}],
                         ids=["v5-defaults", "all-qpos,frame_skip=3"])
def test_native_vector_env_plays_the_sync_vector_envs_episodes(kwargs, autoreset_mode):
    native = gymnasium.make_vec("envport/HalfCheetahJax-v0", num_envs=NUM_ENVS, max_episode_steps=EPISODE,
                                autoreset_mode=autoreset_mode, **kwargs)
    sync = gymnasium.make_vec("envport/HalfCheetahJax-v0", num_envs=NUM_ENVS, vectorization_mode="sync",
                              vector_kwargs={"autoreset_mode": autoreset_mode}, max_episode_steps=EPISODE, **kwargs)
    assert type(native).__name__ == "HalfCheetahJaxVectorEnv"
    assert native.metadata["autoreset_mode"] == sync.metadata["autoreset_mode"] == autoreset_mode
    assert native.observation_space == sync.observation_space and native.action_space == sync.action_space
    # NEXT_STEP: an episode's 25 steps, then a step that resets; SAME_STEP: the 25th step resets
    period = EPISODE + 1 if autoreset_mode == AutoresetMode.NEXT_STEP else EPISODE
    for seed in (11, [4, 9, 2]):
        native_obs, native_info = native.reset(seed=seed)
        sync_obs, sync_info = sync.reset(seed=seed)
        assert np.array_equal(native_obs, sync_obs) and native_info == sync_info == {}
        restarts = 0
        for step, actions in enumerate(np.random.default_rng(5).uniform(-1.2, 1.2, (2 * EPISODE + 4, NUM_ENVS, 6))):
            native_out, sync_out = native.step(actions), sync.step(actions)
            for native_part, sync_part in zip(native_out, sync_out, strict=True):
                assert type(native_part) is type(sync_part)
            (obs, rewards, terminated, truncated, info), (sync_obs, sync_rewards, sync_terminated, sync_truncated,
                                                          sync_info) = native_out, sync_out
            assert obs.dtype == sync_obs.dtype and rewards.dtype == sync_rewards.dtype
            assert np.array_equal(terminated, sync_terminated) and np.array_equal(truncated, sync_truncated)
            assert truncated.all() == (step % period == EPISODE - 1) and (truncated.all() or not truncated.any())
            assert_same_vector_info(info, sync_info, f"step {step}", _close)
            if info == {} or "final_obs" in info:  # every env starts again, from its own generator
                restarts += 1
                assert np.array_equal(obs, sync_obs)
            else:
                assert _close(obs, sync_obs), step
            assert _close(rewards, sync_rewards), step
            if info == {}:  # NEXT_STEP's resetting step
                assert not rewards.any()
        assert restarts == 2
    native.close()
    sync.close()


@CHEETAH.covers("env")
def test_native_vector_env_starts_as_halfcheetah_v5():
    """Against MuJoCo's HalfCheetah-v5 (SyncVectorEnv of the reference): the same starts after seeded
    and unseeded resets, and a first step within L3's float32 one-step bound (max 4.8e-3 on qvel over
    2,000 states). Further steps part chaotically at contacts (1.8e-2 by step 16 for one seed seen);
    the single JAX env's trajectories are compared with MuJoCo's in l2_gym.py and L3."""
    native = gymnasium.make_vec("envport/HalfCheetahJax-v0", num_envs=NUM_ENVS)
    reference = gymnasium.make_vec("envport/HalfCheetah-v0", num_envs=NUM_ENVS, vectorization_mode="sync")
    actions = np.random.default_rng(1).uniform(-1, 1, (NUM_ENVS, 6))
    for seed in (8, None):  # None: each env's next start from its generator, seeded by the first reset
        obs, _ = native.reset(seed=seed)
        ref_obs, _ = reference.reset(seed=seed)
        assert np.array_equal(obs.astype(np.float32), ref_obs.astype(np.float32))
        obs, rewards, _, _, _ = native.step(actions)
        ref_obs, ref_rewards, _, _, _ = reference.step(actions)
        assert np.abs(obs - ref_obs).max() < 1e-2
        assert np.all(np.abs(rewards - ref_rewards) < 1e-2 * np.maximum(1.0, np.abs(ref_rewards)))
    native.close()
    reference.close()


def test_native_vector_env_refuses_bad_input_before_anything_moves():
    from envs.halfcheetah.vector_env import HalfCheetahJaxVectorEnv

    vector = gymnasium.make_vec("envport/HalfCheetahJax-v0", num_envs=NUM_ENVS)
    with pytest.raises(RuntimeError, match="reset"):
        vector.step(np.zeros((NUM_ENVS, 6)))
    first, _ = vector.reset(seed=0)
    for bad, message in ((np.zeros(6), r"action shape \(6,\); expected \(3, 6\)"),
                         (np.zeros((NUM_ENVS, 5)), r"expected \(3, 6\)"),
                         (np.full((NUM_ENVS, 6), np.nan), "non-finite"), (None, r"action shape \(\)")):
        with pytest.raises(ValueError, match=message):
            vector.step(bad)
    fresh = gymnasium.make_vec("envport/HalfCheetahJax-v0", num_envs=NUM_ENVS)
    fresh.reset(seed=0)
    actions = np.full((NUM_ENVS, 6), 0.5)
    assert np.array_equal(vector.step(actions)[0], fresh.step(actions)[0]), "a refused step moved something"
    for bad, message in (([1, 2.5, 3], r"seed\[1\] must be an int or None"), ([1, 2], "expected 3 seeds"),
                         (-1, "non-negative")):
        with pytest.raises(ValueError, match=message):
            vector.reset(seed=bad)
    for kwargs, message in (({"num_envs": 0}, "num_envs must be a positive int"),
                            ({"num_envs": 2.0}, "num_envs must be a positive int"),
                            ({"max_episode_steps": 0}, "max_episode_steps must be a positive int or None"),
                            ({"autoreset_mode": AutoresetMode.DISABLED}, "DISABLED is not supported"),
                            ({"autoreset_mode": "sometimes"}, "sometimes"),
                            ({"frame_skip": 0}, "frame_skip must be a positive int"),
                            ({"ctrl_cost_weight": float("inf")}, "ctrl_cost_weight must be a finite number")):
        with pytest.raises(ValueError, match=message):
            HalfCheetahJaxVectorEnv(**{"num_envs": 2, **kwargs})
    vector.close()
    fresh.close()


def test_max_episode_steps_none_never_truncates():
    vector = gymnasium.make_vec("envport/HalfCheetahJax-v0", num_envs=2, max_episode_steps=None)
    vector.reset(seed=1)
    for _ in range(30):
        assert not vector.step(np.zeros((2, 6)))[3].any()
    vector.close()
