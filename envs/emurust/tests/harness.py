"""Shared helpers of the EmuRust tests: data paths, the built extension, and how each test ROM
reports its result (serial text, blargg's $A000 block, text in the background map, mooneye's
Fibonacci registers)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from envs.emurust.build_ext import load_core

DATA = Path(__file__).resolve().parents[1] / "data"
ROMS = DATA / "roms"
SM83_VECTORS = DATA / "sm83" / "v1"
BLARGG = ROMS / "blargg"
MOONEYE = ROMS / "mooneye" / "acceptance"
DMG_ACID2 = ROMS / "dmg-acid2"

MOONEYE_PASS = (3, 5, 8, 13, 21, 34)
MOONEYE_FAIL = (0x42,) * 6


def core():
    """The extension module (built on first use)."""
    return load_core()


def new_gameboy(rom: Path):
    return core().GameBoy(rom.read_bytes())


def run_until_serial(gb, words: tuple[str, ...], max_frames: int, step: int = 30) -> str:
    """Runs until one of `words` appears in the serial output (or the frame budget ends)."""
    while gb.frame_count < max_frames:
        gb.run_frames(step)
        text = gb.serial_output.decode("latin-1")
        if any(word in text for word in words):
            return text
    return gb.serial_output.decode("latin-1")


def blargg_memory_result(gb) -> tuple[int, str] | None:
    """blargg's result block in cartridge RAM: $A000 status (0x80 running, else the result code),
    $A001-$A003 = DE B0 61, then the text. None until the signature is there."""
    block = gb.read_range(0xA000, 0xA400)
    if block[1:4] != b"\xde\xb0\x61" or block[0] == 0x80:
        return None
    text = block[4:].split(b"\x00", 1)[0].decode("latin-1")
    return block[0], text


def background_text(gb) -> str:
    """The 20x18 visible part of the background map as text (blargg's font puts ASCII code c in
    tile c), for ROMs that print their result only on screen."""
    vram_map = gb.read_range(0x9800, 0x9800 + 32 * 18)
    rows = [vram_map[r * 32 : r * 32 + 20] for r in range(18)]
    return "\n".join("".join(chr(c) if 32 <= c < 127 else " " for c in row).rstrip() for row in rows)


def mooneye_result(gb, max_frames: int = 600) -> str:
    """'pass', 'fail' or 'timeout' by the registers mooneye's tests set when they finish."""
    while gb.frame_count < max_frames:
        gb.run_frames(10)
        regs = gb.registers()
        values = tuple(regs[k] for k in "bcdehl")
        if values == MOONEYE_PASS:
            return "pass"
        if values == MOONEYE_FAIL:
            return "fail"
    return "timeout"


def reference_png_shades(path: Path) -> np.ndarray:
    """dmg-acid2's reference image as shades 0 (white) .. 3 (black), ranked by brightness."""
    # matplotlib (a declared requirement) reads PNG through Pillow, which it depends on; a grey
    # image comes back 2-D, a colour one with channels, ranked then by luma.
    import matplotlib.image

    image = np.asarray(matplotlib.image.imread(path), dtype=np.float64)
    grey = image if image.ndim == 2 else image[..., :3] @ np.array([0.299, 0.587, 0.114])
    levels = np.unique(grey)[::-1]  # brightest first
    if len(levels) > 4:
        raise ValueError(f"{path} has {len(levels)} grey levels, expected at most 4")
    shades = np.zeros(grey.shape, dtype=np.uint8)
    for shade, level in enumerate(levels):
        shades[grey == level] = shade
    return shades
