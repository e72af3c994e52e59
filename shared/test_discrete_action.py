import numpy as np
import pytest

from shared.discrete_action import check_discrete_action


@pytest.mark.parametrize("action", [2, np.int64(2), np.uint8(2), np.array(2), np.array([2], np.int32), [2]])
def test_an_integer_scalar_or_one_element_array_is_taken(action):
    value = check_discrete_action(action, num_actions=3)
    assert value == 2 and isinstance(value, int) and not isinstance(value, (bool, np.integer))


@pytest.mark.parametrize(("action", "message"), [
    (np.array([1, 2]), r"one action per step, an integer in \[0, 3\): got shape \(2,\)"),
    (np.zeros((1, 1), int), r"got shape \(1, 1\)"),
    (np.array([], int), r"got shape \(0,\)"),
    (1.0, r"an action is an integer in \[0, 3\), got 1.0 \(float64\)"),
    (np.float32(2), r"\(float32\)"),
    (True, r"got True \(bool\)"),
    ("1", r"\(<U1\)"),
    (None, r"got None \(object\)"),
])
def test_other_shapes_and_types_are_refused(action, message):
    with pytest.raises(ValueError, match=message):
        check_discrete_action(action, num_actions=3)


@pytest.mark.parametrize("value", [-1, 3, 2**40])
def test_out_of_range_says_the_value_and_what_actions_mean(value):
    with pytest.raises(ValueError, match=rf"^action {value} is out of range \[0, 3\); 0 up, 1 down, 2 stay$"):
        check_discrete_action(value, num_actions=3, meaning="0 up, 1 down, 2 stay")
    with pytest.raises(ValueError, match=rf"^action {value} is out of range \[0, 3\)$"):
        check_discrete_action(np.array([value]), num_actions=3)


def test_every_action_in_range_comes_back_unchanged():
    assert [check_discrete_action(a, num_actions=111) for a in range(111)] == list(range(111))
