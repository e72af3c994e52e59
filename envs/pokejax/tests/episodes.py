"""A Gymnasium episode played with seeded random legal choices, and the comparison of two episodes: what
the L2 files compare the backends with."""

from __future__ import annotations

import numpy as np


def play_episode(env, seed: int, choice_seed: int) -> list:
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(choice_seed)
    out = [obs]
    while True:
        # a bool mask on every backend (the root README's Conventions)
        assert info["action_mask"].dtype == bool and info["action_mask"].shape == (env.action_space.n,)
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, reward, terminated, truncated, info = env.step(action)
        out.append((obs, reward, terminated, truncated))
        if terminated or truncated:
            return out


def same_episode(a: list, b: list) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if isinstance(x, np.ndarray):
            if not np.array_equal(x, y):
                return False
        elif not (np.array_equal(x[0], y[0]) and x[1:] == y[1:]):
            return False
    return True
