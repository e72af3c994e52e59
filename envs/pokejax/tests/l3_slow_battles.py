"""L3, slow tier: 10,000 battles (battles 1,000-10,999 of l3_battles.py; the default tier plays
0-99), Showdown against the JAX engine, equal after every decision. About 3 hours on 2 cores:
./pants --tag=slow test envs/pokejax/tests:l3_slow"""

from __future__ import annotations

import pytest

from envs.pokejax import l3_battles
from envs.pokejax.tests.components import POKEJAX

FIRST, BATTLES, CHUNK = 1_000, 10_000, 500


@pytest.mark.slow
@POKEJAX.covers("battle")
@pytest.mark.parametrize("first", range(FIRST, FIRST + BATTLES, CHUNK))
def test_ten_thousand_battles_equal_showdown(showdown, first):
    outcomes = [l3_battles.play(showdown, i) for i in range(first, first + CHUNK)]
    finished = [o for o in outcomes if o["winner"] in ("p1", "p2")]
    assert len(finished) >= 0.95 * CHUNK, [o for o in outcomes if o not in finished][:5]
