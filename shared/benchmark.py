"""What every env benchmark shares: the timing rule, the machine description, the SPS format."""

from __future__ import annotations

import os
import platform
import sys
import time


def best_rate(call, steps_per_call: int, seconds: float, windows: int = 3) -> float:
    """Steps per second: the best of `windows` timing windows that share `seconds`, each window at
    least one call. The same rule for every backend, so that a stray pause of this shared machine
    does not decide a ratio."""
    best = 0.0
    for _ in range(windows):
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds / windows:
            call()
            steps += steps_per_call
        best = max(best, steps / (time.perf_counter() - start))
    return best


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def machine() -> dict:
    return {"cpus": os.cpu_count(), "platform": platform.platform(), "processor": cpu_model(),
            "python": sys.version.split()[0]}


def format_rate(value) -> str:
    if value is None:
        return "n/a"
    if value >= 1e6:
        return f"{value / 1e6:,.2f}M"
    if value >= 1e3:
        return f"{value / 1e3:,.1f}K"
    return f"{value:,.0f}"


def rich_table(title: str, columns: tuple[str, ...], cells: list[tuple[str, ...]]):
    """A rich Table with right-aligned columns: the benches' printed tables."""
    from rich.table import Table

    table = Table(title=title)
    for column in columns:
        table.add_column(column, justify="right")
    for row in cells:
        table.add_row(*row)
    return table
