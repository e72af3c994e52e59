"""L3: every test ROM (blargg's, mooneye's, dmg-acid2) against PyBoy 2.8.1 with sound emulated on both,
the screen and the whole state at every frame end (l3_sound_off_test.py runs the same sweep with the
sound registers off on both). A file of its own, so that Pants can run it beside l3_pyboy_test.py's 2048
episodes, not after them: the two took 216 s and 341 s of one 596 s pytest run (2026-12-05).
"""

from __future__ import annotations

import pytest

from envs.emurust.l3_backends import SUITE_ROMS
from envs.emurust.tests.suite_sweep import assert_suite_rom_matches_pyboy


@pytest.mark.parametrize("rom", SUITE_ROMS)
def test_test_rom_suites_whole_state_every_frame(rom):
    """Every test ROM (blargg's, mooneye's, dmg-acid2), no input, sound emulated on both: the screen
    and the whole state equal to PyBoy's at every frame end of the first SUITE_FRAMES frames."""
    assert_suite_rom_matches_pyboy(rom, sound_emulated=True)


def test_suite_has_every_test_rom():
    assert len(SUITE_ROMS) == 130, len(SUITE_ROMS)
