"""Cheaper XLA compiles for the test tiers: LLVM's optimisations off.

Most of the default test tier's time is XLA compiling the engines' step functions for the CPU
(minutes each on 2 cores), and most of a compile is LLVM optimising the machine code of the fused
kernels. The tests run those programs for a few thousand steps, not millions: unoptimised code
costs them far less than optimising it. Measured on the 2-core AMD VM (2026-12-02): PokeJAX's
one-battle step compiled in 80 s instead of 118 s, TCGJax's engine step in 24 s instead of 34 s, with
identical outputs.

Only for the bit-exact discrete engines (PokeJAX's and TCGJax's conftest.py call it): the options
act after XLA's own passes, on how LLVM turns the same fused HLO program into machine code
(`xla_backend_optimization_level=0`: no LLVM optimisation pipeline;
`xla_llvm_disable_expensive_passes`). Integer and boolean arithmetic (the engines, their PRNGs,
every bit-exact comparison) is the same at any optimisation level (a test checks one program
both ways). Float code is not: without LLVM's vectoriser the last bits move, and HalfCheetah's
tests that a vmapped step equals the single-env step bit for bit failed under it (measured
2026-12-02), so the float envs' and the shared libraries' tests compile as the benches do. The
benches never use it: they report the speed of the code users run.

`ENVPORT_FAST_COMPILE=0` turns it off (tests then compile as the benches do).
"""

from __future__ import annotations

from typing import MutableMapping

FLAGS = ("--xla_backend_optimization_level=0", "--xla_llvm_disable_expensive_passes=true")
OFF = "ENVPORT_FAST_COMPILE"


def enable_for_tests(environ: MutableMapping[str, str]) -> bool:
    """Adds FLAGS to XLA_FLAGS (others kept; a flag already given, at any value, is left as given).
    Must run before JAX starts its CPU backend; children inherit it. Returns whether it is on."""
    if environ.get(OFF, "1") == "0":
        return False
    flags = (environ.get("XLA_FLAGS") or "").split()
    given = {flag.split("=", 1)[0] for flag in flags}
    flags += [flag for flag in FLAGS if flag.split("=", 1)[0] not in given]
    environ["XLA_FLAGS"] = " ".join(flags)
    return True
