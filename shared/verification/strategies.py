"""Hypothesis strategies shared by every env's L1/L2 tests."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
from hypothesis import strategies as st

C_INT_MIN, C_INT_MAX = -(2**31), 2**31 - 1


def seeds(signed: bool = False) -> st.SearchStrategy[int]:
    """Seeds as a C API takes them: int (signed) or unsigned int, with the edges drawn often."""
    low = C_INT_MIN if signed else 0
    high = C_INT_MAX if signed else 2**32 - 1
    return st.one_of(st.sampled_from([0, 1, low, high]), st.integers(low, high))


def discrete_actions(num_actions: int) -> st.SearchStrategy[int]:
    return st.integers(0, num_actions - 1)


def invalid_discrete_actions(num_actions: int) -> st.SearchStrategy:
    """Values a discrete action space must reject: out of range, or not integers: floats (1.0 too) and
    bools (shared/discrete_action.py's rule, which every env's single-env check follows)."""
    return st.one_of(
        st.integers(max_value=-1),
        st.integers(min_value=num_actions),
        st.floats(allow_nan=True),
        st.booleans(),
    )


def action_sequences(num_actions: int, min_size: int = 1, max_size: int = 200) -> st.SearchStrategy[list[int]]:
    return st.lists(discrete_actions(num_actions), min_size=min_size, max_size=max_size)


def float32s(low: float, high: float) -> st.SearchStrategy[np.float32]:
    return st.floats(low, high, width=32, allow_nan=False, allow_infinity=False).map(np.float32)


def states(fields: Mapping[str, st.SearchStrategy]) -> st.SearchStrategy[dict]:
    """A dict state from one strategy per field: build env states field by field."""
    return st.fixed_dictionaries(dict(fields))


def batch_of(strategy: st.SearchStrategy, sizes: Sequence[int] = (1, 2, 7, 64)) -> st.SearchStrategy[list]:
    return st.sampled_from(list(sizes)).flatmap(lambda n: st.lists(strategy, min_size=n, max_size=n))
