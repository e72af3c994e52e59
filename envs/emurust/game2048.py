"""2048 (wyattferguson's Game Boy build, MIT) as an RL task on either emulator.

The game runs unmodified; the task only presses buttons and reads RAM (addresses from
data/roms/SOURCES.md, checked against the screen):

- board: 25 cells, u16 little endian, row-major at 0xC0B1 (0 = empty, else the tile value);
- score: u16 little endian at 0xC0E9.

One action = one direction held for `PRESS_FRAMES` frames, then released, `FRAMES_PER_ACTION`
frames in all (the game reads the pad once per frame and animates the move). Reward = score
increase. The episode terminates when no move can change the board (full, no equal neighbours);
truncation is left to Gymnasium's TimeLimit.

Seeding: the game draws its tiles from its own RNG, which depends on when START is pressed. A reset
loads the title-screen state (cached after the first boot), waits `seed`-dependent frames (0..255,
from the env's np_random) and presses START. Same seed, same game; and with the Rust emulator in
its PyBoy-compatible timing (the envs' default) the same game on both emulators, frame for frame.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import numpy as np

HERE = Path(__file__).resolve().parent
ROM_PATH = HERE / "data" / "roms" / "games" / "2048-wyattferguson" / "2048.gb"

BOARD_ADDRESS = 0xC0B1
BOARD_SIDE = 5
SCORE_ADDRESS = 0xC0E9

# Button bits (same order in both emulators).
START = 1 << 3
RIGHT, LEFT, UP, DOWN = 1 << 4, 1 << 5, 1 << 6, 1 << 7
ACTION_BUTTONS = (UP, DOWN, LEFT, RIGHT)
ACTION_NAMES = ("up", "down", "left", "right")

FRAMES_PER_ACTION = 24
PRESS_FRAMES = 4
# Frames from the game's start (0x0100) to a title screen that accepts START.
BOOT_FRAMES = 60
# PyBoy runs its boot ROM first: the game starts in PyBoy's frame 65, our frame 1 (l3_backends).
PYBOY_BOOT_ROM_FRAMES = 64
MAX_START_DELAY = 256
# Frames after pressing START until the first two tiles are on the board.
START_SETTLE_FRAMES = 30
MAX_EXPONENT = 16


class Emulator(Protocol):
    """What the task needs of an emulator (PyBoyGameBoy and RustGameBoy both provide it)."""

    def set_buttons(self, mask: int) -> None: ...
    def run_frames(self, n: int = 1) -> None: ...
    def read_memory(self, start: int, stop: int) -> bytes: ...
    def save_state(self) -> bytes: ...
    def load_state(self, state: bytes) -> None: ...
    def screen_shades(self) -> np.ndarray: ...


def read_board(emulator: Emulator) -> np.ndarray:
    """Tile values, (5, 5) uint32, 0 = empty."""
    raw = emulator.read_memory(BOARD_ADDRESS, BOARD_ADDRESS + 2 * BOARD_SIDE * BOARD_SIDE)
    return np.frombuffer(raw, dtype="<u2").astype(np.uint32).reshape(BOARD_SIDE, BOARD_SIDE)


def read_score(emulator: Emulator) -> int:
    raw = emulator.read_memory(SCORE_ADDRESS, SCORE_ADDRESS + 2)
    return int.from_bytes(raw, "little")


def board_exponents(board: np.ndarray) -> np.ndarray:
    """log2 of each tile (0 = empty), (5, 5) uint8: the observation."""
    exponents = np.zeros(board.shape, dtype=np.uint8)
    filled = board > 0
    exponents[filled] = np.log2(board[filled]).round().astype(np.uint8)
    return exponents


def can_move(board: np.ndarray) -> bool:
    """Whether some direction changes the board: an empty cell or two equal neighbours."""
    if (board == 0).any():
        return True
    return bool((board[:, 1:] == board[:, :-1]).any() or (board[1:, :] == board[:-1, :]).any())


class Game2048:
    """The task over one emulator: `reset(start_delay)` and `step(action)`."""

    def __init__(self, emulator: Emulator, boot_frames: int = BOOT_FRAMES):
        """`boot_frames`: frames from power-on to the title screen (PyBoy: its boot ROM's frames
        more, so that both emulators press START on the same frame of the game)."""
        self.emulator = emulator
        self.boot_frames = boot_frames
        self._title_state: bytes | None = None
        self.score = 0

    def _title(self) -> bytes:
        if self._title_state is None:
            self.emulator.set_buttons(0)
            self.emulator.run_frames(self.boot_frames)
            self._title_state = self.emulator.save_state()
        return self._title_state

    def reset(self, start_delay: int) -> np.ndarray:
        if not 0 <= start_delay < MAX_START_DELAY:
            raise ValueError(f"start_delay must be in 0..{MAX_START_DELAY - 1}, got {start_delay}")
        self.emulator.load_state(self._title())
        self.emulator.set_buttons(0)
        self.emulator.run_frames(start_delay + 1)
        self.emulator.set_buttons(START)
        self.emulator.run_frames(PRESS_FRAMES)
        self.emulator.set_buttons(0)
        self.emulator.run_frames(START_SETTLE_FRAMES)
        self.score = read_score(self.emulator)
        return board_exponents(read_board(self.emulator))

    def step(self, action: int) -> tuple[np.ndarray, int, bool]:
        """(observation, reward, terminated) after one move."""
        self.emulator.set_buttons(ACTION_BUTTONS[action])
        self.emulator.run_frames(PRESS_FRAMES)
        self.emulator.set_buttons(0)
        self.emulator.run_frames(FRAMES_PER_ACTION - PRESS_FRAMES)
        score = read_score(self.emulator)
        reward = score - self.score
        self.score = score
        board = read_board(self.emulator)
        return board_exponents(board), reward, not can_move(board)
