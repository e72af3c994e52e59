"""Run one verification level's tests (pytest, in a subprocess) and read back what failed: the test,
its message, the components the message names ("[env/component]") and, for L3, the divergence
reports that shared.verification writes as JSON.

translation.toml lists a level's tests as Pants addresses or pytest paths. An address
`envs/pong/tests:l1` means the files `envs/pong/tests/l1_*.py`, by the layout every env folder
shares (its tests/BUILD has one python_tests target per level, named after the file prefix).
"""

from __future__ import annotations

import dataclasses
import glob
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Optional

from shared.verification.reports import REPORT_DIR_VARIABLE, read_reports

from .manifest import Manifest

COMPONENT_TAG = re.compile(r"\[(?P<env>[\w.-]+)/(?P<components>[\w+-]+)\]")
MAX_REPORT_CHARS = 6000
MAX_FAILURES_REPORTED = 5


class LevelSetupError(RuntimeError):
    pass


@dataclasses.dataclass
class Failure:
    test: str
    message: str


@dataclasses.dataclass
class LevelResult:
    level: str
    passed: bool
    seconds: float
    tests: int = 0
    failures: list[Failure] = dataclasses.field(default_factory=list)
    components: list[str] = dataclasses.field(default_factory=list)
    divergences: list[dict] = dataclasses.field(default_factory=list)
    note: str = ""

    def report(self) -> str:
        """What the repair prompt carries: each failing test and its message, the L3 divergence first."""
        parts = []
        if self.note:
            parts.append(self.note)
        for failure in self.failures[:MAX_FAILURES_REPORTED]:
            message = failure.message
            if len(message) > MAX_REPORT_CHARS:
                message = "...\n" + message[-MAX_REPORT_CHARS:]
            parts.append(f"FAILED {failure.test}\n{message}")
        if len(self.failures) > MAX_FAILURES_REPORTED:
            parts.append(f"... and {len(self.failures) - MAX_FAILURES_REPORTED} more failing tests")
        return "\n\n".join(parts)

    def summary(self) -> str:
        if self.passed:
            return f"{self.level.upper()} passed ({self.tests} tests, {self.seconds:.0f} s)"
        where = f"; component: {', '.join(self.components)}" if self.components else ""
        return f"{self.level.upper()} failed ({len(self.failures)} of {self.tests} tests, {self.seconds:.0f} s{where})"

    def as_dict(self) -> dict:
        return {"level": self.level, "passed": self.passed, "seconds": round(self.seconds, 1), "tests": self.tests,
                "failures": [dataclasses.asdict(f) for f in self.failures], "components": self.components,
                "divergences": len(self.divergences), "note": self.note}


def test_paths(entries: tuple[str, ...], root: Path) -> list[str]:
    """pytest arguments for translation.toml's entries (Pants addresses or pytest paths)."""
    paths: list[str] = []
    for entry in entries:
        if "::" in entry or entry.endswith(".py") or ":" not in entry:
            file_part = entry.split("::", 1)[0]
            if not (root / file_part).exists():
                raise LevelSetupError(f"test path {entry!r} does not exist under {root}")
            paths.append(entry)
            continue
        directory, _, name = entry.rpartition(":")
        matches = sorted(glob.glob(str(root / directory / f"{name}_*.py")))
        if not matches:
            raise LevelSetupError(f"test target {entry!r} names no files: expected {directory}/{name}_*.py")
        paths.extend(str(Path(m).relative_to(root)) for m in matches)
    return paths


def _components(text: str, env: str) -> list[str]:
    found: list[str] = []
    for match in COMPONENT_TAG.finditer(text):
        if match.group("env") != env:
            continue
        for component in match.group("components").split("+"):
            if component not in found:
                found.append(component)
    return found


def _read_junit(path: Path) -> tuple[int, list[Failure]]:
    tree = ElementTree.parse(path)
    tests, failures = 0, []
    for case in tree.iter("testcase"):
        tests += 1
        for child in case:
            if child.tag in ("failure", "error"):
                name = f"{case.get('classname', '')}::{case.get('name', '')}"
                message = (child.get("message") or "").strip()
                body = (child.text or "").strip()
                failures.append(Failure(name, body if message and message in body else f"{message}\n{body}".strip()))
                break
    return tests, failures


def run_level(manifest: Manifest, level: str, entries: tuple[str, ...], log_dir: Path, *,
              python: Optional[str] = None, timeout_s: float = 3600) -> LevelResult:
    start = time.monotonic()
    if not entries:
        return LevelResult(level, True, 0.0, note=f"no {level.upper()} tests declared in translation.toml")
    root = manifest.root
    try:
        paths = test_paths(entries, root)
    except LevelSetupError as error:
        return LevelResult(level, False, 0.0, note=str(error))
    log_dir.mkdir(parents=True, exist_ok=True)
    junit = log_dir / f"{level}.xml"
    report_dir = log_dir / f"{level}-reports"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(root)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env[REPORT_DIR_VARIABLE] = str(report_dir)
    # L1-L3 are the default tier: a test marked slow (a long L3 tier sharing the l3_ prefix) is left
    # out, as Pants leaves out targets tagged slow; L4 runs whole.
    tier = [] if level == "l4" else ["-m", "not slow"]
    argv = [python or sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", *tier,
            f"--junitxml={junit}", *paths]
    with open(log_dir / f"{level}.log", "wb") as log:
        try:
            completed = subprocess.run(argv, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return LevelResult(level, False, time.monotonic() - start,
                               note=f"{level.upper()} did not finish within {timeout_s:g} s (log: {log_dir / f'{level}.log'})")
    seconds = time.monotonic() - start
    if not junit.exists():
        tail = (log_dir / f"{level}.log").read_text(errors="replace")[-3000:]
        return LevelResult(level, False, seconds, note=f"pytest did not run (exit {completed.returncode}):\n{tail}")
    tests, failures = _read_junit(junit)
    divergences = read_reports(report_dir, "l3-divergence") if report_dir.exists() else []
    components: list[str] = []
    for failure in failures:
        for component in _components(failure.message, manifest.env):
            if component not in components:
                components.append(component)
    for divergence in divergences:
        field = divergence.get("first_internal_field") or divergence.get("field", "")
        for component in manifest.components_of(field) or manifest.components_of(divergence.get("field", "")):
            if component not in components:
                components.append(component)
    note = ""
    if completed.returncode == 5 or tests == 0:
        return LevelResult(level, False, seconds, note=f"no tests were collected from {paths}")
    if completed.returncode not in (0, 1):
        note = f"pytest exited {completed.returncode} (see {log_dir / f'{level}.log'})"
    passed = completed.returncode == 0 and not failures
    return LevelResult(level, passed, seconds, tests, failures, components, divergences, note)
