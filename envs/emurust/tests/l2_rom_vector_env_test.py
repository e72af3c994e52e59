"""L2: the any-ROM native vector env (`rom_vector_env.py`, `gymnasium.make_vec("envport/GameBoyRust-v0")`)
against N single Rust envs in Gymnasium's SyncVectorEnv, and its refusals."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from envs.emurust.rom_env import GameBoyRomEnv
from envs.emurust.rom_vector_env import GameBoyRomRustVectorEnv
from shared.verification.vector_info import assert_same_vector_info

from .rom_games import GAME_2048, MMUSZKOW_2048, TOBU, TOBU_GAME

ENV_ID = "envport/GameBoyRust-v0"
# mmuszkow's 2048 ends here once its score reaches 8, so that 40 random moves finish some episodes.
SCORE_REACHES_8 = dict(GAME_2048, terminated=lambda wram: int(wram[0x2E9]) | int(wram[0x2EA]) << 8 >= 8)


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP], ids=lambda m: m.value)
@pytest.mark.parametrize("rom, game, observation", [
    (MMUSZKOW_2048, SCORE_REACHES_8, "wram"),
    (TOBU, TOBU_GAME, "screen"),
], ids=["2048-wram", "tobutobugirl-screen"])
def test_vector_env_equals_sync_vector_env(mode, rom, game, observation):
    """Same seeds, same actions: equal observations, rewards, terminations, truncations and infos
    (start delays, final observations) at every step, through terminations, truncations (a short
    time limit) and autoresets."""
    num_envs, limit = 3, 12
    kwargs = dict(rom=rom, observation=observation, max_episode_steps=limit, **game)
    sync = gymnasium.make_vec(ENV_ID, num_envs=num_envs, vectorization_mode="sync",
                              vector_kwargs={"autoreset_mode": mode}, **kwargs)
    native = gymnasium.make_vec(ENV_ID, num_envs=num_envs, autoreset_mode=mode, **kwargs)
    assert isinstance(sync, SyncVectorEnv) and isinstance(native, GameBoyRomRustVectorEnv)
    seeds = [4, 40, 400]
    (obs_a, info_a), (obs_b, info_b) = sync.reset(seed=seeds), native.reset(seed=seeds)
    np.testing.assert_array_equal(obs_a, obs_b)
    assert_same_vector_info(info_a, info_b, "reset")
    rng = np.random.default_rng(2)
    finished_count = terminated_count = 0
    for step in range(40):
        actions = rng.integers(0, native.single_action_space.n, num_envs)
        out_a, out_b = sync.step(actions), native.step(actions)
        for name, a, b in zip(("obs", "reward", "terminated", "truncated"), out_a[:4], out_b[:4], strict=True):
            np.testing.assert_array_equal(a, b, err_msg=f"step {step} {name}")
            assert a.dtype == b.dtype, f"step {step} {name} dtype"
        assert_same_vector_info(out_a[4], out_b[4], f"step {step}")
        finished_count += int((out_a[2] | out_a[3]).sum())
        terminated_count += int(out_a[2].sum())
    assert finished_count >= num_envs * 2, "the time limit should have forced autoresets"
    if game is SCORE_REACHES_8:
        assert terminated_count >= 1, "no episode reached the score"
    assert len({o.tobytes() for o in obs_b}) > 1
    sync.close()
    native.close()


@pytest.mark.parametrize("observation", ["wram", "screen"])
def test_render_gives_the_frames_of_sync_vector_envs(observation):
    """render_mode="rgb_array": each env's screen in the grey palette, equal to the frames the
    single envs render in SyncVectorEnv, through an autoreset; both draw every frame."""
    kwargs = dict(rom=TOBU, observation=observation, render_mode="rgb_array", max_episode_steps=4, **TOBU_GAME)
    sync = gymnasium.make_vec(ENV_ID, num_envs=2, vectorization_mode="sync", **kwargs)
    native = gymnasium.make_vec(ENV_ID, num_envs=2, **kwargs)
    sync.reset(seed=9)
    native.reset(seed=9)
    frames = []
    for step in range(7):
        a, b = sync.render(), native.render()
        assert len(a) == len(b) == 2 and b[0].shape == (144, 160, 3) and b[0].dtype == np.uint8
        for i in range(2):
            np.testing.assert_array_equal(a[i], b[i], err_msg=f"step {step} env {i}")
        frames.append(b[0].tobytes())
        sync.step(np.array([2, 4]))
        native.step(np.array([2, 4]))
    assert len(set(frames)) > 1, "the screen changes"
    with pytest.warns(UserWarning, match="needs render_mode"):
        assert GameBoyRomRustVectorEnv(1, TOBU).render() is None
    sync.close()
    native.close()


def test_make_vec_gives_the_native_env_with_the_registered_time_limit():
    envs = gymnasium.make_vec(ENV_ID, num_envs=2, rom=TOBU, **TOBU_GAME)
    assert isinstance(envs, GameBoyRomRustVectorEnv) and envs.max_episode_steps == 1000
    assert envs.observation_space.shape == (2, 0x2000) and envs.action_space.shape == (2,)
    observations, info = envs.reset(seed=1)
    single = GameBoyRomEnv(TOBU, "rust", **TOBU_GAME)
    np.testing.assert_array_equal(single.reset(seed=2)[0], observations[1])
    assert envs.observation_space.contains(observations)
    envs.close()
    single.close()


@pytest.mark.parametrize("kwargs, error, message", [
    ({"rom": None}, ValueError, "path of a Game Boy ROM"),
    ({"rom": "no/such.gb"}, FileNotFoundError, "ROM not found"),
    ({"num_envs": 0}, ValueError, "num_envs must be a positive int"),
    ({"backend": "pyboy"}, ValueError, "Rust emulator only"),
    ({"render_mode": "human"}, ValueError, "render_mode must be None or one of"),
    ({"timing": "cgb"}, ValueError, "timing must be"),
    ({"autoreset_mode": AutoresetMode.DISABLED}, ValueError, "DISABLED is not supported"),
    ({"max_episode_steps": 0}, ValueError, "max_episode_steps must be a positive int or None"),
    ({"observation": "vram"}, ValueError, "observation must be one of"),
    ({"actions": (0, 256)}, ValueError, "button masks 0..255"),
    ({"frames_per_action": 4, "press_frames": 5}, ValueError, "exceeds frames_per_action"),
    ({"terminated": "yes"}, ValueError, "terminated must be callable"),
    ({"sound_emulated": "yes"}, ValueError, "sound_emulated must be a bool, got 'yes'"),
    ({"threads": -1}, ValueError, r"threads must be in 0..=1024 \(0: Rayon's pool, one per core\), got -1"),
    ({"threads": True}, ValueError, "threads must be an int"),
    ({"frames_per_action": 2**40}, ValueError, r"frames_per_action must be an int in \[1, 2\*\*32 - 1\]"),
])
def test_bad_settings_are_refused(kwargs, error, message):
    settings = {"num_envs": 2, "rom": MMUSZKOW_2048} | kwargs
    with pytest.raises(error, match=message):
        GameBoyRomRustVectorEnv(**settings)


def test_bad_actions_seeds_and_rewards_are_refused():
    envs = GameBoyRomRustVectorEnv(2, MMUSZKOW_2048, reward=lambda before, after: float("nan"))
    with pytest.raises(RuntimeError, match="reset"):
        envs.step(np.zeros(2, np.int64))
    for bad, message in (([1, 2, 3], r"expected 2 seeds \(one per env\), got 3"),
                         (1.5, "seed must be an int, a list of 2 ints or Nones"), (True, "seed must be an int, a list"),
                         ([1, True], r"seed\[1\] must be an int or None, got True")):
        with pytest.raises(ValueError, match=message):
            envs.reset(seed=bad)
    envs.reset(seed=0)
    for bad in (np.zeros(3, np.int64), np.array([0, 11]), np.array([-1, 0]), np.array([0.0, 1.0])):
        with pytest.raises(ValueError, match="actions"):
            envs.step(bad)
    with pytest.raises(ValueError, match="finite number"):
        envs.step(np.zeros(2, np.int64))
    envs.close()


def test_start_state_equals_sync_vector_envs_and_bad_ones_are_refused():
    """Every env starts from the given save state (as the single envs do), and a state the Rust
    emulator cannot take is refused when the vector env is built."""
    single = GameBoyRomEnv(TOBU, "rust", **TOBU_GAME)
    single.reset(seed=0)
    for action in [2] * 30 + [6] * 30:  # play a while: jump, jump right
        single.step(action)
    state = single.save_state()
    kwargs = dict(rom=TOBU, start_state=state, max_episode_steps=5, **TOBU_GAME)
    sync = gymnasium.make_vec(ENV_ID, num_envs=2, vectorization_mode="sync", **kwargs)
    native = gymnasium.make_vec(ENV_ID, num_envs=2, **kwargs)
    (obs_a, info_a), (obs_b, info_b) = sync.reset(seed=3), native.reset(seed=3)
    np.testing.assert_array_equal(obs_a, obs_b)
    assert_same_vector_info(info_a, info_b, "reset")
    fresh, _ = GameBoyRomRustVectorEnv(2, TOBU, **TOBU_GAME).reset(seed=3)
    assert not np.array_equal(obs_b, fresh), "the start state is not the boot"
    for step in range(12):
        out_a, out_b = sync.step(np.array([1, 5])), native.step(np.array([1, 5]))
        for name, a, b in zip(("obs", "reward", "terminated", "truncated"), out_a[:4], out_b[:4], strict=True):
            np.testing.assert_array_equal(a, b, err_msg=f"step {step} {name}")
    with pytest.raises(ValueError, match="cannot be loaded into the rust emulator.*different ROM"):
        GameBoyRomRustVectorEnv(2, MMUSZKOW_2048, start_state=state)
    with pytest.raises(ValueError, match="cannot be loaded into the rust emulator"):
        GameBoyRomRustVectorEnv(2, TOBU, start_state=b"not a state")
    single.close()
    sync.close()
    native.close()
