"""The L3 comparison itself, on toy backends whose divergence is known in advance."""

import dataclasses
import re

import numpy as np
import pytest

from shared.verification import toy_backends
from shared.verification.l3 import EXACT, L3Divergence, Tolerance, compare_rollouts, replay, uniform_discrete


def run(translation, **kwargs):
    return compare_rollouts(toy_backends.Counter(), translation, env_name="toy", episodes=kwargs.pop("episodes", 5),
                            action_source=uniform_discrete(2), **kwargs)


def test_identical_backends_pass_and_count_everything():
    result = run(toy_backends.Counter(name="same"))
    assert result.episodes == 5 and result.steps == 5 * 50
    assert result.fields_compared == ["observation", "reward", "done", "state.drift", "state.t"]


def test_report_names_episode_step_field_values_and_first_internal_divergence():
    with pytest.raises(L3Divergence) as caught:
        run(toy_backends.buggy(), reference_factory="shared.verification.toy_backends:reference",
            translation_factory="shared.verification.toy_backends:buggy")
    error, report = caught.value, str(caught.value)
    # the hidden drift diverges at step 17; the observation only shows it at step 20
    assert error.episode == 0 and error.divergence.step == 17 and error.divergence.field == "state.drift"
    assert "episode 0 (seed 0), step 17, field state.drift" in report
    assert "reference:   0.0" in report and "translation: 1e-06" in report
    assert len(error.actions) == 17 and "actions=[" in report
    assert "replay('shared.verification.toy_backends:reference', 'shared.verification.toy_backends:buggy', seed=0" in report


def test_visible_divergence_reports_the_earlier_internal_one():
    # compare only what an agent sees: the observation diverges at step 20, the state at 17
    from shared.verification.l3 import first_divergence, play_actions

    actions = [1] * 30
    ref, bad = play_actions(toy_backends.Counter(), 0, actions), play_actions(toy_backends.buggy(), 0, actions)
    visible = first_divergence(ref, bad, EXACT, ["observation", "reward", "done"])
    internal = first_divergence(ref, bad, EXACT, ["state.drift", "state.t"])
    assert (visible.step, visible.field, visible.index) == (20, "observation", (0,))
    assert (internal.step, internal.field) == (17, "state.drift")


def test_tolerance_mode_accepts_small_differences_and_names_the_field():
    tolerant = Tolerance(default=0.0, per_field={"observation": 1e-3, "state.drift": 1e-3})
    assert run(toy_backends.buggy(), tolerance=tolerant).episodes == 5
    with pytest.raises(L3Divergence, match="field state.drift"):
        run(toy_backends.buggy(), tolerance=Tolerance(default=0.0, per_field={"observation": 1e-3}))


def test_exact_mode_is_bitwise_for_floats():
    from shared.verification.l3 import Trajectory, first_divergence

    a = Trajectory(np.asarray([[0.0]], np.float32), np.zeros(1), np.zeros(1, bool))
    b = Trajectory(np.asarray([[-0.0]], np.float32), np.zeros(1), np.zeros(1, bool))
    assert first_divergence(a, b, EXACT).field == "observation"
    assert first_divergence(a, b, Tolerance(default=1e-9)) is None


def test_episode_length_mismatch_is_a_divergence():
    with pytest.raises(L3Divergence, match="done"):
        run(toy_backends.Counter(episode_length=40))


def test_replay_reproduces_the_reported_divergence(capsys):
    with pytest.raises(L3Divergence) as caught:
        run(toy_backends.buggy())
    divergence = replay("shared.verification.toy_backends:reference", "shared.verification.toy_backends:buggy",
                        seed=caught.value.seed, actions=caught.value.actions + [0])
    assert divergence.step == 17 and "step 17, state.drift" in capsys.readouterr().out


def test_seeds_must_match_episodes():
    with pytest.raises(ValueError, match="3 episodes but 2 seeds"):
        run(toy_backends.Counter(), episodes=3, seeds=[1, 2])


class _Logged(toy_backends.Counter):
    """A Counter that writes each reset, and each batched rollout, into a shared log."""

    def __init__(self, log: list, label: str, **kwargs):
        super().__init__(**kwargs)
        self.log, self.label = log, label

    def reset(self, seed: int):
        self.log.append((self.label, seed))
        return super().reset(seed)


class _LoggedBatch(_Logged):
    def rollout(self, seeds, actions):
        from shared.verification.l3 import play_actions

        self.log.append(("rollout", list(seeds)))
        return [play_actions(toy_backends.Counter(), seed, episode_actions)
                for seed, episode_actions in zip(seeds, actions, strict=True)]


def test_step_by_step_translations_are_compared_one_episode_at_a_time():
    # Only one episode's trajectories are held: the translation replays episode i before the
    # reference plays episode i + 1.
    log: list = []
    result = compare_rollouts(_Logged(log, "reference"), _Logged(log, "translation"), env_name="toy", episodes=3,
                              seeds=[7, 8, 9], action_source=uniform_discrete(2))
    assert result.episodes == 3 and result.episode_lengths == [50, 50, 50]
    assert log == [("reference", 7), ("translation", 7), ("reference", 8), ("translation", 8),
                   ("reference", 9), ("translation", 9)]


def test_a_divergence_stops_before_later_episodes_are_played():
    log: list = []
    with pytest.raises(L3Divergence) as caught:
        compare_rollouts(_Logged(log, "reference"), _Logged(log, "translation", bug_at=17), env_name="toy",
                         episodes=4, action_source=uniform_discrete(2))
    assert caught.value.episode == 0
    assert log == [("reference", 0), ("translation", 0)]


def test_batched_translations_get_all_episodes_at_once_unless_told_otherwise():
    log: list = []
    compare_rollouts(toy_backends.Counter(), _LoggedBatch(log, "translation"), env_name="toy", episodes=5,
                     action_source=uniform_discrete(2))
    assert log == [("rollout", [0, 1, 2, 3, 4])]
    log.clear()
    result = compare_rollouts(toy_backends.Counter(), _LoggedBatch(log, "translation"), env_name="toy", episodes=5,
                              action_source=uniform_discrete(2), episodes_per_batch=2)
    assert log == [("rollout", [0, 1]), ("rollout", [2, 3]), ("rollout", [4])]
    assert result.steps == 5 * 50 and len(result.episode_returns) == 5


def test_a_later_episode_divergence_names_that_episode():
    # The bug only shows in episode 2 (seed 2): the batches before it pass, the report names it.
    class BuggyFromSeed2(toy_backends.Counter):
        def reset(self, seed: int):
            self.bug_at = 17 if seed == 2 else None
            return super().reset(seed)

    for per_batch in (1, 2, 5):
        with pytest.raises(L3Divergence) as caught:
            run(BuggyFromSeed2(), episodes_per_batch=per_batch)
        assert (caught.value.episode, caught.value.seed, caught.value.divergence.step) == (2, 2, 17)


def test_episodes_per_batch_must_be_positive():
    with pytest.raises(ValueError, match="episodes_per_batch must be at least 1"):
        run(toy_backends.Counter(), episodes_per_batch=0)


def test_ranges_of_episodes_play_exactly_the_episodes_of_one_run():
    # Two ranges, as two processes would run them, reset the same seeds in the same order and
    # choose the same actions as one run of all the episodes.
    whole: list = []
    whole_result = compare_rollouts(_Logged(whole, "reference"), toy_backends.Counter(), env_name="toy", episodes=5,
                                    action_source=uniform_discrete(2))
    split: list = []
    results = [compare_rollouts(_Logged(split, "reference"), toy_backends.Counter(), env_name="toy", episodes=n,
                                first_episode=first, action_source=uniform_discrete(2))
               for first, n in ((0, 2), (2, 3))]
    assert split == whole == [("reference", seed) for seed in range(5)]
    assert results[0].episode_returns + results[1].episode_returns == whole_result.episode_returns
    # A range that started at 0 again would replay other action streams' episodes.
    assert compare_rollouts(toy_backends.Counter(), toy_backends.Counter(), env_name="toy", episodes=3,
                            action_source=uniform_discrete(2)).episode_returns != results[1].episode_returns


def test_a_divergence_in_a_range_names_the_episode_by_its_number_in_the_whole_run():
    class BuggyFromSeed3(toy_backends.Counter):
        def reset(self, seed: int):
            self.bug_at = 17 if seed == 3 else None
            return super().reset(seed)

    with pytest.raises(L3Divergence) as caught:
        run(BuggyFromSeed3(), episodes=2, first_episode=2)
    assert (caught.value.episode, caught.value.seed) == (3, 3)
    assert "episode 3" in str(caught.value)


def test_first_episode_must_not_be_negative():
    with pytest.raises(ValueError, match="first_episode must be at least 0"):
        run(toy_backends.Counter(), first_episode=-1)


@pytest.mark.parametrize("counts", [{"episodes": 0}, {"max_steps": 0}])
def test_a_comparison_of_nothing_is_refused_not_passed(counts):
    with pytest.raises(ValueError, match="episodes and max_steps must be at least 1"):
        run(toy_backends.Counter(), **counts)


class _DropsState(toy_backends.Counter):
    """A translation that stops exposing some (or all) of its internal state."""

    def __init__(self, keep):
        super().__init__(name="drops state")
        self.keep = keep

    def _output(self, reward, done):
        output = super()._output(reward, done)
        return dataclasses.replace(output, state={k: v for k, v in output.state.items() if k in self.keep} or None)


@pytest.mark.parametrize("keep, missing", [({"t"}, "['drift']"), (set(), "['drift', 't']")])
def test_a_translation_that_exposes_less_internal_state_is_refused(keep, missing):
    with pytest.raises(ValueError, match=rf"only counter has {re.escape(missing)}, only drops state has \[\]"):
        run(_DropsState(keep))
