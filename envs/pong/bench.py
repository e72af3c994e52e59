"""Pong benchmark: PufferLib's C Pong against the JAX translation, measured side by side in one run.

    ./pants run envs/pong:bench                   # full table (about 6 minutes on 2 cores)
    ./pants run envs/pong:bench -- --quick        # smaller batches, shorter timings
    ./pants run envs/pong:bench -- --out FILE     # where the JSON goes (default bench-results/pong.json)
    ./pants run envs/pong:bench -- --plot-from FILE.json   # redraw a saved run's plot, measure nothing

Rows: random-action steps per second for the C reference in one process and in two processes (each
stepping half the envs in one C call per step, as PufferLib does, from a cache of pre-drawn actions
like PufferLib's own test_performance), and for the JAX env (vmapped, whole rollout in one
lax.scan, actions drawn inside the scan), under XLA's default settings in this process and with
whole loops compiled as one function (shared/xla_cpu.py) in a spawned one: the faster counts; then
PPO end to end (rollout + GAE + 4 epochs of
minibatch updates, same network and losses) on the JAX env with make_train and on the C env with
the host loop, each under both XLA settings too (the faster counts, for each side alike), each timed
over at least MIN_PPO_SAMPLES agent steps. Compile time is its own column and is not in any SPS figure. Each random-action
figure is the best of three timing windows (same rule for both backends). Ratios are JAX / C
from this run. This is a benchmark, not a test: nothing here asserts a speed.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__" and not __package__:
    # Run as a file, its folder would come first on sys.path and envs/pong/jax would shadow the jax
    # library; put the repository root there instead.
    sys.path[0] = str(Path(__file__).resolve().parents[2])

import argparse
import json
import multiprocessing
import os
import time

import numpy as np

from shared.bench_plot import add_plot_from_option, plot_beside, redraw
from shared.benchmark import best_rate, call_in_whole_loops_process, format_rate
from shared.benchmark import machine as shared_machine
from shared.cli_args import batch_list, count_at_least, positive_seconds


def _c_worker(num_envs: int, seconds: float, frameskip: int, queue) -> None:
    from envs.pong.params import PongConfig
    from envs.pong.reference.c_pong import CPongVec

    queue.put(_c_random_sps(CPongVec, PongConfig(frameskip=frameskip), num_envs, seconds))


def _c_random_sps(vec_class, config, num_envs: int, seconds: float) -> float:
    env = vec_class(num_envs=num_envs, seed=0, config=config)
    env.reset(0)
    cache_rows = max(16, min(1024, (1 << 22) // num_envs))
    from envs.pong.reference.c_pong import ActionCache

    actions = ActionCache(np.random.default_rng(0).integers(0, 3, (cache_rows, num_envs)))
    env.rollout(actions, record=False)  # warm caches
    sps = best_rate(lambda: env.rollout(actions, record=False), cache_rows * num_envs, seconds)
    env.close()
    return sps


def c_random_sps(num_envs: int, seconds: float, frameskip: int, processes: int) -> float:
    if processes == 1:
        from envs.pong.params import PongConfig
        from envs.pong.reference.c_pong import CPongVec

        return _c_random_sps(CPongVec, PongConfig(frameskip=frameskip), num_envs, seconds)
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    per_process = max(1, num_envs // processes)
    workers = [context.Process(target=_c_worker, args=(per_process, seconds, frameskip, queue))
               for _ in range(processes)]
    for worker in workers:
        worker.start()
    results = [queue.get(timeout=seconds * 10 + 120) for _ in workers]
    for worker in workers:
        worker.join()
    return float(sum(results))


def jax_random_sps(num_envs: int, seconds: float, frameskip: int) -> tuple[float, float]:
    """Like the C rows: random actions from a pre-drawn cache, all envs stepped per step; here the
    whole cache is one lax.scan over the vmapped step."""
    import jax
    import jax.numpy as jnp

    from envs.pong.jax import env as pong
    from envs.pong.params import PongConfig

    params = pong.EnvParams.from_config(PongConfig(frameskip=frameskip))
    cache_rows = max(64, min(1024, (1 << 22) // num_envs))
    actions = jnp.asarray(np.random.default_rng(0).integers(0, 3, (cache_rows, num_envs)), dtype=jnp.int32)
    batched_step = jax.vmap(pong.step, in_axes=(None, 0, 0, None))

    def rollout(state, actions):
        def body(state, step_actions):
            _, state, _, _, _ = batched_step(None, state, step_actions, params)
            return state, None

        return jax.lax.scan(body, state, actions)[0]

    seeds = jnp.arange(num_envs, dtype=jnp.uint32)
    _, state = jax.jit(jax.vmap(pong.reset_from_seed, in_axes=(0, None)))(seeds, params)
    start = time.perf_counter()
    compiled = jax.jit(rollout, donate_argnums=0).lower(state, actions).compile()
    compile_seconds = time.perf_counter() - start
    holder = [jax.block_until_ready(compiled(state, actions))]

    def call():
        holder[0] = jax.block_until_ready(compiled(holder[0], actions))

    return best_rate(call, cache_rows * num_envs, seconds), compile_seconds


def jax_random_sps_whole_loops(num_envs: int, seconds: float, frameskip: int) -> tuple[float | None, float | None, str]:
    """jax_random_sps in a spawned process whose XLA compiles whole loops as one function (the
    setting is per process: XLA reads XLA_FLAGS when its backend starts)."""
    kind, value = call_in_whole_loops_process(jax_random_sps, (num_envs, seconds, frameskip))
    return (value[0], value[1], "ok") if kind == "ok" else (None, None, value)


def ppo_settings(num_envs: int):
    from shared.ppo import PPOConfig

    num_steps = 128 if num_envs <= 64 else max(4, (1 << 16) // num_envs)
    return lambda updates: PPOConfig(num_envs=num_envs, num_steps=num_steps,
                                     total_timesteps=num_envs * num_steps * updates, num_minibatches=4)


# Agent steps per timed PPO run, at least. At one env, 3 updates are 384 steps, 17 ms of make_train:
# two runs of 2026-12-03 on one VM put JAX at 22.4K and 34.6K agent steps/s that way (8.0x and
# 14.4x C); 16,384 steps time about 0.5 s of JAX and several seconds of C.
MIN_PPO_SAMPLES = 16_384


def ppo_updates_for(num_envs: int, requested: int) -> int:
    """`requested` updates, or more where fewer would time under MIN_PPO_SAMPLES agent steps."""
    per_update = ppo_settings(num_envs)(1).batch_size
    return max(requested, -(-MIN_PPO_SAMPLES // per_update))


def jax_ppo_sps(num_envs: int, updates: int, frameskip: int) -> tuple[float, float]:
    from envs.pong.jax.env import env_spec
    from envs.pong.params import PongConfig
    from shared.ppo.jax_loop import measure_sps

    measured = measure_sps(ppo_settings(num_envs)(updates), env_spec(PongConfig(frameskip=frameskip)))
    return measured["sps"], measured["compile_s"]


def c_ppo_sps(num_envs: int, updates: int, frameskip: int) -> tuple[float, float]:
    from envs.pong.gym_envs import CPongVectorEnv
    from shared.ppo import train_host

    config = ppo_settings(num_envs)(updates + 1)
    env = CPongVectorEnv(num_envs, frameskip=frameskip)
    _, _, times = train_host(config, env, show_progress=False)
    env.close()
    # the first update compiles the policy and update functions: reported apart, like JAX's compile
    return config.batch_size / float(np.mean(times.per_update[1:])), times.per_update[0]


def ppo_both_ways(measure, num_envs: int, updates: int, frameskip: int) -> dict:
    """`measure` (jax_ppo_sps or c_ppo_sps) under XLA's default here and with whole loops in a spawned
    process. Whole loops make small programs faster and the update's matrix products single-threaded
    (make_train at 1 env: 34.6K -> 41.0K agent steps/s; at 64 envs: 82.9K -> 45.9K), so, as for random
    actions, both are measured and the faster counts; the host loop's jitted policy and update get the
    same choice."""
    default, default_compile = measure(num_envs, updates, frameskip)
    kind, value = call_in_whole_loops_process(measure, (num_envs, updates, frameskip))
    whole, whole_compile = value if kind == "ok" else (None, None)
    return {"default": default, "default_compile_s": default_compile, "whole_loops": whole,
            "whole_loops_compile_s": whole_compile, "whole_loops_status": "ok" if kind == "ok" else value,
            "best": max(default, whole or 0.0), "best_is_whole_loops": bool(whole and whole > default)}




def machine() -> dict:
    import jax

    return {**shared_machine(), "jax": jax.__version__, "jax_backend": jax.default_backend(),
            "jax_devices": [str(d) for d in jax.devices()]}




def _ppo_cell(row: dict, side: str) -> str:
    rate = format_rate(row.get(f"{side}_ppo_sps"))
    return rate + "*" if row.get(f"{side}_ppo_best_is_whole_loops") else rate


def plot_panels(results: dict) -> list:
    """The saved run as scaling plots (shared/bench_plot.py): random actions, and PPO end to end with
    the issue's target (10x PPO on the C env) beside it."""
    from shared.bench_plot import Panel, series_from

    rows = results["rows"]

    def points(key):
        return [(row["batch"], row.get(key)) for row in rows]

    random = [series_from("C, 1 process", points("c_random_sps_1proc")),
              series_from("C, 2 processes", points("c_random_sps_2proc")),
              series_from("JAX, XLA default", points("jax_random_sps_default")),
              series_from("JAX, whole loops", points("jax_random_sps_whole_loops"))]
    panels = [Panel("random actions", "env steps per second", [s for s in random if s])]
    if any("ppo_ratio" in row for row in rows):
        ppo_c = points("c_ppo_sps")
        ppo = [series_from("PPO on JAX (make_train)", points("jax_ppo_sps")),
               series_from("PPO on C (host loop)", ppo_c)]
        target = series_from("target: 10x PPO on C", [(batch, 10 * rate if rate else None) for batch, rate in ppo_c],
                             target=True)
        panels.append(Panel("PPO end to end (rollout + GAE + 4 epochs)", "agent steps per second",
                            [s for s in ppo + [target] if s]))
    return panels


def save_plot(results: dict, path: Path) -> Path:
    from shared.bench_plot import run_title, save_panels

    title = f"Pong: PufferLib C vs JAX, frameskip {results.get('frameskip', 1)}"
    return save_panels(path, plot_panels(results), run_title(title, results))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="batches 1, 64, 1024 and 1 s per measurement")
    parser.add_argument("--batches", type=batch_list, default=None)
    parser.add_argument("--seconds", type=positive_seconds, default=None, help="time per random-action measurement")
    parser.add_argument("--ppo-updates", type=count_at_least(0), default=3,
                        help="PPO updates per PPO row, at least (more where they would time under "
                             f"{MIN_PPO_SAMPLES:,} agent steps)")
    parser.add_argument("--frameskip", type=count_at_least(1), default=1)
    parser.add_argument("--skip-ppo", action="store_true")
    parser.add_argument("--out", default=os.path.join(os.environ.get("ENVPORT_BENCH_DIR", "bench-results"), "pong.json"))
    add_plot_from_option(parser)
    args = parser.parse_args(argv)
    if args.plot_from:
        redraw(args.plot_from, save_plot)
        return 0
    batches = args.batches or ([1, 64, 1024] if args.quick else [1, 64, 1024, 4096, 16384])
    seconds = args.seconds or (1.0 if args.quick else 2.0)

    from rich.console import Console
    from rich.table import Table

    console = Console(width=None if sys.stdout.isatty() else 150)
    console.print(f"[bold]Pong benchmark[/bold]: frameskip {args.frameskip}, batches {batches}, "
                  f"{seconds:.1f} s per random-action measurement, at least {args.ppo_updates} PPO updates "
                  f"and {MIN_PPO_SAMPLES:,} agent steps per PPO row")
    rows = []
    for batch in batches:
        with console.status(f"batch {batch}: C random actions"):
            c1 = c_random_sps(batch, seconds, args.frameskip, 1)
            c2 = c_random_sps(batch, seconds, args.frameskip, 2) if batch >= 2 else None
        with console.status(f"batch {batch}: JAX random actions"):
            jx_default, jx_compile = jax_random_sps(batch, seconds, args.frameskip)
        with console.status(f"batch {batch}: JAX random actions, whole loops (own process)"):
            jx_whole, jx_whole_compile, whole_status = jax_random_sps_whole_loops(batch, seconds, args.frameskip)
        if whole_status != "ok":
            console.print(f"[yellow]batch {batch}: JAX with whole loops failed: {whole_status}[/yellow]")
        jx = max(jx_default, jx_whole or 0.0)
        row = {"batch": batch, "c_random_sps_1proc": c1, "c_random_sps_2proc": c2, "jax_random_sps": jx,
               "jax_random_sps_default": jx_default, "jax_random_compile_s": jx_compile,
               "jax_random_sps_whole_loops": jx_whole, "jax_random_whole_loops_compile_s": jx_whole_compile,
               "jax_random_whole_loops_status": whole_status, "random_ratio_vs_c_best": jx / max(c1, c2 or 0.0)}
        if not args.skip_ppo:
            updates = ppo_updates_for(batch, args.ppo_updates)
            with console.status(f"batch {batch}: PPO on the JAX env ({updates} updates, both XLA settings)"):
                jp = ppo_both_ways(jax_ppo_sps, batch, updates, args.frameskip)
            with console.status(f"batch {batch}: PPO on the C env, host loop ({updates} updates, both XLA settings)"):
                cp = ppo_both_ways(c_ppo_sps, batch, updates, args.frameskip)
            for side, measured in (("JAX", jp), ("C", cp)):
                if measured["whole_loops_status"] != "ok":
                    console.print(f"[yellow]batch {batch}: PPO on {side} with whole loops failed: "
                                  f"{measured['whole_loops_status']}[/yellow]")
            row.update({"jax_ppo_sps": jp["best"], "jax_ppo_compile_s": jp["default_compile_s"],
                        "jax_ppo_sps_default": jp["default"], "jax_ppo_sps_whole_loops": jp["whole_loops"],
                        "jax_ppo_whole_loops_compile_s": jp["whole_loops_compile_s"],
                        "jax_ppo_best_is_whole_loops": jp["best_is_whole_loops"],
                        "c_ppo_sps": cp["best"], "c_ppo_first_update_s": cp["default_compile_s"],
                        "c_ppo_sps_default": cp["default"], "c_ppo_sps_whole_loops": cp["whole_loops"],
                        "c_ppo_best_is_whole_loops": cp["best_is_whole_loops"],
                        "ppo_ratio": jp["best"] / cp["best"], "ppo_updates": updates,
                        "ppo_batch": ppo_settings(batch)(1).batch_size})
        rows.append(row)
        console.print(f"  batch {batch}: done")

    table = Table(title=f"Pong: PufferLib C vs JAX ({os.cpu_count()} CPUs, JAX {machine()['jax_backend']})")
    for column in ("batch", "C 1 proc", "C 2 proc", "JAX default", "JAX whole loops", "JAX/C", "JAX compile s",
                   "PPO JAX", "PPO C", "PPO JAX/C", "PPO compile s"):
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(
            str(row["batch"]), format_rate(row["c_random_sps_1proc"]), format_rate(row["c_random_sps_2proc"]),
            format_rate(row["jax_random_sps_default"]), format_rate(row["jax_random_sps_whole_loops"]),
            f"{row['random_ratio_vs_c_best']:.2f}x", f"{row['jax_random_compile_s']:.1f}",
            _ppo_cell(row, "jax"), _ppo_cell(row, "c"),
            f"{row['ppo_ratio']:.1f}x" if "ppo_ratio" in row else "n/a",
            f"{row['jax_ppo_compile_s']:.1f}" if "jax_ppo_compile_s" in row else "n/a",
        )
    console.print(table)
    console.print("SPS = env steps per second. JAX/C divides the faster JAX column by the faster C column "
                  "(whole loops: shared/xla_cpu.py, in its own process). "
                  "PPO: rollout + GAE + 4 epochs x 4 minibatches, same network (64x64 tanh), compile excluded, "
                  f"at least {MIN_PPO_SAMPLES:,} agent steps timed; * = with whole loops, the faster setting there.")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    results = {"benchmark": "pong", "frameskip": args.frameskip, "seconds_per_measurement": seconds,
               "ppo_updates": args.ppo_updates, "machine": machine(), "rows": rows}
    out.write_text(json.dumps(results, indent=2))
    console.print(f"wrote {out.resolve()} and {plot_beside(results, out, save_plot)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
