"""argparse types for the repository's command lines (benches, L3 and L4 tools): a bad count or time is
a usage error naming its option, not a ZeroDivisionError or an empty run after minutes of work."""

from __future__ import annotations

import argparse
import math


def batch_list(text: str) -> list[int]:
    """--batches' argparse type: comma-separated whole numbers >= 1 ("1,64,1024")."""
    try:
        batches = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers such as 1,64,1024, got {text!r}") \
            from None
    if any(batch < 1 for batch in batches):
        raise argparse.ArgumentTypeError(f"every batch must be at least 1, got {text!r}")
    return batches


def positive_seconds(text: str) -> float:
    """--seconds' argparse type: a time per measurement, > 0."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not (math.isfinite(seconds) and seconds > 0):
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, got {text!r}")
    return seconds


def count_at_least(minimum: int):
    """An argparse type for a whole number >= minimum (--ppo-updates 0 leaves PPO rows out)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    parse.__name__ = f"whole number >= {minimum}"  # argparse names the type in its message
    return parse
