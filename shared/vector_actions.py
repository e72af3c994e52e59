"""The action check of a native Gymnasium vector env over a Discrete action space: one integer action
per env, each in range, or a ValueError that names the envs at fault. Run before anything is
stepped, so a bad batch leaves every env where it was."""

from __future__ import annotations

from typing import Any

import numpy as np


def check_discrete_actions(actions: Any, num_envs: int, num_actions: int, meaning: str = "") -> np.ndarray:
    """`actions` as an int32 array of shape (num_envs,), each in [0, num_actions); `meaning` (what the
    numbers stand for) ends the out-of-range message."""
    array = np.asarray(actions)
    if array.shape != (num_envs,) or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"actions must be an integer array of shape ({num_envs},), got {array.dtype} {array.shape}")
    out_of_range = (array < 0) | (array >= num_actions)
    if np.any(out_of_range):
        raise ValueError(f"actions out of range [0, {num_actions}) in envs {np.flatnonzero(out_of_range).tolist()}: "
                         f"{array[out_of_range].tolist()}" + (f"; {meaning}" if meaning else ""))
    return array.astype(np.int32)
