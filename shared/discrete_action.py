"""The action check of a single Gymnasium env over a Discrete action space (`vector_actions` is its
twin for native vector envs), so that every env of the repo takes and refuses the same actions.

Taken: an integer (a Python int, a numpy integer, an integer array of shape () or (1,): what
`action_space.sample()` and a policy's one-row output give). Refused with a ValueError that says what
was given: any other shape, any other dtype (floats, even 1.0, and bools: a policy that emits them
has a bug that a silent cast would hide), or a value out of range."""

from __future__ import annotations

from typing import Any

import numpy as np


def check_discrete_action(action: Any, num_actions: int, meaning: str = "") -> int:
    """`action` as an int in [0, num_actions); `meaning` (what the numbers stand for) ends the
    out-of-range message."""
    array = np.asarray(action)
    if array.shape not in ((), (1,)):
        raise ValueError(f"one action per step, an integer in [0, {num_actions}): got shape {array.shape}")
    if not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"an action is an integer in [0, {num_actions}), got {action!r} ({array.dtype})")
    value = int(array.reshape(()))
    if not 0 <= value < num_actions:
        raise ValueError(f"action {value} is out of range [0, {num_actions})" + (f"; {meaning}" if meaning else ""))
    return value
