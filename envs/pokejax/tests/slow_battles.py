"""The L3 slow tier's battles (custom games 1,000-10,999 of l3_battles.py, gen1randombattles
1,000-2,999; the default tier plays 0-99 and 0-49), split into parts of about equal time. Each part
has its own test file, `l3_slow_part<k>.py`, only so that Pants runs the parts side by side (one
pytest process per file): one process plays a battle at a time, so a single file took its ~2.5 hours
on one core whatever the machine. One part is about 30 minutes of one core here (custom battles
0.84 s each, random ones 0.72 s, 2026-12-02, after the engine's ~100 s start)."""

from __future__ import annotations

import pytest

from envs.pokejax import l3_battles
from envs.pokejax.tests.components import POKEJAX

CHUNK = 500  # battles per test case (a failure names its chunk; the divergence names its battle)
PLAYERS = {l3_battles.FORMAT: l3_battles.play, l3_battles.RANDOM_FORMAT: l3_battles.play_random_battle}
# The whole tier, (format, first battle, number of battles) per part.
PARTS = [(l3_battles.FORMAT, first, 2_000) for first in range(1_000, 11_000, 2_000)] + [
    (l3_battles.RANDOM_FORMAT, 1_000, 2_000)
]


def chunks(part: int) -> list[tuple[str, int]]:
    """(format, first battle) of each CHUNK-battle test case of `part` (1-based, as the files)."""
    format, first, count = PARTS[part - 1]
    return [(format, start) for start in range(first, first + count, CHUNK)]


def battles_test(part: int):
    """The test function of part `part`, for its file to hold under a `test_` name."""

    @pytest.mark.slow
    @POKEJAX.covers("battle")
    @pytest.mark.parametrize("format,first", chunks(part))
    def test_battles_equal_showdown(showdown, format, first):
        outcomes = [PLAYERS[format](showdown, i) for i in range(first, first + CHUNK)]
        finished = [o for o in outcomes if o["winner"] in ("p1", "p2")]
        assert len(finished) >= 0.95 * CHUNK, [o for o in outcomes if o not in finished][:5]

    return test_battles_equal_showdown
