"""L2: the Python API of the Rust emulator and the Gymnasium envs of both backends: clear errors on
bad input, save states that replay exactly and reject corruption, the zero-copy screen, the
parallel GameBoyVec equal to N single consoles, check_env and same-seed determinism."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from envs.emurust import game2048, gym_envs  # noqa: F401  (registers the env ids)
from shared.gym_registration import submodules_loaded_by_import

from .harness import ROMS, core

GAME = game2048.ROM_PATH


def test_bad_roms_raise_rom_error():
    emurust = core()
    with pytest.raises(emurust.RomError, match="at least 32 KiB"):
        emurust.GameBoy(b"\x00" * 1000)
    rom = bytearray(GAME.read_bytes())
    rom[0x14D] ^= 0xFF
    with pytest.raises(emurust.RomError, match="header checksum"):
        emurust.GameBoy(bytes(rom))
    rom = bytearray(GAME.read_bytes())
    rom[0x147] = 0xFC  # POCKET CAMERA
    rom[0x14D] = (sum(-b - 1 for b in rom[0x134:0x14D])) & 0xFF
    with pytest.raises(emurust.RomError, match="unsupported cartridge"):
        emurust.GameBoy(bytes(rom))


def test_bad_arguments_raise():
    gb = core().GameBoy(GAME.read_bytes())
    with pytest.raises(ValueError, match="unknown button"):
        gb.press("jump")
    with pytest.raises(ValueError, match="0..=255"):
        gb.set_buttons(256)
    with pytest.raises(IndexError):
        gb.read_memory(0x10000)
    with pytest.raises(IndexError):
        gb.read_range(0xC000, 0x10001)
    with pytest.raises(ValueError):
        gb.write_memory(0xC000, 300)
    for frames in (-1, 2**32):
        with pytest.raises(ValueError, match=r"frames must be in 0..=2\*\*32-1"):
            gb.run_frames(frames)
    # a count past 2**60 wrapped the 64-bit cycle count and ran nothing, silently
    cycles = gb.cycles
    for count in (-1, 2**60 + 1, 2**63 - 1):
        with pytest.raises(ValueError, match=r"cycles must be in 0..=2\*\*60"):
            gb.run_cycles(count)
    assert gb.cycles == cycles


def test_bad_vector_arguments_raise_before_anything_runs():
    emurust = core()
    rom = GAME.read_bytes()
    for num_envs in (0, -1, 2**16 + 1):  # 2**62 consoles were allocated until the process was killed
        with pytest.raises(ValueError, match=r"num_envs must be in 1..=65536"):
            emurust.GameBoyVec(rom, num_envs)
    for threads in (-1, 1025):  # 16,384 threads took minutes to start, with the GIL held
        with pytest.raises(ValueError, match=r"threads must be in 0..=1024"):
            emurust.GameBoyVec(rom, 2, threads=threads)
    vec = emurust.GameBoyVec(rom, 2)
    for buttons in (np.zeros(2, np.int64), [0, 0], np.zeros(2, np.float32)):
        with pytest.raises(TypeError, match="buttons must be a numpy uint8"):
            vec.step(buttons, 1)
    with pytest.raises(ValueError, match=r"frames must be in 0..=2\*\*32-1"):
        vec.step(np.zeros(2, np.uint8), -1)
    with pytest.raises(TypeError, match="frames must be a numpy int64"):
        vec.run_phases(np.zeros((2, 1), np.uint8), np.ones((2, 1), np.int32))
    with pytest.raises(TypeError, match="buttons must be a numpy uint8"):
        vec.run_phases(np.zeros((2, 1), np.int64), np.ones((2, 1), np.int64))
    for index in (-1, 2):
        with pytest.raises(IndexError, match=f"env index {index} out of range for 2 envs"):
            vec.save_state(index)
        with pytest.raises(IndexError, match=f"env index {index} out of range for 2 envs"):
            vec.load_state(index, b"")
    assert list(vec.frame_counts) == [0, 0]


def test_reading_the_screen_while_another_thread_runs_frames_is_a_python_error():
    """`screen` raised a Rust panic (pyo3's PanicException, which `except Exception` does not catch)
    when another thread was inside run_frames, which releases the GIL; now a RuntimeError, as every
    other method raises, or a frame."""
    import threading

    gb = core().GameBoy(GAME.read_bytes())
    runner = threading.Thread(target=gb.run_frames, args=(1500,))
    outcomes = set()
    runner.start()
    while runner.is_alive():
        try:
            screen = gb.screen
            outcomes.add("frame" if screen.shape == (144, 160) else "bad shape")
        except BaseException as error:  # noqa: BLE001 - a PanicException is what this test looks for
            outcomes.add(type(error).__name__)
    runner.join()
    assert outcomes <= {"frame", "RuntimeError"}, outcomes
    assert "RuntimeError" in outcomes, "the reads overlapped the run (else the test shows nothing)"


INTERRUPTED_RUNS = r"""
import os, signal, sys, threading, time
import numpy as np
from envs.emurust.build_ext import load_core

core = load_core()
rom = open(sys.argv[1], "rb").read()
gb, vec = core.GameBoy(rom), core.GameBoyVec(rom, 2)
runs = {  # each would take days
    "run_frames": lambda: gb.run_frames(2**32 - 1),
    "run_cycles": lambda: gb.run_cycles(2**60),
    "run_phases": lambda: gb.run_phases([(1, 2**31), (0, 2**31)], draw_last_only=True),
    "GameBoyVec.step": lambda: vec.step(np.zeros(2, np.uint8), 2**32 - 1),
    "GameBoyVec.run_phases": lambda: vec.run_phases(np.array([[1, 0], [2, 4]], np.uint8),
                                                    np.array([[2**31, 2**31], [5, 0]], np.int64), draw_last_only=True),
}
for name, run in runs.items():
    threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()
    started = time.monotonic()
    try:
        run()
        print(name, "returned")
    except KeyboardInterrupt:
        print(name, "interrupted", round(time.monotonic() - started, 1), flush=True)
gb.run_frames(2)
vec.step(np.zeros(2, np.uint8), 2)
print("usable", gb.render, flush=True)
"""


def test_a_ctrl_c_stops_a_long_run_call():
    """The run calls release the GIL, where Python cannot see a signal: they run in slices of an emulated
    second with a look for one between two (rust/src/slices.rs), so a Ctrl-C stops them within
    milliseconds, the console usable after (run_phases' draw_last_only leaves the render setting as
    it was)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    result = subprocess.run([sys.executable, "-c", INTERRUPTED_RUNS, str(GAME)], capture_output=True, text=True,
                            timeout=300, env={**os.environ, "PYTHONPATH": str(root)})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line.rsplit(" ", 1)[0] for line in lines[:5]] == [
        "run_frames interrupted", "run_cycles interrupted", "run_phases interrupted", "GameBoyVec.step interrupted",
        "GameBoyVec.run_phases interrupted"]
    assert all(float(line.rsplit(" ", 1)[1]) < 10 for line in lines[:5]), lines
    assert lines[5] == "usable True"


def test_save_state_replays_and_corruption_is_rejected():
    emurust = core()
    gb = emurust.GameBoy(GAME.read_bytes())
    gb.run_frames(100)
    gb.set_buttons(1 << 3)
    gb.run_frames(5)
    state = gb.save_state()
    gb.set_buttons(1 << 6)
    gb.run_frames(50)
    expected = (gb.read_range(0xC000, 0xE000), np.array(gb.screen), gb.cycles)
    gb.set_buttons(0)
    gb.run_frames(7)
    gb.load_state(state)
    gb.set_buttons(1 << 6)
    gb.run_frames(50)
    assert (gb.read_range(0xC000, 0xE000), gb.cycles) == (expected[0], expected[2])
    np.testing.assert_array_equal(gb.screen, expected[1])

    before = gb.save_state()
    for bad, message in ((state[:-5], "length"), (state[:30] + bytes([state[30] ^ 1]) + state[31:], "checksum"),
                         (b"not a state", "magic")):
        with pytest.raises(emurust.StateError, match=message):
            gb.load_state(bad)
    assert gb.save_state() == before, "a failed load must leave the console unchanged"
    other = emurust.GameBoy((ROMS / "games" / "2048-mmuszkow" / "2048.gb").read_bytes())
    with pytest.raises(emurust.StateError, match="different ROM"):
        other.load_state(state)


def test_screen_is_a_copy_of_the_last_frame():
    """A copy, not a view: run_frames redraws the buffer with the GIL released, so a view could be
    read by another thread while it is written."""
    gb = core().GameBoy(GAME.read_bytes())
    before = gb.screen
    assert before.shape == (144, 160) and before.dtype == np.uint8 and not before.any()
    before[0, 0] = 3  # the caller's own array
    gb.run_frames(60)  # the title screen
    after = gb.screen
    assert before[0, 0] == 3 and not before[1:].any(), "an earlier copy does not follow the console"
    assert set(np.unique(after)) <= {0, 1, 2, 3} and after.any()
    np.testing.assert_array_equal(after, gb.screen)


def test_vector_equals_single_consoles():
    emurust = core()
    rom = GAME.read_bytes()
    n = 4
    vec = emurust.GameBoyVec(rom, n, threads=2)
    singles = [emurust.GameBoy(rom) for _ in range(n)]
    rng = np.random.default_rng(0)
    for _ in range(30):
        masks = rng.integers(0, 256, n).astype(np.uint8)
        vec.step(masks, 3)
        for gb, mask in zip(singles, masks, strict=False):
            gb.set_buttons(int(mask))
            gb.run_frames(3)
    screens = vec.screens()
    ram = vec.read_range(0xC000, 0xE000)
    for i, gb in enumerate(singles):
        np.testing.assert_array_equal(screens[i], gb.screen)
        assert ram[i].tobytes() == gb.read_range(0xC000, 0xE000)
    with pytest.raises(ValueError, match="expected \\(4,\\)"):
        vec.step(np.zeros(3, np.uint8), 1)
    with pytest.raises(IndexError):
        vec.save_state(4)


SOUND_REGISTERS = (0xFF10, 0xFF40)  # NR10-NR52, the unused 0xFF27-0xFF2F and wave RAM


def test_sound_registers_off_read_zero_and_the_setting_survives_load_state():
    """`sound_emulated=False` (PyBoy's rule with its own switch off): all of 0xFF10-0xFF3F reads 0,
    in GameBoy and GameBoyVec, before and after a state is loaded; on (the default), NR52 reads the
    DMG boot ROM's 0xF1 (APU powered, channel 1 on)."""
    emurust = core()
    rom = GAME.read_bytes()
    on, off = emurust.GameBoy(rom), emurust.GameBoy(rom, sound_emulated=False)
    assert (on.sound_emulated, off.sound_emulated) == (True, False)
    assert on.read_memory(0xFF26) == 0xF1
    assert off.read_range(*SOUND_REGISTERS) == bytes(0x30)
    off.write_memory(0xFF26, 0x80)
    off.run_frames(10)
    off.load_state(on.save_state())
    assert not off.sound_emulated and off.read_range(*SOUND_REGISTERS) == bytes(0x30)
    vec = emurust.GameBoyVec(rom, 2, threads=1, sound_emulated=False)
    vec.step(np.zeros(2, np.uint8), 5)
    assert not vec.read_range(*SOUND_REGISTERS).any()
    assert emurust.GameBoyVec(rom, 1, threads=1).read_range(0xFF26, 0xFF27)[0, 0] == 0xF1


@pytest.mark.parametrize("sound_emulated", [False, True])
def test_envs_set_the_sound_registers_alike_on_both_backends(sound_emulated):
    """The envs' `sound_emulated` (off by default) reaches both emulators: after a reset, the sound
    registers read the same on both (all 0 when off; 2048 powers its APU off, so NR52 then reads
    0x70 when on)."""
    registers = []
    for backend in ("pyboy", "rust"):
        kwargs = {} if not sound_emulated else {"sound_emulated": True}
        env = gym_envs.Game2048Env(backend=backend, **kwargs)
        env.reset(seed=0)
        registers.append(bytes(env._emulator.read_memory(*SOUND_REGISTERS)))
        env.close()
    assert registers[0] == registers[1]
    assert registers[0][0xFF26 - 0xFF10] == (0x70 if sound_emulated else 0)
    with pytest.raises(ValueError, match="sound_emulated"):
        gym_envs.Game2048Env(backend="rust", sound_emulated="no")


@pytest.mark.parametrize("env_id", ["envport/Game2048-v0", "envport/Game2048Rust-v0"])
def test_gymnasium_env_checker(env_id):
    env = gymnasium.make(env_id).unwrapped
    check_env(env, skip_render_check=True)
    env.close()


@pytest.mark.parametrize("backend", ["pyboy", "rust"])
def test_same_seed_same_trajectory(backend):
    def play(seed):
        env = gym_envs.Game2048Env(backend=backend)
        observation, info = env.reset(seed=seed)
        out = [observation.copy()]
        rng = np.random.default_rng(123)
        for _ in range(30):
            observation, reward, terminated, truncated, info = env.step(int(rng.integers(4)))
            out.append(observation.copy())
            out.append(reward)
            if terminated:
                break
        env.close()
        return out

    first, again, other = play(5), play(5), play(6)
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other, strict=False))


@pytest.mark.parametrize("backend", ["pyboy", "rust"])
def test_env_rejects_bad_actions_and_step_before_reset(backend):
    env = gym_envs.Game2048Env(backend=backend)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset(seed=0)
    for bad, message in ((4, r"action 4 is out of range \[0, 4\); 0 up, 1 down, 2 left, 3 right"),
                         (-1, "action -1 is out of range"), (1.5, r"an action is an integer in \[0, 4\)"),
                         (2.0, r"got 2.0 \(float64\)"), (True, r"\(bool\)"), ("up", r"\(<U2\)"),
                         (np.array([0, 1]), r"one action per step, .* got shape \(2,\)")):
        with pytest.raises(ValueError, match=message):
            env.step(bad)
    # what shared/discrete_action.py takes, as every env of the repo does
    for good in (np.int8(3), np.array(2), np.array([1], np.uint8)):
        env.step(good)
    env.close()


@pytest.mark.parametrize("env_id", ["envport/Game2048-v0", "envport/Game2048Rust-v0",
                                    "envport/GameBoy-v0", "envport/GameBoyRust-v0"])
def test_a_closed_env_says_so(env_id):
    """PyBoy has stopped after close(): going on is a RuntimeError naming the cause, the same on
    both emulators (PyBoy's own error was an AttributeError on None); closing twice is fine."""
    kwargs = {"rom": GAME} if "GameBoy" in env_id else {}
    env = gymnasium.make(env_id, render_mode="rgb_array", **kwargs)
    env.reset(seed=0)
    env.step(0)
    env.close()
    env.close()
    for call in (lambda: env.step(0), lambda: env.reset(seed=0), env.render):
        with pytest.raises(RuntimeError, match="is closed: make a new env"):
            call()


def test_missing_rom_is_a_clear_error(tmp_path):
    from envs.emurust.reference.pyboy_ref import PyBoyGameBoy
    from envs.emurust.rust_backend import RustGameBoy

    for cls in (PyBoyGameBoy, RustGameBoy):
        with pytest.raises(FileNotFoundError, match="ROM not found"):
            cls(tmp_path / "missing.gb")


SCHEDULER_ROMS = [
    GAME,
    ROMS / "games" / "tobutobugirl" / "tobutobugirl.gb",
    ROMS / "dmg-acid2" / "dmg-acid2.gb",
    ROMS / "blargg" / "cpu_instrs" / "individual" / "02-interrupts.gb",
]


def _assert_same_machine_every_frame(fast, plain, frames: int = 600) -> None:
    """Runs both emulators with the same random buttons and checks that they are the same machine
    on every frame (cycles, registers, screen, WRAM, HRAM, I/O) and, every tenth frame, the whole
    saved state there and somewhere inside the next frame (the window's line counter and WY latch
    are reset at frame boundaries, where the other comparisons are made)."""
    rng = np.random.default_rng(7)
    for frame in range(frames):
        mask = int(rng.integers(0, 256)) if frame % 20 == 0 else None
        for gb in (fast, plain):
            if mask is not None:
                gb.set_buttons(mask)
            gb.run_frames(1)
        assert fast.cycles == plain.cycles, f"frame {frame}"
        assert fast.registers() == plain.registers(), f"frame {frame}"
        assert fast.read_range(0xC000, 0x10000) == plain.read_range(0xC000, 0x10000), f"frame {frame}"
        np.testing.assert_array_equal(fast.screen, plain.screen, err_msg=f"frame {frame}")
        if frame % 10 == 9:
            assert fast.save_state() == plain.save_state(), f"frame {frame}"
            cycles = int(rng.integers(1, 70_224))
            for gb in (fast, plain):
                gb.run_cycles(cycles)
            assert fast.save_state() == plain.save_state(), f"frame {frame}, {cycles} cycles on"


@pytest.mark.parametrize("rom", SCHEDULER_ROMS, ids=lambda p: p.stem)
@pytest.mark.parametrize("power_on", ["dmg", "pyboy"])
@pytest.mark.parametrize("render", [True, False], ids=["render", "no_render"])
def test_lazy_scheduler_equals_eager(rom, power_on, render):
    """The bus runs the PPU only at interrupt/frame boundaries and catches up on access (without
    rendering, whole lines at a time); forcing an event at every PPU stage must give the same
    machine on every frame, here with random buttons, in both timings, drawing and not."""
    emurust = core()
    lazy = emurust.GameBoy(rom.read_bytes(), render=render, power_on=power_on)
    eager = emurust.GameBoy(rom.read_bytes(), render=render, power_on=power_on, eager_events=True)
    _assert_same_machine_every_frame(lazy, eager)


@pytest.mark.parametrize("rom", SCHEDULER_ROMS, ids=lambda p: p.stem)
@pytest.mark.parametrize("power_on", ["dmg", "pyboy"])
@pytest.mark.parametrize("render", [True, False], ids=["render", "no_render"])
def test_skipping_wait_loop_rounds_equals_running_them(rom, power_on, render):
    """Rounds of a wait loop (polling STAT or LY, or counting a register down) that can change
    nothing but its registers and the clock are passed over in one step (`cpu::wait_loops`);
    running every round must give the same machine on every frame. 2048 waits for the PPU this
    way hundreds of times a frame and counts down in high RAM during OAM DMA, so there the skip
    must also have happened (else this test would compare two plain runs)."""
    emurust = core()
    skipping = emurust.GameBoy(rom.read_bytes(), render=render, power_on=power_on)
    plain = emurust.GameBoy(rom.read_bytes(), render=render, power_on=power_on, skip_wait_loops=False)
    _assert_same_machine_every_frame(skipping, plain)
    assert plain.wait_cycles_skipped == 0
    if rom == GAME:
        assert skipping.wait_cycles_skipped > 100 * 600


@pytest.mark.parametrize("rom", SCHEDULER_ROMS, ids=lambda p: p.stem)
@pytest.mark.parametrize("power_on", ["dmg", "pyboy"])
@pytest.mark.parametrize("render", [True, False], ids=["render", "no_render"])
def test_plain_steps_equal_general_steps(rom, power_on, render):
    """Between its looks at the frame, interrupts and the CPU's state, the frame loop runs
    instructions through a plain step whose fetch, read and idle M-cycles do not test for events
    (`bus::PlainStep`); running every instruction through the CPU's general step must give the
    same machine on every frame. The plain path must also have carried many instructions (else
    this test would compare two general runs): both runs execute the same instructions, the
    second all of them as general steps, so the difference of their general steps is the number
    of plain ones."""
    emurust = core()
    plain = emurust.GameBoy(rom.read_bytes(), render=render, power_on=power_on)
    general = emurust.GameBoy(rom.read_bytes(), render=render, power_on=power_on, plain_steps=False)
    _assert_same_machine_every_frame(plain, general)
    assert general.general_steps - plain.general_steps > 50_000


@pytest.mark.parametrize("rom", SCHEDULER_ROMS, ids=lambda p: p.stem)
@pytest.mark.parametrize("render", [True, False], ids=["render", "no_render"])
def test_compiled_blocks_equal_the_interpreter(rom, render):
    """In the PyBoy timing the plain steps run as compiled blocks (`jit`: machine code made from
    the ROM's instructions); running them in the interpreter must give the same machine on every
    frame. The blocks must also have run (else this test would compare two interpreted runs)."""
    emurust = core()
    compiled = emurust.GameBoy(rom.read_bytes(), render=render, power_on="pyboy")
    interpreted = emurust.GameBoy(rom.read_bytes(), render=render, power_on="pyboy", compiled_blocks=False)
    _assert_same_machine_every_frame(compiled, interpreted)
    assert interpreted.compiled_blocks_run == 0
    assert compiled.compiled_blocks_run > 2_000


def test_both_envs_play_the_same_game():
    """Same seed, same moves: the PyBoy env and the Rust env (PyBoy-compatible timing) give the
    same boards, rewards and terminations, step for step."""
    rng = np.random.default_rng(11)
    moves = [int(m) for m in rng.integers(0, 4, 40)]
    outputs = []
    for backend in ("pyboy", "rust"):
        env = gym_envs.Game2048Env(backend=backend)
        observation, info = env.reset(seed=3)
        trace = [observation.tolist(), info["start_delay"]]
        for move in moves:
            observation, reward, terminated, truncated, info = env.step(move)
            trace.append((observation.tolist(), reward, terminated))
            if terminated:
                break
        outputs.append(trace)
        env.close()
    assert outputs[0] == outputs[1]


def test_importing_the_package_loads_none_of_its_modules():
    """Importing the package registers its ids by name only: no module of it is loaded, so importing
    it builds and imports nothing, and `python -m envs.emurust.build_ext` runs without runpy's
    warning that the module was imported before it ran."""
    assert submodules_loaded_by_import("envs.emurust") == []
    for env_id in ("envport/Game2048-v0", "envport/Game2048Rust-v0", "envport/GameBoy-v0", "envport/GameBoyRust-v0"):
        assert gymnasium.spec(env_id).max_episode_steps == 1000
    assert gymnasium.spec("envport/GameBoyRust-v0").vector_entry_point == \
        "envs.emurust.rom_vector_env:GameBoyRomRustVectorEnv"


@pytest.mark.parametrize("backend", ["pyboy", "rust"])
def test_the_adapters_refuse_floats_and_use_after_close(backend):
    """RustGameBoy took set_buttons(1.9) as 1 and run_frames(2.9) as 2, and went on after close();
    PyBoyGameBoy failed after close with an AttributeError on None. Both now refuse alike."""
    from envs.emurust.reference.pyboy_ref import PyBoyGameBoy
    from envs.emurust.rust_backend import RustGameBoy

    gb = (PyBoyGameBoy if backend == "pyboy" else RustGameBoy)(GAME, render=False)
    for call, value in ((gb.set_buttons, 1.9), (gb.set_buttons, "3"), (gb.run_frames, 2.9), (gb.run_frames, -0.5)):
        with pytest.raises(TypeError):
            call(value)
    assert gb.frame_count == 0, "nothing ran"
    gb.run_frames(np.int64(2))  # numpy ints are whole numbers
    assert gb.frame_count > 0
    gb.close()
    gb.close()  # twice is fine
    for call in (lambda: gb.run_frames(1), lambda: gb.set_buttons(1) or gb.run_frames(1), gb.save_state, gb.wram):
        with pytest.raises(RuntimeError, match="is closed"):
            call()
