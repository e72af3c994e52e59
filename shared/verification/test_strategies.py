"""The shared hypothesis strategies produce what they promise."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.verification import strategies


@settings(max_examples=200, deadline=None)
@given(seed=strategies.seeds(), signed=strategies.seeds(signed=True))
def test_seeds_fit_c_types(seed, signed):
    assert 0 <= seed < 2**32 and -(2**31) <= signed < 2**31


@settings(max_examples=200, deadline=None)
@given(action=strategies.invalid_discrete_actions(3))
def test_invalid_actions_are_never_valid(action):
    assert not (isinstance(action, int) and not isinstance(action, bool) and 0 <= action < 3)


@settings(max_examples=50, deadline=None)
@given(actions=strategies.action_sequences(4, min_size=2, max_size=9),
       state=strategies.states({"x": strategies.float32s(-1, 1), "n": st.integers(0, 3)}),
       batch=strategies.batch_of(st.integers(0, 9), sizes=(3,)))
def test_sequences_states_and_batches(actions, state, batch):
    assert 2 <= len(actions) <= 9 and all(0 <= a < 4 for a in actions)
    assert set(state) == {"x", "n"} and isinstance(state["x"], np.float32) and -1 <= state["x"] <= 1
    assert len(batch) == 3
