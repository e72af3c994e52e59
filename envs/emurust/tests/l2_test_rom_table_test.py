"""L2: the pass-table tool (`envs/emurust/test_roms.py`) tells passing from failing ROMs on both
emulators. The expected verdicts are facts measured apart from the tool: PyBoy 2.8.1's results as
first recorded in data/roms/SOURCES.md (section 4) and what each ROM tests."""

from __future__ import annotations

import pytest

from envs.emurust.test_roms import BLARGG, ROMS, rom_checks, verdict_of

CHECKS = {check.name: check for check in rom_checks()}

# (ROM, emulator, PyBoy's sound emulation, passes)
KNOWN = [
    ("01-special", "pyboy", True, True),
    ("01-special", "ours", True, True),
    # PyBoy does not emulate the HALT bug; ours does.
    ("halt_bug", "pyboy", True, False),
    ("halt_bug", "ours", True, True),
    # PyBoy runs its own boot ROM, which leaves other registers than the DMG ABC's.
    ("boot_regs-dmgABC", "pyboy", True, False),
    ("boot_regs-dmgABC", "ours", True, True),
    # PyBoy does not emulate the DMG's OAM corruption bug; ours does (in its DMG timing).
    ("2-causes", "pyboy", True, False),
    ("2-causes", "ours", True, True),
    # The DMG0's boot registers: ours runs it from the DMG0's power-on state; PyBoy from its own boot ROM's.
    ("boot_regs-dmg0", "ours", True, True),
    ("boot_regs-dmg0", "pyboy", True, False),
    # The DMG0's DIV and LCD position after its boot ROM are not offered.
    ("boot_hwio-dmg0", "ours", True, False),
    # With sound emulation off, PyBoy's sound registers read 0.
    ("01-registers", "pyboy", True, True),
    ("01-registers", "pyboy", False, False),
    ("01-registers", "ours", True, True),
]


@pytest.mark.parametrize("name,emulator,sound,passes", KNOWN)
def test_known_verdicts(name, emulator, sound, passes):
    verdict = verdict_of(CHECKS[name], emulator, pyboy_sound=sound)
    assert verdict.passed is passes, f"[emurust/test_roms] {emulator} on {name}: {verdict.detail}"


def test_every_dmg_rom_is_in_the_table():
    # Every test ROM in data/roms, once, but the CGB's (blargg's cgb_sound and interrupt_time) and
    # mooneye's runnable sprite_priority, which shows a picture and reports no verdict.
    checks = rom_checks()
    on_disk = {rom for rom in ROMS.rglob("*.gb")
               if not rom.is_relative_to(ROMS / "games")
               and not rom.is_relative_to(ROMS / "mooneye" / "runnable")
               and not rom.is_relative_to(BLARGG / "cgb_sound")
               and not rom.is_relative_to(BLARGG / "interrupt_time")}
    assert sorted(check.rom for check in checks) == sorted(on_disk)
    assert len([c for c in checks if c.suite == "mooneye acceptance"]) == 70
    assert len({(c.suite, c.name) for c in checks}) == len(checks)
