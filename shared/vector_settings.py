"""The settings every native vector env takes, checked once, with one message each."""

from __future__ import annotations

from typing import Optional, Union

import numpy as np
from gymnasium.vector import AutoresetMode


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def checked_num_envs(num_envs) -> int:
    if not _is_int(num_envs) or num_envs < 1:
        raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
    return int(num_envs)


def checked_max_episode_steps(max_episode_steps) -> Optional[int]:
    if max_episode_steps is not None and (not _is_int(max_episode_steps) or max_episode_steps < 1):
        raise ValueError(f"max_episode_steps must be a positive int or None, got {max_episode_steps!r}")
    return None if max_episode_steps is None else int(max_episode_steps)


def checked_autoreset_mode(autoreset_mode: Union[AutoresetMode, str]) -> AutoresetMode:
    """NEXT_STEP or SAME_STEP (as an AutoresetMode or its value); DISABLED is refused."""
    try:
        mode = AutoresetMode(autoreset_mode)
    except ValueError:
        raise ValueError(f"autoreset_mode must be AutoresetMode.NEXT_STEP or AutoresetMode.SAME_STEP (or their values "
                         f"{AutoresetMode.NEXT_STEP.value!r}, {AutoresetMode.SAME_STEP.value!r}), "
                         f"got {autoreset_mode!r}") from None
    if mode == AutoresetMode.DISABLED:
        raise ValueError("autoreset_mode DISABLED is not supported: use NEXT_STEP or SAME_STEP")
    return mode
