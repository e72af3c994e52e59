"""L4 (slow): PPO with the legal-action mask trained against a random opponent on PokeJAX (1M
decisions per seed) and, with a small budget, on Showdown (16K), 10 seeds each; every policy's
greedy win rate over the same 500 gen1randombattles on both backends; paired TOST with Delta =
l4_delta (0.02). About 50 minutes on 2 cores: ./pants --tag=slow test envs/pokejax/tests:l4.
Results go to $ENVPORT_L4_OUT or the envport cache (l4/pokejax/), and are printed."""

import os
from pathlib import Path

import numpy as np
import pytest

from envs.pokejax import policy_transfer
from envs.pokejax.tests.components import POKEJAX
from shared.cache import cache_dir

# a random policy against the random opponent, over the same kind of battles: measured in the test,
# so the bar below is "PPO learned something", not a number copied from a run
RANDOM_BASELINE_BATTLES = 500


@pytest.mark.slow
@POKEJAX.covers("battle")
def test_l4_policies_score_the_same_on_both_backends():
    settings = policy_transfer.L4Settings()
    out = Path(os.environ["ENVPORT_L4_OUT"]) if os.environ.get("ENVPORT_L4_OUT") else cache_dir("l4", "pokejax")
    report = policy_transfer.run(settings, range(10), out, policy_transfer.l4_delta(), show_progress=False)
    print(report.to_markdown())
    print(f"written to {out}")
    assert [t.comparison for t in report.tests] == ["transfer, trained on PokeJAX", "transfer, trained on Showdown"]
    assert report.equivalent, report.to_markdown()
    baseline = policy_transfer.random_policy_win_rate(settings, RANDOM_BASELINE_BATTLES)
    jax_trained = np.asarray(report.returns["PokeJAX"]["PokeJAX"])
    # every PokeJAX-trained policy beats the random policy's win rate by a clear margin
    assert jax_trained.min() > baseline + 0.1, (jax_trained, baseline)
