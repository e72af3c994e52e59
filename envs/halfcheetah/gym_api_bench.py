"""The benchmark's second table: env steps/s through Gymnasium's vector API, one Python `step` call per
batch of actions, as a Gymnasium training loop steps its envs (bench.py's first table times whole
rollouts inside one jitted call instead).

Three ways to step N HalfCheetahs from Python: our native vector env (`make_vec` of
envport/HalfCheetahJax-v0: one vmapped step), Gymnasium's SyncVectorEnv of N single JAX envs (one
jitted call each; up to batch 16, since each single env compiles its own step), and Gymnasium's
SyncVectorEnv of N HalfCheetah-v5 envs on MuJoCo C (envport/HalfCheetah-v0), the reference's own
Gymnasium form. Each rate is the best of three windows sharing `seconds`, after two warm-up steps;
`make_s` (making the vector env, its reset and first step, compile included) is in no rate.
"""

from __future__ import annotations

import itertools
import time
from typing import Callable, Optional

import numpy as np

from shared.benchmark import best_rate

SINGLE_JAX_LIMIT = 16  # SyncVectorEnv of single JAX envs: each compiles its own step
LABELS = {"native": "ours, native make_vec", "jax_sync": "ours, SyncVectorEnv of singles",
          "mujoco_sync": "HalfCheetah-v5 (MuJoCo C), SyncVectorEnv"}


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


def measure_gym_api(batches: list[int], seconds: float, status: Optional[Callable] = None) -> list[dict]:
    import gymnasium

    import envs.halfcheetah  # noqa: F401 - registers the ids

    makers = {
        "native": lambda batch: gymnasium.make_vec("envport/HalfCheetahJax-v0", num_envs=batch),
        "jax_sync": lambda batch: gymnasium.make_vec("envport/HalfCheetahJax-v0", num_envs=batch,
                                                     vectorization_mode="sync"),
        "mujoco_sync": lambda batch: gymnasium.make_vec("envport/HalfCheetah-v0", num_envs=batch,
                                                        vectorization_mode="sync"),
    }
    rows = []
    for batch in batches:
        for name, make in makers.items():
            if name == "jax_sync" and batch > SINGLE_JAX_LIMIT:
                continue
            if status:
                status(f"Gymnasium API, batch {batch}: {LABELS[name]}")
            rows.append(dict(_rate(lambda make=make, batch=batch: make(batch), batch, seconds),
                             backend=name, label=LABELS[name], batch=batch))
    return rows


def table_cells(rows: list[dict]) -> list[tuple[str, ...]]:
    """(batch, native, its make s, SyncVectorEnv of ours, MuJoCo SyncVectorEnv, native/MuJoCo) rows."""
    from shared.benchmark import format_rate

    cells = []
    for batch in dict.fromkeys(row["batch"] for row in rows):
        by_name = {row["backend"]: row for row in rows if row["batch"] == batch}
        native, mujoco = by_name["native"]["sps"], by_name["mujoco_sync"]["sps"]
        cells.append((str(batch), format_rate(native), f"{by_name['native']['make_s']:.1f}",
                      format_rate(by_name["jax_sync"]["sps"]) if "jax_sync" in by_name else "-",
                      format_rate(mujoco), f"{native / mujoco:.2f}x"))
    return cells
