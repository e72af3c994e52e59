"""TOST decisions and the L4 report, on synthetic backends whose answer is known."""

import json

import numpy as np
import pytest

from shared.verification.l4 import L4Backend, TrainOutcome, plot_curves, run_policy_transfer, tost


def test_tost_accepts_equal_means_and_rejects_a_shift():
    rng = np.random.default_rng(0)
    a, b = rng.normal(10.0, 0.3, 10), rng.normal(10.0, 0.3, 10)
    assert tost(a, b, delta=1.0).equivalent
    assert not tost(a, b + 2.0, delta=1.0).equivalent
    # too noisy to show equivalence at this margin, although the true means are equal
    assert not tost(rng.normal(0, 5, 10), rng.normal(0, 5, 10), delta=1.0).equivalent


def test_tost_with_constant_samples_decides_on_the_exact_difference():
    assert tost([3.0] * 10, [3.0] * 10, delta=0.5).equivalent
    result = tost([3.0] * 10, [4.0] * 10, delta=0.5)
    assert not result.equivalent and "constant" in result.note


def test_paired_tost_sees_through_spread_between_policies():
    # the same ten very different policies, scored identically by two backends
    scores = np.asarray([-16.0, -14.0, 33.6, -15.8, 33.6, -13.7, -6.7, -16.2, -15.6, -13.8])
    assert not tost(scores, scores, delta=1.0).equivalent  # unpaired: the spread hides everything
    result = tost(scores, scores, delta=1.0, paired=True)
    assert result.equivalent and "paired difference" in result.note
    shifted = tost(scores, scores + 0.01 * np.arange(10), delta=1.0, paired=True)
    assert shifted.equivalent and shifted.note == "paired"
    assert not tost(scores, scores + 2.0 + 0.01 * np.arange(10), delta=1.0, paired=True).equivalent


def synthetic_backend(name: str, skill_offset: float, eval_bias: float) -> L4Backend:
    def train(seed: int) -> TrainOutcome:
        rng = np.random.default_rng(seed)
        skill = 5.0 + skill_offset + rng.normal(0, 0.2)
        steps = np.arange(1, 11) * 1000
        return TrainOutcome(policy=skill, curve_steps=steps, curve_returns=np.linspace(0, skill, 10))

    def evaluate(policy: float, seed: int) -> float:
        return policy + eval_bias + np.random.default_rng(seed).normal(0, 0.05)

    return L4Backend(name, train, evaluate)


def test_equivalent_backends_give_an_equivalent_verdict_and_all_outputs(tmp_path):
    report = run_policy_transfer([synthetic_backend("A", 0.0, 0.0), synthetic_backend("B", 0.0, 0.0)],
                                 env="synthetic", delta=1.0, out_dir=tmp_path, log=lambda _: None)
    assert report.equivalent and len(report.tests) == 4
    data = json.loads((tmp_path / "l4.json").read_text())
    assert data["verdict"] == "equivalent" and len(data["returns"]["A"]["B"]) == 10
    markdown = (tmp_path / "l4.md").read_text()
    assert "| A |" in markdown and "Verdict: equivalent" in markdown
    assert (tmp_path / "l4_curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("skill_offset, eval_bias, failing", [
    (3.0, 0.0, "training"),    # B trains better policies
    (0.0, 2.0, "transfer"),    # B scores every policy higher
])
def test_a_real_difference_is_not_called_equivalent(skill_offset, eval_bias, failing):
    report = run_policy_transfer([synthetic_backend("A", 0.0, 0.0), synthetic_backend("B", skill_offset, eval_bias)],
                                 env="synthetic", delta=1.0, log=lambda _: None)
    assert not report.equivalent
    assert any(t.comparison.startswith(failing) and not t.equivalent for t in report.tests)


def test_training_can_be_left_out_of_the_verdict_with_a_reason(tmp_path):
    # B trains far better policies (a bigger budget, say) but scores each policy as A does
    backends = [synthetic_backend("A", 0.0, 0.0), synthetic_backend("B", 3.0, 0.0)]
    with pytest.raises(ValueError, match="the reason"):
        run_policy_transfer(backends, env="synthetic", delta=1.0, log=lambda _: None, compare_training=False)
    report = run_policy_transfer(backends, env="synthetic", delta=1.0, log=lambda _: None, out_dir=tmp_path,
                                 compare_training=False, training_not_compared="B trained 100x longer")
    assert report.equivalent and [t.comparison.split(",")[0] for t in report.tests] == ["transfer", "transfer"]
    assert "Training equivalence not tested: B trained 100x longer." in (tmp_path / "l4.md").read_text()
    assert json.loads((tmp_path / "l4.json").read_text())["training_not_compared"] == "B trained 100x longer"
    # a transfer difference still fails it
    biased = [synthetic_backend("A", 0.0, 0.0), synthetic_backend("B", 3.0, 2.0)]
    assert not run_policy_transfer(biased, env="synthetic", delta=1.0, log=lambda _: None, compare_training=False,
                                   training_not_compared="budgets").equivalent


def test_curves_of_budgets_tenfold_apart_get_a_log_axis(tmp_path, monkeypatch):
    import matplotlib.axes

    scales = []
    monkeypatch.setattr(matplotlib.axes.Axes, "set_xscale", lambda self, value, **kw: scales.append(value))
    short = {"seed": 0, "steps": [100, 200], "returns": [0.0, 0.5]}
    long_ = {"seed": 0, "steps": [1000, 2000], "returns": [0.0, 0.9]}
    plot_curves("a long env name " * 8, {"A": [long_], "B": [short]}, tmp_path / "log.png")
    assert scales == ["log"]
    plot_curves("env", {"A": [long_], "B": [long_]}, tmp_path / "linear.png")
    assert scales == ["log"] and (tmp_path / "linear.png").read_bytes()[:4] == b"\x89PNG"


def seed_driven_backend(name: str, eval_bias: float = 0.0, drift: float = 0.0) -> L4Backend:
    """Training outcomes that depend on the seed alone (bimodal, as PPO's often are), as when both
    backends train from the same random streams; `drift` makes this backend's policies differ."""
    def train(seed: int) -> TrainOutcome:
        skill = (33.6 if seed % 3 else -16.2) + drift
        return TrainOutcome(policy={"w": np.full(3, skill, np.float32)}, curve_steps=np.arange(1, 4) * 10,
                            curve_returns=np.linspace(0, skill, 3))

    return L4Backend(name, train, lambda policy, seed: float(policy["w"][0]) + eval_bias)


def test_training_paired_by_seed_sees_through_the_spread_and_counts_identical_policies(tmp_path):
    same = [seed_driven_backend("A"), seed_driven_backend("B")]
    unpaired = run_policy_transfer(same, env="synthetic", delta=1.0, log=lambda _: None)
    assert not unpaired.equivalent  # Welch: a 24-point spread between seeds hides everything
    report = run_policy_transfer(same, env="synthetic", delta=1.0, log=lambda _: None, out_dir=tmp_path,
                                 training_paired=True)
    assert report.equivalent and report.identical_policies == [True] * 10
    training = [t for t in report.tests if t.comparison.startswith("training")]
    assert len(training) == 2 and all("paired by seed" in t.note for t in training)
    assert "10 of 10 seeds trained bitwise identical policies" in (tmp_path / "l4.md").read_text()
    assert json.loads((tmp_path / "l4.json").read_text())["identical_policies"] == [True] * 10


@pytest.mark.parametrize("drift, equivalent, identical", [
    (1e-3, True, 0),   # policies differ in every bit pattern but score within the margin
    (1.5, False, 0),   # every seed's policy scores 1.5 higher on one backend's training
])
def test_paired_training_still_fails_a_difference_and_counts_policies_that_differ(drift, equivalent, identical):
    report = run_policy_transfer([seed_driven_backend("A"), seed_driven_backend("B", drift=drift)], env="synthetic",
                                 delta=1.0, log=lambda _: None, training_paired=True)
    assert report.equivalent is equivalent and sum(report.identical_policies) == identical
    assert "0 of 10 seeds" in report.to_markdown()


def test_training_paired_needs_the_training_tests():
    with pytest.raises(ValueError, match="training_paired"):
        run_policy_transfer([seed_driven_backend("A"), seed_driven_backend("B")], env="synthetic", delta=1.0,
                            log=lambda _: None, compare_training=False, training_not_compared="budgets",
                            training_paired=True)


def test_a_backend_that_trains_seeds_together_is_used_so_and_gives_the_same_report(tmp_path):
    one_by_one = synthetic_backend("B", 0.0, 0.0)
    calls = []

    def train_seeds(seeds):
        calls.append(list(seeds))
        return [one_by_one.train(seed) for seed in seeds]

    together = L4Backend("B", lambda seed: pytest.fail("train() called despite train_seeds"), one_by_one.evaluate,
                         train_seeds=train_seeds)
    logged = []
    report = run_policy_transfer([synthetic_backend("A", 0.0, 0.0), together], env="synthetic", delta=1.0,
                                 seeds=[0, 1, 2, 5], log=logged.append)
    reference = run_policy_transfer([synthetic_backend("A", 0.0, 0.0), one_by_one], env="synthetic", delta=1.0,
                                    seeds=[0, 1, 2, 5], log=lambda _: None)
    assert calls == [[0, 1, 2, 5]]
    assert report.returns == reference.returns and report.curves == reference.curves
    assert "L4 synthetic: training on B, seeds 0-2, 5 together" in logged


def test_evaluate_many_scores_every_policy_in_one_call_with_its_own_seed():
    one_by_one = synthetic_backend("B", 0.0, 0.0)
    calls = []

    def evaluate_many(policies, eval_seeds):
        calls.append(list(eval_seeds))
        return [one_by_one.evaluate(policy, seed) for policy, seed in zip(policies, eval_seeds, strict=True)]

    together = L4Backend("B", one_by_one.train, lambda policy, seed: pytest.fail("evaluate() called despite evaluate_many"),
                         evaluate_many=evaluate_many)
    report = run_policy_transfer([synthetic_backend("A", 0.0, 0.0), together], env="synthetic", delta=1.0,
                                 seeds=[0, 1, 5], eval_seed=100, log=lambda _: None)
    reference = run_policy_transfer([synthetic_backend("A", 0.0, 0.0), one_by_one], env="synthetic", delta=1.0,
                                    seeds=[0, 1, 5], eval_seed=100, log=lambda _: None)
    assert calls == [[100, 101, 105]] * 2  # A-trained, then B-trained policies scored on B
    assert report.returns == reference.returns


def test_evaluate_many_returning_too_few_returns_is_an_error():
    short = L4Backend("B", synthetic_backend("B", 0.0, 0.0).train, lambda policy, seed: 0.0,
                      evaluate_many=lambda policies, seeds: [0.0])
    with pytest.raises(ValueError, match="evaluate_many returned 1 returns for 3 policies"):
        run_policy_transfer([synthetic_backend("A", 0.0, 0.0), short], env="synthetic", delta=1.0, seeds=range(3),
                            log=lambda _: None)


def test_train_seeds_returning_too_few_outcomes_is_an_error():
    short = L4Backend("B", lambda seed: None, lambda policy, seed: 0.0, train_seeds=lambda seeds: [])
    with pytest.raises(ValueError, match="returned 0 outcomes for 3 seeds"):
        run_policy_transfer([synthetic_backend("A", 0.0, 0.0), short], env="synthetic", delta=1.0, seeds=range(3),
                            log=lambda _: None)


def test_tost_needs_a_spread_to_test():
    # one value per sample has no spread: it used to count as a "constant sample" and pass
    with pytest.raises(ValueError, match="at least 2 values in each sample, got 1 and 1"):
        tost([0.0], [0.9], delta=1.0)
    with pytest.raises(ValueError, match="one length"):
        tost([1.0, 2.0, 3.0], [1.0, 2.0], delta=1.0, paired=True)


@pytest.mark.parametrize("delta, alpha, message", [
    (0.0, 0.05, "Delta must be a positive"), (-1.0, 0.05, "Delta must be a positive"),
    (float("nan"), 0.05, "Delta must be a positive"), (1.0, 1.5, r"alpha must be in \(0, 1\)"),
    (1.0, 0.0, r"alpha must be in \(0, 1\)"),
])
def test_a_margin_or_level_that_cannot_mean_anything_is_refused(delta, alpha, message):
    with pytest.raises(ValueError, match=message):
        tost([1.0, 2.0], [1.0, 2.0], delta=delta, alpha=alpha)
    with pytest.raises(ValueError, match=message):
        run_policy_transfer([synthetic_backend("A", 0.0, 0.0), synthetic_backend("B", 0.0, 0.0)],
                            env="synthetic", delta=delta, alpha=alpha, log=lambda _: None)


@pytest.mark.parametrize("seeds, names, message", [
    ([0], ("A", "B"), "at least 2 seeds"),
    ([], ("A", "B"), "at least 2 seeds"),
    ([3, 3, 3], ("A", "B"), "must be distinct"),
    ([0, 1], ("A", "A"), "different names"),
])
def test_seeds_and_backends_that_make_no_sample_are_refused_before_training(seeds, names, message):
    trained = []

    def backend(name):
        made = synthetic_backend(name, 0.0, 0.0)
        return L4Backend(name, lambda seed: trained.append(seed) or made.train(seed), made.evaluate)

    with pytest.raises(ValueError, match=message):
        run_policy_transfer([backend(names[0]), backend(names[1])], env="synthetic", delta=1.0, seeds=seeds,
                            log=lambda _: None)
    assert trained == []
