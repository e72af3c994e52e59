"""L4: cross-backend policy transfer, decided with TOST.

Train a policy with PPO on backend A and on backend B (10 seeds each by default), evaluate every
policy on both backends, and test equivalence of mean returns with two one-sided Welch t-tests
(statsmodels' ttost_ind, usevar="unequal") on the env's margin Delta:

- training equivalence, per evaluation backend E: returns of A-trained policies on E vs returns of
  B-trained policies on E (do both backends train equally good policies?);
- transfer equivalence, per training backend T: T-trained policies evaluated on A vs on B (does a
  policy score the same on both backends?). These samples are paired by policy, so the test is
  the paired TOST (ttost_paired) on the per-policy differences.

The verdict is "equivalent" only if every test rejects non-equivalence at alpha. Results are written
as JSON and markdown, with a PNG of both backends' training curves.

training_paired=True pairs the training tests by seed (ttost_paired on the per-seed differences):
for backends whose two training loops draw every random number from the seed alike (the same
initial parameters, env starts, sampled actions and minibatch order; PPO's host loop follows
make_train's key schedule), so that seed s's two runs differ only where the envs do. Identical
envs then train identical policies, which the report counts, and any difference between the envs
shows up as a per-seed difference. Without that pairing the seeds' spread (PPO's bimodal outcomes)
swamps any margin a few seeds can test.

compare_training=False leaves the training tests out, for envs whose reference is too slow to train
with the translation's budget (PokeJAX: Showdown trains with a small one): comparing policies trained
with different budgets says nothing about the backends, so the verdict is then on transfer alone,
and the report says why.
"""

from __future__ import annotations

import dataclasses
import json
import math
import textwrap
import warnings
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import numpy as np


@dataclasses.dataclass
class TrainOutcome:
    policy: Any
    curve_steps: np.ndarray  # env steps at the end of each update
    curve_returns: np.ndarray  # mean episode return finished during each update (NaN if none)


@dataclasses.dataclass
class L4Backend:
    name: str
    train: Callable[[int], TrainOutcome]  # seed -> trained policy and its curve
    evaluate: Callable[[Any, int], float]  # (policy, evaluation seed) -> mean episode return
    # seeds -> one outcome per seed, in order: for a backend that trains several seeds faster together
    # (vmapped over seeds in one program, or in worker processes); run_policy_transfer uses it if given
    train_seeds: Optional[Callable[[list[int]], list[TrainOutcome]]] = None
    # (policies, evaluation seeds) -> one mean return per policy, in order: the same as evaluate one by
    # one, for a backend that scores many policies faster together; run_policy_transfer uses it if given
    evaluate_many: Optional[Callable[[list[Any], list[int]], list[float]]] = None


@dataclasses.dataclass
class TostResult:
    comparison: str
    first: str
    second: str
    mean_difference: float
    p_value: float
    equivalent: bool
    note: str = ""


def tost(first: Sequence[float], second: Sequence[float], delta: float, alpha: float = 0.05,
         comparison: str = "", names: tuple[str, str] = ("first", "second"), paired: bool = False) -> TostResult:
    """TOST on H0: |mean(first) - mean(second)| >= delta. Independent samples: Welch
    (statsmodels' ttost_ind, usevar="unequal"). Paired samples (the same policies scored on two
    backends): ttost_paired on the per-policy differences, which is what pairing is for: two
    backends that give every policy the same score are equivalent however much the policies differ."""
    from statsmodels.stats.weightstats import ttost_ind, ttost_paired

    check_margin(delta, alpha)
    a, b = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
    if a.ndim != 1 or b.ndim != 1 or min(a.size, b.size) < 2:
        # one value has no spread to test against: the branch below would read it as a constant sample
        raise ValueError(f"TOST needs at least 2 values in each sample, got {a.size} and {b.size}"
                         f"{' (' + comparison + ')' if comparison else ''}")
    if paired and a.size != b.size:
        raise ValueError(f"paired TOST needs samples of one length, got {a.size} and {b.size}")
    difference = float(a.mean() - b.mean())
    spread = np.std(a - b) if paired else max(a.std(), b.std())
    if spread == 0.0:
        # the t statistic is undefined without variance; with none, the difference is known exactly
        p_value = 0.0 if abs(difference) < delta else 1.0
        note = ("every paired difference is the same" if paired else "both samples constant") + \
            ": decided on the exact difference"
    elif paired:
        p_value, note = float(ttost_paired(a, b, -delta, delta)[0]), "paired"
    else:
        p_value, note = float(ttost_ind(a, b, -delta, delta, usevar="unequal")[0]), ""
    return TostResult(comparison, names[0], names[1], difference, p_value, p_value < alpha, note)


def check_margin(delta: float, alpha: float) -> None:
    """An equivalence margin must be a positive number and a level a probability strictly between 0
    and 1: Delta 0 can never be shown and alpha 1 would call anything equivalent."""
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.integer, np.floating)) \
            or not (np.isfinite(delta) and delta > 0):
        raise ValueError(f"Delta must be a positive finite number, got {delta!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.integer, np.floating)) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")


@dataclasses.dataclass
class TransferReport:
    env: str
    delta: float
    alpha: float
    seeds: list[int]
    backends: list[str]
    returns: dict[str, dict[str, list[float]]]  # returns[train][eval] = one mean return per seed
    tests: list[TostResult]
    curves: dict[str, list[dict]]
    # why the training tests were left out (run_policy_transfer's compare_training=False), or ""
    training_not_compared: str = ""
    # training_paired: per seed, whether both backends trained bitwise the same policy (else None)
    identical_policies: Optional[list[bool]] = None

    @property
    def equivalent(self) -> bool:
        return all(t.equivalent for t in self.tests)

    def to_json(self) -> dict:
        return {
            "env": self.env, "delta": self.delta, "alpha": self.alpha, "seeds": self.seeds,
            "backends": self.backends, "returns": self.returns,
            "tests": [dataclasses.asdict(t) for t in self.tests],
            "verdict": "equivalent" if self.equivalent else "not shown equivalent",
            "training_not_compared": self.training_not_compared,
            "identical_policies": self.identical_policies,
            "curves": self.curves,
        }

    def to_markdown(self) -> str:
        lines = [f"L4 policy transfer, {self.env}: {len(self.seeds)} seeds per backend, Delta = {self.delta}, "
                 f"alpha = {self.alpha}", "",
                 "| trained on \\ evaluated on | " + " | ".join(self.backends) + " |",
                 "|---|" + "---|" * len(self.backends)]
        for train in self.backends:
            cells = []
            for evaluate in self.backends:
                values = np.asarray(self.returns[train][evaluate])
                cells.append(f"{values.mean():.2f} ± {values.std(ddof=1) if len(values) > 1 else 0.0:.2f}")
            lines.append(f"| {train} | " + " | ".join(cells) + " |")
        lines += ["", "| test | compared | mean difference | TOST p | verdict |", "|---|---|---|---|---|"]
        for t in self.tests:
            verdict = "equivalent" if t.equivalent else "not shown equivalent"
            note = f" ({t.note})" if t.note else ""
            lines.append(f"| {t.comparison} | {t.first} vs {t.second} | {t.mean_difference:+.3f} | "
                         f"{t.p_value:.2e} | {verdict}{note} |")
        if self.training_not_compared:
            lines += ["", f"Training equivalence not tested: {self.training_not_compared}."]
        if self.identical_policies is not None:
            same = [seed for seed, identical in zip(self.seeds, self.identical_policies, strict=True) if identical]
            lines += ["", f"Training paired by seed (both backends train from the same random streams): "
                          f"{len(same)} of {len(self.seeds)} seeds trained bitwise identical policies on both "
                          f"backends" + (f" (seeds {', '.join(map(str, same))})" if 0 < len(same) < len(self.seeds) else "")
                          + "."]
        lines += ["", f"**Verdict: {'equivalent' if self.equivalent else 'not shown equivalent'}** "
                      f"(every test must reject |difference| >= {self.delta} at alpha {self.alpha})."]
        return "\n".join(lines)

    def save(self, directory: str | Path) -> dict[str, Path]:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        paths = {"json": directory / "l4.json", "markdown": directory / "l4.md", "plot": directory / "l4_curves.png"}
        paths["json"].write_text(json.dumps(self.to_json(), indent=2, default=float))
        paths["markdown"].write_text(self.to_markdown() + "\n")
        self.plot(paths["plot"])
        return paths

    def plot(self, path: str | Path) -> None:
        plot_curves(self.env, self.curves, path)


def run_policy_transfer(backends: Sequence[L4Backend], *, env: str, delta: float, seeds: Sequence[int] = range(10),
                        alpha: float = 0.05, eval_seed: int = 10_000, out_dir: Optional[str | Path] = None,
                        log: Callable[[str], None] = print, compare_training: bool = True,
                        training_not_compared: str = "", training_paired: bool = False) -> TransferReport:
    """compare_training=False needs training_not_compared: the reason, which the report prints.
    training_paired: the training tests pair the two backends' runs of each seed (module docstring)."""
    if len(backends) != 2:
        raise ValueError("L4 compares exactly two backends")
    if not compare_training and not training_not_compared:
        raise ValueError("compare_training=False needs training_not_compared: the reason the report will give")
    if training_paired and not compare_training:
        raise ValueError("training_paired pairs the training tests, which compare_training=False leaves out")
    check_margin(delta, alpha)
    seeds = [int(s) for s in seeds]
    if len(seeds) < 2:
        raise ValueError(f"L4 needs at least 2 seeds per backend (TOST tests a spread), got {seeds}")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"L4's seeds must be distinct (a repeated seed repeats a run, not a sample), got {seeds}")
    names = [b.name for b in backends]
    if names[0] == names[1]:
        raise ValueError(f"the two backends must have different names (the report is keyed by name), both are {names[0]!r}")
    policies: dict[str, list] = {}
    curves: dict[str, list[dict]] = {}
    for backend in backends:
        policies[backend.name], curves[backend.name] = [], []
        if backend.train_seeds is not None:
            log(f"L4 {env}: training on {backend.name}, seeds {_seed_ranges(seeds)} together")
            outcomes = list(backend.train_seeds(seeds))
            if len(outcomes) != len(seeds):
                raise ValueError(f"{backend.name}: train_seeds returned {len(outcomes)} outcomes for {len(seeds)} seeds")
        else:
            outcomes = []
            for seed in seeds:
                log(f"L4 {env}: training on {backend.name}, seed {seed}")
                outcomes.append(backend.train(seed))
        for seed, outcome in zip(seeds, outcomes, strict=True):
            policies[backend.name].append(outcome.policy)
            curves[backend.name].append({"seed": seed, "steps": np.asarray(outcome.curve_steps).tolist(),
                                         "returns": [None if math.isnan(x) else float(x)
                                                     for x in np.asarray(outcome.curve_returns, dtype=float)]})
    returns: dict[str, dict[str, list[float]]] = {n: {} for n in names}
    for train in backends:
        for evaluate in backends:
            log(f"L4 {env}: evaluating {train.name}-trained policies on {evaluate.name}")
            eval_seeds = [eval_seed + seed for seed in seeds]
            if evaluate.evaluate_many is not None:
                scores = list(evaluate.evaluate_many(policies[train.name], eval_seeds))
                if len(scores) != len(seeds):
                    raise ValueError(f"{evaluate.name}: evaluate_many returned {len(scores)} returns for "
                                     f"{len(seeds)} policies")
            else:
                scores = [evaluate.evaluate(policy, seed) for seed, policy in zip(eval_seeds, policies[train.name],
                                                                                   strict=True)]
            returns[train.name][evaluate.name] = [float(score) for score in scores]
    tests = []
    for evaluate in names if compare_training else ():
        tests.append(tost(returns[names[0]][evaluate], returns[names[1]][evaluate], delta, alpha,
                          f"training, evaluated on {evaluate}", (f"trained on {names[0]}", f"trained on {names[1]}"),
                          paired=training_paired))
        if training_paired:
            tests[-1].note = "paired by seed" if tests[-1].note == "paired" else f"paired by seed; {tests[-1].note}"
    for train in names:
        tests.append(tost(returns[train][names[0]], returns[train][names[1]], delta, alpha,
                          f"transfer, trained on {train}", (f"evaluated on {names[0]}", f"evaluated on {names[1]}"),
                          paired=True))
    identical = None
    if training_paired:
        identical = [_same_arrays(first, second)
                     for first, second in zip(policies[names[0]], policies[names[1]], strict=True)]
    report = TransferReport(env=env, delta=delta, alpha=alpha, seeds=seeds, backends=names, returns=returns,
                            tests=tests, curves=curves,
                            training_not_compared="" if compare_training else training_not_compared,
                            identical_policies=identical)
    if out_dir is not None:
        report.save(out_dir)
    return report


def _seed_ranges(seeds: Sequence[int]) -> str:
    """[0, 1, 2, 5] -> "0-2, 5": a log line that stays short for a hundred seeds."""
    parts, start = [], None
    for i, seed in enumerate(seeds):
        if start is None:
            start = seed
        if i + 1 == len(seeds) or seeds[i + 1] != seed + 1:
            parts.append(str(start) if start == seed else f"{start}-{seed}")
            start = None
    return ", ".join(parts)


def _same_arrays(first: Any, second: Any) -> bool:
    """Whether two policies (pytrees of arrays, e.g. flax params) hold the same arrays bit for bit."""
    import jax

    first_leaves, first_tree = jax.tree.flatten(first)
    second_leaves, second_tree = jax.tree.flatten(second)
    return first_tree == second_tree and all(
        np.asarray(a).dtype == np.asarray(b).dtype and np.array_equal(np.asarray(a), np.asarray(b))
        for a, b in zip(first_leaves, second_leaves, strict=True))


def plot_curves(env: str, curves: dict, path: str | Path) -> None:
    """Training curves, mean +- std over seeds. Updates in which no episode finished carry NaN
    (long episodes end every few updates): those points are left out rather than breaking the line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(7, 4))
    longest = [max(max(run["steps"], default=1) for run in runs) for runs in curves.values()]
    if max(longest) >= 10 * min(longest):
        # budgets that differ tenfold or more (a slow reference trained briefly): a linear axis
        # would squash the shorter run against zero
        axis.set_xscale("log")
    for backend, runs in curves.items():
        steps = np.asarray(runs[0]["steps"], dtype=np.float64)
        returns = np.asarray([run["returns"] for run in runs], dtype=np.float64)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            mean, std = np.nanmean(returns, axis=0), np.nanstd(returns, axis=0)
        known = np.isfinite(mean)
        axis.plot(steps[known], mean[known], marker="." if known.sum() < 50 else None,
                  label=f"trained on {backend} ({len(runs)} seeds)")
        axis.fill_between(steps[known], (mean - std)[known], (mean + std)[known], alpha=0.2)
    axis.set_xlabel("environment steps")
    axis.set_ylabel("mean episode return")
    axis.set_title("\n".join(textwrap.wrap(f"{env}: PPO training curves (mean ± std over seeds)", 60)))
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
