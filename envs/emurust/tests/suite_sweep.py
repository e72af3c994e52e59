"""L3's sweep of the test ROMs, shared by l3_suites_test.py (sound emulated on both) and
l3_sound_off_test.py (the sound registers off on both); apart from harness.py so that only the L3
tests depend on the PyBoy backends."""

from __future__ import annotations

from envs.emurust.l3_backends import SUITE_FRAMES, TEST_ROMS, assert_same_frames, pyboy_backend, rust_backend


def assert_suite_rom_matches_pyboy(rom: str, sound_emulated: bool) -> None:
    """One test ROM of `l3_backends.SUITE_ROMS`, no input: the screen and the whole state equal to
    PyBoy's at every frame end of the first SUITE_FRAMES frames, with the sound registers emulated on
    both or off on both (PyBoy's `sound_emulated`)."""
    pyboy = pyboy_backend(TEST_ROMS / rom, sound_emulated=sound_emulated)
    try:
        assert_same_frames(pyboy, rust_backend(TEST_ROMS / rom, sound_emulated=sound_emulated), SUITE_FRAMES)
    finally:
        pyboy._emulator.close()
