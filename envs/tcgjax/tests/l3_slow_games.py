"""L3, slow tier: 100,000 games (seeds 1,000-100,999; random legal decks and the fixed decks in
turn), the reference against the JAX engine after every action (`play_games`: the JAX side 64 games to
a vmapped step). About 1.5-2 hours in one process here (the same seeds by hand in three processes: all
equal, README): ./pants --tag=slow test envs/tcgjax/tests:l3_slow"""

from __future__ import annotations

import pytest

from envs.tcgjax import l3_games
from envs.tcgjax.tests.components import TCGJAX

FIRST, COUNT, CHUNK = 1_000, 100_000, 5_000


@pytest.mark.slow
@TCGJAX.covers("engine")
@pytest.mark.parametrize("first", range(FIRST, FIRST + COUNT, CHUNK))
def test_games_equal_reference(first):
    for report in l3_games.play_games(range(first, first + CHUNK), l3_games.l3_decks):
        assert report.divergence is None, f"seed {report.seed}: {report.divergence}\n{report.reproducer()}"
