"""Every component that translation.toml declares for Pong is pinned by at least one L1 test."""

from envs.pong.tests import l1_components, l1_glibc_random
from envs.pong.tests.components import PONG


def test_every_declared_component_has_a_test():
    assert PONG.uncovered(l1_components, l1_glibc_random) == []
    assert len(PONG.names) == 8
