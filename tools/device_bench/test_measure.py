"""The device run's own logic, here on the CPU: budget, failures, the file written after each
measurement, and ratios only between rows of one env measured in the run."""

from __future__ import annotations

import json

import pytest

from tools.device_bench import measure as M


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_skips_what_the_budget_cannot_hold_and_keeps_going_after_a_failure(tmp_path):
    clock = Clock()

    def takes(seconds, row):
        def run():
            clock.now += seconds
            return row
        return run

    def fails():
        raise RuntimeError("no GPU memory")

    measurements = [
        M.Measurement("pong", "first", 10, takes(50, {"backend": "JAX", "steps_per_s": 300.0})),
        M.Measurement("pong", "broken", 10, fails),
        M.Measurement("pong", "too long for what is left", 60, takes(1, {"backend": "JAX", "steps_per_s": 1.0})),
        M.Measurement("pong", "fits", 40, takes(5, {"backend": "C, 2 process(es)", "steps_per_s": 100.0})),
    ]
    record = M.run(measurements, budget_s=100, out=tmp_path, record={}, clock=clock)
    statuses = [row["status"].split(":")[0] for row in record["rows"]]
    assert statuses == ["ok", "failed", "skipped", "ok"]
    assert "no GPU memory" in record["rows"][1]["status"]
    assert "RuntimeError" in record["rows"][1]["traceback"]
    assert "50 s of the budget left" in record["rows"][2]["status"]
    assert record["ratios_in_this_run"] == {"pong_random_best_jax_over_best_reference": 3.0}
    assert json.loads((tmp_path / "device_bench.json").read_text()) == record


def test_the_file_is_written_after_every_measurement(tmp_path):
    seen = []

    def reads_file_then_returns():
        path = tmp_path / "device_bench.json"
        seen.append(len(json.loads(path.read_text())["rows"]) if path.exists() else None)
        return {"backend": "JAX", "steps_per_s": 1.0}

    measurements = [M.Measurement("pong", name, 0, reads_file_then_returns) for name in ("a", "b", "c")]
    M.run(measurements, budget_s=1e9, out=tmp_path, record={})
    assert seen == [None, 1, 2]


def test_ratios_never_mix_envs_or_count_failed_rows():
    rows = [
        {"env": "tcgjax", "backend": "TCGJax (JAX)", "steps_per_s": 500.0},
        {"env": "tcgjax", "backend": "Python reference, 1 process(es)", "steps_per_s": 10.0},
        {"env": "tcgjax", "backend": "Python reference, 16 process(es)", "steps_per_s": 100.0},
        {"env": "pong", "backend": "JAX", "steps_per_s": 1e9},  # no C row: no Pong ratio
        {"env": "pong", "backend": "PPO on JAX", "sps": 50.0},
        {"env": "pong", "backend": "PPO on C", "status": "failed: ..."},
    ]
    assert M.ratios(rows) == {"tcgjax_random_best_jax_over_best_reference": 5.0}
    rows += [
        {"env": "halfcheetah", "backend": "ours (JAX)", "steps_per_s": 600.0},
        {"env": "halfcheetah", "backend": "MJX", "steps_per_s": 200.0},
        {"env": "halfcheetah", "backend": "MuJoCo C, 16 thread(s)", "steps_per_s": 300.0},
    ]
    assert M.ratios(rows) == {"tcgjax_random_best_jax_over_best_reference": 5.0,
                              "halfcheetah_best_ours_over_best_mujoco_c": 2.0,
                              "halfcheetah_best_ours_over_best_mjx": 3.0}


def test_the_plan_gives_every_open_issue_a_jax_figure_before_anything_else():
    measurements = M.plan(list(M.SECTIONS), quick=False, seconds=3)
    first_second = next(i for i, m in enumerate(measurements) if m.priority > 0)
    for env in ("pokejax", "tcgjax", "pong"):
        assert any(m.env == env and "JAX random" in m.name for m in measurements[:first_second]), env
    assert measurements[0].env == "pokejax"  # the furthest from its bar first
    assert all(m.env != "halfcheetah" for m in measurements[:first_second])  # its issue is resolved


def test_only_rejects_unknown_sections():
    with pytest.raises(SystemExit):
        M.parse_args(["--only", "pong,emurust"])
    assert M.parse_args(["--only", "pong"]).only == "pong"


def test_quick_pong_rows_measure_real_backends(tmp_path):
    """The quick plan's Pong section end to end: the C reference and the JAX env both step."""
    measurements = [m for m in M.SECTIONS["pong"](True, 0.2) if "random" in m.name]
    record = M.run(measurements, budget_s=600, out=tmp_path, record={})
    assert [row["status"] for row in record["rows"]] == ["ok"] * len(measurements)
    assert all(row["steps_per_s"] > 0 for row in record["rows"])
    assert "pong_random_best_jax_over_best_reference" in record["ratios_in_this_run"]


def test_wheels_are_chosen_for_the_devices_python_and_platform():
    from tools.device_bench.prepare import _device_can_install

    assert _device_can_install("gymnasium-1.4.0-py3-none-any.whl")
    assert _device_can_install("mujoco-3.17.0-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl")
    assert not _device_can_install("mujoco-3.17.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl")
    assert not _device_can_install("mujoco-3.17.0-cp312-cp312-macosx_11_0_arm64.whl")
    assert not _device_can_install("mujoco-3.17.0-cp312-cp312-manylinux_2_27_aarch64.whl")
    assert not _device_can_install("x-1.0-cp312-cp312-manylinux_2_39_x86_64.whl")  # newer glibc than assumed
