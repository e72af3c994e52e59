"""L3, slow tier: 10,000 battles of the supported moves (battles 1,000-10,999 of l3_battles.py;
the default tier plays 0-99) and 2,000 gen1randombattles (1,000-2,999; the default tier plays
0-49), Showdown against the JAX engine, equal after every decision. About 2 hours on 2 cores:
./pants --tag=slow test envs/pokejax/tests:l3_slow"""

from __future__ import annotations

import pytest

from envs.pokejax import l3_battles
from envs.pokejax.tests.components import POKEJAX

FIRST, CHUNK = 1_000, 500
# (the player of l3_battles, how many battles from FIRST) per format
FORMATS = {
    l3_battles.FORMAT: (l3_battles.play, 10_000),
    l3_battles.RANDOM_FORMAT: (l3_battles.play_random_battle, 2_000),
}


@pytest.mark.slow
@POKEJAX.covers("battle")
@pytest.mark.parametrize(
    "format,first",
    [(name, first) for name, (_, count) in FORMATS.items() for first in range(FIRST, FIRST + count, CHUNK)],
)
def test_battles_equal_showdown(showdown, format, first):
    player, _ = FORMATS[format]
    outcomes = [player(showdown, i) for i in range(first, first + CHUNK)]
    finished = [o for o in outcomes if o["winner"] in ("p1", "p2")]
    assert len(finished) >= 0.95 * CHUNK, [o for o in outcomes if o not in finished][:5]
