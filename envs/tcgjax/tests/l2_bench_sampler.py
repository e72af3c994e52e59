"""L2: the benchmark's random legal actions (bench.random_legal_actions) are legal and uniform, as the
reference's `legal[randrange(len(legal))]` is, so the random-play rates of both engines count the same
kind of game."""

from __future__ import annotations

import jax
import numpy as np
from scipy import stats

from envs.tcgjax.bench import random_legal_actions
from envs.tcgjax.reference.actions import NUM_ACTIONS as N_ACTIONS
from envs.tcgjax.tests.components import TCGJAX


@TCGJAX.covers("env")
def test_bench_actions_are_legal():
    rng = np.random.default_rng(7)
    masks = rng.random((4096, N_ACTIONS)) < rng.uniform(0.0, 0.2, (4096, 1))
    masks[np.arange(4096), rng.integers(0, N_ACTIONS, 4096)] = True  # at least one legal action a row
    masks[0] = False
    masks[0, N_ACTIONS - 1] = True  # only the last one
    actions = np.asarray(random_legal_actions(jax.random.PRNGKey(0), masks))
    assert actions.shape == (4096,)
    assert masks[np.arange(4096), actions].all()
    assert actions[0] == N_ACTIONS - 1


@TCGJAX.covers("env")
def test_bench_actions_are_uniform_over_the_legal_ones():
    legal = np.array([0, 3, 4, 50, 109, N_ACTIONS - 1])
    mask = np.zeros(N_ACTIONS, bool)
    mask[legal] = True
    draws = 60_000
    actions = np.asarray(random_legal_actions(jax.random.PRNGKey(1), np.broadcast_to(mask, (draws, N_ACTIONS))))
    counts = np.array([(actions == a).sum() for a in legal])
    assert counts.sum() == draws
    # Uniform: a chi-square test against equal counts (a fixed key, so a fixed p-value). An off-by-one
    # that never picks the last legal action, or picks the first twice as often, gives p near 0.
    assert stats.chisquare(counts).pvalue > 1e-3
