"""PyBoy 2.8.1 as the Game Boy reference: the real emulator, driven through its public API.

`PyBoyGameBoy` is the interface the Rust translation (`emurust_core`) is compared against:

    gb = PyBoyGameBoy("envs/emurust/data/roms/games/2048-wyattferguson/2048.gb")
    gb.set_buttons(1 << START)          # bit i of the mask = BUTTONS[i] held down
    gb.run_frames(10)
    gb.screen_shades()                  # (144, 160) uint8, 0 white .. 3 black
    gb.wram(), gb.hram(), gb.read_memory(0xC0B1, 0xC0B1 + 50)
    gb.serial_output()                  # everything the ROM wrote to the serial port (SB, 0xFF01)
    blob = gb.save_state(); ...; gb.load_state(blob)

Facts about PyBoy 2.8.1 this relies on (read from its source, checked by tests/l2_pyboy_reference_test.py):

- Frames: `PyBoy.tick(count, render, sound)` runs `count` frames and renders (and samples sound for)
  only the last one. A frame ends when LY wraps from 153 to 0 (every 70224 cycles while the LCD is
  off), so the rendered tick draws lines 0-143 of its frame; skipping the renderer on earlier frames
  changes no emulated state (checked against rendering every frame). One renderer variable is
  neither emulated state nor saved: the window's internal line counter, 0 in a new PyBoy and -1
  after line 143 of any rendered frame; the adapter primes it at construction (`_prime_renderer`),
  so that the screen does not depend on which earlier frames were rendered. The null window starts
  at unlimited speed; `set_emulation_speed(0)` makes it explicit.
- Input: `button_press`/`button_release` queue events that PyBoy applies at the start of the next
  frame (before any instruction of it runs); every newly pressed button raises the joypad interrupt,
  whichever rows P1 selects (on hardware only a selected line falling does), and P1 reads the byte
  computed at the game's last write to it (0 before the first).
- Screen: `pyboy.screen.ndarray` is (144, 160, 4) RGBA over PyBoy's own buffer. In DMG mode each
  pixel is one of the four colours of `color_palette` after the BGP/OBP0/OBP1 register mapping,
  so the shade is recovered exactly from the colour. PyBoy's default DMG palette is "Grey":
  0xFFFFFF, 0x999999, 0x555555, 0x000000 (`pyboy.pyboy.DMG_PALETTES`); it is passed explicitly.
  Note PyBoy's quirk: with the LCD off or the background disabled it fills with BGP's colour 0,
  not with white.
- Serial: PyBoy 2.8.1 has no public serial API. `PyBoy._serial()` (-> `Motherboard.getserial`)
  returns and clears a 1024-byte ring that records every byte *written to SB (0xFF01)*, whether or
  not a transfer is started; more than 1024 bytes between two calls wrap and are lost, so
  `run_frames` drains it every `SERIAL_DRAIN_FRAMES` frames.
- Sound: `sound_emulated=False` (the default here, as asked) turns the APU off entirely: writes to
  0xFF10-0xFF3F are ignored and reads return 0. A translation compared with this reference must do
  the same, or both must be run with `sound_emulated=True`.
- PyBoy turns on `GameWrapper2048` for any cart titled "2048"; without the game's symbol file its
  per-tick lookup of `_board` fails and prints a traceback on every `tick()`. The adapter gives it
  the addresses of the wyattferguson build (board 0xC0B1, score 0xC0E9; `_winner`/`_state` are
  unknown for this build and point at the score too). The wrapper only reads memory and the
  adapter never uses it.

The ROM is handed to PyBoy as an in-memory file, so PyBoy neither loads nor writes `<rom>.ram`,
`.rtc` or `.sym` files next to the ROM: every run starts from the same power-on state.
"""

from __future__ import annotations

import hashlib
import io
import operator
import os
import struct
import warnings
import zlib
from pathlib import Path
from typing import Union

import numpy as np

# Fixed button order: bit i of a button mask is BUTTONS[i] (the order of the joypad register's bits:
# P10..P13 for A, B, Select, Start, then Right, Left, Up, Down).
BUTTONS = ("a", "b", "select", "start", "right", "left", "up", "down")
A, B, SELECT, START, RIGHT, LEFT, UP, DOWN = range(8)

# PyBoy's default DMG palette ("Grey"), lightest to darkest: shade i is drawn in GREY_PALETTE[i].
GREY_PALETTE = (0xFFFFFF, 0x999999, 0x555555, 0x000000)

WRAM = (0xC000, 0xE000)
HRAM = (0xFF80, 0xFFFF)
SCREEN_SHAPE = (144, 160)
# PyBoy's serial ring holds 1024 bytes; a byte written to SB every 1024 cycles (one transfer at the
# internal 8192 Hz clock) is 69 bytes a frame, so draining every 8 frames cannot overflow it.
SERIAL_DRAIN_FRAMES = 8

# Frames of the boot ROM run (and then undone) at construction to prime PyBoy's renderer.
_PRIME_MAX_FRAMES = 30

_STATE_MAGIC = b"EMURUST-PYBOY\x02"
# ROM digest (first 8 bytes of its SHA-256: PyBoy's own state does not say which cart it belongs to,
# and loads a state of another cart of the same type without complaint), frame_count, applied
# buttons, requested buttons, screen rendered (0/1), serial length, then the length and CRC-32 of
# what follows the header (serial text and PyBoy's state: PyBoy's loader stops part-way through a
# damaged state, leaving the emulator half-loaded, so a state is checked whole before it is handed on)
_STATE_HEADER = struct.Struct("<8sQBBBIQI")

# The wyattferguson 2048 build (roms/SOURCES.md): addresses for PyBoy's GameWrapper2048.
_WRAPPER_2048_SYMBOLS = {"_board": 0xC0B1, "_score": 0xC0E9, "_winner": 0xC0E9, "_state": 0xC0E9}


class ClosedEmulator:
    """Stands in for a closed emulator: any use says so (rather than an AttributeError on None)."""

    def __init__(self, owner: str):
        self._owner = owner

    def __getattr__(self, name: str):
        raise RuntimeError(f"this {self._owner} is closed: make a new one")


def _packed_rgba(rgb: int) -> int:
    """The RGBA pixel PyBoy draws for a 24-bit colour, read as a little-endian uint32."""
    r, g, b = (rgb >> 16) & 0xFF, (rgb >> 8) & 0xFF, rgb & 0xFF
    return int(np.frombuffer(bytes((r, g, b, 0xFF)), dtype="<u4")[0])


class PyBoyGameBoy:
    """One DMG Game Boy running `rom_path` in PyBoy 2.8.1 (no window, DMG mode, sound off)."""

    def __init__(
        self,
        rom_path: Union[str, os.PathLike],
        *,
        render: bool = True,
        sound_emulated: bool = False,
    ):
        """`render`: draw the last frame of every `run_frames` call, so that `screen_shades` works;
        `render=False` is faster and makes `screen_shades` raise."""
        path = Path(rom_path)
        if not path.is_file():
            raise FileNotFoundError(f"Game Boy ROM not found: {path}")
        self.rom_path = path
        self.render = render
        with warnings.catch_warnings():
            # pysdl2 warns at import that it uses pysdl2-dll's SDL2; the null window never opens it.
            warnings.simplefilter("ignore", UserWarning)
            from pyboy import PyBoy
        rom = path.read_bytes()
        self._rom_digest = hashlib.sha256(rom).digest()[:8]
        self._pyboy = PyBoy(
            io.BytesIO(rom),
            window="null",
            cgb=False,
            sound_emulated=sound_emulated,
            no_input=False,
            log_level="ERROR",
            color_palette=GREY_PALETTE,
        )
        self._pyboy.set_emulation_speed(0)
        if type(self._pyboy.game_wrapper).__name__ == "GameWrapper2048":
            for symbol, address in _WRAPPER_2048_SYMBOLS.items():
                self._pyboy.rom_symbols_inverse.setdefault(symbol, (0, address))
        self._prime_renderer()
        self._colours = np.array([_packed_rgba(c) for c in GREY_PALETTE], dtype=np.uint32)
        self._frame_count = 0
        self._rendered_frame = -1
        self._applied_buttons = 0  # what PyBoy holds down now
        self._buttons = 0  # what the next frames will hold down
        self._serial = bytearray()

    def _prime_renderer(self) -> None:
        """Start the window line counter as every later frame starts it (see the module notes).

        PyBoy's renderer keeps the window's internal line counter outside the saved state; it starts
        at 0 in a new PyBoy and is set to -1 at line 143 of every *rendered* frame with the LCD on.
        So the first such frame of a new PyBoy (or of one that loaded a state) draws the window one
        line lower than the same frame drawn after an earlier rendered frame. Running the boot ROM
        (PyBoy's own, the same for every cart) with rendering until one frame had the LCD on at its
        start and end (frame 6: the boot ROM turns the LCD on in frame 5), then loading the power-on
        state back, leaves the counter at -1 and the emulation exactly at power-on, so the picture
        no longer depends on which frames were rendered before.
        """
        pyboy = self._pyboy
        power_on = io.BytesIO()
        pyboy.save_state(power_on)
        primed = False
        for _ in range(_PRIME_MAX_FRAMES):
            lcd_on_before = pyboy.memory[0xFF40] & 0x80
            pyboy.tick(1, True, False)
            if lcd_on_before and pyboy.memory[0xFF40] & 0x80:
                primed = True
                break
        power_on.seek(0)
        pyboy.load_state(power_on)
        pyboy._serial()
        if not primed:
            warnings.warn(
                f"PyBoy's boot ROM kept the LCD off for {_PRIME_MAX_FRAMES} frames: the window line "
                "counter is not primed, and the first rendered frame may draw the window one line low",
                RuntimeWarning,
                stacklevel=3,
            )

    # -- running ----------------------------------------------------------------------------------

    @property
    def frame_count(self) -> int:
        """Frames run since power-on (restored by `load_state`)."""
        return self._frame_count

    def set_buttons(self, mask: int) -> None:
        """Hold down the buttons whose bits are set (bit i = BUTTONS[i]) from the next frame on."""
        mask = operator.index(mask)  # a float is refused, not truncated
        if not 0 <= mask <= 0xFF:
            raise ValueError(f"button mask must be in 0..255, got {mask}")
        self._buttons = mask

    def _apply_buttons(self) -> None:
        changed = self._buttons ^ self._applied_buttons
        if not changed:
            return
        for bit, name in enumerate(BUTTONS):
            if changed >> bit & 1:
                if self._buttons >> bit & 1:
                    self._pyboy.button_press(name)
                else:
                    self._pyboy.button_release(name)
        self._applied_buttons = self._buttons

    def run_frames(self, n: int = 1) -> None:
        """Run `n` frames with the current buttons; renders the last one when `render` is on."""
        n = operator.index(n)
        if n < 0:
            raise ValueError(f"frame count must be >= 0, got {n}")
        if n == 0:
            return
        self._apply_buttons()
        pyboy = self._pyboy
        left = n
        while left:
            chunk = min(left, SERIAL_DRAIN_FRAMES)
            left -= chunk
            pyboy.tick(chunk, self.render and left == 0, False)
            self._drain_serial()
        self._frame_count += n
        if self.render:
            self._rendered_frame = self._frame_count

    def _drain_serial(self) -> None:
        text = self._pyboy._serial()
        if text:
            self._serial += text.encode("latin-1")

    # -- observing --------------------------------------------------------------------------------

    def screen_shades(self) -> np.ndarray:
        """The last frame as DMG shades: (144, 160) uint8, 0 white, 1 light, 2 dark, 3 black."""
        if self._rendered_frame != self._frame_count:
            raise RuntimeError(
                "the screen of the current frame was not rendered: construct PyBoyGameBoy with "
                "render=True (the default) and call run_frames before screen_shades"
            )
        packed = self._pyboy.screen.ndarray.view("<u4")[..., 0]
        shades = np.full(SCREEN_SHAPE, 0xFF, dtype=np.uint8)
        for shade, colour in enumerate(self._colours):
            shades[packed == colour] = shade
        unknown = shades == 0xFF
        if unknown.any():
            y, x = (int(i[0]) for i in np.nonzero(unknown))
            raise ValueError(
                f"PyBoy drew a colour that is not in its DMG palette at (y={y}, x={x}): RGBA "
                f"{tuple(int(v) for v in self._pyboy.screen.ndarray[y, x])}; expected one of "
                f"{[f'{c:06X}' for c in GREY_PALETTE]} (is the ROM running in CGB mode?)"
            )
        return shades

    def read_memory(self, start: int, stop: int) -> bytes:
        """Bytes at [start, stop) as the CPU sees them (current banks; I/O reads go through PyBoy)."""
        if not 0 <= start <= stop <= 0x10000:
            raise ValueError(f"bad address range [{start:#x}, {stop:#x})")
        if start == stop:
            return b""
        return bytes(self._pyboy.memory[start:stop])

    def wram(self) -> bytes:
        """Work RAM, 0xC000-0xDFFF (8 KiB)."""
        return self.read_memory(*WRAM)

    def hram(self) -> bytes:
        """High RAM, 0xFF80-0xFFFE (127 bytes)."""
        return self.read_memory(*HRAM)

    def cpu_registers(self) -> dict[str, int]:
        """The CPU's registers "a", "f", "b", "c", "d", "e", "h", "l", "sp", "pc" (PyBoy's public
        `register_file`). PyBoy leaves a halted CPU's PC on its HALT and steps over it when the
        CPU wakes (core/opcodes.py `HALT_76`, core/cpu.py `tick`)."""
        rf = self._pyboy.register_file
        hl = rf.HL
        return {"a": rf.A, "f": rf.F, "b": rf.B, "c": rf.C, "d": rf.D, "e": rf.E, "h": hl >> 8, "l": hl & 0xFF,
                "sp": rf.SP, "pc": rf.PC}

    def cycles(self) -> int:
        """T-cycles since power-on (PyBoy's own count, boot ROM included)."""
        return int(self._pyboy._cycles())

    def serial_output(self) -> str:
        """Everything the ROM wrote to the serial data register SB (0xFF01) since power-on."""
        return self._serial.decode("latin-1")

    # -- state ------------------------------------------------------------------------------------

    def save_state(self) -> bytes:
        """A snapshot: PyBoy's own state plus the ROM's digest and the adapter's frame count,
        buttons and serial text."""
        buffer = io.BytesIO()
        self._pyboy.save_state(buffer)
        rendered = int(self._rendered_frame == self._frame_count)
        body = bytes(self._serial) + buffer.getvalue()
        header = _STATE_HEADER.pack(self._rom_digest, self._frame_count, self._applied_buttons, self._buttons,
                                    rendered, len(self._serial), len(body), zlib.crc32(body))
        return _STATE_MAGIC + header + body

    def load_state(self, state: bytes) -> None:
        """Return to a snapshot taken by `save_state` of an emulator running the same ROM.

        Raises ValueError for anything else (another ROM's state, a truncated, padded or damaged
        one) before anything is loaded, so the emulator is left as it was.
        """
        if not isinstance(state, (bytes, bytearray, memoryview)):
            raise TypeError(f"a state is bytes, not {type(state).__name__}")
        state = bytes(state)
        if not state.startswith(_STATE_MAGIC):
            raise ValueError("not a PyBoyGameBoy state (made by PyBoyGameBoy.save_state)")
        offset = len(_STATE_MAGIC)
        if len(state) < offset + _STATE_HEADER.size:
            raise ValueError("the PyBoyGameBoy state is truncated (its header is incomplete)")
        digest, frames, applied, requested, rendered, serial_length, body_length, body_crc = \
            _STATE_HEADER.unpack_from(state, offset)
        if digest != self._rom_digest:
            raise ValueError(f"the state was saved from a different ROM than {self.rom_path.name}")
        body = state[offset + _STATE_HEADER.size:]
        if len(body) != body_length:
            raise ValueError(f"the PyBoyGameBoy state is {'truncated' if len(body) < body_length else 'padded'}: "
                             f"{len(body)} bytes after its header, {body_length} written")
        if zlib.crc32(body) != body_crc or serial_length > body_length:
            raise ValueError("the PyBoyGameBoy state is corrupt (its CRC-32 does not match)")
        serial = body[:serial_length]
        try:
            self._pyboy.load_state(io.BytesIO(body[serial_length:]))
        except Exception as error:  # only a state this adapter did not write gets here (another PyBoy version)
            raise ValueError(f"PyBoy cannot load this state ({error}); the emulator may be left part-loaded: "
                             "load a good state or make a new one") from error
        self._pyboy._serial()  # drop bytes written before the load
        self._frame_count = frames
        self._applied_buttons = applied
        self._buttons = requested
        self._serial = bytearray(serial)
        # PyBoy's state includes its screen buffer: the restored screen is readable if it was at saving.
        self._rendered_frame = frames if rendered else -1

    # -- lifetime ---------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop PyBoy (writes nothing: the ROM was loaded from memory); later calls raise RuntimeError."""
        pyboy = getattr(self, "_pyboy", None)
        if pyboy is not None and not isinstance(pyboy, ClosedEmulator):
            pyboy.stop(save=False)
            self._pyboy = ClosedEmulator(type(self).__name__)

    def __enter__(self) -> PyBoyGameBoy:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def button_mask(*names: str) -> int:
    """The mask holding down the named buttons, e.g. button_mask("a", "right")."""
    mask = 0
    for name in names:
        mask |= 1 << BUTTONS.index(name.lower())
    return mask


__all__ = ["A", "B", "BUTTONS", "DOWN", "GREY_PALETTE", "LEFT", "PyBoyGameBoy", "RIGHT", "SELECT", "START", "UP",
           "button_mask"]
