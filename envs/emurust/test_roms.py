"""The community's test ROMs on both emulators: the README's pass table, measured in one run.

    ./pants run envs/emurust:test_roms                       # ours and PyBoy 2.8.1, every DMG ROM
    ./pants run envs/emurust:test_roms -- --emulators ours   # ours only (a few seconds)
    ./pants run envs/emurust:test_roms -- --pyboy-sound off  # PyBoy as the bench runs it

Prints one row per ROM (PyBoy's verdict beside ours) and a summary per suite, and writes them as
JSON (`--out`, default `bench-results/emurust-test-roms.json`). Each ROM is judged the way its
author reports a result: blargg's serial text, blargg's result block at $A000 (status byte 0 =
passed), blargg's text in the background map (halt_bug), mooneye's Fibonacci registers, and
dmg-acid2's screen against its reference image (pixels equal by shade rank). The L2 tests use the
same detectors on ours alone.

The ROMs for the CGB (cgb_sound, interrupt_time) are not run. PyBoy runs its own boot ROM and
ours starts in the DMG boot state, so the frame budgets leave PyBoy its boot frames. mooneye's
ROMs for the boot states of other models (DMG0, MGB, SGB, SGB2) run ours in that model's power-on
state (`power_on`); PyBoy has only its own boot ROM's.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

ROMS = Path(__file__).resolve().parent / "data" / "roms"
BLARGG = ROMS / "blargg"
MOONEYE = ROMS / "mooneye" / "acceptance"
DMG_ACID2 = ROMS / "dmg-acid2"

MOONEYE_PASS = (3, 5, 8, 13, 21, 34)
MOONEYE_FAIL = (0x42,) * 6
# mooneye's ROMs for other models than the DMG ABC (their boot states), with the power-on state ours
# runs them in. The DMG0's DIV phase and LCD position at 0x0100, which boot_hwio-dmg0 reads, are not
# offered (gameboy.rs `PowerOn::Dmg0`): it is reported, not required.
MOONEYE_OTHER_MODELS = {
    "boot_hwio-S": "sgb", "boot_hwio-dmg0": "dmg0",
    "boot_regs-dmg0": "dmg0", "boot_regs-mgb": "mgb", "boot_regs-sgb": "sgb", "boot_regs-sgb2": "sgb2",
}
MOONEYE_NOT_REQUIRED = frozenset({"boot_hwio-dmg0"})
# PyBoy's boot ROM takes about 64 frames before a cartridge's first instruction.
BOOT_ALLOWANCE_FRAMES = 100


# -- how each ROM reports ------------------------------------------------------------------------


def run_until_serial(gb, words: tuple[str, ...], max_frames: int, step: int = 30) -> str:
    """Runs until one of `words` appears in the serial output (or the frame budget ends)."""
    for _ in range(0, max_frames, step):
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


def run_until_memory_result(gb, max_frames: int) -> tuple[int, str] | None:
    """Runs until blargg's result block at $A000 is final (or the frame budget ends)."""
    result, run = None, 0
    while result is None and run < max_frames:
        gb.run_frames(30)
        run += 30
        result = blargg_memory_result(gb)
    return result


def background_text(gb) -> str:
    """The 20x18 visible part of the background map as text (blargg's font puts ASCII code c in
    tile c), for ROMs that print their result only on screen."""
    vram_map = gb.read_range(0x9800, 0x9800 + 32 * 18)
    rows = [vram_map[r * 32 : r * 32 + 20] for r in range(18)]
    return "\n".join("".join(chr(c) if 32 <= c < 127 else " " for c in row).rstrip() for row in rows)


def mooneye_result(gb, max_frames: int = 600) -> str:
    """'pass', 'fail' or 'timeout' by the registers mooneye's tests set when they finish."""
    for _ in range(0, max_frames, 10):
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


# -- the two emulators behind one small interface -------------------------------------------------


class PyBoyConsole:
    """PyBoy 2.8.1 (through the reference adapter) with the members the detectors use."""

    def __init__(self, rom: Path, sound_emulated: bool):
        from envs.emurust.reference.pyboy_ref import PyBoyGameBoy

        self._gb = PyBoyGameBoy(rom, render=True, sound_emulated=sound_emulated)

    @property
    def frame_count(self) -> int:
        return self._gb.frame_count

    def run_frames(self, n: int) -> None:
        self._gb.run_frames(n)

    @property
    def serial_output(self) -> bytes:
        return self._gb.serial_output().encode("latin-1")

    def read_range(self, start: int, stop: int) -> bytes:
        return self._gb.read_memory(start, stop)

    def registers(self) -> dict[str, int]:
        regs = self._gb._pyboy.register_file  # PyBoy 2.8.1 has HL, not H and L
        values = {name.lower(): getattr(regs, name) for name in "ABCDE"}
        return {**values, "h": regs.HL >> 8, "l": regs.HL & 0xFF}

    @property
    def screen(self) -> np.ndarray:
        return self._gb.screen_shades()

    def close(self) -> None:
        self._gb.close()


class OursConsole:
    """`emurust_core.GameBoy` in the DMG timing (the hardware's), from `power_on`'s boot state."""

    def __init__(self, rom: Path, power_on: str = "dmg"):
        from envs.emurust.build_ext import load_core

        self._gb = load_core().GameBoy(rom.read_bytes(), power_on=power_on)

    def __getattr__(self, name):
        return getattr(self._gb, name)

    def close(self) -> None:
        pass


def console(emulator: str, rom: Path, pyboy_sound: bool, model: str = "dmg"):
    if emulator == "ours":
        return OursConsole(rom, model)
    if emulator == "pyboy":
        return PyBoyConsole(rom, pyboy_sound)
    raise ValueError(f"unknown emulator {emulator!r}: expected 'ours' or 'pyboy'")


# -- the ROMs ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RomCheck:
    suite: str
    name: str
    rom: Path
    judge: Callable[[object, int], tuple[bool, str]]  # (console, frame allowance) -> (passed, detail)
    max_frames: int
    required: bool = True  # False: reported, but tests another model or an unemulated effect
    model: str = "dmg"  # the boot state ours starts in (`power_on`); PyBoy always runs its DMG boot ROM


def _serial_judge(pass_word: str):
    def judge(gb, allowance):
        text = run_until_serial(gb, (pass_word, "Failed"), max_frames=allowance)
        passed = pass_word in text and "Failed" not in text
        return passed, text.strip().splitlines()[-1] if text.strip() else "no serial output"

    return judge


def _memory_judge(gb, allowance):
    result = run_until_memory_result(gb, allowance)
    if result is None:
        return False, "no result at $A000"
    code, text = result
    return code == 0, f"status {code}" + ("" if code == 0 else f": {text.strip().splitlines()[-1]}")


def _screen_judge(gb, allowance):
    text, run = "", 0
    while "Passed" not in text and "Failed" not in text and run < allowance:
        gb.run_frames(30)
        run += 30
        text = background_text(gb)
    if "Passed" in text:
        return True, "Passed"
    return False, f"Failed {text.split('Failed', 1)[1].strip()[:40]}" if "Failed" in text else "timeout"


def _mooneye_judge(gb, allowance):
    result = mooneye_result(gb, max_frames=allowance)
    return result == "pass", result


def _acid2_judge(gb, allowance):
    gb.run_frames(allowance)
    reference = reference_png_shades(DMG_ACID2 / "reference-dmg.png")
    equal = float(np.mean(np.asarray(gb.screen) == reference))
    return equal == 1.0, f"{equal:.2%} of pixels equal"


def rom_checks() -> list[RomCheck]:
    checks = [RomCheck("blargg cpu_instrs", "cpu_instrs (combined)", BLARGG / "cpu_instrs" / "cpu_instrs.gb",
                       _serial_judge("Passed all tests"), 5000)]
    for rom in sorted((BLARGG / "cpu_instrs" / "individual").glob("*.gb")):
        checks.append(RomCheck("blargg cpu_instrs", rom.stem, rom, _serial_judge("Passed"), 3000))
    checks.append(RomCheck("blargg timing", "instr_timing", BLARGG / "instr_timing" / "instr_timing.gb",
                           _serial_judge("Passed"), 3000))
    checks.append(RomCheck("blargg timing", "mem_timing", BLARGG / "mem_timing" / "mem_timing.gb",
                           _serial_judge("Passed"), 3000))
    checks.append(RomCheck("blargg timing", "mem_timing-2", BLARGG / "mem_timing-2" / "mem_timing.gb",
                           _memory_judge, 3000))
    # The combined timing ROMs' parts as single ROMs too (what a failing combined ROM points to).
    for rom in sorted((BLARGG / "mem_timing" / "individual").glob("*.gb")):
        checks.append(RomCheck("blargg timing", f"mem_timing {rom.stem}", rom, _serial_judge("Passed"), 3000))
    for rom in sorted((BLARGG / "mem_timing-2" / "rom_singles").glob("*.gb")):
        checks.append(RomCheck("blargg timing", f"mem_timing-2 {rom.stem}", rom, _memory_judge, 3000))
    checks.append(RomCheck("blargg halt_bug", "halt_bug", BLARGG / "halt_bug.gb", _screen_judge, 3000))
    checks.append(RomCheck("blargg dmg_sound", "dmg_sound (combined)", BLARGG / "dmg_sound" / "dmg_sound.gb",
                           _memory_judge, 8000))
    for rom in sorted((BLARGG / "dmg_sound" / "rom_singles").glob("*.gb")):
        checks.append(RomCheck("blargg dmg_sound", rom.stem, rom, _memory_judge, 3000))
    # The combined ROM runs the eight and checks each by CRC; it keeps their printouts off the
    # cartridge RAM, which 7-timing_effect's single overflows (README).
    checks.append(RomCheck("blargg oam_bug", "oam_bug (combined)", BLARGG / "oam_bug" / "oam_bug.gb",
                           _memory_judge, 3000, required=False))
    for rom in sorted((BLARGG / "oam_bug" / "rom_singles").glob("*.gb")):
        checks.append(RomCheck("blargg oam_bug", rom.stem, rom, _memory_judge, 3000, required=False))
    for rom in sorted(MOONEYE.rglob("*.gb")):
        name = rom.relative_to(MOONEYE).with_suffix("").as_posix()
        checks.append(RomCheck("mooneye acceptance", name, rom, _mooneye_judge, 600,
                               required=name not in MOONEYE_NOT_REQUIRED,
                               model=MOONEYE_OTHER_MODELS.get(name, "dmg")))
    checks.append(RomCheck("dmg-acid2", "dmg-acid2", DMG_ACID2 / "dmg-acid2.gb", _acid2_judge, 120))
    return checks


@dataclass
class Verdict:
    suite: str
    name: str
    emulator: str
    passed: bool
    detail: str
    required: bool
    seconds: float
    model: str  # the boot state the emulator started in: the check's model for ours, "dmg" for PyBoy


def verdict_of(check: RomCheck, emulator: str, pyboy_sound: bool = True) -> Verdict:
    """Runs one ROM on one emulator; an emulator that raises fails the ROM with its error."""
    start = time.perf_counter()
    allowance = check.max_frames + (BOOT_ALLOWANCE_FRAMES if emulator == "pyboy" else 0)
    gb = None
    try:
        gb = console(emulator, check.rom, pyboy_sound, check.model)
        passed, detail = check.judge(gb, allowance)
    except Exception as error:  # noqa: BLE001 - a crash is this ROM's verdict, the table goes on
        passed, detail = False, f"error: {type(error).__name__}: {error}"
    finally:
        if gb is not None:
            gb.close()
    return Verdict(check.suite, check.name, emulator, bool(passed), detail, check.required,
                   round(time.perf_counter() - start, 3), check.model if emulator == "ours" else "dmg")


def run(emulators: Sequence[str], pyboy_sound: bool, checks: Sequence[RomCheck] | None = None,
        progress: bool = True) -> list[Verdict]:
    checks = list(rom_checks() if checks is None else checks)
    verdicts = []
    jobs = [(check, emulator) for check in checks for emulator in emulators]
    if progress:
        from rich.progress import Progress

        with Progress(transient=True) as bar:
            task = bar.add_task("test ROMs", total=len(jobs))
            for check, emulator in jobs:
                bar.update(task, description=f"{emulator}: {check.name}")
                verdicts.append(verdict_of(check, emulator, pyboy_sound))
                bar.advance(task)
    else:
        verdicts = [verdict_of(check, emulator, pyboy_sound) for check, emulator in jobs]
    return verdicts


def summary(verdicts: Sequence[Verdict], emulators: Sequence[str]) -> list[dict]:
    """Per suite: ROMs, and for each emulator how many pass (required ones and all)."""
    rows = {}
    for v in verdicts:
        row = rows.setdefault(v.suite, {"suite": v.suite, "roms": set(), "required": set()})
        row["roms"].add(v.name)
        if v.required:
            row["required"].add(v.name)
        row.setdefault(v.emulator, 0)
        row[v.emulator] += int(v.passed)
    out = []
    for row in rows.values():
        out.append({"suite": row["suite"], "roms": len(row["roms"]), "required": len(row["required"]),
                    **{e: row.get(e, 0) for e in emulators}})
    return out


def print_table(verdicts: Sequence[Verdict], emulators: Sequence[str]) -> None:
    from rich.console import Console
    from rich.table import Table

    by_rom: dict[tuple[str, str], dict[str, Verdict]] = {}
    for v in verdicts:
        by_rom.setdefault((v.suite, v.name), {})[v.emulator] = v
    table = Table(title="Test ROMs (DMG)")
    table.add_column("suite")
    table.add_column("ROM")
    for emulator in emulators:
        table.add_column(emulator)
    for (suite, name), per in by_rom.items():
        cells = []
        for emulator in emulators:
            v = per[emulator]
            mark = "[green]pass[/]" if v.passed else "[red]fail[/]"
            cells.append(mark if v.passed else f"{mark} {v.detail[:50]}")
        first = next(iter(per.values()))
        label = name if first.required else f"{name} (not required)"
        models = {v.model for v in per.values()} - {"dmg"}
        table.add_row(suite, label + (f" (ours as {models.pop()})" if models else ""), *cells)
    Console().print(table)
    totals = Table(title="Passed, per suite")
    for column in ("suite", "ROMs", "required", *emulators):
        totals.add_column(column)
    for row in summary(verdicts, emulators):
        totals.add_row(row["suite"], str(row["roms"]), str(row["required"]), *(str(row[e]) for e in emulators))
    Console().print(totals)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--emulators", default="pyboy,ours",
                        help="comma-separated, from: pyboy, ours (default: both)")
    parser.add_argument("--pyboy-sound", choices=("on", "off"), default="on",
                        help="PyBoy's sound_emulated (off: its APU registers read 0, as in the bench)")
    parser.add_argument("--suites", default="", help="comma-separated suite names to run (default: all)")
    parser.add_argument("--out", type=Path, default=Path("bench-results") / "emurust-test-roms.json")
    args = parser.parse_args(argv)
    emulators = [e.strip() for e in args.emulators.split(",") if e.strip()]
    for emulator in emulators:
        if emulator not in ("pyboy", "ours"):
            parser.error(f"unknown emulator {emulator!r}: expected pyboy or ours")
    checks = rom_checks()
    if args.suites:
        wanted = {s.strip() for s in args.suites.split(",")}
        unknown = wanted - {c.suite for c in checks}
        if unknown:
            parser.error(f"unknown suites {sorted(unknown)}; known: {sorted({c.suite for c in checks})}")
        checks = [c for c in checks if c.suite in wanted]
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    verdicts = run(emulators, args.pyboy_sound == "on", checks, progress=sys.stderr.isatty())
    print_table(verdicts, emulators)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "started": started,
        "pyboy_sound_emulated": args.pyboy_sound == "on",
        "summary": summary(verdicts, emulators),
        "verdicts": [asdict(v) for v in verdicts],
    }, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
