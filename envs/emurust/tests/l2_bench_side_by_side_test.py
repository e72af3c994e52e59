"""The benchmark's side-by-side rounds (bench.py `side_by_side`): which configuration they measure,
in which order, and how the rounds' ratios become the row's figure. The measurements themselves are
replaced by recorders here (no timing is asserted; the emulators are not run)."""

import argparse

import pytest

from envs.emurust import bench


def _row(rates: dict) -> dict:
    return {"workload": "2048 play", "kind": "frames", "render": False, "rates": rates}


@pytest.fixture
def recorded(monkeypatch):
    """Replaces both measurements by figures taken in turn from fixed lists, noting the calls."""
    calls = []
    pyboy_figures = iter([20_000.0, 25_000.0, 30_000.0, 22_000.0])
    ours_figures = iter([100_000.0, 150_000.0, 120_000.0, 99_000.0])

    def fake_pyboy(kind, rom, mode, render, processes, seconds):
        calls.append(("pyboy", processes))
        return next(pyboy_figures)

    def fake_ours(core, key, kind, rom, mode, render, seconds, power_on):
        calls.append(("ours", key))
        return next(ours_figures)

    monkeypatch.setattr(bench, "pyboy_rate", fake_pyboy)
    monkeypatch.setattr(bench, "_ours_rate", fake_ours)
    return calls


def test_rounds_alternate_and_each_ratio_divides_its_own_round(recorded):
    row = _row({"pyboy_1p": 1.0, "pyboy_2p": 2.0, "ours_single": 50.0, "ours_vec_t2_b16": 140.0,
                "ours_vec_t2_b64": 130.0, "ours_vec_t1_b256": 75.0})
    args = argparse.Namespace(rounds=3, seconds=0.1, timing="pyboy")
    side = bench.side_by_side(None, row, bench.GAME_ROM, "play", args)
    # The sweep's best configuration, PyBoy always on 2 processes, in the order ABBA AB.
    assert recorded == [("pyboy", 2), ("ours", "ours_vec_t2_b16"), ("ours", "ours_vec_t2_b16"), ("pyboy", 2),
                        ("pyboy", 2), ("ours", "ours_vec_t2_b16")]
    assert side["ours_config"] == "ours_vec_t2_b16"
    assert side["pyboy_2p"] == [20_000.0, 25_000.0, 30_000.0]
    assert side["ours"] == [100_000.0, 150_000.0, 120_000.0]
    assert side["ratios"] == pytest.approx([5.0, 6.0, 4.0])
    assert side["median_ratio"] == pytest.approx(5.0)
    assert bench._side_by_side_cell({"side_by_side": side}) == "5.0x (4.0-6.0)"


def test_single_gameboy_can_be_the_configuration(recorded):
    row = _row({"pyboy_1p": 1.0, "pyboy_2p": 2.0, "ours_single": 500.0, "ours_vec_t2_b16": 140.0})
    side = bench.side_by_side(None, row, bench.GAME_ROM, "play", argparse.Namespace(rounds=1, seconds=0.1, timing="pyboy"))
    assert recorded == [("pyboy", 2), ("ours", "ours_single")]
    assert bench._side_by_side_cell({"side_by_side": side}) == "5.0x"


def test_configuration_keys_map_back_to_their_measurements(monkeypatch):
    seen = []
    monkeypatch.setattr(bench, "ours_vec_rate", lambda core, kind, rom, mode, render, batch, threads, seconds, power_on:
                        seen.append(("vec", threads, batch)) or 1.0)
    monkeypatch.setattr(bench, "ours_single_rate", lambda core, kind, rom, mode, render, seconds, power_on:
                        seen.append(("single",)) or 1.0)
    bench._ours_rate(None, "ours_vec_t2_b256", "frames", bench.GAME_ROM, "play", False, 0.1, "pyboy")
    bench._ours_rate(None, "ours_vec_t1_b4", "frames", bench.GAME_ROM, "play", False, 0.1, "pyboy")
    bench._ours_rate(None, "ours_single", "frames", bench.GAME_ROM, "play", False, 0.1, "pyboy")
    assert seen == [("vec", 2, 256), ("vec", 1, 4), ("single",)]


def test_rows_without_rounds_show_a_dash():
    assert bench._side_by_side_cell({"rates": {}}) == "-"


def test_negative_rounds_are_refused(capsys):
    with pytest.raises(SystemExit):
        bench.main(["--rounds", "-1", "--sections", "frames"])
    assert "--rounds must be 0 or more" in capsys.readouterr().err
