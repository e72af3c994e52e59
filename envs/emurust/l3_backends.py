"""L3 backends: PyBoy and the Rust emulator stepped one frame at a time, compared frame by frame.

A step is one frame with a button mask (bit i = BUTTONS[i] held); what is compared after every
frame is the screen (observation, DMG shades) and the machine's state: WRAM (0xC000-0xDFFF), HRAM
(0xFF80-0xFFFE), VRAM (0x8000-0x9FFF), OAM (0xFE00-0xFE9F), every I/O register as the CPU reads it
(0xFF00-0xFF7F), IE (0xFFFF), the CPU's registers and the T-cycles since power-on. Registers are
compared in PyBoy's convention for a halted CPU, whose PC stays on its HALT (ours is past it, as on
hardware: `pyboy_pc`).

Alignment. PyBoy always runs its own boot ROM first: the game's first instruction runs during its
65th frame (LY 145). The Rust emulator starts at 0x0100 in the state PyBoy's boot ROM leaves
(`power_on="pyboy"`: its registers, DIV phase and LCD position), so one frame of ours ends where
PyBoy's 65th ends; its VRAM is PyBoy's after the boot ROM (the logo, copied from PyBoy at run
time, since our emulator does not run PyBoy's boot ROM). `reset` returns to that first frame boundary of the game (a saved state), so
every episode starts from the same state on both.

Inputs: `Scripted2048Inputs` plays 2048 as the env does (a seeded wait on the title screen, START,
then random directions held 4 frames and released 20), so episodes cover the game's RNG seeding,
moves, merges and the score.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from shared.verification.l3 import StepOutput

from . import game2048
from .reference.pyboy_ref import HRAM, WRAM, PyBoyGameBoy
from .rust_backend import RustGameBoy

# PyBoy's frame in which the game's first instruction runs; ours starts in it (at 0x0100).
PYBOY_FIRST_GAME_FRAME = 65
# Episodes start one frame later, at the end of the game's first full frame: the screen at the end
# of frame 65 is the boot logo drawn by PyBoy before 0x0100, which ours (starting at line 145) never
# drew; from the next frame on, both draw the same lines.
PYBOY_BOOT_FRAMES = PYBOY_FIRST_GAME_FRAME + 1
OURS_BOOT_FRAMES = 2


VRAM = (0x8000, 0xA000)
# What the state compares, as [start, stop) address ranges read as the CPU reads them.
REGIONS = {
    "wram": WRAM, "hram": HRAM, "vram": VRAM, "oam": (0xFE00, 0xFEA0), "io": (0xFF00, 0xFF80),
    "ie": (0xFFFF, 0x10000),
}
CPU_REGISTERS = ("a", "f", "b", "c", "d", "e", "h", "l", "sp", "pc")


def pyboy_pc(registers: dict) -> int:
    """PC as PyBoy 2.8.1 holds it: on a halted CPU's HALT (its HALT leaves PC there and the wake
    steps over it: pyboy/core/opcodes.py `HALT_76`, core/cpu.py `tick` and `check_interrupts`),
    where ours, as the hardware, is past it. PyBoy has no `halted` in its public API, so ours says."""
    return (registers["pc"] - 1) & 0xFFFF if registers.get("halted") else registers["pc"]


def pyboy_registers(registers: dict) -> dict:
    """Either emulator's `cpu_registers()` as compared: CPU_REGISTERS, PC in PyBoy's convention."""
    return {name: registers[name] for name in CPU_REGISTERS[:-1]} | {"pc": pyboy_pc(registers)}


class FrameBackend:
    """One emulator as an L3 RolloutBackend over frames."""

    def __init__(self, name: str, emulator, boot_frames: int):
        self.name = name
        self._emulator = emulator
        emulator.set_buttons(0)
        emulator.run_frames(boot_frames)
        self._start = emulator.save_state()

    def _output(self) -> StepOutput:
        emulator = self._emulator
        registers = list(pyboy_registers(emulator.cpu_registers()).values())
        state = {name: np.frombuffer(emulator.read_memory(*span), dtype=np.uint8) for name, span in REGIONS.items()}
        state["cpu"] = np.array(registers, dtype=np.int32)
        state["cycles"] = np.int64(emulator.cycles())
        return StepOutput(observation=emulator.screen_shades(), state=state)

    def reset(self, seed: int) -> StepOutput:
        self._emulator.load_state(self._start)
        self._emulator.set_buttons(0)
        return self._output()

    def step(self, action) -> StepOutput:
        self._emulator.set_buttons(int(action))
        self._emulator.run_frames(1)
        return self._output()


def pyboy_backend(rom: Path = game2048.ROM_PATH, sound_emulated: bool = True) -> FrameBackend:
    """PyBoy on `rom`; `sound_emulated` is PyBoy's own switch (False: its sound registers read 0)."""
    return FrameBackend("pyboy", PyBoyGameBoy(rom, sound_emulated=sound_emulated), PYBOY_BOOT_FRAMES)


# PyBoy is still in its boot ROM after this many frames, past the point where it draws its logo.
PYBOY_LOGO_FRAMES = PYBOY_FIRST_GAME_FRAME - 1


def pyboy_boot_vram() -> bytes:
    """VRAM as PyBoy's boot ROM leaves it (its logo, shown until the game redraws the screen);
    read from PyBoy at run time, the same for every cartridge."""
    pyboy = PyBoyGameBoy(game2048.ROM_PATH)
    pyboy.run_frames(PYBOY_LOGO_FRAMES)
    vram = pyboy.read_memory(*VRAM)
    pyboy.close()
    return vram


def rust_backend(rom: Path = game2048.ROM_PATH, sound_emulated: bool = True) -> FrameBackend:
    """Ours on `rom` in PyBoy's power-on state and timing; `sound_emulated` as PyBoy's."""
    emulator = RustGameBoy(rom, power_on="pyboy", sound_emulated=sound_emulated)
    for offset, value in enumerate(pyboy_boot_vram()):
        emulator.core.write_memory(VRAM[0] + offset, value)
    return FrameBackend("emurust", emulator, OURS_BOOT_FRAMES)


TEST_ROMS = game2048.HERE / "data" / "roms"
# Every test ROM (blargg's, mooneye's, dmg-acid2), each run for SUITE_FRAMES frames by the sweeps.
SUITE_ROMS = sorted(path.relative_to(TEST_ROMS).as_posix() for path in TEST_ROMS.rglob("*.gb")
                    if path.relative_to(TEST_ROMS).parts[0] != "games")
SUITE_FRAMES = 600


def assert_same_frames(pyboy, ours, frames: int) -> list:
    """Steps both backends `frames` frames with no buttons, asserting the screen and the whole
    state equal at every frame end; returns the length of each frame in T-cycles."""
    pyboy.reset(0)
    ours.reset(0)
    lengths, previous_end = [], None
    for frame in range(frames):
        expected, actual = pyboy.step(0), ours.step(0)
        assert_frame_field_equal(expected.observation, actual.observation, "screen", frame)
        for field, value in expected.state.items():
            assert_frame_field_equal(value, actual.state[field], field, frame)
        end = int(expected.state["cycles"])
        if previous_end is not None:
            lengths.append(end - previous_end)
        previous_end = end
    return lengths


def assert_frame_field_equal(expected: np.ndarray, actual: np.ndarray, field: str, frame: int) -> None:
    """`np.testing.assert_array_equal` (whose message names the field, the frame and the first
    differing elements), called only when `np.array_equal` finds a difference: its own checks cost
    about a third of a sweep's time (cProfile, 2026-12-04), and the two agree on equal arrays."""
    if not np.array_equal(expected, actual):
        np.testing.assert_array_equal(expected, actual, err_msg=f"{field}, frame {frame}")


class Scripted2048Inputs:
    """Action source (episode, rng, observation) -> button mask for the next frame."""

    def __init__(self, moves: int):
        self.moves = moves
        self._plans: dict[int, list[int]] = {}

    def plan(self, rng: np.random.Generator) -> list[int]:
        frames = [0] * (game2048.BOOT_FRAMES + int(rng.integers(game2048.MAX_START_DELAY)))
        frames += [game2048.START] * game2048.PRESS_FRAMES + [0] * game2048.START_SETTLE_FRAMES
        for _ in range(self.moves):
            direction = game2048.ACTION_BUTTONS[int(rng.integers(len(game2048.ACTION_BUTTONS)))]
            frames += [direction] * game2048.PRESS_FRAMES
            frames += [0] * (game2048.FRAMES_PER_ACTION - game2048.PRESS_FRAMES)
        return frames

    def __call__(self, episode: int, rng: np.random.Generator, observation) -> int:
        if episode not in self._plans:
            self._plans = {episode: self.plan(rng)}
            self._step = 0
        plan = self._plans[episode]
        action = plan[self._step] if self._step < len(plan) else 0
        self._step += 1
        return action

    def episode_frames(self, rng: np.random.Generator) -> int:
        return len(self.plan(rng))


TOBU_ROM = game2048.HERE / "data" / "roms" / "games" / "tobutobugirl" / "tobutobugirl.gb"
TOBU_START, TOBU_A, TOBU_RIGHT, TOBU_LEFT = 1 << 3, 1 << 0, 1 << 4, 1 << 5


def tobu_script(seed: int = 0) -> list[int]:
    """A scripted Tobu Tobu Girl run: START through the logos, intro, title and level select, then
    200 random 10-frame inputs of left/right/jump (A) in play."""
    rng = np.random.default_rng(seed)
    frames: list[int] = []
    for _ in range(12):
        frames += [0] * 50 + [TOBU_START] * 5
    moves = (0, TOBU_RIGHT, TOBU_LEFT, TOBU_A, TOBU_RIGHT | TOBU_A, TOBU_LEFT | TOBU_A)
    for _ in range(200):
        frames += [moves[int(rng.integers(len(moves)))]] * 10
    return frames


def pyboy_tobu_backend() -> FrameBackend:
    return pyboy_backend(TOBU_ROM)


def rust_tobu_backend() -> FrameBackend:
    return rust_backend(TOBU_ROM)
