"""The tests' persistent compilation cache: where it goes, how it is turned off, trimming, and that a
second process loads the first one's program (same results, same program text) instead of
compiling it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from shared import jax_compile_cache as cc

REPO = Path(__file__).resolve().parents[1]


def test_points_jax_at_the_envport_cache(tmp_path):
    environ = {"ENVPORT_CACHE_DIR": str(tmp_path)}
    folder = cc.enable_for_tests(environ)
    assert folder == tmp_path / "jax-compile" and folder.is_dir()
    assert environ["JAX_COMPILATION_CACHE_DIR"] == str(folder)
    assert environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] == cc.MIN_COMPILE_SECONDS


def test_off_switch_and_an_explicit_folder_are_respected(tmp_path):
    off = {"ENVPORT_CACHE_DIR": str(tmp_path), cc.OFF: "0"}
    assert cc.enable_for_tests(off) is None and "JAX_COMPILATION_CACHE_DIR" not in off
    assert not (tmp_path / "jax-compile").exists()
    mine = {"ENVPORT_CACHE_DIR": str(tmp_path), "JAX_COMPILATION_CACHE_DIR": "/somewhere/else"}
    assert cc.enable_for_tests(mine) == Path("/somewhere/else")
    assert mine["JAX_COMPILATION_CACHE_DIR"] == "/somewhere/else"


def test_trim_deletes_the_oldest_entries_first(tmp_path):
    folder = tmp_path / "jax-compile"
    folder.mkdir()
    for age, name in enumerate(["new", "mid", "old"]):
        path = folder / name
        path.write_bytes(b"x" * 100)
        os.utime(path, (1_000_000 - age, 1_000_000 - age))
    assert cc.trim(folder, 250) == 1
    assert sorted(p.name for p in folder.iterdir()) == ["mid", "new"]
    assert cc.trim(folder, 250) == 0
    assert cc.trim(folder, 0) == 2 and not any(folder.iterdir())


_CHILD = textwrap.dedent("""
    import json
    import jax, jax.numpy as jnp
    from jax import monitoring
    hits = []
    monitoring.register_event_listener(lambda event, **kw: hits.append(event) if "cache_hits" in event else None)
    def body(i, x):
        return jnp.sin(x) * 1.0001 + jnp.cos(x * i)
    compiled = jax.jit(lambda x: jax.lax.fori_loop(0, 50, body, x)).lower(jnp.ones(256)).compile()
    out = compiled(jnp.linspace(0.0, 1.0, 256))
    print(json.dumps({"hits": len(hits), "out": [float(v) for v in out], "text": compiled.as_text()}))
""")


def _child(environ: dict) -> dict:
    done = subprocess.run([sys.executable, "-c", _CHILD], env=environ, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _program(text: str) -> list[str]:
    """The compiled program's instructions, without its source-location tables and metadata (a
    loaded program numbers those in another order)."""
    return [re.sub(r", metadata=\{[^}]*\}", "", line) for line in text.splitlines() if not re.match(r"^\d+ [{\"]", line)]


def test_a_second_process_loads_the_program_the_first_compiled(tmp_path):
    environ = {k: v for k, v in os.environ.items() if not k.startswith("JAX_")}
    environ.update({"ENVPORT_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(REPO)})
    folder = cc.enable_for_tests(environ)
    environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"  # cache even this small program
    first = _child(environ)
    assert first["hits"] == 0 and any(folder.iterdir()), "the first process stored its program"
    second = _child(environ)
    assert second["hits"] >= 1, "the second process loaded it"
    assert second["out"] == first["out"]
    # the whole-loops tests read the compiled program's text: a loaded program still has it
    assert _program(second["text"]) == _program(first["text"]) and " while(" in second["text"]
