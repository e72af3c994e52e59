"""The accelerator run: the JAX engines on the device's default backend (the GPU where one is lent),
beside the references that can run on that machine's CPU, in one process and one call.

    python -m tools.device_bench.measure --out DIR [--budget-s 480] [--quick] [--only pokejax,pong]
    ./pants run tools/device_bench:measure -- --quick       # a rehearsal on this machine

Each measurement calls the env's own bench function (envs/<env>/bench.py), so the figures are the
benches' figures on other hardware. Measurements run in a fixed order, most wanted first (each open
issue's first figures: PokeJAX and TCGJax against their 1,000x and 50x targets, then Pong; then
second batches, HalfCheetah, and PPO that compiles for minutes), and each is skipped when the time left
is below what it needs, so that one device call of a known length always ends with a file:
`device_bench.json` in --out is rewritten after every measurement. A measurement that fails records
its error and the run goes on.

Ratios are taken only between rates measured in this run. Showdown needs Node, which the device
machine lacks, so PokeJAX's rows carry no ratio of their own; the JSON names the CPU bench's
committed Showdown figure beside them, marked as from another machine and day.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Callable

# --budget-s counts from here: the imports, JAX's start on the GPU and the machine record are device
# time too (run.sh's pip install before this process is not counted)
PROCESS_STARTED = time.monotonic()

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from shared.benchmark import format_rate  # noqa: E402


@dataclasses.dataclass(frozen=True)
class Measurement:
    env: str
    name: str
    needs_s: float  # the time left below which it is skipped: compile plus timing, with a margin
    run: Callable[[], dict]
    # 0: each open issue's first figures, run before anything else (`plan` sorts stably by it), so
    # that a budget cut short by slow compiles still leaves a figure of each
    priority: int = 0


def _pong(quick: bool, seconds: float) -> list[Measurement]:
    def jax_random(batch):
        def run():
            from envs.pong import bench

            sps, compile_s = bench.jax_random_sps(batch, seconds, 1)
            return {"backend": "JAX", "batch": batch, "steps_per_s": sps, "compile_s": compile_s}
        return run

    def c_random(envs_per_process, processes):
        def run():
            from envs.pong import bench
            from envs.pong.reference.build import build_library

            # fails at once without a compiler or the carried library; the bench's worker processes
            # would each die of it and leave the parent waiting out its queue timeout (150 s)
            build_library()

            sps = bench.c_random_sps(envs_per_process * processes, seconds, 1, processes)
            return {"backend": f"C, {processes} process(es)", "batch": envs_per_process * processes,
                    "steps_per_s": sps}
        return run

    def ppo(side, num_envs, updates, on_host_cpu=False):
        def run():
            import contextlib

            import jax

            from envs.pong import bench

            measure = bench.jax_ppo_sps if side == "JAX" else bench.c_ppo_sps
            # the host loop's policy and update on the CPU too: one accelerator call per env step
            # may cost more than it saves, and the reference side runs in its fastest configuration
            where = jax.default_device(jax.devices("cpu")[0]) if on_host_cpu else contextlib.nullcontext()
            with where:
                sps, compile_s = measure(num_envs, bench.ppo_updates_for(num_envs, updates), 1)
            return {"backend": f"PPO on {side}", "envs": num_envs, "sps": sps, "compile_s": compile_s,
                    "policy_on": "host CPU" if on_host_cpu else jax.default_backend()}
        return run

    cpus = os.cpu_count() or 1
    if quick:
        return [Measurement("pong", "JAX random, batch 64", 30, jax_random(64)),
                Measurement("pong", "C random, 1 process", 20, c_random(64, 1)),
                Measurement("pong", "C random, 2 processes", 30, c_random(64, 2)),
                Measurement("pong", "PPO on JAX, 8 envs", 60, ppo("JAX", 8, 1)),
                Measurement("pong", "PPO on C, its policy on the CPU", 60, ppo("C", 8, 1, on_host_cpu=True))]
    return [
        Measurement("pong", "JAX random, batch 65,536", 40, jax_random(65536)),
        Measurement("pong", "JAX random, batch 1,048,576", 60, jax_random(1 << 20), priority=1),
        Measurement("pong", "C random, 1 process", 30, c_random(1024, 1)),
        Measurement("pong", f"C random, {cpus} processes", 40, c_random(1024, cpus)),
        Measurement("pong", "PPO on JAX, 64 envs", 60, ppo("JAX", 64, 3)),
        Measurement("pong", "PPO on JAX, 4,096 envs", 60, ppo("JAX", 4096, 3), priority=1),
        Measurement("pong", "PPO on C (host loop), 64 envs", 60, ppo("C", 64, 3)),
        Measurement("pong", "PPO on C, its policy on the CPU", 60, ppo("C", 64, 3, on_host_cpu=True)),
    ]


def _tcgjax(quick: bool, seconds: float) -> list[Measurement]:
    def jax_random(batch):
        def run():
            from envs.tcgjax import bench

            return {"backend": "TCGJax (JAX)", "batch": batch, **bench.jax_random(batch, seconds)}
        return run

    def reference(processes):
        def run():
            from envs.tcgjax import bench

            sps = (bench.reference_random(seconds) if processes == 1
                   else bench.reference_random_processes(seconds, processes))
            return {"backend": f"Python reference, {processes} process(es)", "batch": processes, "steps_per_s": sps}
        return run

    def ppo(num_envs):
        def run():
            from envs.tcgjax import bench

            return {"backend": "PPO on TCGJax (make_train)", "envs": num_envs, **bench.jax_ppo_sps(num_envs, 3)}
        return run

    def reference_ppo(num_envs):
        def run():
            from envs.tcgjax import bench

            return {"backend": "PPO on the Python reference (host loop)", "envs": num_envs,
                    **bench.reference_ppo_sps(num_envs, 3)}
        return run

    cpus = os.cpu_count() or 1
    if quick:
        return [Measurement("tcgjax", "reference, 1 process", 20, reference(1)),
                Measurement("tcgjax", "JAX random, batch 64", 150, jax_random(64))]
    return [
        Measurement("tcgjax", "reference, 1 process", 20, reference(1)),
        Measurement("tcgjax", f"reference, {cpus} processes", 40, reference(cpus)),
        Measurement("tcgjax", "JAX random, batch 131,072", 150, jax_random(131072)),
        Measurement("tcgjax", "JAX random, batch 16,384", 150, jax_random(16384), priority=1),
        # make_train compiles for minutes (180 s on the 2-core CPU): last, when the budget allows
        Measurement("tcgjax", "PPO on the reference, 8 envs", 60, reference_ppo(8), priority=2),
        Measurement("tcgjax", "PPO on TCGJax, 16,384 envs", 300, ppo(16384), priority=2),
    ]


def _pokejax(quick: bool, seconds: float) -> list[Measurement]:
    def jax_random(batch):
        def run():
            from envs.pokejax import bench

            return {"backend": "PokeJAX (sodium PRNG)", "batch": batch,
                    **bench.pokejax_random("sodium", batch, seconds, bench.CUSTOM_GAME)}
        return run

    def ppo(num_envs):
        def run():
            from envs.pokejax import bench

            return {"backend": "PPO on PokeJAX (sodium, make_train)", "envs": num_envs,
                    **bench.pokejax_ppo_sps("sodium", num_envs, 3, bench.CUSTOM_GAME)}
        return run

    if quick:
        return [Measurement("pokejax", "JAX random, batch 64", 150, jax_random(64))]
    return [
        Measurement("pokejax", "JAX random, batch 131,072", 150, jax_random(131072)),
        Measurement("pokejax", "JAX random, batch 16,384", 150, jax_random(16384), priority=1),
        Measurement("pokejax", "PPO on PokeJAX, 16,384 envs", 240, ppo(16384), priority=2),
    ]


def _halfcheetah(quick: bool, seconds: float) -> list[Measurement]:
    names = {"ours": "ours (JAX)", "mjx": "MJX"}

    def jax_row(backend, batch):
        def run():
            from envs.halfcheetah import bench

            # the bench's own worker process, with its time limits on set-up, compile and first call
            row = bench.jax_sps(backend, batch, seconds, jit_limit=300, call_limit=120)
            if row["status"] != "ok":
                raise RuntimeError(row["status"])
            return {"backend": names[backend], "batch": batch, "steps_per_s": row["sps"], "compile_s": row["jit_s"]}
        return run

    def mujoco_row(batch, threads):
        def run():
            from envs.halfcheetah import bench

            return {"backend": f"MuJoCo C, {threads} thread(s)", "batch": batch,
                    "steps_per_s": bench.mujoco_c_sps(batch, threads, seconds)["sps"]}
        return run

    cpus = os.cpu_count() or 1
    if quick:
        return [Measurement("halfcheetah", "ours, batch 16", 120, jax_row("ours", 16)),
                Measurement("halfcheetah", "MJX, batch 16", 120, jax_row("mjx", 16)),
                Measurement("halfcheetah", "MuJoCo C, 1 thread", 30, mujoco_row(16, 1))]
    # HalfCheetah's issue is resolved: its GPU figures come after every open issue's first figures
    return [
        Measurement("halfcheetah", "ours, batch 65,536", 200, jax_row("ours", 65536), priority=1),
        Measurement("halfcheetah", "MJX, batch 65,536", 200, jax_row("mjx", 65536), priority=1),
        Measurement("halfcheetah", f"MuJoCo C, {cpus} threads", 40, mujoco_row(4096, cpus), priority=1),
        Measurement("halfcheetah", "ours, batch 4,096", 200, jax_row("ours", 4096), priority=2),
        Measurement("halfcheetah", "MJX, batch 4,096", 200, jax_row("mjx", 4096), priority=2),
    ]


SECTIONS = {"pokejax": _pokejax, "tcgjax": _tcgjax, "pong": _pong, "halfcheetah": _halfcheetah}


def plan(sections: list[str], quick: bool, seconds: float) -> list[Measurement]:
    """The sections' measurements, every env's first figures before any env's second (a stable sort)."""
    measurements = [m for name in sections for m in SECTIONS[name](quick, seconds)]
    return sorted(measurements, key=lambda measurement: measurement.priority)


def committed_cpu_showdown() -> dict | None:
    """The CPU bench's committed Showdown in-process row (envs/pokejax/bench.json), for orientation."""
    path = REPO / "envs" / "pokejax" / "bench.json"
    try:
        rows = json.loads(path.read_text())["rows"]
    except (OSError, ValueError, KeyError):
        return None
    for row in rows:
        if row.get("backend", "").startswith("Showdown in-process"):
            return {"decisions_per_s": row["decisions_per_s"], "source": str(path.relative_to(REPO)),
                    "note": "measured on the 2-core CPU machine by the CPU bench, not in this run"}
    return None


def ratios(results: list[dict]) -> dict:
    """JAX's best rate over the best reference rate of the same run, per env (where both exist)."""

    def rates(env, key, backend_test):
        return [row[key] for row in results if row.get("env") == env and row.get("status", "ok") == "ok"
                and key in row and backend_test(row.get("backend", ""))]

    out = {}
    for env, jax_name, reference_prefix in (("pong", "JAX", "C,"), ("tcgjax", "TCGJax (JAX)", "Python reference")):
        jax_rates = rates(env, "steps_per_s", jax_name.__eq__)
        reference_rates = rates(env, "steps_per_s", lambda backend, prefix=reference_prefix: backend.startswith(prefix))
        if jax_rates and reference_rates:
            out[f"{env}_random_best_jax_over_best_reference"] = max(jax_rates) / max(reference_rates)
    ours = rates("halfcheetah", "steps_per_s", "ours (JAX)".__eq__)
    for name, prefix in (("mujoco_c", "MuJoCo C"), ("mjx", "MJX")):
        others = rates("halfcheetah", "steps_per_s", lambda backend, prefix=prefix: backend.startswith(prefix))
        if ours and others:
            out[f"halfcheetah_best_ours_over_best_{name}"] = max(ours) / max(others)
    jax_ppo = rates("pong", "sps", "PPO on JAX".__eq__)
    c_ppo = rates("pong", "sps", "PPO on C".__eq__)
    if jax_ppo and c_ppo:
        out["pong_ppo_best_jax_over_c"] = max(jax_ppo) / max(c_ppo)
    tcg_ppo = rates("tcgjax", "sps", "PPO on TCGJax (make_train)".__eq__)
    tcg_reference_ppo = rates("tcgjax", "sps", "PPO on the Python reference (host loop)".__eq__)
    if tcg_ppo and tcg_reference_ppo:
        out["tcgjax_ppo_best_jax_over_reference"] = max(tcg_ppo) / max(tcg_reference_ppo)
    return out


def machine() -> dict:
    import jax

    from shared.benchmark import machine as cpu_machine

    return {**cpu_machine(), "jax": jax.__version__, "jax_backend": jax.default_backend(),
            "jax_devices": [str(d) for d in jax.devices()]}


def write(record: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    partial = out / "device_bench.json.partial"
    # (default=str: a value JSON cannot hold must not end the run after minutes of device time)
    partial.write_text(json.dumps(record, indent=1, default=str))
    partial.replace(out / "device_bench.json")


def rate_cell(row: dict) -> str:
    if "decisions_per_s" in row:
        return f"{format_rate(row['decisions_per_s'])} decisions/s"
    if "steps_per_s" in row:
        return f"{format_rate(row['steps_per_s'])} steps/s"
    return f"{format_rate(row['sps'])} agent steps/s"


def run(measurements: list[Measurement], budget_s: float, out: Path, record: dict,
        clock: Callable[[], float] = time.monotonic) -> dict:
    started = clock()
    record.setdefault("rows", [])
    for measurement in measurements:
        left = budget_s - (clock() - started)
        row = {"env": measurement.env, "measurement": measurement.name}
        if left < measurement.needs_s:
            row["status"] = f"skipped: {left:.0f} s of the budget left, it needs {measurement.needs_s:.0f} s"
        else:
            began = clock()
            try:
                row.update(measurement.run())
                row["status"] = "ok"
            except Exception as error:  # one failure must not cost the rest of a device call
                row["status"] = f"failed: {type(error).__name__}: {error}"
                row["traceback"] = traceback.format_exc()[-2000:]
            row["wall_s"] = round(clock() - began, 1)
        record["rows"].append(row)
        record["ratios_in_this_run"] = ratios(record["rows"])
        write(record, out)
        outcome = rate_cell(row) if row["status"] == "ok" else row["status"].splitlines()[0][:160]
        print(f"[{clock() - started:6.0f} s] {measurement.env:11s} {measurement.name:34s} {outcome}", flush=True)
    return record


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("bench-results") / "device",
                        help="folder for device_bench.json (default bench-results/device)")
    parser.add_argument("--budget-s", type=float, default=480.0,
                        help="stop starting measurements once less than each one needs is left (default 480)")
    parser.add_argument("--seconds", type=float, default=None, help="timing per measurement (default 3, quick 0.5)")
    parser.add_argument("--quick", action="store_true", help="small batches: a check of the run itself, on any machine")
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated, from {', '.join(SECTIONS)}")
    args = parser.parse_args(argv)
    unknown = set(args.only.split(",")) - set(SECTIONS)
    if unknown:
        parser.error(f"--only: unknown section(s) {', '.join(sorted(unknown))}; choose from {', '.join(SECTIONS)}")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    seconds = args.seconds or (0.5 if args.quick else 3.0)
    measurements = plan(args.only.split(","), args.quick, seconds)
    record = {"benchmark": "device", "started": datetime.datetime.now(datetime.UTC).isoformat(),
              "budget_s": args.budget_s, "seconds_per_measurement": seconds, "quick": args.quick,
              "machine": machine(), "showdown_cpu_bench": committed_cpu_showdown()}
    print(f"device bench: {record['machine']['jax_backend']} {record['machine']['jax_devices']}, "
          f"{record['machine']['cpus']} CPUs, budget {args.budget_s:.0f} s", flush=True)
    run(measurements, args.budget_s - (time.monotonic() - PROCESS_STARTED), args.out, record)
    print(json.dumps(record["ratios_in_this_run"], indent=1))
    print(f"wrote {args.out / 'device_bench.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
