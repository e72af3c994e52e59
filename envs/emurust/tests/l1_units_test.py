"""L1: the Rust unit tests of each hardware module (cargo test --lib), one pytest per module, so a
failure names the component: [emurust/timer], [emurust/ppu], [emurust/cartridge], ...

Each module's tests check its documented behaviour against hand-derived values (timer rates and
the overflow/reload sequence, PPU mode lengths, STAT edges and rendering, MBC1/3/5 banking and the
RTC latch, APU read masks and length counters, joypad rows, serial timing, save-state checks, and
the console's wait-loop skipping against running every round, and the compiled blocks against the
interpreter: the SM83 vectors, every operand and flag state, random code, games and test ROMs)."""

from __future__ import annotations

import functools
import re

import pytest

from envs.emurust.build_ext import run_unit_tests

MODULES = ("apu", "bus", "cartridge", "cpu", "dma", "gameboy", "jit", "joypad", "ppu", "serial", "slices", "state", "timer", "vec")
RESULT = re.compile(r"^test (\w+)::tests::(\w+) \.\.\. (ok|FAILED|ignored)$", re.MULTILINE)


@functools.cache
def _cargo_results():
    process = run_unit_tests()
    results = RESULT.findall(process.stdout)
    return process, results


@pytest.mark.parametrize("module", MODULES)
def test_module_unit_tests(module):
    process, results = _cargo_results()
    mine = [(name, status) for mod, name, status in results if mod == module]
    assert mine, f"[emurust/{module}] no unit tests ran for this module; cargo said:\n{process.stdout[-3000:]}"
    failed = [name for name, status in mine if status != "ok"]
    assert not failed, f"[emurust/{module}] failing: {failed}\n{process.stdout[-3000:]}"


def test_cargo_test_succeeded():
    process, results = _cargo_results()
    assert process.returncode == 0, f"cargo test failed:\n{process.stdout[-4000:]}"
    listed = {mod for mod, _, _ in results}
    assert listed <= set(MODULES), f"modules with tests not listed in MODULES: {listed - set(MODULES)}"
