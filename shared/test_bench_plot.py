"""The benches' scaling plots: the shared drawing (shared/bench_plot.py) and each bench's reading of
its own JSON (`plot_panels`, `--plot-from`). The results below are made up in each bench's JSON
shape, with numbers chosen here, so that every drawn value can be checked against its source."""

from __future__ import annotations

import json

import matplotlib
import pytest

from envs.emurust import bench as emurust_bench
from envs.halfcheetah import bench as halfcheetah_bench
from envs.pokejax import bench as pokejax_bench
from envs.pong import bench as pong_bench
from envs.tcgjax import bench as tcgjax_bench
from shared.bench_plot import (
    TARGET_COLOR,
    Level,
    Panel,
    Series,
    batch_label,
    figure,
    plot_beside,
    save_panels,
    series_from,
)

matplotlib.use("Agg")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _lines(ax):
    return {line.get_label(): line for line in ax.get_lines()}


def _is_target(line) -> bool:
    return matplotlib.colors.same_color(line.get_color(), TARGET_COLOR) and line.get_linestyle() == "--"


def test_figure_draws_every_point_and_level_on_log_axes():
    panel = Panel("p", "steps/s", [Series("a", [1, 64, 4096], [10.0, 640.0, 5e4]),
                                   Series("goal", [1, 4096], [100.0, 1e6], target=True)],
                  [Level("reference", 300.0), Level("other reference", 200.0), Level("target: 2x", 600.0, target=True)])
    fig = figure([panel], "title")
    ax = fig.axes[0]
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
    lines = _lines(ax)
    assert list(lines["a"].get_xdata()) == [1, 64, 4096] and list(lines["a"].get_ydata()) == [10.0, 640.0, 5e4]
    assert lines["a"].get_linestyle() == "-" and not _is_target(lines["a"]) and _is_target(lines["goal"])
    assert list(lines["reference"].get_ydata()) == [300.0, 300.0] and not _is_target(lines["reference"])
    assert list(lines["target: 2x"].get_ydata()) == [600.0, 600.0] and _is_target(lines["target: 2x"])
    panel = Panel("p", "y", [Series(f"s{i}", [1], [1.0 + i]) for i in range(8)])
    assert not any(_is_target(line) or matplotlib.colors.same_color(line.get_color(), TARGET_COLOR)
                   for line in figure([panel], "t").axes[0].get_lines())  # many series, none red
    styles = {(str(lines[name].get_color()), lines[name].get_linestyle()) for name in ("reference", "other reference")}
    assert len(styles) == 2  # two references drawn alike could not be told apart
    assert {text.get_text() for text in ax.get_legend().get_texts()} == {"a", "goal", "reference", "other reference",
                                                                        "target: 2x"}


def test_grid_hides_the_unused_axes():
    panels = [Panel(f"p{i}", "y", [Series("s", [1], [1.0])]) for i in range(5)]
    fig = figure(panels, "t", columns=4)
    assert len(fig.axes) == 8 and [ax.get_visible() for ax in fig.axes] == [True] * 5 + [False] * 3


@pytest.mark.parametrize("panel, message", [
    (Panel("p", "y", [Series("s", [1, 2], [1.0])]), "2 batches for 1 rates"),
    (Panel("p", "y", [Series("s", [], [])]), "at least one"),
    (Panel("p", "y", [Series("s", [1, 2], [1.0, 0.0])]), "cannot go on log axes"),
    (Panel("p", "y", [Series("s", [0], [1.0])]), "cannot go on log axes"),
    (Panel("p", "y", [Series("s", [1], [float("nan")])]), "cannot go on log axes"),
    (Panel("p", "y", [], [Level("l", -1.0)]), "cannot go on a log axis"),
    (Panel("p", "y"), "nothing to draw"),
])
def test_what_log_axes_cannot_show_is_refused_by_name(panel, message):
    with pytest.raises(ValueError, match=message):
        figure([panel], "t")


def test_no_panels_is_refused():
    with pytest.raises(ValueError, match="no panels"):
        figure([], "t")


def test_series_from_leaves_out_unmeasured_points():
    series = series_from("s", [(64, 5.0), (1, None), (4096, 9.0), (16, 0.0)])
    assert (list(series.batches), list(series.rates)) == ([64, 4096], [5.0, 9.0])
    assert series_from("s", [(1, None), (2, 0)]) is None


def test_save_writes_a_png(tmp_path):
    path = save_panels(tmp_path / "sub" / "plot.png", [Panel("p", "y", [Series("s", [1, 2], [1.0, 2.0])])], "t")
    assert path.read_bytes()[:8] == PNG_MAGIC


# -- each bench's JSON, as its main writes it ------------------------------------------------------

PONG = {"benchmark": "pong", "frameskip": 1, "machine": {"cpus": 2, "processor": "test"}, "rows": [
    {"batch": 1, "c_random_sps_1proc": 2e7, "c_random_sps_2proc": None, "jax_random_sps_default": 1e7,
     "jax_random_sps_whole_loops": 1.1e7, "jax_ppo_sps": 3e4, "c_ppo_sps": 2e3, "ppo_ratio": 15.0},
    {"batch": 64, "c_random_sps_1proc": 2.5e7, "c_random_sps_2proc": 5e7, "jax_random_sps_default": 1.2e7,
     "jax_random_sps_whole_loops": None, "jax_ppo_sps": 1.2e5, "c_ppo_sps": 7e4, "ppo_ratio": 1.7},
]}
TCGJAX = {"benchmark": "tcgjax", "machine": {"cpus": 2}, "rows": [
    {"backend": "Python reference, 1 process", "batch": 1, "steps_per_s": 3600.0},
    {"backend": "Python reference, 2 processes", "batch": 2, "steps_per_s": 7000.0},
    {"backend": "TCGJax (JAX)", "batch": 1, "steps_per_s": 1700.0},
    {"backend": "TCGJax (JAX)", "batch": 1024, "steps_per_s": 32000.0},
    {"backend": "TCGJax (JAX), 2 processes of 1,024, a core each", "batch": 2048, "processes": 2,
     "steps_per_s": 47000.0},
], "ppo_rows": [{"backend": "PPO on the Python reference (host loop)", "envs": 8, "sps": 800.0},
                {"backend": "PPO on TCGJax (make_train, step_batch)", "envs": 1024, "sps": 4000.0}]}
POKEJAX = {"benchmark": "pokejax", "game": "gen1customgame", "machine": {}, "rows": [
    {"backend": "Showdown in-process (Node loop)", "batch": 1, "decisions_per_s": 5000.0},
    {"backend": "Showdown via Python adapter", "batch": 1, "decisions_per_s": 900.0},
    {"backend": "PokeJAX (sodium PRNG)", "batch": 1, "decisions_per_s": 2500.0},
    {"backend": "PokeJAX (sodium PRNG)", "batch": 1024, "decisions_per_s": 90000.0},
    {"backend": "PokeJAX (gen5 PRNG)", "batch": 1024, "decisions_per_s": 95000.0},
    {"backend": "PokeJAX (sodium PRNG), whole loops", "batch": 1, "decisions_per_s": 20000.0},
], "ppo_rows": []}
EMURUST = {"timing": "pyboy", "machine": {}, "rows": [
    {"workload": "2048 play", "kind": "frames", "render": False, "rates": {
        "pyboy_1p": 1e4, "pyboy_2p": 2e4, "ours_single": 1.8e4, "ours_vec_t1_b1": 1.7e4, "ours_vec_t1_b64": 1.9e4,
        "ours_vec_t2_b1": 2.5e4, "ours_vec_t2_b64": 3.2e4}},
    {"workload": "2048 play", "kind": "steps", "render": True, "rates": {
        "pyboy_1p": 400.0, "pyboy_2p": 700.0, "ours_single": 550.0, "ours_vec_t1_b1": 500.0,
        "ours_vec_t2_b1": 900.0}},
]}
HALFCHEETAH = {"benchmark": "halfcheetah", "machine": {}, "measurements": [
    {"label": "MuJoCo C 1 thread", "batch": 1, "sps": 25000.0},
    {"label": "MuJoCo C 1 thread", "batch": 64, "sps": 30000.0},
    {"label": "MJX f32", "batch": 1, "sps": 1000.0},
    {"label": "MJX f32", "batch": 64, "sps": None, "status": "timed out"},
    {"label": "ours f32", "batch": 1, "sps": 32000.0},
    {"label": "ours f32", "batch": 64, "sps": 900000.0},
]}


def _drawn(bench, results: dict):
    """Per panel title: {label: (x values, y values, is a target)} of what the bench draws from `results`."""
    fig = figure(bench.plot_panels(results), "t")
    return {ax.get_title(): {label: (list(line.get_xdata()), list(line.get_ydata()), _is_target(line))
                             for label, line in _lines(ax).items()} for ax in fig.axes if ax.get_visible()}


def test_pong_plot():
    drawn = _drawn(pong_bench, PONG)
    random, ppo = drawn["random actions"], drawn["PPO end to end (rollout + GAE + 4 epochs)"]
    assert random["C, 2 processes"][:2] == ([64], [5e7])  # batch 1 has no 2-process row
    assert random["JAX, whole loops"][:2] == ([1], [1.1e7])
    assert random["JAX, XLA default"][:2] == ([1, 64], [1e7, 1.2e7])
    assert ppo["PPO on C (host loop)"][:2] == ([1, 64], [2e3, 7e4])
    assert ppo["target: 10x PPO on C"] == ([1, 64], [2e4, 7e5], True)


def test_tcgjax_plot():
    drawn = _drawn(tcgjax_bench, TCGJAX)["random legal actions"]
    assert drawn["TCGJax, 1 process"][:2] == ([1, 1024], [1700.0, 32000.0])
    assert drawn["TCGJax, 2 processes (a core each)"][:2] == ([2048], [47000.0])
    assert drawn["Python reference, 2 processes"][1] == [7000.0, 7000.0]
    assert drawn["target: 50x the 2-process reference"][1:] == ([350000.0, 350000.0], True)


def test_pokejax_plot():
    drawn = _drawn(pokejax_bench, POKEJAX)
    assert list(drawn) == ["random legal choices"]  # no PPO rows, no PPO panel
    drawn = drawn["random legal choices"]
    assert drawn["PokeJAX (sodium PRNG)"][:2] == ([1, 1024], [2500.0, 90000.0])
    assert drawn["PokeJAX (sodium PRNG), whole loops"][:2] == ([1], [20000.0])
    assert drawn["Showdown via Python adapter"][1] == [900.0, 900.0]
    assert drawn["target: 1,000x Showdown in-process"][1:] == ([5e6, 5e6], True)


def test_emurust_plot():
    drawn = _drawn(emurust_bench, EMURUST)
    frames, steps = drawn["2048 play, frames, render off"], drawn["2048 play, env steps, render on"]
    assert frames["ours, GameBoyVec 2 threads"][:2] == ([1, 64], [2.5e4, 3.2e4])
    assert frames["PyBoy, 2 processes"][1] == [2e4, 2e4]
    assert frames["target: 5x PyBoy's 2 processes"][1:] == ([1e5, 1e5], True)
    assert not any(target for _, _, target in steps.values())  # the target is on frames/s only
    assert steps["ours, GameBoyVec 1 thread"][:2] == ([1], [500.0])


def test_halfcheetah_plot():
    drawn = _drawn(halfcheetah_bench, HALFCHEETAH)["random actions (frame_skip 5)"]
    assert drawn["MJX f32"][:2] == ([1], [1000.0])  # the timed-out row is left out
    assert drawn["ours f32"][:2] == ([1, 64], [32000.0, 900000.0])
    assert drawn["MuJoCo C 1 thread"][:2] == ([1, 64], [25000.0, 30000.0])


@pytest.mark.parametrize("bench, results", [
    (pong_bench, PONG), (tcgjax_bench, TCGJAX), (pokejax_bench, POKEJAX),
    (emurust_bench, EMURUST), (halfcheetah_bench, HALFCHEETAH)], ids=["pong", "tcgjax", "pokejax", "emurust", "halfcheetah"])
def test_plot_from_redraws_a_saved_run_without_measuring(bench, results, tmp_path):
    saved = tmp_path / "run.json"
    saved.write_text(json.dumps(results))
    bench.main(["--plot-from", str(saved)])
    assert (tmp_path / "run.png").read_bytes()[:8] == PNG_MAGIC


def test_plot_from_a_file_that_is_not_a_saved_run_says_so(tmp_path):
    saved = tmp_path / "run.json"
    saved.write_text("{truncated")
    with pytest.raises(SystemExit, match="cannot read a saved run there"):
        pong_bench.main(["--plot-from", str(saved)])
    with pytest.raises(SystemExit, match="cannot read a saved run there"):
        pong_bench.main(["--plot-from", str(tmp_path / "missing.json")])
    saved.write_text(json.dumps(PONG))
    with pytest.raises(SystemExit, match="not a saved run of this bench"):
        tcgjax_bench.main(["--plot-from", str(saved)])


def test_plot_beside_a_measured_run_draws_it_next_to_the_json(tmp_path):
    saved = tmp_path / "run.json"
    saved.write_text(json.dumps(PONG))
    where = plot_beside(PONG, saved, pong_bench.save_plot)
    assert where == str((tmp_path / "run.png").resolve())
    assert (tmp_path / "run.png").read_bytes()[:8] == PNG_MAGIC


def test_a_failed_plot_costs_the_picture_not_the_measured_run(tmp_path, capsys):
    saved = tmp_path / "run.json"
    saved.write_text(json.dumps(PONG))
    broken = {**PONG, "rows": [{**PONG["rows"][0], "jax_ppo_sps": -1.0}]}  # log axes cannot show it
    where = plot_beside(broken, saved, pong_bench.save_plot)
    warning = capsys.readouterr().err
    assert where.startswith("no plot") and not (tmp_path / "run.png").exists()
    assert "was not drawn" in warning and f"--plot-from {saved}" in warning
    assert json.loads(saved.read_text()) == PONG


def test_pong_ppo_rows_time_at_least_the_minimum_of_agent_steps():
    assert pong_bench.MIN_PPO_SAMPLES == 16_384
    assert pong_bench.ppo_updates_for(1, 3) == 128  # one env: 128 steps per update
    assert pong_bench.ppo_updates_for(64, 3) == 3  # 8,192 per update: 3 updates already time 24,576
    assert pong_bench.ppo_updates_for(16384, 5) == 5


def test_pong_ppo_keeps_the_faster_xla_setting_for_each_side(monkeypatch):
    def measure(num_envs, updates, frameskip):
        return 100.0, 1.0

    monkeypatch.setattr(pong_bench, "call_in_whole_loops_process", lambda function, args: ("ok", (150.0, 2.0)))
    faster = pong_bench.ppo_both_ways(measure, 1, 128, 1)
    assert (faster["best"], faster["best_is_whole_loops"], faster["default"]) == (150.0, True, 100.0)
    monkeypatch.setattr(pong_bench, "call_in_whole_loops_process", lambda function, args: ("ok", (60.0, 2.0)))
    assert pong_bench.ppo_both_ways(measure, 64, 3, 1)["best"] == 100.0
    monkeypatch.setattr(pong_bench, "call_in_whole_loops_process", lambda function, args: ("error", "died"))
    failed = pong_bench.ppo_both_ways(measure, 64, 3, 1)
    assert (failed["best"], failed["whole_loops"], failed["whole_loops_status"]) == (100.0, None, "died")
    row = {"jax_ppo_sps": 150.0, "jax_ppo_best_is_whole_loops": True, "c_ppo_sps": 100.0}
    assert pong_bench._ppo_cell(row, "jax").endswith("*") and not pong_bench._ppo_cell(row, "c").endswith("*")


def test_batches_are_labelled_short_enough_not_to_collide():
    assert [batch_label(b) for b in (1, 4, 256, 1024, 2048, 16384, 65536)] == ["1", "4", "256", "1K", "2K", "16K", "64K"]
    assert batch_label(1000) == "1000" and batch_label(0.5) == "0.5"
    fig = figure([Panel("p", "r", [Series("a", [1, 16384, 65536], [1.0, 2.0, 3.0])])], "t")
    fig.canvas.draw()
    shown = {label.get_text() for label in fig.axes[0].get_xticklabels()}
    assert {"16K", "64K"} <= shown and "K = 1,024" in fig.axes[0].get_xlabel()
