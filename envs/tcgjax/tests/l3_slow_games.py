"""L3, slow tier: 100,000 games (seeds 1,000-100,999; random legal decks and the fixed decks in
turn), the reference against the JAX engine after every action (`play_games`: the JAX side 64 games to
a vmapped step). The games are played by the part files `l3_slow_part<k>.py` (slow_games.py), which
Pants runs side by side; this file checks that they make up the tier.
./pants --tag=slow test envs/tcgjax/tests:l3_slow"""

from __future__ import annotations

import pytest

from envs.tcgjax.tests import slow_games
from envs.tcgjax.tests.components import TCGJAX

TIER = range(1_000, 101_000)  # what the tier promises (README, issue), each game played once


@pytest.mark.slow
@TCGJAX.covers("engine")
def test_the_parts_play_the_whole_tier_once():
    played = [
        seed
        for part in range(1, len(slow_games.PARTS) + 1)
        for first in slow_games.chunks(part)
        for seed in range(first, first + slow_games.CHUNK)
    ]
    assert sorted(played) == list(TIER)
