"""Scaling plots for the benches: steps per second against batch size, log-log, one panel per
workload. A table gives the figures; the picture shows where each backend stops scaling, where the
translation crosses its reference and how far it stays from the issue's target.

A bench turns its JSON into `Panel`s (`plot_panels` of each `envs/<env>/bench.py`) and calls
`save_panels`; `python envs/<env>/bench.py --plot-from FILE.json` redraws a saved run without
measuring anything.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Series:
    """A backend measured at several batch sizes (a single point is drawn as a marker), or a target
    that depends on the batch (`target`: drawn dashed, like a target `Level`)."""

    label: str
    batches: Sequence[int]
    rates: Sequence[float]
    target: bool = False


@dataclass(frozen=True)
class Level:
    """A rate that does not depend on the plot's batch axis: an unbatched reference (a dotted or
    dash-dotted line, each in its own colour) or a target (dashed red, its label saying which)."""

    label: str
    rate: float
    target: bool = False


@dataclass(frozen=True)
class Panel:
    title: str
    y_label: str
    series: Sequence[Series] = field(default_factory=tuple)
    levels: Sequence[Level] = field(default_factory=tuple)
    x_label: str = "batch (envs stepped together; K = 1,024)"


def _check(panel: Panel) -> None:
    if not panel.series and not panel.levels:
        raise ValueError(f"panel {panel.title!r}: nothing to draw (no series and no levels)")
    for series in panel.series:
        if len(series.batches) != len(series.rates) or not series.batches:
            raise ValueError(f"panel {panel.title!r}, series {series.label!r}: {len(series.batches)} batches "
                             f"for {len(series.rates)} rates (need as many, at least one)")
        for batch, rate in zip(series.batches, series.rates, strict=True):
            if not (batch >= 1 and math.isfinite(rate) and rate > 0):
                raise ValueError(f"panel {panel.title!r}, series {series.label!r}: point (batch {batch}, rate "
                                 f"{rate}) cannot go on log axes (batch >= 1 and a finite rate > 0 needed)")
    for level in panel.levels:
        if not (math.isfinite(level.rate) and level.rate > 0):
            raise ValueError(f"panel {panel.title!r}, level {level.label!r}: rate {level.rate} cannot go on a log axis")


def series_from(label: str, points: Sequence[tuple[int, float | None]], target: bool = False) -> Series | None:
    """The series of `points` (batch, rate) whose rate was measured (a failed or skipped row has
    None or 0 and is left out); None when no point was measured, so the panel simply lacks it."""
    kept = sorted((batch, rate) for batch, rate in points if rate)
    if not kept:
        return None
    return Series(label, [batch for batch, _ in kept], [rate for _, rate in kept], target)


TARGET_COLOR = "tab:red"  # targets only: a reader finds them by colour (and dash)
# Measured series: matplotlib's default colours less the target's.
SERIES_COLORS = ["tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:pink", "tab:gray", "tab:brown"]
# Levels that are not targets: told apart by colour and dash, none of them the series' solid lines.
LEVEL_STYLES = [("0.25", ":"), ("tab:brown", "-."), ("tab:olive", (0, (5, 2, 1, 2, 1, 2))), ("tab:cyan", ":")]


def _short(value: float, _position=None) -> str:
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "K")):
        if value >= scale:
            return f"{value / scale:g}{suffix}"
    return f"{value:g}"


def batch_label(value: float, _position=None) -> str:
    """A batch on the x axis: whole multiples of 1,024 as K (16,384 is 16K), so that neighbouring
    powers of two never print into each other; the axis label says K = 1,024."""
    if value >= 1024 and value % 1024 == 0:
        return f"{value / 1024:g}K"
    return f"{value:g}"


def figure(panels: Sequence[Panel], title: str, columns: int = 4):
    """The matplotlib Figure of `panels` (in a grid of at most `columns` per row)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter

    if not panels:
        raise ValueError("no panels to plot")
    for panel in panels:
        _check(panel)
    columns = min(columns, len(panels))
    rows = math.ceil(len(panels) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(5.2 * columns, 4.2 * rows), squeeze=False)
    for index, panel in enumerate(panels):
        ax = axes[index // columns][index % columns]
        colors = iter(SERIES_COLORS * len(panel.series))
        for series in panel.series:
            if series.target:
                ax.plot(series.batches, series.rates, linestyle="--", color=TARGET_COLOR, label=series.label)
            else:
                ax.plot(series.batches, series.rates, marker="o", color=next(colors), label=series.label)
        references = iter(LEVEL_STYLES * len(panel.levels))
        for level in panel.levels:
            color, dash = (TARGET_COLOR, "--") if level.target else next(references)
            ax.axhline(level.rate, color=color, linestyle=dash, linewidth=1.4, label=level.label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(batch_label))
        ax.yaxis.set_major_formatter(FuncFormatter(_short))
        low, high = ax.get_ylim()
        # Within about a decade there may be no power of ten to label: label the minor ticks too.
        ax.yaxis.set_minor_formatter(FuncFormatter(_short) if high / low < 30 else NullFormatter())
        ax.tick_params(axis="y", which="minor", labelsize=7)
        ax.set_title(panel.title, fontsize=10)
        ax.set_xlabel(panel.x_label)
        ax.set_ylabel(panel.y_label)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    for index in range(len(panels), rows * columns):
        axes[index // columns][index % columns].set_visible(False)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


def save_panels(path: str | Path, panels: Sequence[Panel], title: str, columns: int = 4) -> Path:
    """Writes the panels as a PNG at `path` and returns it."""
    import matplotlib.pyplot as plt

    fig = figure(panels, title, columns)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def run_title(title: str, results: dict) -> str:
    """`title` with the machine a saved run was measured on (its JSON's `machine`)."""
    facts = results.get("machine", {})
    return f"{title} ({facts.get('cpus', '?')} CPUs: {facts.get('processor', '?')})"


def ppo_panels(ppo_rows: Sequence[dict]) -> list[Panel]:
    """A panel of the PPO rows the JAX benches write (`backend`, `envs`, `sps`): one point per
    backend, at its number of envs; none when the run measured no PPO."""
    series = [series_from(row["backend"], [(row["envs"], row["sps"])]) for row in ppo_rows]
    series = [s for s in series if s]
    return [Panel("PPO (rollout + GAE + 4 epochs, masked)", "agent steps per second", series)] if series else []


def add_plot_from_option(parser) -> None:
    parser.add_argument("--plot-from", type=Path, default=None, metavar="JSON",
                        help="measure nothing: redraw the plot of a saved run (written beside it, .png)")


def plot_beside(results: dict, saved_run: Path, save_plot) -> str:
    """After a measured run whose JSON is already at `saved_run`: draws its plot beside it and says
    where. A plot that fails (a value the axes cannot show, a broken matplotlib) costs the picture, not
    the run: the message says so and how to redraw, and the bench still exits 0 with its JSON."""
    import sys

    try:
        return str(Path(save_plot(results, Path(saved_run).with_suffix(".png"))).resolve())
    except Exception as error:  # noqa: BLE001 - any failure of the picture must leave the measured run usable
        print(f"warning: the plot of {saved_run} was not drawn ({type(error).__name__}: {error}); "
              f"the JSON is complete; redraw with --plot-from {saved_run}", file=sys.stderr)
        return "no plot (see the warning above)"


def redraw(saved_run: Path, save_plot) -> Path:
    """`--plot-from`: `save_plot(results, path)` of the run saved at `saved_run`, beside it."""
    import json

    try:
        results = json.loads(Path(saved_run).read_text())
    except (OSError, ValueError) as error:
        raise SystemExit(f"--plot-from {saved_run}: cannot read a saved run there ({error})") from error
    try:
        path = save_plot(results, Path(saved_run).with_suffix(".png"))
    except (KeyError, TypeError, AttributeError, StopIteration) as error:
        raise SystemExit(f"--plot-from {saved_run}: not a saved run of this bench "
                         f"({type(error).__name__}: {error})") from error
    print(f"wrote {path}")
    return path
