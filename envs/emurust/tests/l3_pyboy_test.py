"""L3: the Rust emulator against PyBoy 2.8.1, frame by frame (the screen, and the state: WRAM, HRAM,
VRAM, OAM, I/O registers, IE, CPU registers, T-cycles), from the same state and the same inputs
(envs/emurust/l3_backends.py explains the alignment).

`power_on="pyboy"` also switches the emulator to PyBoy-compatible timing (`GameBoy::set_pyboy_compat`):
interrupts are sampled at instruction boundaries only (PyBoy checks them when its scheduler starts a
chunk, and its chunks end at the first boundary after every interrupt-raising event), the vector is
chosen from the requests at that boundary, PyBoy's mode-3 lengths and first frame after LCD enable,
LY=153 for the whole of line 153, LY/STAT/DIV reads at PyBoy's per-opcode read times, PyBoy's P1
read-back, its frame clock while the LCD is off (counted from its LCDC write), its HALT right
after EI (the return address is the HALT itself when an interrupt is already pending or the chunk
ends with that HALT), the end of its first frame after LCD enable, timer accesses at its moments (a
replay when the timer's event passed them), no STAT write bug, its dispatch cancelled in no time
when the high push disables IE, and its VRAM/OAM access rule (only three opcodes' accesses see the
LCD's modes). With it every frame of the 100 2048 episodes and of the 2660-frame scripted
Tobu Tobu Girl run (logos, intro, title, level select, play) is equal; the default (hardware)
timing is unchanged.
"""

from __future__ import annotations

import numpy as np
import pytest

from envs.emurust import game2048
from envs.emurust.l3_backends import (
    PYBOY_FIRST_GAME_FRAME,
    SUITE_FRAMES,
    SUITE_ROMS,
    TEST_ROMS,
    Scripted2048Inputs,
    assert_same_frames,
    pyboy_backend,
    pyboy_registers,
    pyboy_tobu_backend,
    rust_backend,
    rust_tobu_backend,
    tobu_script,
)
from envs.emurust.reference.pyboy_ref import DOWN, LEFT, RIGHT, START, UP, PyBoyGameBoy
from envs.emurust.rust_backend import RustGameBoy
from shared.verification.l3 import compare_rollouts

MOVES_PER_EPISODE = 50


def test_frame_boundaries_and_first_frame_match_pyboy():
    pyboy = PyBoyGameBoy(game2048.ROM_PATH, sound_emulated=True)
    ours = RustGameBoy(game2048.ROM_PATH, power_on="pyboy")
    pyboy.run_frames(PYBOY_FIRST_GAME_FRAME)
    ours.run_frames(1)
    # Frame 0 of the game: identical machine-visible state.
    assert pyboy.wram() == ours.wram()
    assert pyboy.hram() == ours.hram()
    np.testing.assert_array_equal(pyboy.screen_shades(), ours.screen_shades())
    assert pyboy.cycles() == ours.cycles()
    # The next frames (LCD switched off, on, then running) end on the same T-cycle, with the same
    # registers (PC in PyBoy's convention while halted).
    for frame in range(1, 60):
        pyboy.run_frames(1)
        ours.run_frames(1)
        assert pyboy.cycles() == ours.cycles(), f"frame {frame}"
        assert pyboy.cpu_registers() == pyboy_registers(ours.cpu_registers()), f"frame {frame}"


def test_2048_frame_by_frame_100_episodes():
    inputs = Scripted2048Inputs(moves=MOVES_PER_EPISODE)
    max_frames = (game2048.BOOT_FRAMES + game2048.MAX_START_DELAY + game2048.PRESS_FRAMES
                  + game2048.START_SETTLE_FRAMES + MOVES_PER_EPISODE * game2048.FRAMES_PER_ACTION)
    result = compare_rollouts(
        pyboy_backend(),
        rust_backend(),
        env_name="emurust-2048",
        episodes=100,
        action_source=inputs,
        max_steps=max_frames,
        reference_factory="envs.emurust.l3_backends:pyboy_backend",
        translation_factory="envs.emurust.l3_backends:rust_backend",
    )
    assert result.episodes == 100


def test_tobutobugirl_scripted_run():
    script = tobu_script(0)
    result = compare_rollouts(
        pyboy_tobu_backend(),
        rust_tobu_backend(),
        env_name="emurust-tobutobugirl",
        episodes=1,
        action_source=lambda episode, rng, observation, frames=iter(script): next(frames),
        max_steps=len(script),
        reference_factory="envs.emurust.l3_backends:pyboy_tobu_backend",
        translation_factory="envs.emurust.l3_backends:rust_tobu_backend",
    )
    assert result.steps == len(script)



BLARGG = game2048.HERE / "data" / "roms" / "blargg"
# blargg's ROMs in PyBoy's own timing: equal to PyBoy in the whole state at every frame end of the
# run (cpu_instrs finishes all 11 tests by frame ~3,200), and both report "Passed". Before
# 2026-12-04 cpu_instrs diverged at frame 21 (LY turning 144 4 dots early), 155 (a 4,096-cycle
# serial transfer; PyBoy's take 1,024) and 173 (timer writes and TIMA reads at our moment of the
# access, not PyBoy's), instr_timing at frame 21 (TIMA); until the evening of 2026-12-04 both in
# the first frame after the LCD is switched on, which PyBoy ended one instruction later (see
# `test_first_frame_after_lcd_on_ends_as_pyboys`), and mem_timing at frame 80 (its read-modify-write
# test failed in the PyBoy timing: INC (HL) on TIMA wrote TIMA back at our moment of the write).
BLARGG_WHOLE_RUNS = [
    (BLARGG / "cpu_instrs" / "cpu_instrs.gb", 3300),
    (BLARGG / "instr_timing" / "instr_timing.gb", 400),
    (BLARGG / "mem_timing" / "mem_timing.gb", 400),
    (BLARGG / "mem_timing-2" / "mem_timing.gb", 400),  # reports in cartridge RAM, not the serial port
]


def _blargg_report(emulator) -> str:
    """What a blargg ROM reported: its serial text, or else the text of its $A000 result block
    (status byte, then DE B0 61, then the text)."""
    text = emulator.serial_output()
    if text:
        return text
    block = emulator.read_memory(0xA000, 0xA400)
    assert block[1:4] == b"\xde\xb0\x61", block[:4]
    return f"status {block[0]}: " + block[4:].split(b"\x00", 1)[0].decode("latin-1")


@pytest.mark.parametrize(("rom", "frames"), BLARGG_WHOLE_RUNS,
                         ids=[rom.parent.name for rom, _ in BLARGG_WHOLE_RUNS])
def test_blargg_whole_state_every_frame(rom, frames):
    pyboy, ours = pyboy_backend(rom), rust_backend(rom)
    assert_same_frames(pyboy, ours, frames)
    text = _blargg_report(pyboy._emulator)
    assert text == _blargg_report(ours._emulator)
    assert "Passed" in text, text


GAME_2048_MMUSZKOW = game2048.HERE / "data" / "roms" / "games" / "2048-mmuszkow" / "2048.gb"


def _mmuszkow_buttons(frames: int, seed: int = 2048) -> list:
    """START on the title screen, then random moves, each held 8-15 frames and released 20-49
    (the game misses shorter presses)."""
    rng = np.random.default_rng(seed)
    buttons = [0] * 120 + [1 << START] * 5 + [0] * 60
    while len(buttons) < frames:
        direction = int(rng.choice([UP, DOWN, LEFT, RIGHT]))
        buttons += [1 << direction] * int(rng.integers(8, 16)) + [0] * int(rng.integers(20, 50))
    return buttons[:frames]


def test_2048_mmuszkow_whole_state_every_frame():
    """The other 2048 (mmuszkow's), played from its title screen: equal in the whole state at every
    frame end (until the evening of 2026-12-04 not the first frame after it switches the LCD on)."""
    pyboy, ours = pyboy_backend(GAME_2048_MMUSZKOW), rust_backend(GAME_2048_MMUSZKOW)
    pyboy.reset(0)
    ours.reset(0)
    screens = set()
    for frame, buttons in enumerate(_mmuszkow_buttons(3300)):
        expected, actual = pyboy.step(buttons), ours.step(buttons)
        np.testing.assert_array_equal(expected.observation, actual.observation, err_msg=f"screen, frame {frame}")
        for field, value in expected.state.items():
            np.testing.assert_array_equal(value, actual.state[field], err_msg=f"{field}, frame {frame}")
        screens.add(expected.observation.tobytes())
    # The moves played: the title screen shows 5 screens, this run's board and score 21 in all.
    assert len(screens) > 15, len(screens)


def _lcd_on_rom(after_lcd_on: bytes) -> bytes:
    """A ROM-only cartridge that waits for VBlank, switches the LCD off and on again
    (LDH (0x40),A; PyBoy's first frame starts where that instruction ends) and then runs
    `after_lcd_on`."""
    rom = bytearray(0x8000)
    rom[0x100:0x104] = bytes([0x00, 0xC3, 0x50, 0x01])  # NOP; JP 0x0150
    code = bytes([
        0xF3,                          # DI
        0xF0, 0x44, 0xFE, 0x90, 0x20, 0xFA,  # until LY = 144: LDH A,(LY); CP 144; JR NZ
        0xAF, 0xE0, 0x40,              # XOR A; LDH (LCDC),A: LCD off
        0x3E, 0x91, 0xE0, 0x40,        # LD A,0x91; LDH (LCDC),A: LCD on
    ]) + after_lcd_on
    rom[0x150:0x150 + len(code)] = code
    rom[0x14D] = (-sum(rom[0x134:0x14D]) - 25) & 0xFF  # header checksum
    return bytes(rom)


JR_TO_ITSELF = bytes([0x18, 0xFE])  # 12 T-cycles
JR_TO_NEXT = bytes([0x18, 0x00])  # 12 T-cycles
# After the LCD is switched on, loops whose instruction boundaries fall at every place around the
# first frame's end (70224 T-cycles; PyBoy looks at it first 8 T-cycles earlier, see
# `GameBoy::pyboy_ends_frame_one_step_later`), and one that reads LY, or high RAM, in an
# instruction that crosses both.
LCD_ON_LOOPS = {
    "jr-crossing-both": JR_TO_ITSELF,  # a JR from 70212 to 70224
    "jr-ending-at-first-look": b"\x00" + JR_TO_ITSELF,  # NOP first: a JR ends at 70216
    "jr-ending-after-first-look": b"\x00\x00" + JR_TO_ITSELF,  # ... at 70220
    # JR; then LDH A,(n); JR back, in 24 T-cycle rounds: an LDH from 70212 to 70224.
    "ly-read-crossing-both": JR_TO_NEXT + bytes([0xF0, 0x44, 0x18, 0xFC]),
    "hram-read-crossing-both": JR_TO_NEXT + bytes([0xF0, 0x80, 0x18, 0xFC]),
    "halted": bytes([0x76, 0x00, 0x18, 0xFC]),  # HALT with IE = 0: halted for good
}


@pytest.mark.parametrize("loop", sorted(LCD_ON_LOOPS))
def test_first_frame_after_lcd_on_ends_as_pyboys(loop, tmp_path):
    rom = tmp_path / f"{loop}.gb"
    rom.write_bytes(_lcd_on_rom(LCD_ON_LOOPS[loop]))
    lengths = assert_same_frames(pyboy_backend(rom), rust_backend(rom), 5)
    # The frame after the one that switched the LCD on is the first frame; the frames stay on
    # PyBoy's grid of 70224 T-cycles from the LCD's start, each ending less than an instruction
    # (at most 24 T-cycles) after its place on it.
    assert lengths[0] >= 70224, lengths
    assert all(0 <= sum(lengths[:n]) - n * 70224 < 24 for n in range(1, len(lengths) + 1)), lengths


def test_lcd_on_loops_cover_pyboys_ways_to_end_the_first_frame(tmp_path):
    """PyBoy ends the first frames of LCD_ON_LOOPS at every boundary they offer: at 70224 T-cycles,
    one instruction after (a JR, 12 more; not when the crossing instruction reads LY), and at the
    first boundary after 70224 when one came after the first look."""
    lengths = {}
    for loop, code in LCD_ON_LOOPS.items():
        rom = tmp_path / f"{loop}.gb"
        rom.write_bytes(_lcd_on_rom(code))
        pyboy = pyboy_backend(rom)
        pyboy.reset(0)
        ends = [int(pyboy.step(0).state["cycles"]) for _ in range(2)]
        lengths[loop] = ends[1] - ends[0]
        pyboy._emulator.close()
    assert lengths == {
        "jr-crossing-both": 70236,
        "jr-ending-at-first-look": 70228,
        "jr-ending-after-first-look": 70232,
        "ly-read-crossing-both": 70224,
        "hram-read-crossing-both": 70236,
        "halted": 70224,
    }


_SOUND = ("PyBoy's APU (pyboy/core/sound.py) is another model than ours: mid-test its registers read "
          "otherwise (NR52's channel bits first), though both pass dmg_sound (with sound off on both, "
          "equal: l3_sound_off_test.py)")
_OUR_PYBOY_TIMING_FAILS = "PyBoy passes it; our PyBoy-compatible timing fails it (the hardware timing passes)"
# The test ROMs whose whole state differs from PyBoy's within SUITE_FRAMES frames, and why (measured
# 2026-12-04 with the sweep below; each is an expected failure that fails the test when it stops
# differing, so that this list stays true).
NOT_EQUAL_TO_PYBOY = {
    **{f"blargg/{suite}/{rom}": _SOUND for suite in ("dmg_sound", "cgb_sound") for rom in (
        f"{suite}.gb", "rom_singles/02-len ctr.gb", "rom_singles/03-trigger.gb", "rom_singles/04-sweep.gb",
        "rom_singles/05-sweep details.gb", "rom_singles/07-len sweep period sync.gb",
        "rom_singles/08-len ctr during power.gb", "rom_singles/09-wave read while on.gb",
        "rom_singles/11-regs after power.gb")},
    "blargg/interrupt_time/interrupt_time.gb": ("a CGB test (double speed); on the DMG both fail it, differently (with "
                                                "sound off on both, equal: l3_sound_off_test.py)"),
    "mooneye/acceptance/pop_timing.gb": _OUR_PYBOY_TIMING_FAILS,
}


@pytest.mark.parametrize("rom", [
    pytest.param(rom, marks=pytest.mark.xfail(reason=NOT_EQUAL_TO_PYBOY[rom], strict=True, raises=AssertionError))
    if rom in NOT_EQUAL_TO_PYBOY else rom
    for rom in SUITE_ROMS
])
def test_test_rom_suites_whole_state_every_frame(rom):
    """Every test ROM (blargg's, mooneye's, dmg-acid2), no input: the screen and the whole state equal
    to PyBoy's at every frame end of the first SUITE_FRAMES frames, but for NOT_EQUAL_TO_PYBOY."""
    assert_same_frames(pyboy_backend(TEST_ROMS / rom), rust_backend(TEST_ROMS / rom), SUITE_FRAMES)


def test_not_equal_list_names_suite_roms():
    assert set(NOT_EQUAL_TO_PYBOY) <= set(SUITE_ROMS)
    assert len(SUITE_ROMS) == 130, len(SUITE_ROMS)
