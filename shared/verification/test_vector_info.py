"""assert_same_vector_info passes equal infos and names the first difference of each kind."""

from __future__ import annotations

import numpy as np
import pytest

from shared.verification.vector_info import assert_same_vector_info


def _info() -> dict:
    final_obs = np.full(3, None, dtype=object)
    final_obs[1] = np.array([0.5, 1.0], np.float32)
    return {
        "action_mask": np.array([[True, False], [True, True], [False, True]]), "_action_mask": np.ones(3, bool),
        "turn": np.array([3, 0, 7]), "_turn": np.array([True, False, True]),
        "final_obs": final_obs, "_final_obs": np.array([False, True, False]),
        "final_info": {"score": np.array([0.0, 2.5, 0.0]), "_score": np.array([False, True, False])},
        "_final_info": np.array([False, True, False]),
    }


def test_equal_infos_pass():
    assert_same_vector_info(_info(), _info(), "step 0")


def _changed(change) -> dict:
    info = _info()
    change(info)
    return info


@pytest.mark.parametrize("change, message", [
    (lambda info: info.pop("_turn"), "info keys"),
    (lambda info: info["_turn"].__setitem__(1, True), r"info\['_turn'\]"),
    (lambda info: info.__setitem__("turn", info["turn"].astype(np.int32)), r"info\['turn'\]: int32"),
    (lambda info: info["final_obs"].__setitem__(0, np.zeros(2, np.float32)), r"final_obs'\]\[0\]: None on one side"),
    (lambda info: info["final_obs"][1].__setitem__(0, 0.25), r"final_obs'\]\[1\]"),
    (lambda info: info["final_info"]["score"].__setitem__(1, 2.0), r"final_info'\], info\['score'\]"),
    (lambda info: info.__setitem__("final_info", np.zeros(3)), "a dict on one side only"),
])
def test_each_kind_of_difference_is_named(change, message):
    with pytest.raises(AssertionError, match=message):
        assert_same_vector_info(_changed(change), _info(), "step 4")


def test_a_bound_applies_to_floats_only():
    def close(a, b):
        return bool(np.all(np.abs(a - b) <= 0.1))

    nearly = _changed(lambda info: info["final_info"]["score"].__setitem__(1, 2.45))
    assert_same_vector_info(nearly, _info(), "step 1", close)
    with pytest.raises(AssertionError, match="stated bound"):
        assert_same_vector_info(_changed(lambda info: info["final_info"]["score"].__setitem__(1, 2.0)), _info(), "s", close)
    with pytest.raises(AssertionError, match=r"info\['turn'\]"):  # integers stay exact
        assert_same_vector_info(_changed(lambda info: info["turn"].__setitem__(0, 4)), _info(), "step 1", close)
