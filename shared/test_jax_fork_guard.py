"""shared/jax_fork_guard: a process knows whether it was forked from one whose JAX had started.

Each case runs in a fresh interpreter, so that this test process's own JAX does not decide it."""

import subprocess
import sys
from pathlib import Path

import pytest

import shared.jax_fork_guard  # noqa: F401  (what the child scripts import: Pants infers it from here)

ROOT = Path(__file__).resolve().parents[1]

_FORKS = """
import multiprocessing as mp
from shared.jax_fork_guard import forked_from_jax, refuse_if_forked_from_jax

def report(queue):
    try:
        refuse_if_forked_from_jax("the test env")
        queue.put(("fine", forked_from_jax()))
    except RuntimeError as error:
        queue.put(("refused: " + str(error), forked_from_jax()))

def grandchild(queue):
    inner = mp.get_context("fork").Process(target=report, args=(queue,))
    inner.start()
    inner.join()

def run(context, target=report):
    ctx = mp.get_context(context)
    queue = ctx.Queue()
    process = ctx.Process(target=target, args=(queue,))
    process.start()
    answer = queue.get(timeout=120)
    process.join(timeout=120)
    return answer

if __name__ == "__main__":
    results = {"before jax": run("fork")}
    import jax
    results["jax imported"] = run("fork")
    jax.numpy.ones(2).block_until_ready()
    results["jax started"] = run("fork")
    results["grandchild"] = run("fork", grandchild)
    results["spawned"] = run("spawn")
    results["parent itself"] = ("fine", forked_from_jax())
    for name, (verdict, flag) in results.items():
        print(f"{name}|{verdict}|{flag}")
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    script = tmp_path_factory.mktemp("fork") / "forks.py"  # a file: spawn re-imports the main module
    script.write_text(_FORKS)
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "JAX_PLATFORMS": "cpu"})
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line.split("|") for line in done.stdout.strip().splitlines()]
    return {name: (verdict, flag == "True") for name, verdict, flag in rows}


@pytest.mark.parametrize("case", ["before jax", "jax imported", "spawned", "parent itself"])
def test_a_process_that_may_run_jax_is_let_through(results, case):
    assert results[case] == ("fine", False)


@pytest.mark.parametrize("case", ["jax started", "grandchild"])
def test_a_fork_after_jax_started_is_refused_with_what_to_do(results, case):
    verdict, flag = results[case]
    assert flag
    assert verdict.startswith("refused: the test env runs JAX")
    assert 'vector_kwargs={"context": "spawn"}' in verdict and 'vectorization_mode="sync"' in verdict
