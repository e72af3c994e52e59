"""Every component translation.toml declares has at least one L1/L2 test."""

from envs.halfcheetah.tests import l1_constraints, l1_smooth, l2_step
from envs.halfcheetah.tests.harness import CHEETAH


def test_every_declared_component_is_covered():
    assert CHEETAH.uncovered(l1_smooth, l1_constraints, l2_step) == []
