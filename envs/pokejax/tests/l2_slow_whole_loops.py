"""The engine compiled with whole loops as one function (shared/xla_cpu.py; the bench's "whole
loops" rows) plays the same battles bit for bit: the bench's random play (16 battles, 256 battle
steps with random legal choices drawn inside the scan, finished battles restarted) in a fresh
process with that setting equals the same call compiled with XLA's defaults here, every field of
every battle and the count of decisions. Tag `slow` (two compiles of the engine, about 2 minutes)."""

from __future__ import annotations

import textwrap

import jax
import numpy as np
import pytest

from envs.pokejax import bench
from shared.xla_cpu import run_with_whole_loops

pytestmark = pytest.mark.slow

BATTLES, STEPS = 16, 256

PLAY = textwrap.dedent("""
    import jax, numpy as np
    from envs.pokejax import bench

    def run(battles, steps):
        start, play = bench.make_random_play("sodium", battles, steps, bench.CUSTOM_GAME)
        first = start(jax.random.split(jax.random.PRNGKey(0), battles))
        compiled = play.lower(first, jax.random.PRNGKey(1)).compile()
        final, decisions = compiled(first, jax.random.PRNGKey(1))
        leaves = [np.asarray(x) for x in jax.tree.leaves((first, final, decisions))]
        return leaves, compiled.as_text().count("xla_cpu_small_call")
""")


def test_whole_loop_build_plays_the_same_battles_bit_for_bit():
    namespace: dict = {}
    exec(PLAY, namespace)  # the same source in both processes
    expected, default_calls = namespace["run"](BATTLES, STEPS)
    whole, whole_calls = run_with_whole_loops(PLAY, BATTLES, STEPS)
    # XLA's default hoists only loops under 1 KB (the PRNG's); the battle scan is hoisted only here
    assert whole_calls > default_calls, f"nothing more was hoisted ({whole_calls} vs {default_calls} loops)"
    assert len(whole) == len(expected)
    half = (len(expected) - 1) // 2
    first, final, decisions = expected[:half], expected[half:-1], expected[-1]
    assert int(decisions) > BATTLES * STEPS, "too few decisions: the battles did not run"
    assert sum(not np.array_equal(a, b) for a, b in zip(first, final, strict=True)) > half // 2, (
        "the battles barely changed: the comparison would be vacuous")
    for index, (a, b) in enumerate(zip(expected, whole, strict=True)):
        assert a.dtype == b.dtype and a.shape == b.shape, f"leaf {index}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
        assert np.array_equal(a, b), f"leaf {index}: {np.count_nonzero(a != b)} values differ"


# the child imports these; named here so that Pants ships them with the test
_ = (jax, bench)
