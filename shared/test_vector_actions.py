import numpy as np
import pytest

from shared.vector_actions import check_discrete_actions


def test_legal_batches_come_back_as_int32():
    out = check_discrete_actions([0, 8, 3], num_envs=3, num_actions=9)
    assert out.dtype == np.int32 and out.tolist() == [0, 8, 3]
    assert check_discrete_actions(np.array([5], np.uint8), num_envs=1, num_actions=9).tolist() == [5]


@pytest.mark.parametrize(("actions", "message"), [
    ([0, 1], r"integer array of shape \(3,\), got int64 \(2,\)"),
    (np.zeros((3, 1), int), r"shape \(3,\), got int64 \(3, 1\)"),
    ([0.0, 1.0, 2.0], r"integer array of shape \(3,\), got float64"),
    ([True, False, True], r"integer array of shape \(3,\), got bool"),
    (5, r"got int64 \(\)"),
])
def test_wrong_shape_or_type(actions, message):
    with pytest.raises(ValueError, match=message):
        check_discrete_actions(actions, num_envs=3, num_actions=9)


def test_out_of_range_names_the_envs_and_values_and_what_actions_mean():
    with pytest.raises(ValueError, match=r"out of range \[0, 9\) in envs \[1, 2\]: \[9, -1\]; 0-3 moves$"):
        check_discrete_actions([0, 9, -1], num_envs=3, num_actions=9, meaning="0-3 moves")
    with pytest.raises(ValueError, match=r"in envs \[0\]: \[111\]$"):
        check_discrete_actions([111], num_envs=1, num_actions=111)
