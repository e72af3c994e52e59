"""Two tiny backends for testing the L3 machinery itself: a counter that drifts, in pure Python.

`Counter` is the reference. `Counter(bug_at=k)` adds 1e-6 to its hidden `drift` at step k, which
shows in the observation only `delay` steps later: the internal state diverges first, as it does
in real translation bugs.
"""

from __future__ import annotations

import numpy as np

from .l3 import StepOutput


class Counter:
    def __init__(self, bug_at: int | None = None, delay: int = 3, episode_length: int = 50, name: str = "counter"):
        self.bug_at, self.delay, self.episode_length, self.name = bug_at, delay, episode_length, name

    def reset(self, seed: int) -> StepOutput:
        self.t, self.position, self.drift, self.pending = 0, float(seed % 7), 0.0, []
        return self._output(0.0, False)

    def step(self, action) -> StepOutput:
        if action not in (0, 1):
            raise ValueError(f"action must be 0 or 1, got {action!r}")
        self.t += 1
        if self.bug_at is not None and self.t == self.bug_at:
            self.drift += 1e-6
            self.pending.append(self.t + self.delay)
        shown_drift = self.drift if any(self.t >= p for p in self.pending) else 0.0
        self.position += (1.0 if action else -1.0) + shown_drift
        return self._output(float(action), self.t >= self.episode_length)

    def _output(self, reward: float, done: bool) -> StepOutput:
        return StepOutput(observation=np.asarray([self.position, self.t], dtype=np.float32), reward=reward, done=done,
                          state={"drift": np.float64(self.drift), "t": np.int64(self.t)})


def reference() -> Counter:
    return Counter()


def buggy() -> Counter:
    return Counter(bug_at=17, name="counter with a bug at step 17")
