"""Component tagging: a failing test names its component; coverage finds untested components."""

import sys
import types

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.verification.components import ComponentFailure, Components

TOY = Components("toy", ["paddle", "ball"])


def test_a_failure_names_env_and_component():
    @TOY.covers("paddle")
    def failing():
        assert 1 == 2, "paddle moved the wrong way"

    with pytest.raises(ComponentFailure, match=r"\[toy/paddle\] AssertionError: paddle moved the wrong way"):
        failing()


def test_hypothesis_tests_keep_their_component():
    @TOY.covers("ball")
    @settings(max_examples=5, deadline=None)
    @given(x=st.integers(0, 3))
    def failing(x):
        assert x < 0

    with pytest.raises(ComponentFailure, match=r"\[toy/ball\]"):
        failing()


def test_unknown_component_is_rejected():
    with pytest.raises(ValueError, match="declares no component"):
        TOY.covers("spin")


def test_uncovered_lists_components_without_tests():
    module = types.ModuleType("fake_tests")

    @TOY.covers("paddle")
    def test_paddle():
        pass

    module.test_paddle = test_paddle
    assert TOY.uncovered(module) == ["ball"]
    assert TOY.uncovered(module, sys.modules[__name__]) == ["ball"]


def test_from_translation_toml(tmp_path):
    path = tmp_path / "translation.toml"
    path.write_text('env = "x"\n[[modules]]\nname = "m"\ncomponents = ["a", "b"]\n')
    declared = Components.from_translation_toml(path)
    assert (declared.env, declared.names) == ("x", ("a", "b"))


def test_assume_inside_a_component_discards_the_example_instead_of_failing():
    tried = []

    @settings(max_examples=30, deadline=None, database=None)
    @given(x=st.integers(-5, 5))
    @TOY.covers("ball")
    def test_positive_only(x):
        from hypothesis import assume

        assume(x > 0)
        tried.append(x)
        assert x > 0

    test_positive_only()  # before the fix: ComponentFailure "[toy/ball] UnsatisfiedAssumption"
    assert tried and all(x > 0 for x in tried)
    assert TOY.uncovered(types.SimpleNamespace(t=test_positive_only)) == ["paddle"]
