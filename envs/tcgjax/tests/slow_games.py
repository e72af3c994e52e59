"""The L3 slow tier's games (seeds 1,000-100,999 of l3_games.py; the default tier plays 0-999),
split into parts of equal size. Each part has its own test file, `l3_slow_part<k>.py`, only so
that Pants runs the parts side by side (one pytest process per file): a single file played all
100,000 games in one process, on about one core whatever the machine. One part is 25,000 games:
2,320-2,380 s with two parts at a time on this 2-core VM (2026-12-03; README)."""

from __future__ import annotations

import pytest

from envs.tcgjax import l3_games
from envs.tcgjax.tests.components import TCGJAX

CHUNK = 5_000  # games per test case (a failure names its chunk; the report names its seed)
# The whole tier, (first seed, number of games) per part.
PARTS = [(first, 25_000) for first in range(1_000, 101_000, 25_000)]


def chunks(part: int) -> list[int]:
    """First seed of each CHUNK-game test case of `part` (1-based, as the files)."""
    first, count = PARTS[part - 1]
    return list(range(first, first + count, CHUNK))


def games_test(part: int):
    """The test function of part `part`, for its file to hold under a `test_` name."""

    @pytest.mark.slow
    @TCGJAX.covers("engine")
    @pytest.mark.parametrize("first", chunks(part))
    def test_games_equal_reference(first):
        for report in l3_games.play_games(range(first, first + CHUNK), l3_games.l3_decks):
            assert report.divergence is None, f"seed {report.seed}: {report.divergence}\n{report.reproducer()}"

    return test_games_equal_reference
