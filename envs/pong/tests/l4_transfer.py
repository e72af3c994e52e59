"""L4 (slow): PPO trained on each backend, 10 seeds each, every policy evaluated on both; TOST on
episode return with Delta = 1.0, training paired by seed (both backends train from the same random
streams: policy_transfer.c_backend). Run with ./pants --tag=slow test envs/pong:: (about 60 minutes
on 2 cores). Results go to $ENVPORT_L4_OUT or the envport cache (l4/pong/), and are printed."""

import os
from pathlib import Path

import pytest

from envs.pong import policy_transfer
from shared.cache import cache_dir
from shared.verification.l4 import run_policy_transfer
from shared.verification.l4_command import l4_delta

ENV_DIR = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_l4_policy_transfer_is_equivalent():
    delta = l4_delta(ENV_DIR)
    settings = policy_transfer.L4Settings()
    out = Path(os.environ["ENVPORT_L4_OUT"]) if os.environ.get("ENVPORT_L4_OUT") else cache_dir("l4", "pong")
    report = run_policy_transfer(
        [policy_transfer.jax_backend(settings), policy_transfer.c_backend(settings)],
        env="pong (frameskip 8)", delta=delta, seeds=range(10), out_dir=out, training_paired=True,
    )
    print(report.to_markdown())
    print(f"written to {out}")
    # the policies learned something: better than the -21 of a paddle that never moves
    trained_returns = [r for cell in report.returns.values() for values in cell.values() for r in values]
    assert max(trained_returns) > -20
    assert report.equivalent, report.to_markdown()
