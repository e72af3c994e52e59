"""L4 (slow): PPO with the legal-action mask trained against the random opponent on TCGJax (524K
decisions per seed) and, with a small budget, on the Python reference (49K), 10 seeds each; every
policy's greedy win rate over the same 504 episodes of the fixed decks on both backends; paired TOST
with Delta = l4_delta (0.05, issue 7). About an hour on 2 cores: ./pants --tag=slow test envs/tcgjax/tests:l4.
Results go to $ENVPORT_L4_OUT or the envport cache (l4/tcgjax/), and are printed."""

import os
from pathlib import Path

import numpy as np
import pytest

from envs.tcgjax import policy_transfer
from envs.tcgjax.tests.components import TCGJAX
from shared.cache import cache_dir

# random legal play against the random opponent, over episodes no policy is evaluated on: measured
# in the test, so the bar below is "PPO learned something", not a number copied from a run
RANDOM_BASELINE_EPISODES = 2016


@pytest.mark.slow
@TCGJAX.covers("env")
def test_l4_policies_score_the_same_on_both_backends():
    settings = policy_transfer.L4Settings()
    out = Path(os.environ["ENVPORT_L4_OUT"]) if os.environ.get("ENVPORT_L4_OUT") else cache_dir("l4", "tcgjax")
    report = policy_transfer.run(settings, range(10), out, policy_transfer.l4_delta(), show_progress=False)
    print(report.to_markdown())
    print(f"written to {out}")
    assert [t.comparison for t in report.tests] == ["transfer, trained on TCGJax", "transfer, trained on reference"]
    assert report.equivalent, report.to_markdown()
    baseline = policy_transfer.random_policy_win_rate(settings, RANDOM_BASELINE_EPISODES)
    jax_trained = np.asarray(report.returns["TCGJax"]["TCGJax"])
    # every TCGJax-trained policy beats random legal play's win rate by a clear margin
    assert jax_trained.min() > baseline + 0.1, (jax_trained, baseline)
