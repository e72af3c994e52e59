"""L4 (slow): PPO (Gaussian policy, 200K env steps per run) trained on ours and on MuJoCo C, 256
seeds each, every policy's mean action evaluated on both backends from the same 5 start states;
TOST on episode return with Delta = 100. Run with ./pants --tag=slow test envs/halfcheetah::
(104 minutes on 2 cores, 2026-12-02: equivalent). Results go to $ENVPORT_L4_OUT or the envport cache (l4/halfcheetah/)."""

import os
from pathlib import Path

import pytest

from envs.halfcheetah import policy_transfer
from shared.cache import cache_dir
from shared.verification.l4 import run_policy_transfer
from shared.verification.l4_command import l4_delta

ENV_DIR = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_l4_policy_transfer():
    delta = l4_delta(ENV_DIR)
    settings = policy_transfer.L4Settings()
    out = Path(os.environ["ENVPORT_L4_OUT"]) if os.environ.get("ENVPORT_L4_OUT") else cache_dir("l4", "halfcheetah")
    report = run_policy_transfer(
        [policy_transfer.jax_backend(settings, show_progress=True),
         policy_transfer.mujoco_backend(settings, show_progress=True)],
        env="halfcheetah", delta=delta, seeds=range(settings.seeds), out_dir=out,
    )
    print(report.to_markdown())
    print(f"written to {out}")
    # the policies learned to run: an untrained network's mean action scores within a few units of 0
    # (it barely moves); the 2026-12-02 run's cells averaged 272-292
    trained = [r for cell in report.returns.values() for values in cell.values() for r in values]
    assert sum(trained) / len(trained) > 100
    assert report.equivalent, report.to_markdown()
