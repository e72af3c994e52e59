"""L3 backends: PyBoy and the Rust emulator stepped one frame at a time, compared frame by frame.

A step is one frame with a button mask (bit i = BUTTONS[i] held); what is compared after every
frame is the screen (observation, DMG shades) and the state fields WRAM (0xC000-0xDFFF) and HRAM
(0xFF80-0xFFFE).

Alignment. PyBoy always runs its own boot ROM first: the game's first instruction runs during its
65th frame (LY 145). The Rust emulator starts at 0x0100 in the state PyBoy's boot ROM leaves
(`power_on="pyboy"`: its registers, DIV phase and LCD position), so one frame of ours ends where
PyBoy's 65th ends. `reset` returns to that first frame boundary of the game (a saved state), so
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
from .reference.pyboy_ref import PyBoyGameBoy
from .rust_backend import RustGameBoy

PYBOY_BOOT_FRAMES = 65
OURS_BOOT_FRAMES = 1


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
        return StepOutput(
            observation=emulator.screen_shades(),
            state={
                "wram": np.frombuffer(emulator.wram(), dtype=np.uint8),
                "hram": np.frombuffer(emulator.hram(), dtype=np.uint8),
            },
        )

    def reset(self, seed: int) -> StepOutput:
        self._emulator.load_state(self._start)
        self._emulator.set_buttons(0)
        return self._output()

    def step(self, action) -> StepOutput:
        self._emulator.set_buttons(int(action))
        self._emulator.run_frames(1)
        return self._output()


def pyboy_backend(rom: Path = game2048.ROM_PATH) -> FrameBackend:
    # Sound emulated, so that the sound registers read as hardware's (ours always emulates them).
    return FrameBackend("pyboy", PyBoyGameBoy(rom, sound_emulated=True), PYBOY_BOOT_FRAMES)


def rust_backend(rom: Path = game2048.ROM_PATH) -> FrameBackend:
    return FrameBackend("emurust", RustGameBoy(rom, power_on="pyboy"), OURS_BOOT_FRAMES)


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
