"""L1: Gen 1 stat stages (jax/boosts.py) against Showdown's own battle.boost, and the accuracy table
against figures worked by hand."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from envs.pokejax.jax import boosts
from envs.pokejax.jax.tables import BOOST_KEYS, gen1_tables
from envs.pokejax.tests.components import POKEJAX

STAT_KEYS = ("atk", "def", "spa", "spe")  # the four stat columns; spd mirrors spa


@st.composite
def boost_cases(draw):
    """A Pokemon at random stages whose modified stats are what those stages give, or pinned at the
    999 cap or at 1 (where Gen 1 boosts misbehave), and one move's stage change."""
    stored = [draw(st.integers(1, 999)) for _ in STAT_KEYS]
    stages = [draw(st.integers(-6, 6)) for _ in BOOST_KEYS]
    modified = []
    for column, value in enumerate(stored):
        natural = min(int(boosts.staged_stat(jnp.int32(value), jnp.int32(stages[column]))), boosts.STAT_CAP)
        modified.append(draw(st.sampled_from([natural, natural, 999, 1])))
    column = draw(st.integers(0, len(BOOST_KEYS) - 1))
    delta = draw(st.sampled_from([-2, -1, 1, 2]))
    return stored, stages, modified, column, delta


def _showdown_case(stored, stages, modified, column, delta) -> dict:
    def stats(values):
        out = dict(zip(STAT_KEYS, values, strict=True))
        out["spd"] = out["spa"]
        return out

    stage_dict = {key: stages[c] for c, keys in enumerate(BOOST_KEYS) for key in keys}
    return {
        "stored": stats(stored),
        "modified": stats(modified),
        "boosts": stage_dict,
        "boost": {key: delta for key in BOOST_KEYS[column]},
    }


@POKEJAX.covers("battle")
@settings(max_examples=300, deadline=None)
@given(cases=st.lists(boost_cases(), min_size=1, max_size=20))
def test_stage_changes_equal_showdown(showdown, cases):
    answers = showdown.gen1_boost([_showdown_case(*case) for case in cases])
    for (stored, stages, modified, column, delta), answer in zip(cases, answers, strict=True):
        deltas = np.zeros(len(BOOST_KEYS), dtype=np.int32)
        deltas[column] = delta
        new_stages, new_modified, changed = boosts.apply_boosts(
            jnp.asarray(stages, dtype=jnp.int32),
            jnp.asarray(modified, dtype=jnp.int32),
            jnp.asarray(stored, dtype=jnp.int32),
            jnp.asarray(deltas),
        )
        case = f"stored {stored} stages {stages} modified {modified}: {BOOST_KEYS[column]} {delta:+d}"
        assert bool(changed) == answer["success"], case
        expected_stages = [answer["boosts"][keys[0]] for keys in BOOST_KEYS]
        assert np.asarray(new_stages).tolist() == expected_stages, case
        assert (
            answer["boosts"]["spa"] == answer["boosts"]["spd"]
            and answer["modified"]["spa"] == answer["modified"]["spd"]
        )
        assert np.asarray(new_modified).tolist() == [answer["modified"][key] for key in STAT_KEYS], case


@POKEJAX.covers("battle")
def test_accuracy_stages_by_hand():
    """Worked from Showdown's tryMoveHit table (25, 28, 33, 40, 50, 66, 100, 150 ... 400 hundredths),
    flooring after each factor and clamping to 1-255."""
    assert int(boosts.accuracy_threshold(jnp.int32(255), jnp.int32(0), jnp.int32(0))) == 255
    assert int(boosts.accuracy_threshold(jnp.int32(255), jnp.int32(-1), jnp.int32(0))) == 168  # 255 * 0.66
    assert int(boosts.accuracy_threshold(jnp.int32(255), jnp.int32(-1), jnp.int32(1))) == 110  # then * 0.66
    assert int(boosts.accuracy_threshold(jnp.int32(76), jnp.int32(6), jnp.int32(-6))) == 255  # capped
    assert int(boosts.accuracy_threshold(jnp.int32(2), jnp.int32(-6), jnp.int32(6))) == 1  # at least 1


@POKEJAX.covers("data")
def test_boost_tables_from_showdown_data():
    """The generated stage-change columns against Gen 1 facts (Bulbapedia's move pages)."""
    t = gen1_tables()

    def changes(table, move):
        return dict(zip(("atk", "def", "spc", "spe", "acc", "eva"), table[t.move_index(move)].tolist(), strict=True))

    assert changes(t.move_boosts, "swordsdance")["atk"] == 2 and t.move_targets_self[t.move_index("swordsdance")]
    assert changes(t.move_boosts, "amnesia")["spc"] == 2  # Gen 1: raises the one Special stat
    assert changes(t.move_boosts, "growl")["atk"] == -1 and not t.move_targets_self[t.move_index("growl")]
    assert changes(t.move_boosts, "screech")["def"] == -2 and changes(t.move_boosts, "minimize")["eva"] == 1
    assert changes(t.move_secondary_boosts, "psychic")["spc"] == -1  # Gen 1 Psychic lowers Special
    assert (
        t.move_secondary_chance[t.move_index("psychic")] == 33 and t.move_secondary_chance[t.move_index("acid")] == 33
    )
    assert t.move_boosts.sum() != 0 and not t.move_boosts[t.move_index("tackle")].any()
