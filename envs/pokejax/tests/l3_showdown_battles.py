"""L3: 100 battles of random teams of the supported moves (gen1customgame) and 50 of Showdown's
gen1randombattle (its own generated teams, Sleep and Freeze Clauses, bit truncation), Showdown
against the JAX engine, equal after every decision (envs/pokejax/l3_battles.py says what is
compared and how each battle is made)."""

from __future__ import annotations

import pytest

from envs.pokejax import l3_battles
from envs.pokejax.tests.components import POKEJAX

CHUNK = 25
# (the player of l3_battles, how many battles from 0) per format
FORMATS = {
    l3_battles.FORMAT: (l3_battles.play, 100),
    l3_battles.RANDOM_FORMAT: (l3_battles.play_random_battle, 50),
}


@POKEJAX.covers("battle")
@pytest.mark.parametrize(
    "format,first", [(name, first) for name, (_, count) in FORMATS.items() for first in range(0, count, CHUNK)]
)
def test_battles_equal_showdown(showdown, format, first):
    player, _ = FORMATS[format]
    outcomes = [player(showdown, i) for i in range(first, first + CHUNK)]
    finished = [o for o in outcomes if o["winner"] in ("p1", "p2")]
    # the comparison only means something if battles are played to their end
    assert len(finished) >= CHUNK - 2, outcomes
    assert {o["winner"] for o in finished} == {"p1", "p2"}


@POKEJAX.covers("battle")
def test_a_one_point_hp_difference_is_caught(showdown, monkeypatch):
    """L3 self-test: a JAX state that drifts from Showdown's by one HP point after a few decisions
    is reported with the battle, the turn, the Pokemon's hp field and Showdown's log of that turn.
    (The engine-mutation self-test, a crit threshold one too high, recompiles the engine step:
    minutes on 2 cores, so it runs in the slow tier, l3_slow_battles.py.)"""
    original = l3_battles._jitted_step
    decisions = {"count": 0}

    def drifting_step(kind):
        step = original(kind)  # the compiled step the battles above used

        def wrapped(state, actions, tables):
            after = step(state, actions, tables)
            decisions["count"] += 1
            if decisions["count"] == 6:
                after = after.replace(hp=after.hp.at[1, 0].add(-1))
            return after

        return wrapped

    monkeypatch.setattr(l3_battles, "_jitted_step", drifting_step)
    with pytest.raises(l3_battles.L3Divergence) as caught:
        for i in range(3):
            l3_battles.play(showdown, i)
    report = str(caught.value)
    assert caught.value.result["decision"] == 6, report
    assert "diverged at turn" in report and "Showdown's log of that turn" in report
    assert "p2 slot 1" in report and " hp: showdown " in report, report
    assert f"--first {caught.value.result['battle']} --battles 1" in report


def test_the_state_reaches_the_host_unchanged():
    """The comparison reads the JAX state through one packed transfer (l3_battles._to_host): every
    dtype the engine uses comes back with its dtype, shape and bits, extremes and sign included."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    state = {
        "flag": jnp.array([[True, False], [False, True]]),
        "small": jnp.array([-128, 127, -1], jnp.int8),
        "medium": jnp.array([-32768, 32767], jnp.int16),
        "byte": jnp.array([0, 255], jnp.uint8),
        "word": jnp.array([-(2**31), 2**31 - 1, -7], jnp.int32),
        "rng": jnp.array([0, 2**32 - 1, 0x80000001], jnp.uint32),
        "scalar": jnp.int32(-5),
        "real": jnp.array([-0.0, 1.5e-45, jnp.inf], jnp.float32),
    }
    got, expected = l3_battles._to_host(state), jax.device_get(state)
    for name, value in expected.items():
        assert got[name].dtype == value.dtype and got[name].shape == np.shape(value), name
        bits = [np.atleast_1d(v).view(np.uint8) for v in (got[name], value)]
        np.testing.assert_array_equal(*bits, err_msg=name)
    with pytest.raises(TypeError, match="float16"):
        l3_battles._to_host({"half": jnp.zeros(2, jnp.float16)})
