"""The check that a native vector env's info is the info Gymnasium's SyncVectorEnv gives for the same
single envs: the same keys at every depth (each with its `_key` mask), the same dtypes and shapes, and
equal values (or values within a bound a float env states), final_info's nested dict and final_obs's
object array (None where an env did not finish) included."""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np

Close = Callable[[np.ndarray, np.ndarray], bool]


def assert_same_vector_info(ours: dict, theirs: dict, where: str, close: Optional[Close] = None) -> None:
    """AssertionError naming the step (`where`) and the key path at the first difference. `close`
    compares float values (masks and integers stay exact); without it every value must be equal."""
    assert sorted(ours) == sorted(theirs), f"{where}: info keys {sorted(ours)} vs {sorted(theirs)}"
    for key, values in ours.items():
        other, path = theirs[key], f"{where}, info[{key!r}]"
        if isinstance(values, dict) or isinstance(other, dict):
            assert isinstance(values, dict) and isinstance(other, dict), f"{path}: a dict on one side only"
            assert_same_vector_info(values, other, path, close)
            continue
        values, other = np.asarray(values), np.asarray(other)
        assert values.dtype == other.dtype and values.shape == other.shape, \
            f"{path}: {values.dtype}{values.shape} vs {other.dtype}{other.shape}"
        if values.dtype == object:
            for index, (mine, theirs_one) in enumerate(zip(values, other, strict=True)):
                assert (mine is None) == (theirs_one is None), f"{path}[{index}]: None on one side only"
                if mine is not None:
                    _assert_values(np.asarray(mine), np.asarray(theirs_one), f"{path}[{index}]", close)
        else:
            _assert_values(values, other, path, close)


def _assert_values(mine: np.ndarray, theirs: np.ndarray, path: str, close: Optional[Close]) -> None:
    assert mine.dtype == theirs.dtype and mine.shape == theirs.shape, f"{path}: dtype or shape"
    if close is not None and np.issubdtype(mine.dtype, np.floating):
        assert close(mine, theirs), f"{path}: {mine} vs {theirs} beyond the stated bound"
    else:
        assert np.array_equal(mine, theirs), f"{path}: {mine} vs {theirs}"
