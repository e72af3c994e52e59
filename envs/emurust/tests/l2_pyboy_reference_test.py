"""The PyBoy reference adapter (envs/emurust/reference/pyboy_ref.py) on real ROMs.

These check the reference before anything is compared with it: blargg's CPU test passes through
the serial port, the screen decodes to DMG shades, the 2048 RAM addresses of roms/SOURCES.md hold
the board, rendering only the last frame of a run equals rendering every frame, and a saved state
replays identically.
"""

from __future__ import annotations

import io
import struct
import warnings
from pathlib import Path

import numpy as np
import pytest

from envs.emurust.reference.pyboy_ref import (
    BUTTONS,
    DOWN,
    GREY_PALETTE,
    LEFT,
    RIGHT,
    START,
    UP,
    PyBoyGameBoy,
    button_mask,
)

ROMS = Path(__file__).resolve().parents[1] / "data" / "roms"
SPECIAL = ROMS / "blargg" / "cpu_instrs" / "individual" / "01-special.gb"
GAME_2048 = ROMS / "games" / "2048-wyattferguson" / "2048.gb"
BOARD_2048, SCORE_2048 = 0xC0B1, 0xC0E9  # 25 x u16 LE, row-major; u16 LE (roms/SOURCES.md)


def _run_until_serial(gb: PyBoyGameBoy, words, max_frames: int, step: int = 30) -> str:
    while gb.frame_count < max_frames:
        gb.run_frames(step)
        text = gb.serial_output()
        if any(word in text for word in words):
            return text
    return gb.serial_output()


def _board(gb: PyBoyGameBoy) -> list:
    return list(struct.unpack("<25H", gb.read_memory(BOARD_2048, BOARD_2048 + 50)))


def _started_2048(render: bool = True) -> PyBoyGameBoy:
    """2048 past the title screen: START held for 5 frames at frame 300, then 60 frames."""
    gb = PyBoyGameBoy(GAME_2048, render=render)
    gb.run_frames(300)
    gb.set_buttons(1 << START)
    gb.run_frames(5)
    gb.set_buttons(0)
    gb.run_frames(60)
    return gb


def _actions(seed: int, count: int) -> list:
    """A fixed pseudo-random sequence of d-pad masks (none, one direction), each held 6 frames."""
    rng = np.random.default_rng(seed)
    choices = [0, 1 << RIGHT, 1 << LEFT, 1 << UP, 1 << DOWN]
    return [choices[i] for i in rng.integers(0, len(choices), size=count)]


def test_blargg_01_special_passes_over_serial():
    with PyBoyGameBoy(SPECIAL, render=False) as gb:
        text = _run_until_serial(gb, ("Passed", "Failed"), max_frames=3000)
        assert "Passed" in text, f"serial after {gb.frame_count} frames: {text!r}"
        assert text.startswith("01-special"), text
        assert gb.frame_count < 600  # it passes after about 205 frames


def test_screen_shades_are_dmg_shades():
    gb = _started_2048()
    shades = gb.screen_shades()
    assert shades.shape == (144, 160) and shades.dtype == np.uint8
    assert set(np.unique(shades)) <= {0, 1, 2, 3}
    assert len(np.unique(shades)) >= 3  # the board is drawn in more than one shade
    # border columns of the 2048 screen are white, the tiles are outlined in black
    assert shades[:, 0].max() == 0 and (shades == 3).any()


def test_unknown_colour_is_an_error():
    gb = PyBoyGameBoy(GAME_2048)
    gb.run_frames(120)
    gb._colours = gb._colours[::-1].copy()
    gb._colours[0] = 0x12345678  # white is no longer known: the white border must be rejected
    with pytest.raises(ValueError, match="not in its DMG palette"):
        gb.screen_shades()


def test_screen_requires_render():
    gb = PyBoyGameBoy(GAME_2048, render=False)
    gb.run_frames(10)
    with pytest.raises(RuntimeError, match="render=True"):
        gb.screen_shades()


def test_missing_rom_names_the_path(tmp_path):
    missing = tmp_path / "no_such.gb"
    with pytest.raises(FileNotFoundError, match="no_such.gb"):
        PyBoyGameBoy(missing)


def test_2048_board_and_score_ram():
    gb = _started_2048()
    board = _board(gb)
    tiles = [v for v in board if v]
    assert len(tiles) == 2 and set(tiles) <= {2, 4}, board
    assert gb.read_memory(SCORE_2048, SCORE_2048 + 2) == b"\0\0"
    # play until a merge scores
    for mask in _actions(seed=3, count=200):
        gb.set_buttons(mask)
        gb.run_frames(6)
        if struct.unpack("<H", gb.read_memory(SCORE_2048, SCORE_2048 + 2))[0]:
            break
    score = struct.unpack("<H", gb.read_memory(SCORE_2048, SCORE_2048 + 2))[0]
    board = _board(gb)
    assert score > 0 and score % 2 == 0, (score, board)
    assert all(v == 0 or (v & (v - 1)) == 0 for v in board), board  # powers of two
    assert len(gb.wram()) == 0x2000 and len(gb.hram()) == 0x7F


def test_rendering_only_the_last_frame_changes_nothing():
    """run_frames(n) draws only its last frame; the emulation must equal drawing every frame."""
    every, last = PyBoyGameBoy(GAME_2048), PyBoyGameBoy(GAME_2048)
    schedule = [(0, 300), (1 << START, 5), (0, 60)] + [(m, 6) for m in _actions(seed=5, count=40)]
    for mask, frames in schedule:
        every.set_buttons(mask)
        last.set_buttons(mask)
        for _ in range(frames):
            every.run_frames(1)
        last.run_frames(frames)
        assert every.frame_count == last.frame_count
        np.testing.assert_array_equal(every.screen_shades(), last.screen_shades())
        assert every.wram() == last.wram() and every.hram() == last.hram()


def test_save_load_round_trip_replays_identically():
    gb = _started_2048()
    state = gb.save_state()
    saved_frame, saved_screen = gb.frame_count, gb.screen_shades()
    actions = _actions(seed=7, count=30)

    def replay(target: PyBoyGameBoy):
        out = []
        for mask in actions:
            target.set_buttons(mask)
            target.run_frames(6)
            out.append((target.frame_count, target.screen_shades().tobytes(), target.wram(), target.hram()))
        return out

    first = replay(gb)
    gb.load_state(state)
    assert gb.frame_count == saved_frame
    second = replay(gb)
    assert first == second
    # and in a fresh emulator
    fresh = PyBoyGameBoy(GAME_2048)
    fresh.load_state(state)
    assert fresh.frame_count == saved_frame
    np.testing.assert_array_equal(fresh.screen_shades(), saved_screen)
    assert replay(fresh) == first


def test_bad_states_are_refused_and_leave_the_emulator_as_it_was():
    """Another cart's state (PyBoy alone loads one of the same cartridge type without complaint),
    a truncated, padded or damaged state are ValueErrors (PyBoy's own loader stopped part-way
    through them), and the emulator that refused them goes on exactly as a twin never handed them."""
    other_2048 = PyBoyGameBoy(ROMS / "games" / "2048-mmuszkow" / "2048.gb")  # no MBC, like GAME_2048
    other_2048.run_frames(120)
    gb, twin = _started_2048(), _started_2048()
    state = gb.save_state()
    flipped = bytearray(state)
    flipped[len(state) // 2] ^= 0x10
    bad_states = {
        "different ROM": other_2048.save_state(),
        "truncated .its header": state[:30],
        "truncated: ": state[:-1],
        "padded": state + b"\0\0",
        "corrupt": bytes(flipped),
        "not a PyBoyGameBoy state": b"EMURUST-PYBOY\x01" + state[14:],
    }
    gb.run_frames(7)  # somewhere else than `state`, so that a half-done load would show
    twin.run_frames(7)
    for message, bad in bad_states.items():
        with pytest.raises(ValueError, match=message):
            gb.load_state(bad)
    with pytest.raises(TypeError, match="bytes"):
        gb.load_state("state")
    assert gb.frame_count == twin.frame_count
    for mask in _actions(seed=3, count=10):
        for target in (gb, twin):
            target.set_buttons(mask)
            target.run_frames(6)
        assert gb.wram() == twin.wram() and gb.hram() == twin.hram()
        np.testing.assert_array_equal(gb.screen_shades(), twin.screen_shades())


def test_serial_survives_save_load():
    gb = PyBoyGameBoy(SPECIAL, render=False)
    before = _run_until_serial(gb, ("01-special",), max_frames=600, step=10)
    state = gb.save_state()
    assert before.startswith("01-special") and "Passed" not in before, before
    text = _run_until_serial(gb, ("Passed",), max_frames=3000)
    gb.load_state(state)
    assert gb.serial_output() == before
    assert _run_until_serial(gb, ("Passed",), max_frames=3000) == text


def test_button_mask_order():
    assert BUTTONS == ("a", "b", "select", "start", "right", "left", "up", "down")
    assert button_mask("a", "down") == 0b1000_0001
    gb = PyBoyGameBoy(SPECIAL, render=False)
    with pytest.raises(ValueError):
        gb.set_buttons(256)


def test_adapter_state_equals_bare_pyboy_rendering_every_frame():
    """The adapter (primed renderer, buttons, chunked ticks rendering only the last frame) leaves
    PyBoy in exactly the state of a bare PyBoy that renders every frame: same saved-state bytes."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # pysdl2's note on its bundled SDL2
        from pyboy import PyBoy

    rom = ROMS / "games" / "tobutobugirl" / "tobutobugirl.gb"
    bare = PyBoy(io.BytesIO(rom.read_bytes()), window="null", cgb=False, sound_emulated=False,
                 log_level="ERROR", color_palette=GREY_PALETTE)
    bare.set_emulation_speed(0)
    gb = PyBoyGameBoy(rom)
    for step in range(60):
        held = step % 6 == 3  # START held for 10 frames out of every 60
        gb.set_buttons(1 << START if held else 0)
        (bare.button_press if held else bare.button_release)("start")
        for _ in range(10):
            bare.tick(1, True, False)
        gb.run_frames(10)
        ours, theirs = io.BytesIO(), io.BytesIO()
        gb._pyboy.save_state(ours)
        bare.save_state(theirs)
        assert ours.getvalue() == theirs.getvalue(), f"state differs after {gb.frame_count} frames"
    bare.stop(save=False)
