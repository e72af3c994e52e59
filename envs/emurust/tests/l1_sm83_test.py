"""L1 [emurust/cpu]: every SingleStepTests SM83 vector (500 opcodes x 50 cases): registers, memory
and the bus activity of every M-cycle (address, data, read/write/internal).

HALT (76) and STOP (10) are recorded by the vectors as 1-byte instructions with 3 bus cycles; our CPU
does the same register/memory change, but models HALT's and STOP's waiting differently (HALT
stops fetching), so only their bus cycles are not compared."""

from __future__ import annotations

import json

import pytest

from .harness import SM83_VECTORS, core

NO_CYCLE_CHECK = {"76", "10"}
REGISTERS = ("a", "b", "c", "d", "e", "f", "h", "l", "sp", "pc", "ime")


def _vector_files():
    files = sorted(SM83_VECTORS.glob("*.json"))
    assert len(files) == 500, f"expected 500 vector files in {SM83_VECTORS}, found {len(files)}"
    return files


def _check_case(case: dict, opcode: str) -> list[str]:
    initial, final = case["initial"], case["final"]
    registers, ram, cycles = core().sm83_step({k: initial[k] for k in REGISTERS}, [tuple(p) for p in initial["ram"]])
    problems = []
    for k in REGISTERS:
        if registers[k] != final[k]:
            problems.append(f"{k}={registers[k]:#x} expected {final[k]:#x}")
    if registers["ei"] != final.get("ei", 0):
        problems.append(f"EI pending {registers['ei']} expected {final.get('ei', 0)}")
    memory = dict(ram)  # the final state lists the same addresses as the initial one
    for address, value in final["ram"]:
        if memory.get(address) != value:
            problems.append(f"mem[{address:#06x}]={memory.get(address)} expected {value}")
    if opcode not in NO_CYCLE_CHECK:
        expected = case["cycles"]
        if len(cycles) != len(expected):
            problems.append(f"{len(cycles)} M-cycles, expected {len(expected)}")
        else:
            for i, ((address, data, pins), want) in enumerate(zip(cycles, expected, strict=False)):
                if pins != want[2] or (pins != "---" and (address, data) != (want[0], want[1])):
                    problems.append(f"M-cycle {i}: ({address:#06x}, {data:#04x}, {pins}) expected {want}")
    return problems


@pytest.mark.parametrize("path", _vector_files(), ids=lambda p: p.stem)
def test_opcode_vectors(path):
    opcode = path.stem
    failures = []
    for case in json.loads(path.read_text()):
        problems = _check_case(case, opcode)
        if problems:
            failures.append(f"{case['name']}: " + "; ".join(problems))
    assert not failures, f"[emurust/cpu] {len(failures)} of 50 cases of opcode {opcode} fail:\n" + "\n".join(failures[:5])


def test_a_planted_fault_is_caught():
    """The comparison can fail: a case with its expected A changed is reported."""
    case = json.loads((SM83_VECTORS / "80.json").read_text())[0]  # ADD A,B
    case["final"]["a"] ^= 1
    assert any(p.startswith("a=") for p in _check_case(case, "80"))
