"""L3: run reference and translation through the same seeds and actions and compare every step.

Two backends meet through a small protocol (`RolloutBackend`): reset with a seed, step with an
action, and return what an agent sees (observation, reward, done) plus, optionally, the env's
internal state as named arrays. `compare_rollouts` plays N episodes (default 100). The actions of
each episode come from an `ActionSource`, driven by the reference's observations, and are then
replayed unchanged on the translation. Every step is compared field by field: exactly (bitwise,
so 0.0 and -0.0 differ) or within a per-field L-infinity tolerance.

A divergence raises `L3Divergence` (an AssertionError) whose message gives the episode, the step,
the field, both values, the first internal field that diverged (which often comes before the
visible one), and a ready-to-paste reproducer that calls `replay`.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any, Callable, Mapping, Optional, Protocol, Sequence, runtime_checkable

import numpy as np

from .reports import encode_actions, encode_array, write_report

Fields = Mapping[str, np.ndarray]


@dataclasses.dataclass
class StepOutput:
    observation: np.ndarray
    reward: float = 0.0
    done: bool = False
    state: Optional[Fields] = None


@dataclasses.dataclass
class Trajectory:
    """One episode: index 0 is the reset, index t >= 1 the output of the t-th step."""

    observations: np.ndarray
    rewards: np.ndarray
    dones: np.ndarray
    states: Optional[dict[str, np.ndarray]] = None

    def __len__(self) -> int:
        return len(self.observations)

    @classmethod
    def from_steps(cls, steps: Sequence[StepOutput]) -> Trajectory:
        states = None
        if all(s.state is not None for s in steps):
            states = {k: np.stack([np.asarray(s.state[k]) for s in steps]) for k in steps[0].state}
        return cls(
            observations=np.stack([np.asarray(s.observation) for s in steps]),
            rewards=np.asarray([s.reward for s in steps]),
            dones=np.asarray([bool(s.done) for s in steps]),
            states=states,
        )

    def fields(self) -> dict[str, np.ndarray]:
        out = {"observation": self.observations, "reward": self.rewards, "done": self.dones}
        for name, values in (self.states or {}).items():
            out[f"state.{name}"] = values
        return out


@runtime_checkable
class RolloutBackend(Protocol):
    name: str

    def reset(self, seed: int) -> StepOutput: ...

    def step(self, action: Any) -> StepOutput: ...


class BatchRollout(Protocol):
    """Optional fast path: play many episodes at once from fixed action sequences."""

    def rollout(self, seeds: Sequence[int], actions: Sequence[np.ndarray]) -> list[Trajectory]: ...


# An action source picks the next action from the episode index, a numpy Generator and the
# reference's latest observation. It must depend on nothing else, so episodes are reproducible.
ActionSource = Callable[[int, np.random.Generator, np.ndarray], Any]


def uniform_discrete(num_actions: int) -> ActionSource:
    return lambda episode, rng, observation: int(rng.integers(num_actions))


@dataclasses.dataclass(frozen=True)
class Tolerance:
    """Per-field L-infinity tolerance; 0 means bitwise equality. Field names: observation, reward,
    done, state.<name>."""

    default: float = 0.0
    per_field: Mapping[str, float] = dataclasses.field(default_factory=dict)

    def for_field(self, field: str) -> float:
        return self.per_field.get(field, self.default)


EXACT = Tolerance()


def _different(reference: np.ndarray, translation: np.ndarray, atol: float) -> np.ndarray:
    """Elementwise: where the two arrays differ (bitwise for floats when atol is 0)."""
    reference, translation = np.asarray(reference), np.asarray(translation)
    if reference.shape != translation.shape:
        raise ValueError(f"shape mismatch {reference.shape} vs {translation.shape}")
    if atol == 0.0:
        if reference.dtype == translation.dtype and reference.dtype.kind == "f":
            width = {2: np.uint16, 4: np.uint32, 8: np.uint64}[reference.dtype.itemsize]
            return reference.view(width) != translation.view(width)
        return reference != translation
    a, b = reference.astype(np.float64), translation.astype(np.float64)
    return ~(np.abs(a - b) <= atol) & ~(np.isnan(a) & np.isnan(b))


def _mismatched_steps(reference: np.ndarray, translation: np.ndarray, atol: float) -> np.ndarray:
    """Boolean [T]: steps where any element of the field differs."""
    different = _different(reference, translation, atol)
    return different.reshape(different.shape[0], -1).any(axis=1)


@dataclasses.dataclass
class Divergence:
    step: int
    field: str
    index: tuple
    reference_value: Any
    translation_value: Any


def first_divergence(reference: Trajectory, translation: Trajectory, tolerance: Tolerance,
                     fields: Optional[Sequence[str]] = None) -> Optional[Divergence]:
    """Earliest (step, field) where the trajectories differ; the fields are tried in order."""
    ref_fields, trans_fields = reference.fields(), translation.fields()
    names = [f for f in (fields or ref_fields) if f in ref_fields and f in trans_fields]
    length = min(len(reference), len(translation))
    best: Optional[Divergence] = None
    for name in names:
        atol = tolerance.for_field(name)
        bad = _mismatched_steps(ref_fields[name][:length], trans_fields[name][:length], atol)
        if not bad.any():
            continue
        step = int(np.argmax(bad))
        if best is not None and step >= best.step:
            continue
        ref_value, trans_value = np.asarray(ref_fields[name][step]), np.asarray(trans_fields[name][step])
        index: tuple = ()
        if ref_value.ndim:
            flat = _different(ref_value.reshape(-1), trans_value.reshape(-1), atol)
            index = tuple(int(i) for i in np.unravel_index(int(np.argmax(flat)), ref_value.shape))
        best = Divergence(step=step, field=name, index=index, reference_value=ref_value, translation_value=trans_value)
    if best is None and len(reference) != len(translation):
        step = length
        best = Divergence(step=step, field="episode length", index=(),
                          reference_value=len(reference) - 1, translation_value=len(translation) - 1)
    return best


def _format_value(value: Any, index: tuple) -> str:
    array = np.asarray(value)
    scalar = array[index] if index else array
    text = repr(scalar.item()) if np.ndim(scalar) == 0 else np.array2string(scalar)
    if array.dtype.kind == "f" and np.ndim(scalar) == 0:
        bits = np.asarray(scalar).view({2: np.uint16, 4: np.uint32, 8: np.uint64}[array.itemsize])
        text += f" (bits 0x{int(bits):0{array.itemsize * 2}x})"
    return text


class L3Divergence(AssertionError):
    def __init__(self, message: str, episode: int, seed: int, divergence: Divergence, actions: list):
        super().__init__(message)
        self.episode, self.seed, self.divergence, self.actions = episode, seed, divergence, actions


@dataclasses.dataclass
class L3Result:
    episodes: int
    steps: int
    fields_compared: list[str]
    episode_lengths: list[int]
    episode_returns: list[float]

    def summary(self) -> str:
        return (f"{self.episodes} episodes, {self.steps} steps, every step equal on "
                f"{', '.join(self.fields_compared)}; episode length {min(self.episode_lengths)}-"
                f"{max(self.episode_lengths)}, return {min(self.episode_returns):.1f} to {max(self.episode_returns):.1f}")


def play_reference(backend: RolloutBackend, seed: int, episode: int, action_source: ActionSource,
                   max_steps: int, action_seed: int) -> tuple[Trajectory, list]:
    """Play one episode on the reference, choosing actions from its observations."""
    rng = np.random.default_rng([action_seed, episode])
    steps = [backend.reset(seed)]
    actions: list = []
    while len(actions) < max_steps:
        action = action_source(episode, rng, np.asarray(steps[-1].observation))
        actions.append(action)
        steps.append(backend.step(action))
        if steps[-1].done:
            break
    return Trajectory.from_steps(steps), actions


def play_actions(backend: RolloutBackend, seed: int, actions: Sequence) -> Trajectory:
    steps = [backend.reset(seed)]
    for action in actions:
        steps.append(backend.step(action))
    return Trajectory.from_steps(steps)


def _reproducer(reference_factory: Optional[str], translation_factory: Optional[str], seed: int,
                actions: list, tolerance: Tolerance) -> str:
    if not (reference_factory and translation_factory):
        return f"seed={seed}, actions={_actions_literal(actions)}"
    tolerance_text = "" if tolerance == EXACT else f", tolerance={tolerance!r}"
    return (
        f"from shared.verification.l3 import {'replay' if tolerance == EXACT else 'Tolerance, replay'}\n"
        f"replay({reference_factory!r}, {translation_factory!r}, seed={seed},\n"
        f"       actions={_actions_literal(actions)}{tolerance_text})"
    )


def _actions_literal(actions: list) -> str:
    return repr(encode_actions(actions))


def _describe(env_name: str, reference: RolloutBackend, translation: RolloutBackend, episode: int, seed: int,
              divergence: Divergence, state_divergence: Optional[Divergence], reproducer: str) -> str:
    index = f"[{', '.join(map(str, divergence.index))}]" if divergence.index else ""
    lines = [
        f"L3 divergence in {env_name}: {reference.name} (reference) vs {translation.name} (translation)",
        f"  episode {episode} (seed {seed}), step {divergence.step}, field {divergence.field}{index}",
        f"  reference:   {_format_value(divergence.reference_value, divergence.index)}",
        f"  translation: {_format_value(divergence.translation_value, divergence.index)}",
    ]
    if divergence.field != "episode length" and np.ndim(divergence.reference_value):
        lines.append(f"  whole field, reference:   {np.array2string(np.asarray(divergence.reference_value))}")
        lines.append(f"  whole field, translation: {np.array2string(np.asarray(divergence.translation_value))}")
    if state_divergence is not None:
        lines.append(
            f"  first internal field to diverge: {state_divergence.field} at step {state_divergence.step} "
            f"(reference {_format_value(state_divergence.reference_value, state_divergence.index)}, "
            f"translation {_format_value(state_divergence.translation_value, state_divergence.index)})"
        )
    else:
        lines.append("  internal state: not exposed by both backends, or equal up to this step")
    lines.append(f"  action history: {divergence.step} actions lead there")
    lines.append("  reproduce:")
    lines.extend("    " + line for line in reproducer.splitlines())
    return "\n".join(lines)


def compare_rollouts(
    reference: RolloutBackend,
    translation: RolloutBackend,
    *,
    env_name: str,
    episodes: int = 100,
    first_episode: int = 0,
    seeds: Optional[Sequence[int]] = None,
    action_source: ActionSource,
    max_steps: int = 10_000,
    tolerance: Tolerance = EXACT,
    action_seed: int = 0,
    reference_factory: Optional[str] = None,
    translation_factory: Optional[str] = None,
    progress: Optional[Callable[[int], None]] = None,
    episodes_per_batch: Optional[int] = None,
) -> L3Result:
    """Play `episodes` episodes on both backends and compare every step; raise L3Divergence on the
    first difference. `reference_factory`/`translation_factory` are "module:function" paths that
    build the backends; they make the failure message's reproducer runnable as pasted.

    Episodes are played and compared `episodes_per_batch` at a time, and only one batch's
    trajectories are held: an emulator's whole state at every frame of 100 episodes is some 10 GiB.
    By default a translation with the `rollout` fast path gets all episodes in one batch (that is
    what makes it fast), any other one episode at a time.

    `first_episode` numbers the episodes from there: episodes `first_episode` to `first_episode +
    episodes - 1` are played, each with the action stream and (unless `seeds` is given) the seed
    that number has in a whole run. So a long comparison can be split into ranges, run in separate
    processes, that together play exactly the episodes of one run."""
    if first_episode < 0:
        raise ValueError(f"first_episode must be at least 0, got {first_episode}")
    if episodes < 1 or max_steps < 1:
        # zero of either compares nothing, and a comparison of nothing must not pass
        raise ValueError(f"episodes and max_steps must be at least 1, got {episodes} and {max_steps}")
    seeds = list(range(first_episode, first_episode + episodes)) if seeds is None else list(seeds)
    if len(seeds) != episodes:
        raise ValueError(f"{episodes} episodes but {len(seeds)} seeds")
    batched = hasattr(translation, "rollout")
    if episodes_per_batch is None:
        episodes_per_batch = max(episodes, 1) if batched else 1
    if episodes_per_batch < 1:
        raise ValueError(f"episodes_per_batch must be at least 1, got {episodes_per_batch}")
    compared: set[str] = set()
    lengths: list[int] = []
    returns: list[float] = []
    last = first_episode + episodes
    for first in range(first_episode, last, episodes_per_batch):
        batch = range(first, min(first + episodes_per_batch, last))
        played = []
        for episode in batch:
            seed = seeds[episode - first_episode]
            played.append(play_reference(reference, seed, episode, action_source, max_steps, action_seed))
            if progress:
                progress(episode)
        batch_seeds = [seeds[episode - first_episode] for episode in batch]
        if batched:
            translated = translation.rollout(batch_seeds, [np.asarray(actions) for _, actions in played])
        else:
            translated = [play_actions(translation, seed, actions)
                          for seed, (_, actions) in zip(batch_seeds, played, strict=True)]
        compared |= _compare_batch(env_name, reference, translation, batch, batch_seeds, played, translated,
                                   tolerance, reference_factory, translation_factory)
        lengths += [len(t) - 1 for t, _ in played]
        returns += [float(np.sum(t.rewards)) for t, _ in played]
        del played, translated  # before the next batch is played, not after
    order = ["observation", "reward", "done"]
    return L3Result(
        episodes=episodes,
        steps=sum(lengths),
        fields_compared=order + sorted(compared - set(order)),
        episode_lengths=lengths,
        episode_returns=returns,
    )


def _compare_batch(env_name: str, reference: RolloutBackend, translation: RolloutBackend, batch: range,
                   seeds: list, played: list, translated: list, tolerance: Tolerance,
                   reference_factory: Optional[str], translation_factory: Optional[str]) -> set[str]:
    """Compare one batch's episodes in order; raise L3Divergence at the first difference. Returns
    the fields compared."""
    compared: set[str] = set()
    for episode, seed, (ref_traj, actions), trans_traj in zip(batch, seeds, played, translated, strict=True):
        visible = ["observation", "reward", "done"]
        ref_fields, trans_fields = set(ref_traj.states or {}), set(trans_traj.states or {})
        if ref_fields != trans_fields:
            # comparing only the fields both expose would let a translation that drops a field (or all
            # of its state) pass with less checked than asked
            raise ValueError(
                f"{env_name}: the backends expose different internal state fields (episode {episode}): "
                f"only {reference.name} has {sorted(ref_fields - trans_fields)}, "
                f"only {translation.name} has {sorted(trans_fields - ref_fields)}")
        state_fields = sorted(ref_fields)
        all_fields = visible + [f"state.{name}" for name in state_fields]
        compared.update(all_fields)
        divergence = first_divergence(ref_traj, trans_traj, tolerance, all_fields)
        if divergence is None:
            continue
        state_divergence = None
        if state_fields:
            state_divergence = first_divergence(ref_traj, trans_traj, tolerance, [f"state.{n}" for n in state_fields])
        reproducer = _reproducer(reference_factory, translation_factory, seed, list(actions[: divergence.step]), tolerance)
        _write_divergence_report(env_name, reference, translation, episode, seed, list(actions[: divergence.step]),
                                 divergence, state_divergence, ref_traj, trans_traj, tolerance,
                                 reference_factory, translation_factory)
        raise L3Divergence(_describe(env_name, reference, translation, episode, seed, divergence, state_divergence,
                                     reproducer), episode, seed, divergence, list(actions[: divergence.step]))
    return compared


def _step_values(trajectory: Trajectory, step: int) -> dict:
    if step >= len(trajectory):
        return {}
    return {name: encode_array(values[step]) for name, values in trajectory.fields().items()}


def _write_divergence_report(env_name: str, reference: RolloutBackend, translation: RolloutBackend, episode: int,
                             seed: int, actions: list, divergence: Divergence, state_divergence: Optional[Divergence],
                             ref_traj: Trajectory, trans_traj: Trajectory, tolerance: Tolerance,
                             reference_factory: Optional[str], translation_factory: Optional[str]) -> None:
    """The same facts as the message, as JSON in $ENVPORT_REPORT_DIR (when set) for the agent driver."""
    first = state_divergence if state_divergence is not None and state_divergence.step <= divergence.step else None
    write_report("l3-divergence", {
        "env": env_name, "reference": reference.name, "translation": translation.name,
        "episode": episode, "seed": seed, "step": divergence.step, "field": divergence.field,
        "index": list(divergence.index), "first_internal_field": first.field if first else None,
        "first_internal_step": first.step if first else None,
        "actions": encode_actions(actions),
        "reference_values": _step_values(ref_traj, divergence.step),
        "translation_values": _step_values(trans_traj, divergence.step),
        "tolerance": {"default": tolerance.default, "per_field": dict(tolerance.per_field)},
        "reference_factory": reference_factory, "translation_factory": translation_factory,
    })


def _load(factory: str) -> RolloutBackend:
    module_name, _, function = factory.partition(":")
    if not function:
        raise ValueError(f"expected 'module:function', got {factory!r}")
    return getattr(importlib.import_module(module_name), function)()


def replay(reference_factory: str, translation_factory: str, *, seed: int, actions: Sequence,
           tolerance: Tolerance = EXACT) -> Optional[Divergence]:
    """Replay one action sequence on both backends, step by step, and print the first divergence
    (None if they agree). The reproducer in every L3Divergence message calls this."""
    reference, translation = _load(reference_factory), _load(translation_factory)
    ref_traj, trans_traj = play_actions(reference, seed, actions), play_actions(translation, seed, actions)
    divergence = first_divergence(ref_traj, trans_traj, tolerance)
    if divergence is None:
        print(f"{reference.name} and {translation.name} agree on all {len(actions)} steps")
    else:
        index = f"[{', '.join(map(str, divergence.index))}]" if divergence.index else ""
        print(f"step {divergence.step}, {divergence.field}{index}: "
              f"{_format_value(divergence.reference_value, divergence.index)} vs "
              f"{_format_value(divergence.translation_value, divergence.index)}")
    return divergence


__all__ = [
    "ActionSource", "BatchRollout", "Divergence", "EXACT", "L3Divergence", "L3Result", "RolloutBackend",
    "StepOutput", "Tolerance", "Trajectory", "compare_rollouts", "first_divergence", "play_actions",
    "play_reference", "replay", "uniform_discrete",
]
