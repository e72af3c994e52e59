"""shared/xla_cpu.py: the XLA_FLAGS it writes, and that XLA compiles a loop as one call with them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from shared import xla_cpu

OPTION = "xla_cpu_small_while_loop_byte_threshold"


NO_YNN = "--xla_cpu_experimental_ynn_fusion_type="


def test_flag_added_to_empty_and_to_other_flags():
    assert xla_cpu.with_whole_loops(None, 5).split() == [NO_YNN, f"--xla_backend_extra_options={OPTION}=5"]
    assert xla_cpu.with_whole_loops("--xla_cpu_enable_fast_math=false", 7).split() == [
        "--xla_cpu_enable_fast_math=false", NO_YNN, f"--xla_backend_extra_options={OPTION}=7"]


def test_existing_extra_options_are_kept_and_the_threshold_replaced():
    flags = f"--a=1 --xla_cpu_experimental_ynn_fusion_type=reduce --xla_backend_extra_options=xla_cpu_fold_all_constants=true,{OPTION}=3"
    assert xla_cpu.with_whole_loops(flags, 9).split() == [
        "--a=1", f"--xla_backend_extra_options=xla_cpu_fold_all_constants=true,{OPTION}=9", NO_YNN]


def test_enabled_is_read_from_the_flags():
    assert not xla_cpu.whole_loops_enabled("")
    assert not xla_cpu.whole_loops_enabled("--xla_backend_extra_options=xla_cpu_fold_all_constants=true")
    assert xla_cpu.whole_loops_enabled(xla_cpu.with_whole_loops("--a=1"))
    child = xla_cpu.environ_with_whole_loops({"XLA_FLAGS": "--a=1", "OTHER": "x"})
    assert child["OTHER"] == "x" and xla_cpu.whole_loops_enabled(child["XLA_FLAGS"])


def test_children_context_sets_and_restores(monkeypatch):
    monkeypatch.setenv("XLA_FLAGS", "--a=1")
    with xla_cpu.whole_loops_for_children():
        assert xla_cpu.whole_loops_enabled()
    assert os.environ["XLA_FLAGS"] == "--a=1"
    with xla_cpu.whole_loops_for_children(enabled=False):
        assert os.environ["XLA_FLAGS"] == "--a=1"
    monkeypatch.delenv("XLA_FLAGS")
    with pytest.raises(KeyError), xla_cpu.whole_loops_for_children():
        raise KeyError("restored on an error too")
    assert "XLA_FLAGS" not in os.environ


def test_enable_after_jax_started_raises():
    import jax.numpy as jnp

    jnp.ones(1).block_until_ready()  # the backend is up in this process now
    before = os.environ.get("XLA_FLAGS")
    with pytest.raises(RuntimeError, match="before the first JAX computation"):
        xla_cpu.enable_whole_loops()
    assert os.environ.get("XLA_FLAGS") == before


PROBE = textwrap.dedent("""
    import json, sys
    import jax, jax.numpy as jnp
    def body(i, x):
        return jnp.sin(x) * 0.5 + x[::-1] * 0.25
    hlo = jax.jit(lambda x: jax.lax.fori_loop(0, 100, body, x)).lower(jnp.ones(4096)).compile().as_text()
    print(json.dumps({"small_calls": hlo.count("xla_cpu_small_call"), "whiles": hlo.count(" while(")}))
""")


def _probe(environ: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE], env=environ, capture_output=True, text=True, timeout=300,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_16k_byte_loop_is_one_call_only_with_the_flag():
    environ = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    default = _probe(environ)
    hoisted = _probe(xla_cpu.environ_with_whole_loops(environ))
    assert default["small_calls"] == 0 and default["whiles"] >= 1  # 16 KiB per iteration: above 1,024
    assert hoisted["small_calls"] >= 1

