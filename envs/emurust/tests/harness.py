"""Shared helpers of the EmuRust tests: data paths, the built extension, and how each test ROM
reports its result (serial text, blargg's $A000 block, text in the background map, mooneye's
Fibonacci registers)."""

from __future__ import annotations

from pathlib import Path

from envs.emurust.build_ext import load_core

# How each ROM reports its result: shared with the pass-table tool (envs/emurust/test_roms.py).
from envs.emurust.test_roms import (  # noqa: F401 - re-exported for the tests
    MOONEYE_NOT_REQUIRED,
    MOONEYE_OTHER_MODELS,
    background_text,
    mooneye_result,
    reference_png_shades,
    run_until_memory_result,
    run_until_serial,
)

DATA = Path(__file__).resolve().parents[1] / "data"
ROMS = DATA / "roms"
SM83_VECTORS = DATA / "sm83" / "v1"
BLARGG = ROMS / "blargg"
MOONEYE = ROMS / "mooneye" / "acceptance"
DMG_ACID2 = ROMS / "dmg-acid2"


def core():
    """The extension module (built on first use)."""
    return load_core()


def new_gameboy(rom: Path):
    return core().GameBoy(rom.read_bytes())
