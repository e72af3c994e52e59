"""L3, slow tier: 10,000 battles of the supported moves (battles 1,000-10,999 of l3_battles.py;
the default tier plays 0-99) and 2,000 gen1randombattles (1,000-2,999; the default tier plays
0-49), Showdown against the JAX engine, equal after every decision. The battles are played by the
part files `l3_slow_part<k>.py` (slow_battles.py), which Pants runs side by side; this file holds
the tier's self-test. 1.7 hours on 2 cores (2026-12-02): ./pants --tag=slow test envs/pokejax/tests:l3_slow"""

from __future__ import annotations

import pytest

from envs.pokejax import l3_battles
from envs.pokejax.jax import damage
from envs.pokejax.tests import slow_battles
from envs.pokejax.tests.components import POKEJAX

# What the tier promises (README, issue): these battles, each played once.
TIER = {l3_battles.FORMAT: range(1_000, 11_000), l3_battles.RANDOM_FORMAT: range(1_000, 3_000)}


@pytest.mark.slow
@POKEJAX.covers("battle")
def test_the_parts_play_the_whole_tier_once():
    played = {format: [] for format in TIER}
    for part in range(1, len(slow_battles.PARTS) + 1):
        for format, first in slow_battles.chunks(part):
            played[format].extend(range(first, first + slow_battles.CHUNK))
    assert {format: sorted(battles) for format, battles in played.items()} == {
        format: list(battles) for format, battles in TIER.items()
    }


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
