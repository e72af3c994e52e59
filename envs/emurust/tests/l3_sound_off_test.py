"""L3 with the sound registers off on both emulators: PyBoy 2.8.1 with `sound_emulated=False` (the
configuration of the Gymnasium env's PyBoy backend and of the benchmark: its sound registers all
read 0 and ignore writes) against ours with `sound_emulated=False` (the same rule,
`Apu::registers_emulated`), every test ROM compared in the screen and the whole state at every frame
end, as `l3_suites_test.py` does with sound emulated on both.

Every test ROM is equal in both configurations since the night of 2026-12-04: with the sound
registers off from the stack's moments on (pop_timing was the last), with them emulated from
PyBoy's frame sequencer count on (the 18 sound ROMs and interrupt_time were the last; see the
README's L3 section).
"""

from __future__ import annotations

import pytest

from envs.emurust.l3_backends import SUITE_ROMS, TEST_ROMS, pyboy_backend, rust_backend
from envs.emurust.tests.suite_sweep import assert_suite_rom_matches_pyboy


@pytest.mark.parametrize("rom", SUITE_ROMS)
def test_test_rom_suites_sound_off_whole_state_every_frame(rom):
    assert_suite_rom_matches_pyboy(rom, sound_emulated=False)


def test_sound_off_reads_zero_on_both():
    """The rule itself, read from both after a ROM has written the sound registers (dmg_sound's
    first test powers the APU and triggers channels): every register and wave RAM reads 0."""
    rom = TEST_ROMS / "blargg" / "dmg_sound" / "rom_singles" / "01-registers.gb"
    pyboy, ours = pyboy_backend(rom, sound_emulated=False), rust_backend(rom, sound_emulated=False)
    try:
        for backend in (pyboy, ours):
            backend.reset(0)
            for _ in range(60):
                io = backend.step(0).state["io"]
            assert not io[0x10:0x40].any(), (backend.name, io[0x10:0x40].tobytes().hex())
            assert io[0x40], f"{backend.name}: LCDC reads {io[0x40]:#04x}: the I/O read is not all zeros"
    finally:
        pyboy._emulator.close()

