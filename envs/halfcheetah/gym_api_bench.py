"""The benchmark's second table: env steps/s through Gymnasium's vector API, one Python `step` call per
batch of actions, as a Gymnasium training loop steps its envs (bench.py's first table times whole
rollouts inside one jitted call instead).

Three ways to step N HalfCheetahs from Python: our native vector env (`make_vec` of
envport/HalfCheetahJax-v0: one vmapped step), Gymnasium's SyncVectorEnv of N single JAX envs (one
jitted call each; up to batch 16, since each single env compiles its own step), and Gymnasium's
SyncVectorEnv of N HalfCheetah-v5 envs on MuJoCo C (envport/HalfCheetah-v0), the reference's own
Gymnasium form. Our native env is measured twice: in this process under XLA's default, and in a
spawned one whose XLA compiles whole loops as one function (shared/xla_cpu.py; a user opts in with
`enable_whole_loops()` before JAX starts). Each rate is the best of three windows sharing `seconds`,
after two warm-up steps; `make_s` (making the vector env, its reset and first step, compile
included) is in no rate.
"""

from __future__ import annotations

import itertools
import time
from typing import Callable, Optional

import numpy as np

from shared.benchmark import best_rate

SINGLE_JAX_LIMIT = 16  # SyncVectorEnv of single JAX envs: each compiles its own step
LABELS = {"native": "ours, native make_vec", "native_whole_loops": "ours, native make_vec, whole loops",
          "jax_sync": "ours, SyncVectorEnv of singles", "mujoco_sync": "HalfCheetah-v5 (MuJoCo C), SyncVectorEnv"}


def _rate(make: Callable, batch: int, seconds: float) -> dict:
    started = time.perf_counter()
    env = make()
    actions = np.random.default_rng(0).uniform(-1, 1, (64, batch, 6))
    env.reset(seed=0)
    env.step(actions[0])
    make_s = time.perf_counter() - started
    env.step(actions[1])
    calls = itertools.count()
    sps = best_rate(lambda: env.step(actions[next(calls) % 64]), batch, seconds)
    env.close()
    return {"sps": sps, "make_s": make_s}


def native_rates(batches: list[int], seconds: float) -> list[dict]:
    """The native vector env's rows (module level: a spawned process runs it for the whole-loop rows)."""
    import gymnasium

    import envs.halfcheetah  # noqa: F401 - registers the ids

    return [dict(_rate(lambda batch=batch: gymnasium.make_vec("envport/HalfCheetahJax-v0", num_envs=batch), batch,
                       seconds), batch=batch) for batch in batches]


def measure_gym_api(batches: list[int], seconds: float, status: Optional[Callable] = None) -> list[dict]:
    import gymnasium

    import envs.halfcheetah  # noqa: F401 - registers the ids
    from shared.benchmark import call_in_whole_loops_process

    if status:
        status("Gymnasium API: ours, native make_vec, whole loops (own process)")
    outcome, whole_loops = call_in_whole_loops_process(native_rates, (batches, seconds))
    rows = [dict(row, backend="native_whole_loops", label=LABELS["native_whole_loops"])
            for row in (whole_loops if outcome == "ok" else [])]
    if outcome != "ok":
        rows.append({"backend": "native_whole_loops", "label": LABELS["native_whole_loops"], "batch": None,
                     "sps": None, "status": str(whole_loops)})
    makers = {
        "native": lambda batch: gymnasium.make_vec("envport/HalfCheetahJax-v0", num_envs=batch),
        "jax_sync": lambda batch: gymnasium.make_vec("envport/HalfCheetahJax-v0", num_envs=batch,
                                                     vectorization_mode="sync"),
        "mujoco_sync": lambda batch: gymnasium.make_vec("envport/HalfCheetah-v0", num_envs=batch,
                                                        vectorization_mode="sync"),
    }
    for batch in batches:
        for name, make in makers.items():
            if name == "jax_sync" and batch > SINGLE_JAX_LIMIT:
                continue
            if status:
                status(f"Gymnasium API, batch {batch}: {LABELS[name]}")
            rows.append(dict(_rate(lambda make=make, batch=batch: make(batch), batch, seconds),
                             backend=name, label=LABELS[name], batch=batch))
    return rows


COLUMNS = ("batch", "ours, native make_vec", "its make + compile s", "same, whole loops",
           "ours, SyncVectorEnv of singles", "MuJoCo C, SyncVectorEnv", "native/MuJoCo", "whole loops/MuJoCo")


def table_cells(rows: list[dict]) -> list[tuple[str, ...]]:
    """One row of COLUMNS per batch ('-' where a backend was not measured at that batch)."""
    from shared.benchmark import format_rate

    def rate(row: Optional[dict]) -> str:
        return format_rate(row["sps"]) if row else "-"

    def ratio(row: Optional[dict], mujoco: dict) -> str:
        return f"{row['sps'] / mujoco['sps']:.2f}x" if row else "-"

    cells = []
    for batch in dict.fromkeys(row["batch"] for row in rows if row["batch"] is not None):
        by_name = {row["backend"]: row for row in rows if row["batch"] == batch}
        native, whole_loops, mujoco = by_name["native"], by_name.get("native_whole_loops"), by_name["mujoco_sync"]
        cells.append((str(batch), rate(native), f"{native['make_s']:.1f}", rate(whole_loops),
                      rate(by_name.get("jax_sync")), rate(mujoco), ratio(native, mujoco), ratio(whole_loops, mujoco)))
    return cells
