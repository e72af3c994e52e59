"""What every env benchmark shares: the timing rule, the machine description, the SPS format."""

from __future__ import annotations

import multiprocessing
import os
import platform
import queue as queue_module
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


def _spawned_call(function, args, results) -> None:
    try:
        results.put(("ok", function(*args)))
    except Exception as error:  # noqa: BLE001 - reported as the row's failure
        results.put(("error", f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"))


def call_in_whole_loops_process(function, args: tuple, limit_s: float = 900.0) -> tuple[str, object]:
    """`function(*args)` in a spawned process whose XLA compiles whole loops as one function
    (shared/xla_cpu.py: the setting is per process, read when XLA's backend starts). Returns ("ok",
    its result) or ("error", why): an exception in it, its death, or no result within `limit_s`
    (then it is killed), so that a bench row can fail alone. `function` must be importable by name
    (a module-level function) for the child to find it."""
    from shared.xla_cpu import whole_loops_for_children

    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    process = context.Process(target=_spawned_call, args=(function, args, results), daemon=True)
    with whole_loops_for_children():
        process.start()
    deadline = time.monotonic() + limit_s
    outcome = ("error", f"no result within {limit_s:.0f} s")
    try:
        while time.monotonic() < deadline:
            try:
                outcome = results.get(timeout=1.0)
                break
            except queue_module.Empty:
                if not process.is_alive() and results.empty():
                    outcome = ("error", f"the process died (exit code {process.exitcode})")
                    break
    finally:
        if process.is_alive():
            process.kill()
        process.join()
    return outcome
