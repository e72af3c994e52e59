"""L3, slow tier: 10,000 battles of the supported moves (battles 1,000-10,999 of l3_battles.py;
the default tier plays 0-99) and 2,000 gen1randombattles (1,000-2,999; the default tier plays
0-49), Showdown against the JAX engine, equal after every decision. About 2 hours on 2 cores:
./pants --tag=slow test envs/pokejax/tests:l3_slow"""

from __future__ import annotations

import pytest

from envs.pokejax import l3_battles
from envs.pokejax.jax import damage
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


@pytest.mark.slow
@POKEJAX.covers("battle")
def test_a_one_off_crit_threshold_is_caught(showdown, monkeypatch):
    """L3 self-test: an engine whose crit threshold is one too high diverges, and the report names
    the battle, the turn, the PRNG or HP field and Showdown's log of that turn."""
    original = damage.crit_chance
    monkeypatch.setattr(damage, "crit_chance", lambda *args: original(*args) + 1)
    monkeypatch.setattr(l3_battles, "_STEPS", {})  # retrace with the broken function
    # (the mutation shows only when a crit roll draws exactly the threshold, about 1 roll in 256:
    # a few dozen battles hold a few hundred crit rolls; the loop stops at the first divergence)
    with pytest.raises(l3_battles.L3Divergence) as caught:
        for i in range(40):
            l3_battles.play(showdown, i)
    report = str(caught.value)
    assert "diverged at turn" in report and "Showdown's log of that turn" in report
    assert "prng:" in report or " hp:" in report
    assert f"--first {caught.value.result['battle']} --battles 1" in report
