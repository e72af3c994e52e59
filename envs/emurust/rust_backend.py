"""The Rust emulator behind the same interface as the PyBoy reference adapter.

`RustGameBoy` mirrors `reference.pyboy_ref.PyBoyGameBoy` method for method, so that games, tests
and benchmarks take either one:

    gb = RustGameBoy(ROM_PATH)
    gb.set_buttons(mask); gb.run_frames(24)
    gb.screen_shades(), gb.wram(), gb.hram(), gb.read_memory(start, stop), gb.serial_output()
    blob = gb.save_state(); gb.load_state(blob)
"""

from __future__ import annotations

import operator
import os
from pathlib import Path
from typing import Union

import numpy as np

from .build_ext import load_core
from .reference.pyboy_ref import HRAM, WRAM, ClosedEmulator


class RustGameBoy:
    """One DMG Game Boy running `rom_path` in envport's Rust emulator (`emurust_core.GameBoy`)."""

    def __init__(self, rom_path: Union[str, os.PathLike], *, render: bool = True, power_on: str = "dmg",
                 sound_emulated: bool = True):
        """`power_on`: "dmg" = the state the DMG boot ROM leaves at 0x0100; "pyboy" = the state
        PyBoy 2.8.1's own boot ROM leaves (for frame-exact comparison with PyBoy).
        `sound_emulated=False`: the sound registers read 0 and ignore writes, as PyBoy's do with its
        `sound_emulated=False` (True: as the hardware's)."""
        path = Path(rom_path)
        if not path.is_file():
            raise FileNotFoundError(f"Game Boy ROM not found: {path}")
        self.rom_path = path
        self.render = render
        self._core = load_core()
        self._gb = self._core.GameBoy(path.read_bytes(), render=render, power_on=power_on,
                                      sound_emulated=sound_emulated)

    @property
    def core(self):
        """The `emurust_core.GameBoy` itself (registers, cycles, ...)."""
        return self._gb

    @property
    def frame_count(self) -> int:
        return self._gb.frame_count

    def set_buttons(self, mask: int) -> None:
        self._gb.set_buttons(operator.index(mask))  # a float is refused, not truncated

    def run_frames(self, n: int = 1) -> None:
        self._gb.run_frames(operator.index(n))

    def screen_shades(self) -> np.ndarray:
        """(144, 160) uint8 shades, 0 white .. 3 black: a copy of the last completed frame."""
        return self._gb.screen  # the core returns a copy

    def read_memory(self, start: int, stop: int) -> bytes:
        return self._gb.read_range(start, stop)

    def wram(self) -> bytes:
        return self._gb.read_range(*WRAM)

    def hram(self) -> bytes:
        return self._gb.read_range(*HRAM)

    def cpu_registers(self) -> dict:
        """"a", "f", "b", "c", "d", "e", "h", "l", "sp", "pc", "ime", "halted". A halted CPU's PC
        is past its HALT, as on hardware."""
        return self._gb.registers()

    def cycles(self) -> int:
        """T-cycles since power-on (with `power_on="pyboy"`, counted as PyBoy counts them)."""
        return self._gb.cycles

    def serial_output(self) -> str:
        return self._gb.serial_output.decode("latin-1")

    def save_state(self) -> bytes:
        return self._gb.save_state()

    def load_state(self, state: bytes) -> None:
        self._gb.load_state(state)

    def close(self) -> None:
        """Drop the console; later calls raise RuntimeError, as PyBoyGameBoy's do."""
        self._gb = ClosedEmulator(type(self).__name__)

    def __enter__(self) -> RustGameBoy:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
