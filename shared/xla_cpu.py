"""XLA CPU setting that makes small batches fast: whole while loops compiled as one function.

XLA's CPU runtime runs a compiled program as a sequence of thunks (one per fused kernel, copy,
loop, ...), each with a fixed dispatch cost of tens of nanoseconds to microseconds. At batch 1 a
physics step is thousands of tiny kernels, so that cost is nearly all of the time. A while loop
(`lax.scan`, `lax.while_loop`) whose body touches fewer bytes than the backend option
`xla_cpu_small_while_loop_byte_threshold` (default 1,024) is instead compiled, body and all, into a
single function called once (XLA's SmallWhileLoopHoistingPass). Raising the threshold makes a
whole small-batch rollout one such function: HalfCheetah at batch 1 ran 3.3K -> 26K env steps/s
(measured 2026-12-01 on this 2-core VM). At large batches the hoisted loop gives up XLA's running
of independent kernels on several threads (a hoisted loop runs on one core) and can be slower;
loops holding custom calls (LAPACK), scatters or sorts are never hoisted. Training loops gain only
when tiny: Pong's PPO `make_train` ran 1.2-2x faster with it at one env but 35-45% slower at 64 envs (the
update's matrix products then run single-threaded; 2026-12-03, AMD EPYC VM). So benchmarks measure
both settings and keep the faster.

The option is read when a program is compiled, from the XLA_FLAGS of the process at the moment
JAX starts its CPU backend: set it before the first JAX computation, or in a child's environment.
Results are the same computation compiled by another emitter: they can differ in the last bits
(HalfCheetah float64: 3e-17 after one step), never more than rounding.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path

WHOLE_LOOP_BYTES = 1 << 30
_OPTION = "xla_cpu_small_while_loop_byte_threshold"
_EXTRA = "--xla_backend_extra_options="
# XLA forms YNNPACK "custom" fusions for large reductions (HalfCheetah at batch 4096); a hoisted
# loop cannot hold one and fails to compile ("Fusion kind not implemented on CPU"). With whole
# loops they are switched off (an empty list of fusion types; jaxlib 0.9.2's flag name).
_NO_YNN_FUSIONS = "--xla_cpu_experimental_ynn_fusion_type="


def with_whole_loops(xla_flags: str | None, threshold: int = WHOLE_LOOP_BYTES) -> str:
    """`xla_flags` (an XLA_FLAGS value) with the loop threshold set and YNNPACK fusions off, other
    options kept."""
    flags = [flag for flag in (xla_flags or "").split() if not flag.startswith(_NO_YNN_FUSIONS)] + [_NO_YNN_FUSIONS]
    option = f"{_OPTION}={threshold}"
    for index, flag in enumerate(flags):
        if flag.startswith(_EXTRA):
            kept = [entry for entry in flag[len(_EXTRA):].split(",") if entry and not entry.startswith(_OPTION + "=")]
            flags[index] = _EXTRA + ",".join(kept + [option])
            return " ".join(flags)
    return " ".join(flags + [_EXTRA + option])


def environ_with_whole_loops(environ: Mapping[str, str] | None = None, threshold: int = WHOLE_LOOP_BYTES) -> dict:
    """A copy of `environ` (default os.environ) for a child process that compiles whole loops."""
    child = dict(os.environ if environ is None else environ)
    child["XLA_FLAGS"] = with_whole_loops(child.get("XLA_FLAGS"), threshold)
    return child


@contextlib.contextmanager
def whole_loops_for_children(enabled: bool = True, threshold: int = WHOLE_LOOP_BYTES) -> Iterator[None]:
    """While open, this process's XLA_FLAGS ask for whole loops, so that a process spawned inside
    (multiprocessing's spawn copies the environment at start) compiles them; restored on exit.
    This process's own XLA keeps the flags it started with."""
    saved = os.environ.get("XLA_FLAGS")
    if enabled:
        os.environ["XLA_FLAGS"] = with_whole_loops(saved, threshold)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("XLA_FLAGS", None)
        else:
            os.environ["XLA_FLAGS"] = saved


def whole_loops_enabled(xla_flags: str | None = None) -> bool:
    """Whether `xla_flags` (default this process's XLA_FLAGS) raises the loop threshold."""
    flags = os.environ.get("XLA_FLAGS", "") if xla_flags is None else xla_flags
    return any(flag.startswith(_EXTRA) and f"{_OPTION}=" in flag for flag in flags.split())


def enable_whole_loops(threshold: int = WHOLE_LOOP_BYTES) -> None:
    """Sets this process's XLA_FLAGS to compile whole loops. It must run before JAX starts its
    backends (the flags are read once then); afterwards it raises instead of silently doing nothing."""
    if "jax" in sys.modules:
        from jax._src import xla_bridge

        if xla_bridge.backends_are_initialized():
            raise RuntimeError("enable_whole_loops() must run before the first JAX computation of the process: "
                               "XLA reads XLA_FLAGS when its backend starts (set XLA_FLAGS in the environment "
                               f"instead: {with_whole_loops(os.environ.get('XLA_FLAGS'), threshold)!r})")
    os.environ["XLA_FLAGS"] = with_whole_loops(os.environ.get("XLA_FLAGS"), threshold)


_RUN_AND_SAVE = textwrap.dedent("""
    import json as _json, sys as _sys
    import numpy as _np
    _leaves, _calls = run(*[int(a) for a in _sys.argv[2:]])
    _np.savez(_sys.argv[1], *_leaves)
    print(_json.dumps({"small_calls": _calls}))
""")


def run_with_whole_loops(source: str, *int_args: int, timeout_s: float = 1200.0) -> tuple[list, int]:
    """Runs `source`'s `run(*int_args) -> (numpy leaves, small-call count)` in a fresh Python whose
    XLA compiles whole loops, and returns what it returned. For tests that check a whole-loops build
    against the default one: the caller runs the same `source` in its own process. Raises
    AssertionError with the child's stderr tail if it fails."""
    import numpy as np

    repo = Path(__file__).resolve().parents[1]
    environ = environ_with_whole_loops()
    environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(repo), environ.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "leaves.npz"
        done = subprocess.run([sys.executable, "-c", source + _RUN_AND_SAVE, str(out), *map(str, int_args)],
                              env=environ, capture_output=True, text=True, timeout=timeout_s)
        assert done.returncode == 0, done.stderr[-3000:]
        calls = json.loads(done.stdout.strip().splitlines()[-1])["small_calls"]
        with np.load(out) as saved:
            return [saved[f"arr_{i}"] for i in range(len(saved.files))], calls
