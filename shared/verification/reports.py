"""Machine-readable failure reports, for tools that act on a failure (the agent driver).

When $ENVPORT_REPORT_DIR is set, an L3 divergence is also written there as JSON: where it
happened, the action history that leads there, and both sides' values at that step, with dtypes,
so that the values can be pinned exactly in a regression test. Arrays are stored as nested lists
of Python numbers; a float32 or float64 value survives the round trip through JSON bit for bit
(repr of a float is exact), so equality after decoding is bitwise equality.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Optional

import numpy as np

REPORT_DIR_VARIABLE = "ENVPORT_REPORT_DIR"


def encode_array(value: Any) -> dict:
    array = np.asarray(value)
    return {"dtype": array.dtype.str, "shape": list(array.shape), "values": array.tolist()}


def decode_array(record: dict) -> np.ndarray:
    return np.asarray(record["values"], dtype=np.dtype(record["dtype"])).reshape(record["shape"])


def encode_actions(actions: list) -> list:
    return [a.tolist() if isinstance(a, np.ndarray) else (a.item() if isinstance(a, np.generic) else a)
            for a in actions]


def report_dir() -> Optional[Path]:
    directory = os.environ.get(REPORT_DIR_VARIABLE)
    return Path(directory) if directory else None


def write_report(kind: str, record: dict) -> Optional[Path]:
    """Write `record` as <kind>-<time>-<pid>.json in $ENVPORT_REPORT_DIR (nothing when it is unset)."""
    directory = report_dir()
    if directory is None:
        return None
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{kind}-{time.time_ns()}-{os.getpid()}.json"
    partial = path.with_suffix(".part")
    partial.write_text(json.dumps({"kind": kind, **record}, indent=1))
    partial.replace(path)
    return path


def read_reports(directory: Path, kind: str) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(directory.glob(f"{kind}-*.json"))]
