"""The tests' cheaper XLA compiles: the flags it adds, the off switch, which tests' processes run
with them, and that an integer program compiled with them computes what the default compile does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from shared import jax_fast_compile as fc

REPO = Path(__file__).resolve().parents[1]


def test_adds_the_flags_and_keeps_the_others():
    environ = {"XLA_FLAGS": "--xla_cpu_foo=1"}
    assert fc.enable_for_tests(environ)
    assert environ["XLA_FLAGS"].split() == ["--xla_cpu_foo=1", *fc.FLAGS]
    fc.enable_for_tests(environ)  # a second call adds nothing
    assert environ["XLA_FLAGS"].split() == ["--xla_cpu_foo=1", *fc.FLAGS]


def test_a_flag_already_given_is_left_as_given_and_the_off_switch_is_respected():
    mine = {"XLA_FLAGS": "--xla_backend_optimization_level=3"}
    fc.enable_for_tests(mine)
    assert mine["XLA_FLAGS"].split() == ["--xla_backend_optimization_level=3", fc.FLAGS[1]]
    off = {fc.OFF: "0", "XLA_FLAGS": "--a=1"}
    assert not fc.enable_for_tests(off) and off["XLA_FLAGS"] == "--a=1"


def test_the_discrete_engines_tests_compile_with_them_and_the_others_do_not():
    """Their conftest.py files set the flags (importing one does it, as pytest does before the
    tests start JAX); the root conftest does not (HalfCheetah's float tests compile as the benches
    do)."""
    environ = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", fc.OFF)}
    environ["PYTHONPATH"] = str(REPO)
    for module, expected in (("envs.tcgjax.tests.conftest", True), ("envs.pokejax.tests.conftest", True),
                             ("conftest", False)):
        code = f"import os, {module}; print(os.environ.get('XLA_FLAGS', ''))"
        flags = subprocess.run([sys.executable, "-c", code], env=environ, cwd=REPO, capture_output=True,
                               text=True, check=True).stdout.split()
        assert all(flag in flags for flag in fc.FLAGS) == expected, (module, flags)


def test_an_integer_program_is_the_same_at_either_optimisation_level():
    """Per-compile options, so both compiles happen in this process: a PRNG-style mixing loop with
    wrapping multiplies, shifts, a data-dependent select and a reduction, over many words."""
    import jax
    import jax.numpy as jnp

    def mix(words):
        def body(i, x):
            x = x * jnp.uint32(0x9E3779B1) + jnp.uint32(i)
            x = x ^ (x >> 15)
            x = jnp.where((x & 1) == 1, x * jnp.uint32(3), x >> 1)
            return x + jnp.cumsum(x) % jnp.uint32(65521)
        return jax.lax.fori_loop(0, 64, body, words)

    lowered = jax.jit(mix).lower(jnp.zeros(4096, jnp.uint32))
    words = jnp.arange(4096, dtype=jnp.uint32) * jnp.uint32(2654435761)
    full = np.asarray(lowered.compile(compiler_options={"xla_backend_optimization_level": 3,
                                                        "xla_llvm_disable_expensive_passes": False})(words))
    cheap = np.asarray(lowered.compile(compiler_options={"xla_backend_optimization_level": 0,
                                                         "xla_llvm_disable_expensive_passes": True})(words))
    assert len(np.unique(full)) > 4000  # the program did mix its input
    np.testing.assert_array_equal(full, cheap)
