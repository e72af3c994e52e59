"""What an env's L4 command line shares with every other: Delta from the env's translation.toml, the
--out and --seeds options, and running the comparison into a results folder with a printed report.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Callable, Optional

from shared.cli_args import count_at_least

from .l4 import TransferReport


def l4_delta(env_dir: str | Path) -> float:
    """[equivalence] l4_delta of env_dir/translation.toml: the env's equivalence margin, kept with the
    translation it judges rather than in code."""
    import tomllib

    path = Path(env_dir) / "translation.toml"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: L4's Delta is read from its [equivalence] l4_delta")
    try:
        return float(tomllib.loads(path.read_text())["equivalence"]["l4_delta"])
    except KeyError:
        raise ValueError(f"{path} has no [equivalence] l4_delta (L4's Delta)") from None


def l4_argument_parser(description: str, env: str) -> argparse.ArgumentParser:
    """The options every env's L4 command takes; the env adds those of its own settings."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", type=Path, default=None, help=f"results folder (default: the envport cache, l4/{env})")
    parser.add_argument("--seeds", type=count_at_least(2), default=10,
                        help="PPO seeds per backend (at least 2: TOST tests a spread)")
    return parser


def run_l4_command(env: str, out: Optional[Path], run: Callable[[Path], TransferReport],
                   notes: Callable[[], list[str]] = list) -> int:
    """run(out) (the cache's l4/<env> when out is None), its report printed, then notes() (computed
    after the run: an env's extra context, a baseline say); the exit status is 0 only if the
    backends were shown equivalent."""
    from shared.cache import cache_dir

    out = out or cache_dir("l4", env)
    started = time.perf_counter()
    report = run(out)
    print(report.to_markdown())
    for line in notes():
        print(line)
    print(f"written to {out} in {time.perf_counter() - started:.0f} s")
    return 0 if report.equivalent else 1
