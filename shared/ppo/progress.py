"""A rich progress bar for training runs: updates done, env steps per second, mean episode return."""

from __future__ import annotations

import math
import time

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn


class TrainingProgress:
    """Context manager; call `advance(steps, mean_return)` once per PPO update."""

    def __init__(self, description: str, total_updates: int, enabled: bool = True):
        self.enabled = enabled
        self._progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[sps]} SPS"), TextColumn("return {task.fields[ret]}"),
            TimeElapsedColumn(), TimeRemainingColumn(), transient=False, disable=not enabled,
        )
        self._task = self._progress.add_task(description, total=total_updates, sps="-", ret="-")
        self._start = None
        self._steps = 0

    def __enter__(self) -> TrainingProgress:
        self._progress.__enter__()
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self._progress.__exit__(*exc)

    def advance(self, steps: int, mean_return: float) -> None:
        self._steps += int(steps)
        elapsed = max(time.perf_counter() - (self._start or time.perf_counter()), 1e-9)
        ret = "-" if mean_return is None or math.isnan(float(mean_return)) else f"{float(mean_return):.2f}"
        self._progress.update(self._task, advance=1, sps=f"{self._steps / elapsed:,.0f}", ret=ret)
