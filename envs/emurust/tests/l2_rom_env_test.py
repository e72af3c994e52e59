"""L2: the Gymnasium env for any ROM (`rom_env.py`, `envport/GameBoy-v0` and `envport/GameBoyRust-v0`):
Gymnasium's checker, the same episodes on both emulators, seeding, and its refusals."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from envs.emurust import rom_env
from envs.emurust.reference.pyboy_ref import GREY_PALETTE
from envs.emurust.rom_env import DOWN, LEFT, RIGHT, START, UP, GameBoyRomEnv, counter_increase

from .rom_games import GAME_2048, MMUSZKOW_2048, TOBU, TOBU_GAME

IDS = {"pyboy": "envport/GameBoy-v0", "rust": "envport/GameBoyRust-v0"}


def play(backend: str, rom, seed: int, steps: int, **kwargs):
    env = gymnasium.make(IDS[backend], rom=rom, **kwargs)
    observation, info = env.reset(seed=seed)
    observations, rewards = [observation], []
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        observation, reward, terminated, truncated, _ = env.step(int(rng.integers(env.action_space.n)))
        observations.append(observation)
        rewards.append(reward)
        if terminated or truncated:
            break
    env.close()
    return info["start_delay"], np.array(observations), np.array(rewards)


@pytest.mark.parametrize("backend", ["pyboy", "rust"])
@pytest.mark.parametrize("observation", ["wram", "screen"])
def test_gymnasium_checker_passes(backend, observation):
    env = GameBoyRomEnv(MMUSZKOW_2048, backend, observation=observation, **GAME_2048)
    check_env(env, skip_render_check=True)
    env.close()


@pytest.mark.parametrize("observation", ["wram", "screen"])
@pytest.mark.parametrize("rom, game, seed", [(MMUSZKOW_2048, GAME_2048, 3), (TOBU, TOBU_GAME, 5)],
                         ids=["2048-mmuszkow", "tobutobugirl"])
def test_both_emulators_play_the_same_episode(rom, game, seed, observation):
    ours = play("rust", rom, seed, 200, observation=observation, **game)
    pyboys = play("pyboy", rom, seed, 200, observation=observation, **game)
    assert ours[0] == pyboys[0]
    assert ours[1].shape == pyboys[1].shape == ((201, 0x2000) if observation == "wram" else (201, 144, 160))
    for step, (a, b) in enumerate(zip(ours[1], pyboys[1], strict=True)):
        assert np.array_equal(a, b), f"observation after step {step}"
    assert np.array_equal(ours[2], pyboys[2])
    # The episode moves: the observation changes, and 2048's score rises.
    assert len({o.tobytes() for o in ours[1]}) > 20
    if rom == MMUSZKOW_2048:
        assert ours[2].sum() > 0


def test_the_same_seed_gives_the_same_episode_and_seeds_differ():
    first, again = (play("rust", MMUSZKOW_2048, 11, 60, **GAME_2048) for _ in range(2))
    assert first[0] == again[0]
    assert np.array_equal(first[1], again[1]) and np.array_equal(first[2], again[2])
    delays = {play("rust", MMUSZKOW_2048, seed, 0, **GAME_2048)[0] for seed in range(8)}
    assert len(delays) > 1


def test_terminated_ends_the_episode_until_reset():
    # Ends when 2048's score first passes 0.
    env = GameBoyRomEnv(MMUSZKOW_2048, "rust", terminated=lambda wram: wram[0x2E9] | wram[0x2EA] != 0, **GAME_2048)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(200):
        _, reward, terminated, _, _ = env.step(int(rng.integers(env.action_space.n)))
        if terminated:
            break
    assert terminated and reward > 0, "no score in 200 moves"
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset(seed=3)
    env.step(0)
    env.close()


def test_render_draws_the_screen_in_the_grey_palette():
    env = GameBoyRomEnv(TOBU, "rust", observation="screen", render_mode="rgb_array", **TOBU_GAME)
    observation, _ = env.reset(seed=0)
    image = env.render()
    assert image.shape == (144, 160, 3) and image.dtype == np.uint8
    greys = np.array([[(c >> 16) & 0xFF, (c >> 8) & 0xFF, c & 0xFF] for c in GREY_PALETTE])
    assert np.array_equal(image, greys[observation])
    env.close()


@pytest.mark.parametrize("kwargs, error, message", [
    ({"rom": None}, ValueError, "path of a Game Boy ROM"),
    ({"rom": "no/such.gb"}, FileNotFoundError, "ROM not found"),
    ({"backend": "mame"}, ValueError, "unknown backend"),
    ({"timing": "cgb"}, ValueError, "timing must be"),
    ({"observation": "vram"}, ValueError, "observation must be one of"),
    ({"actions": ()}, ValueError, "non-empty sequence of button masks"),
    ({"actions": (0, 256)}, ValueError, "button masks 0..255"),
    ({"actions": (0, -1)}, ValueError, "button masks 0..255"),
    ({"actions": (True,)}, ValueError, "button masks 0..255"),
    ({"reset_inputs": (START, 300)}, ValueError, "reset_inputs must be a sequence of button masks"),
    ({"frames_per_action": 0}, ValueError, r"frames_per_action must be an int in \[1, 2\*\*32 - 1\], got 0"),
    ({"frames_per_action": 2**40}, ValueError, "frames_per_action must be an int in"),
    ({"max_start_delay": 2**70}, ValueError, "max_start_delay must be an int in"),
    ({"actions": 5}, ValueError, "actions must be a sequence of button masks 0..255, got 5"),
    ({"reset_inputs": 8}, ValueError, "reset_inputs must be a sequence of button masks"),
    ({"backend": "pyboy", "timing": "dmg"}, ValueError, "timing='dmg' is the Rust emulator's hardware timing; PyBoy"),
    ({"backend": "pyboy", "timing": "bogus"}, ValueError, "timing must be 'pyboy' or 'dmg', got 'bogus'"),
    ({"frames_per_action": 4, "press_frames": 5}, ValueError, "exceeds frames_per_action"),
    ({"max_start_delay": 0}, ValueError, "max_start_delay must be an int in"),
    ({"start_frames": 2.5}, ValueError, "start_frames must be an int"),
    ({"reward": 3}, ValueError, "reward must be callable"),
    ({"render_mode": "human"}, ValueError, "render_mode must be"),
    ({"sound_emulated": "yes"}, ValueError, "sound_emulated must be a bool"),
])
def test_bad_settings_are_refused(kwargs, error, message):
    settings = {"rom": MMUSZKOW_2048, "backend": "rust"} | kwargs
    with pytest.raises(error, match=message):
        GameBoyRomEnv(**settings)


@pytest.mark.parametrize("args, message", [
    ((0xC2E9 + 0.5,), "counter_increase's address must be an int"),
    ((0xC2E9, 2.0), "counter_increase's size must be an int"),
    ((0xC2E9, True), "counter_increase's size must be an int"),
])
def test_a_reward_counter_that_is_not_whole_numbers_is_refused_when_made(args, message):
    with pytest.raises(ValueError, match=message):
        counter_increase(*args)


def test_the_2048_envs_refuse_a_timing_their_emulator_does_not_have():
    with pytest.raises(ValueError, match="timing='dmg' is the Rust emulator's hardware timing"):
        gymnasium.make("envport/Game2048-v0", timing="dmg")
    with pytest.raises(ValueError, match="timing must be 'pyboy' or 'dmg', got 'bogus'"):
        gymnasium.make("envport/Game2048Rust-v0", timing="bogus")


@pytest.mark.parametrize("backend", ["pyboy", "rust"])
def test_single_envs_refuse_what_they_used_to_take_or_fail_on_obscurely(backend):
    env = GameBoyRomEnv(MMUSZKOW_2048, backend, terminated=lambda wram: "no")
    with pytest.raises(ValueError, match="seed must be an int or None, got True"):
        env.reset(seed=True)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="the terminated function returned 'no'; it must return a bool"):
        env.step(0)
    with pytest.warns(UserWarning, match=r'render\(\) needs render_mode="rgb_array"'):
        assert env.render() is None
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.save_state()


@pytest.mark.parametrize("backend", ["pyboy", "rust"])
@pytest.mark.parametrize("bad_reward", [float("nan"), float("inf"), "1", None], ids=["nan", "inf", "str", "none"])
def test_bad_actions_and_rewards_are_refused(backend, bad_reward):
    env = GameBoyRomEnv(MMUSZKOW_2048, backend, reward=lambda before, after: bad_reward)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset(seed=0)
    n = len(rom_env.DEFAULT_ACTIONS)
    for action, message in ((-1, "action -1 is out of range"),
                            (n, rf"action {n} is out of range \[0, {n}\); an index into the env's actions"),
                            (1.5, rf"an action is an integer in \[0, {n}\)"),
                            (np.array([0, 1]), r"one action per step, .* got shape \(2,\)")):
        with pytest.raises(ValueError, match=message):
            env.step(action)
    with pytest.raises(ValueError, match="finite number"):
        env.step(0)
    env.close()


def test_counter_increase_reads_the_counter_in_work_ram():
    before, after = np.zeros(0x2000, np.uint8), np.zeros(0x2000, np.uint8)
    before[0x10:0x12] = [0xFF, 0x00]  # 255, little endian
    after[0x10:0x12] = [0x01, 0x01]  # 257
    assert counter_increase(0xC010, size=2)(before, after) == 2.0
    assert counter_increase(0xC010, size=2, byteorder="big")(before, after) == 0x0101 - 0xFF00
    assert counter_increase(0xC011)(before, after) == 1.0
    for address, size in ((0xBFFF, 1), (0xDFFF, 2), (0xE000, 1), (0xC000, 0)):
        with pytest.raises(ValueError, match="not in work RAM"):
            counter_increase(address, size)
    with pytest.raises(ValueError, match="byteorder"):
        counter_increase(0xC000, byteorder="middle")


@pytest.mark.parametrize("backend", ["pyboy", "rust"])
def test_start_state_starts_episodes_where_it_was_saved(backend, tmp_path):
    """An env started from another's save_state() (bytes, or a file) continues that game: with no
    start delay, no reset inputs and one frame per step, its reset (one frame) and then the same
    actions give the observations and rewards the saving env gets by going on."""
    game = dict(GAME_2048, actions=(0, UP, DOWN, LEFT, RIGHT), frames_per_action=1, press_frames=1,
                max_start_delay=1)  # action 0: no button, a frame like the reset's
    saving = GameBoyRomEnv(MMUSZKOW_2048, backend, **game)
    saving.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(300):
        saving.step(int(rng.integers(5)))
    state = saving.save_state()
    (tmp_path / "start.state").write_bytes(state)
    for start_state in (state, tmp_path / "start.state", str(tmp_path / "start.state")):
        started = GameBoyRomEnv(MMUSZKOW_2048, backend, start_state=start_state, **{
            k: v for k, v in game.items() if k not in ("start_frames", "reset_inputs")})
        observation, info = started.reset(seed=5)
        assert info["start_delay"] == 0
        going_on = saving.save_state()
        expected = saving.step(0)[0]
        assert np.array_equal(observation, expected)
        seen, rewards = set(), 0.0
        moves = [[int(direction)] * 10 + [0] * 30 for direction in rng.integers(1, 5, 20)]
        for action in np.concatenate(moves):  # a direction held 10 frames, then released: a move
            a, b = saving.step(int(action)), started.step(int(action))
            assert np.array_equal(a[0], b[0]) and a[1] == b[1]
            seen.add(b[0].tobytes())
            rewards += b[1]
        assert len(seen) > 20 and rewards > 0, "the game went on: tiles moved and merged"
        started.close()
        saving._emulator.load_state(going_on)  # the saving env back where the next check starts
    saving.close()


def test_bad_start_states_are_refused(tmp_path):
    rust = GameBoyRomEnv(MMUSZKOW_2048, "rust")
    rust.reset(seed=0)
    rust_state = rust.save_state()
    with pytest.raises(ValueError, match="cannot be loaded into the pyboy emulator"):
        GameBoyRomEnv(MMUSZKOW_2048, "pyboy", start_state=rust_state)
    with pytest.raises(ValueError, match="cannot be loaded into the rust emulator.*different ROM"):
        GameBoyRomEnv(TOBU, "rust", start_state=rust_state)
    with pytest.raises(ValueError, match="cannot be loaded into the rust emulator"):
        GameBoyRomEnv(MMUSZKOW_2048, "rust", start_state=rust_state[:-7])
    with pytest.raises(FileNotFoundError, match="start_state file not found"):
        GameBoyRomEnv(MMUSZKOW_2048, "rust", start_state=tmp_path / "none.state")
    with pytest.raises(ValueError, match="start_state must be bytes"):
        GameBoyRomEnv(MMUSZKOW_2048, "rust", start_state=123)
    with pytest.raises(ValueError, match="not both"):
        GameBoyRomEnv(MMUSZKOW_2048, "rust", start_state=rust_state, start_frames=120)
    rust.close()
    pyboy = GameBoyRomEnv(MMUSZKOW_2048, "pyboy")
    pyboy.reset(seed=0)
    pyboy_state = pyboy.save_state()
    pyboy.close()
    wyattferguson_2048 = MMUSZKOW_2048.parents[1] / "2048-wyattferguson" / "2048.gb"  # no MBC either
    with pytest.raises(ValueError, match="cannot be loaded into the pyboy emulator.*different ROM"):
        GameBoyRomEnv(wyattferguson_2048, "pyboy", start_state=pyboy_state)
