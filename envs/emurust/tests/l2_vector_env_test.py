"""The Rust vector env (vector_2048.py) against N single Rust envs in Gymnasium's SyncVectorEnv,
and the phase runner it is built on against plain frame stepping."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from envs.emurust import game2048, gym_envs  # noqa: F401  (registers the env ids)
from envs.emurust.vector_2048 import FlatFloatObservations, Game2048RustVectorEnv, decode
from shared.verification.vector_info import assert_same_vector_info

from .harness import ROMS, core

ENV_ID = "envport/Game2048Rust-v0"


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP], ids=lambda m: m.value)
def test_vector_env_equals_sync_vector_env(mode):
    """Same seeds, same actions: equal observations, rewards, terminations, truncations and scores
    and infos (as SyncVectorEnv lays them out) at every step, through truncations and autoresets (a short
    time limit forces several)."""
    num_envs, limit = 3, 9
    sync = gymnasium.make_vec(ENV_ID, num_envs=num_envs, vectorization_mode="sync", max_episode_steps=limit,
                              vector_kwargs={"autoreset_mode": mode})
    native = gymnasium.make_vec(ENV_ID, num_envs=num_envs, max_episode_steps=limit, autoreset_mode=mode)
    assert isinstance(sync, SyncVectorEnv) and isinstance(native, Game2048RustVectorEnv)
    seeds = [4, 40, 400]
    (obs_a, info_a), (obs_b, info_b) = sync.reset(seed=seeds), native.reset(seed=seeds)
    np.testing.assert_array_equal(obs_a, obs_b)
    assert_same_vector_info(info_b, info_a, "reset")
    rng = np.random.default_rng(2)
    resets = 0
    for step in range(30):
        actions = rng.integers(0, 4, num_envs)
        out_a, out_b = sync.step(actions), native.step(actions)
        for name, a, b in zip(("obs", "reward", "terminated", "truncated"), out_a[:4], out_b[:4], strict=True):
            np.testing.assert_array_equal(a, b, err_msg=f"step {step} {name}")
        # the whole info: scores, `_key` masks, SAME_STEP's final_obs and final_info
        assert_same_vector_info(out_b[4], out_a[4], f"step {step}")
        finished = out_a[2] | out_a[3]
        resets += int(finished.sum())
        assert (mode == AutoresetMode.SAME_STEP and finished.any()) == ("final_obs" in out_b[4]), f"step {step}"
    assert resets >= num_envs * 2, "the time limit should have forced autoresets"
    sync.close()
    native.close()


def test_render_gives_the_frames_of_sync_vector_envs():
    """render_mode="rgb_array": each env's screen in the grey palette, equal to the frames the
    single envs render in SyncVectorEnv, through an autoreset."""
    sync = gymnasium.make_vec(ENV_ID, num_envs=2, vectorization_mode="sync", max_episode_steps=3,
                              render_mode="rgb_array")
    native = gymnasium.make_vec(ENV_ID, num_envs=2, max_episode_steps=3, render_mode="rgb_array")
    sync.reset(seed=3)
    native.reset(seed=3)
    frames = []
    for step in range(6):
        a, b = sync.render(), native.render()
        assert len(a) == len(b) == 2 and b[1].shape == (144, 160, 3)
        for i in range(2):
            np.testing.assert_array_equal(a[i], b[i], err_msg=f"step {step} env {i}")
        frames.append(b[1].tobytes())
        sync.step(np.array([0, step % 4]))
        native.step(np.array([0, step % 4]))
    assert len(set(frames)) > 1, "the board changes"
    sync.close()
    native.close()


def test_vector_env_reset_seeds_like_sync_and_differ_between_seeds():
    native = Game2048RustVectorEnv(2)
    first, _ = native.reset(seed=5)
    again, _ = native.reset(seed=5)
    other, _ = native.reset(seed=6)
    np.testing.assert_array_equal(first, again)
    single = gym_envs.Game2048Env(backend="rust")
    np.testing.assert_array_equal(single.reset(seed=6)[0], other[0])
    np.testing.assert_array_equal(single.reset(seed=7)[0], other[1])
    assert not np.array_equal(first, other)


def test_decode_equals_the_single_env_functions():
    """Board exponents, score and termination of random boards (full ones included, where the
    termination rule matters) equal game2048's per-board functions."""
    rng = np.random.default_rng(0)
    boards = []
    for k in range(300):
        exponents = rng.integers(0 if k % 2 else 1, 12, (5, 5))
        boards.append(np.where(exponents > 0, 2 ** exponents, 0).astype(np.uint16))
    checkerboard = np.where((np.indices((5, 5)).sum(0) % 2) == 0, 2, 4).astype(np.uint16)
    boards.append(checkerboard)  # full, no equal neighbours: game over
    ram = np.zeros((len(boards), 58), np.uint8)
    scores = rng.integers(0, 65536, len(boards))
    for i, board in enumerate(boards):
        ram[i, :50] = np.frombuffer(board.astype("<u2").tobytes(), np.uint8)
        ram[i, 56:58] = (scores[i] & 0xFF, scores[i] >> 8)
    observations, decoded_scores, terminated = decode(ram)
    for i, board in enumerate(boards):
        np.testing.assert_array_equal(observations[i], game2048.board_exponents(board.astype(np.uint32)))
        assert terminated[i] == (not game2048.can_move(board.astype(np.uint32)))
    np.testing.assert_array_equal(decoded_scores, scores)
    assert terminated[-1] and terminated.sum() >= 1


def test_vector_env_rejects_bad_input():
    native = Game2048RustVectorEnv(2)
    with pytest.raises(RuntimeError, match="reset"):
        native.step(np.zeros(2, np.int64))
    native.reset(seed=0)
    for bad in (np.zeros(3, np.int64), np.array([0, 4]), np.array([-1, 0]), np.array([0.0, 1.0]), [[0, 1]]):
        with pytest.raises(ValueError, match="actions"):
            native.step(bad)
    with pytest.raises(ValueError, match=r"expected 2 seeds \(one per env\), got 3"):
        native.reset(seed=[1, 2, 3])
    with pytest.raises(ValueError, match="timing"):
        Game2048RustVectorEnv(2, timing="cgb")
    with pytest.raises(ValueError, match="sound_emulated must be a bool, got 'yes'"):
        Game2048RustVectorEnv(2, sound_emulated="yes")  # it used to run as True
    with pytest.raises(ValueError, match="DISABLED"):
        Game2048RustVectorEnv(2, autoreset_mode=AutoresetMode.DISABLED)
    native.close()
    native.close()
    for call in (lambda: native.step(np.zeros(2, np.int64)), lambda: native.reset(seed=0), native.render):
        with pytest.raises(RuntimeError, match="is closed: make a new vector env"):
            call()


def test_flat_float_observations_keeps_same_step_final_obs():
    env = FlatFloatObservations(Game2048RustVectorEnv(2, max_episode_steps=2, autoreset_mode=AutoresetMode.SAME_STEP))
    observations, _ = env.reset(seed=1)
    assert observations.shape == (2, 25) and observations.dtype == np.float32
    env.step(np.array([0, 1]))
    _, _, _, truncated, info = env.step(np.array([2, 3]))
    assert truncated.all()
    assert all(final.shape == (25,) and final.dtype == np.float32 for final in info["final_obs"])


@pytest.mark.parametrize("rom", [game2048.ROM_PATH, ROMS / "games" / "tobutobugirl" / "tobutobugirl.gb"],
                         ids=lambda p: p.stem)
def test_draw_last_only_gives_the_fully_rendered_screen(rom):
    """PyBoy's `tick(n, render=True)` draws only the last frame; `run_phases(..., draw_last_only=True)`
    does the same and must show what rendering every frame shows, machine state included."""
    emurust = core()
    drawn = emurust.GameBoy(rom.read_bytes(), render=True)
    lazy = emurust.GameBoy(rom.read_bytes(), render=False)
    rng = np.random.default_rng(3)
    for _ in range(40):
        phases = [(int(rng.integers(0, 256)), int(rng.integers(1, 6))), (0, int(rng.integers(0, 20)))]
        for mask, frames in phases:
            drawn.set_buttons(mask)
            drawn.run_frames(frames)
        lazy.run_phases(phases, draw_last_only=True)
        np.testing.assert_array_equal(lazy.screen, drawn.screen)
        assert lazy.read_range(0x8000, 0x10000) == drawn.read_range(0x8000, 0x10000)
    assert lazy.render is False, "the render setting comes back after the call"
    assert drawn.screen.any()


def test_vector_run_phases_equals_single_consoles():
    emurust = core()
    rom = game2048.ROM_PATH.read_bytes()
    n = 3
    vec = emurust.GameBoyVec(rom, n, threads=2, render=True, power_on="pyboy")
    singles = [emurust.GameBoy(rom, render=True, power_on="pyboy") for _ in range(n)]
    rng = np.random.default_rng(5)
    for _ in range(15):
        buttons = rng.integers(0, 256, (n, 3)).astype(np.uint8)
        frames = rng.integers(0, 8, (n, 3))
        vec.run_phases(buttons, frames)
        for i, gb in enumerate(singles):
            gb.run_phases([(int(b), int(f)) for b, f in zip(buttons[i], frames[i], strict=True)])
    screens = vec.screens()
    for i, gb in enumerate(singles):
        np.testing.assert_array_equal(screens[i], gb.screen)
        assert vec.read_range(0xC000, 0x10000)[i].tobytes() == gb.read_range(0xC000, 0x10000)
    with pytest.raises(ValueError, match="shape"):
        vec.run_phases(np.zeros((2, 3), np.uint8), np.zeros((2, 3), np.int64))
    with pytest.raises(ValueError, match="frames"):
        vec.run_phases(np.zeros((3, 1), np.uint8), np.full((3, 1), -1, np.int64))
    with pytest.raises(ValueError, match="power_on"):
        emurust.GameBoyVec(rom, 1, power_on="cgb")
