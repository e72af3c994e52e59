"""L4 (slow): PPO on 2048 trained in the Rust emulator and in PyBoy, 10 seeds each (32,768 moves per
run), every greedy policy evaluated on both; TOST on the mean score with Delta = L4_DELTA (its
justification is in envs/emurust/policy_transfer.py). Run with ./pants --tag=slow test envs/emurust::
Results go to $ENVPORT_L4_OUT or the envport cache (l4/emurust/)."""

import os
from pathlib import Path

import pytest

from envs.emurust import policy_transfer
from shared.cache import cache_dir
from shared.verification.l4 import run_policy_transfer


@pytest.mark.slow
def test_l4_policy_transfer():
    settings = policy_transfer.L4Settings()
    out = Path(os.environ["ENVPORT_L4_OUT"]) if os.environ.get("ENVPORT_L4_OUT") else cache_dir("l4", "emurust")
    report = run_policy_transfer(
        [policy_transfer.rust_backend(settings), policy_transfer.pyboy_backend(settings)],
        env="emurust-2048", delta=policy_transfer.L4_DELTA, seeds=range(10), out_dir=out,
    )
    print(report.to_markdown())
    print(f"written to {out}")
    assert report.equivalent, report.to_markdown()
