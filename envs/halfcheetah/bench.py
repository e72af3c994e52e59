"""HalfCheetah benchmark: MuJoCo C, MJX, Brax and our JAX translation, measured side by side in one run.

    python envs/halfcheetah/bench.py                      # batches 1, 64, 512, 4096, 6 s per row
    python envs/halfcheetah/bench.py --quick              # batches 1, 64, 512, 1.5 s per row
    python envs/halfcheetah/bench.py --batches 1,64 --seconds 3 --out FILE
    ./pants run envs/halfcheetah:bench -- [--quick] [--out PATH]   # same, through Pants

(run from the repository root; the JSON goes to bench-results/halfcheetah.json by default, and a
plot of each backend's rate against the batch beside it, halfcheetah.png; `--plot-from FILE.json`
redraws a saved run's plot without measuring).

Each figure is env steps per second (one env step = frame_skip 5 physics steps) under uniform
random actions in [-1, 1], drawn before timing, from Gymnasium-style reset states:
- MuJoCo C, 1 and 2 threads: `mujoco.rollout` over precomputed controls (each action held for the 5
  physics steps), batch = number of MjData rolled out together, no Python per step;
- MJX float32 (`reference/mjx_ref.py`: 5 mjx.step per env step, physics only);
- Brax `halfcheetah`, generalized backend, float32 (`reference/brax_ref.py`: Brax's own port of the
  model, its env.step with reward and observation, no auto-reset);
- ours float32 (`jax/env.py`: env.step with reward, observation and auto-reset).
The three JAX backends are timed the same way: one jitted `lax.scan` of K steps over a vmapped
single-env step (K = 1024 // batch, clamped to [1, 128], so dispatch overhead is paid once per K
steps), the state carried from call to call (not donated: donation made our batch-1 rollout 1.7x
slower at run time). Each JAX backend is measured under two XLA CPU settings and keeps the faster
(`--xla-loops both`, the default; shared/xla_cpu.py): XLA's default, and whole while loops compiled
as one function (`xla_cpu_small_while_loop_byte_threshold` raised), which removes the per-kernel
dispatch cost that dominates small batches. A setting a backend's program cannot be compiled
under is reported and the other one used. Each JAX row runs in its own spawned process: a fresh
XLA, and a time-out instead of a stuck run if XLA's CPU thread pool freezes (seen with MJX's
batched Cholesky at batch >= 1024 on jaxlib 0.10.2; README, "The XLA CPU hang"), or a row that is
skipped if it compiles for longer than --jit-limit. Compile time is its own column and is in no SPS
figure. Each SPS is the best of three timing windows sharing --seconds (each window at least one
call), the same rule for every backend. Ratios are from this run. This is a benchmark, not a test:
nothing here asserts a speed.

A second table (gym_api_bench.py; --gym-batches, '' for none) times the same env through Gymnasium's
vector API, one Python step call per batch: our native make_vec (under XLA's default and, in its own
process, with whole loops), SyncVectorEnv of our single envs, and SyncVectorEnv of HalfCheetah-v5 on
MuJoCo C.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__" and not __package__:
    # Run as a file, its folder would come first on sys.path and envs/halfcheetah/jax would shadow
    # the jax library; put the repository root there instead.
    sys.path[0] = str(Path(__file__).resolve().parents[2])

import argparse
import datetime
import importlib.metadata
import json
import multiprocessing
import os
import queue as queue_module
import time

import numpy as np

from shared.bench_plot import add_plot_from_option, plot_beside, redraw
from shared.benchmark import best_rate, format_rate, machine
from shared.cli_args import batch_list, positive_seconds
from shared.xla_cpu import whole_loops_for_children

FRAME_SKIP = 5
NQ = NV = 9
NU = 6
RESET_NOISE_SCALE = 0.1
JAX_BACKENDS = ("mjx", "brax", "ours")
XLA_SETTINGS = ("default", "whole_loops")
LABELS = {"c1": "MuJoCo C 1 thread", "c2": "MuJoCo C 2 threads", "mjx": "MJX f32", "brax": "Brax gen. f32",
          "ours": "ours f32", "ours2": "ours f32, 2 processes"}
STARTUP_LIMIT_S = 180.0  # a JAX worker's imports and input set-up, before any compile




def reset_states(batch: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Gymnasium HalfCheetah-v5 reset noise for `batch` envs (qpos0 is all zeros): (qpos, qvel)."""
    rng = np.random.default_rng(seed)
    qpos = rng.uniform(-RESET_NOISE_SCALE, RESET_NOISE_SCALE, (batch, NQ))
    qvel = RESET_NOISE_SCALE * rng.standard_normal((batch, NV))
    return qpos, qvel


def random_actions(env_steps: int, batch: int, seed: int = 1) -> np.ndarray:
    """(env_steps, batch, 6) uniform in [-1, 1], float32 (what the JAX backends consume)."""
    return np.random.default_rng(seed).uniform(-1.0, 1.0, (env_steps, batch, NU)).astype(np.float32)


# --- MuJoCo C -------------------------------------------------------------------------------------

def c_env_steps_per_call(batch: int) -> int:
    """About 32K env steps per rollout call (a second or so), at most 1000 per env."""
    return max(1, min(1000, 32768 // batch))


def mujoco_c_sps(batch: int, nthread: int, seconds: float) -> dict:
    """`mujoco.rollout` of `batch` MjData over precomputed controls; nthread 1 runs on the calling
    thread (rollout's nthread=0), 2 on rollout's own pool of two threads."""
    import mujoco
    from mujoco import rollout

    from envs.halfcheetah.reference.model_file import load_model

    model = load_model()
    datas = [mujoco.MjData(model) for _ in range(nthread)]
    env_steps = c_env_steps_per_call(batch)
    nstep = env_steps * FRAME_SKIP
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    initial = np.empty((batch, mujoco.mj_stateSize(model, spec)))
    for index, (qpos, qvel) in enumerate(zip(*reset_states(batch), strict=True)):
        mujoco.mj_resetData(model, datas[0])
        datas[0].qpos[:], datas[0].qvel[:] = qpos, qvel
        mujoco.mj_getState(model, datas[0], initial[index], spec)
    # an env step holds its action for FRAME_SKIP physics steps
    control = np.repeat(random_actions(env_steps, batch).astype(np.float64).transpose(1, 0, 2), FRAME_SKIP, axis=1)
    state_out = np.empty((batch, nstep, initial.shape[1]))  # allocated once, reused by every call
    with rollout.Rollout(nthread=0 if nthread == 1 else nthread) as runner:
        def call():
            runner.rollout(model, datas, initial, control, nstep=nstep, state=state_out)

        call()  # warm caches and the thread pool
        sps = best_rate(call, batch * env_steps, seconds)
    return {"sps": sps, "jit_s": None, "steps_per_call": batch * env_steps, "status": "ok"}


# --- JAX backends, each in its own process -----------------------------------------------------------

def jax_env_steps_per_call(batch: int) -> int:
    return max(1, min(128, 1024 // batch))


def _prepare_mjx(batch: int):
    from envs.halfcheetah.reference import mjx_ref

    return mjx_ref.make_batched_rollout("float32"), mjx_ref.initial_data(*reset_states(batch), "float32")


def _prepare_brax(batch: int):
    import jax

    from envs.halfcheetah.reference import brax_ref

    keys = jax.random.split(jax.random.PRNGKey(0), batch)
    return brax_ref.make_batched_rollout(), jax.block_until_ready(brax_ref.make_batched_reset()(keys))


def _prepare_ours(batch: int):
    import jax

    from envs.halfcheetah.jax import env

    params = env.EnvParams(dtype="float32")

    def env_step(carry, action):
        key, state = carry
        key, step_key = jax.random.split(key)
        _, state, _, _, _ = env.step(step_key, state, action, params)
        return key, state

    batched_step = jax.vmap(env_step)

    def rollout(carry, actions):
        return jax.lax.scan(lambda c, a: (batched_step(c, a), None), carry, actions)[0]

    qpos, qvel = reset_states(batch)
    states = jax.vmap(lambda q, v: env.state_from_qpos_qvel(q, v, params))(qpos, qvel)
    return jax.jit(rollout), (jax.random.split(jax.random.PRNGKey(0), batch), states)


PREPARE = {"mjx": _prepare_mjx, "brax": _prepare_brax, "ours": _prepare_ours}


def _compile(rollout, carry, actions):
    if hasattr(rollout, "lower"):
        return rollout.lower(carry, actions).compile()
    return rollout.compile(carry, actions)  # mjx_ref's precision-scoped wrapper


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _jax_worker(backend: str, batch: int, seconds: float, messages, barrier=None, core=None) -> None:
    """In a spawned process: set up, compile, one warm-up call, then time. Reports each stage as a
    message, so that the parent can tell a slow compile from a frozen step. With a barrier, the
    timing starts when every process sharing it is warm; with a core, the process runs on it alone."""
    try:
        if core is not None:
            os.sched_setaffinity(0, {core})  # before JAX starts its threads, which inherit it
        import jax

        rollout, carry = PREPARE[backend](batch)
        actions = jax.numpy.asarray(random_actions(jax_env_steps_per_call(batch), batch))
        messages.put(("ready", jax.default_backend()))
        start = time.perf_counter()
        compiled = _compile(rollout, carry, actions)
        messages.put(("compiled", time.perf_counter() - start))
        start = time.perf_counter()
        holder = [jax.block_until_ready(compiled(carry, actions))]
        messages.put(("warm", time.perf_counter() - start))
        if barrier is not None:
            barrier.wait()

        def call():
            holder[0] = jax.block_until_ready(compiled(holder[0], actions))

        sps = best_rate(call, batch * jax_env_steps_per_call(batch), seconds)
        messages.put(("done", {"sps": sps, "peak_rss_mb": _peak_rss_mb()}))
    except Exception as error:  # noqa: BLE001 - any failure becomes a row's reason, not a crash
        messages.put(("error", f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"))


class RowFailed(Exception):
    pass


def _await(messages, process, expected: str, timeout: float, what: str, on_timeout: str = "timed out"):
    """The next message from the worker, which must be `expected`; RowFailed on a time-out (its
    reason starts with `on_timeout`), an error reported by the worker, or a worker that died
    (killed for memory, say)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            kind, value = messages.get(timeout=min(1.0, max(0.01, deadline - time.monotonic())))
        except queue_module.Empty:
            if not process.is_alive():
                try:  # it may have written its last message just before exiting
                    kind, value = messages.get(timeout=1.0)
                except queue_module.Empty:
                    raise RowFailed(f"worker died during {what} (exit code {process.exitcode}; "
                                    "out of memory?)") from None
            elif time.monotonic() > deadline:
                raise RowFailed(f"{on_timeout}: {what} took over {timeout:.0f} s") from None
            else:
                continue
        if kind == "error":
            raise RowFailed(f"failed during {what}: {value}")
        if kind != expected:
            raise RowFailed(f"unexpected message {kind!r} during {what}")
        return value


def jax_sps(backend: str, batch: int, seconds: float, jit_limit: float, call_limit: float,
            xla: str = "default", processes: int = 1) -> dict:
    """One JAX row in spawned processes, with a time limit on every stage; `xla` is one of
    XLA_SETTINGS, applied through the children's XLA_FLAGS. With several processes, each runs
    batch // processes envs pinned to a core of its own (where there are enough), their timing
    starts together (a barrier once all are warm), and the row is the sum of their rates."""
    context = multiprocessing.get_context("spawn")
    cores = sorted(os.sched_getaffinity(0))
    pinned = processes > 1 and len(cores) >= processes
    barrier = context.Barrier(processes) if processes > 1 else None
    queues = [context.Queue() for _ in range(processes)]
    workers = [context.Process(target=_jax_worker, daemon=True,
                               args=(backend, batch // processes, seconds, queues[w], barrier,
                                     cores[w] if pinned else None))
               for w in range(processes)]
    with whole_loops_for_children(xla == "whole_loops"):
        for worker in workers:
            worker.start()
    row = {"sps": None, "jit_s": None, "steps_per_call": batch * jax_env_steps_per_call(batch // processes),
           "xla": xla, "processes": processes}

    def stage(expected, limit, what, **kwargs):
        return [_await(q, w, expected, limit, what, **kwargs) for q, w in zip(queues, workers, strict=True)]

    try:
        row["jax_backend"] = stage("ready", STARTUP_LIMIT_S, "set-up")[0]
        row["jit_s"] = max(stage("compiled", jit_limit, "compile", on_timeout="skipped (--jit-limit)"))
        row["first_call_s"] = max(stage("warm", call_limit, "the first call (a frozen XLA?)"))
        # each of 3 windows runs past its share of `seconds` by at most about one call
        measure_limit = seconds + 6 * row["first_call_s"] + 60
        done = stage("done", measure_limit, "timing (a frozen XLA?)")
        row.update(sps=sum(d["sps"] for d in done), peak_rss_mb=max(d["peak_rss_mb"] for d in done))
        row["status"] = "ok"
    except RowFailed as reason:
        row["status"] = str(reason)
    finally:
        if barrier is not None:
            barrier.abort()  # a worker still waiting there fails instead of hanging
        for worker in workers:
            if worker.is_alive():
                worker.kill()  # our own child: a frozen one never exits by itself
            worker.join()
    return row


# --- the run --------------------------------------------------------------------------------------

def _ratio(numerator: dict | None, denominator: dict | None) -> float | None:
    if not numerator or not denominator or not numerator.get("sps") or not denominator.get("sps"):
        return None
    return numerator["sps"] / denominator["sps"]


def ratios(results: dict[int, dict[str, dict]]) -> dict:
    """ours / MJX and ours / Brax at each batch; ours at the largest batch against MuJoCo C on two
    threads at that batch and at its best batch."""
    per_batch = {str(batch): {"ours_over_mjx": _ratio(rows.get("ours"), rows.get("mjx")),
                              "ours_over_brax": _ratio(rows.get("ours"), rows.get("brax")),
                              "ours_over_c2": _ratio(_best_ours(rows), rows.get("c2"))}
                 for batch, rows in results.items()}
    largest = max(results)
    best_c2 = max((dict(rows["c2"], batch=batch) for batch, rows in results.items() if rows.get("c2", {}).get("sps")),
                  key=lambda row: row["sps"], default=None)
    return {"per_batch": per_batch, "ours_largest_batch": largest, "c2_best_batch": best_c2 and best_c2["batch"],
            "ours_largest_batch_over_c2_same_batch": _ratio(_best_ours(results[largest]), results[largest].get("c2")),
            "ours_largest_batch_over_c2_best": _ratio(_best_ours(results[largest]), best_c2)}


def _best_ours(rows: dict) -> dict | None:
    """Ours on the machine's two cores: one process or two (the faster), what MuJoCo C on two
    threads is compared with."""
    candidates = [rows[name] for name in ("ours", "ours2") if rows.get(name, {}).get("sps")]
    return max(candidates, key=lambda row: row["sps"], default=None)




def faster_setting(settings: dict[str, dict]) -> dict:
    """The row of the XLA setting that ran fastest (one that failed counts as 0), with every
    setting's own row under "settings"."""
    best = max(settings.values(), key=lambda row: row["sps"] or 0.0)
    return dict(best, settings=settings)


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def versions() -> dict:
    return {package: _version(package)
            for package in ("jax", "jaxlib", "mujoco", "mujoco-mjx", "brax", "gymnasium", "numpy")}




def _sps_cell(row: dict | None) -> str:
    if row is None:
        return "n/a"
    if row["status"] != "ok":
        return next((word for word in ("timed out", "skipped") if row["status"].startswith(word)), "failed")
    return format_rate(row["sps"]) + ("*" if row.get("xla") == "whole_loops" else "")


def _jit_cell(row: dict | None) -> str:
    return f"{row['jit_s']:.1f}" if row and row.get("jit_s") is not None else "n/a"


def _ratio_cell(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


def print_table(console, results: dict, summary: dict, seconds: float) -> None:
    from rich.table import Table

    table = Table(title=f"HalfCheetah-v5: env steps/s, random actions ({os.cpu_count()} CPUs, {seconds:g} s per row)")
    columns = ["batch", "C 1 thread", "C 2 threads", "MJX f32", "MJX JIT s", "Brax f32", "Brax JIT s",
               "ours f32", "ours JIT s", "ours 2 proc.", "ours/MJX", "ours/Brax", "best ours/C 2t"]
    for column in columns:
        table.add_column(column, justify="right")
    for batch, rows in results.items():
        batch_ratios = summary["per_batch"][str(batch)]
        table.add_row(str(batch), _sps_cell(rows.get("c1")), _sps_cell(rows.get("c2")),
                      _sps_cell(rows.get("mjx")), _jit_cell(rows.get("mjx")),
                      _sps_cell(rows.get("brax")), _jit_cell(rows.get("brax")),
                      _sps_cell(rows.get("ours")), _jit_cell(rows.get("ours")), _sps_cell(rows.get("ours2")),
                      _ratio_cell(batch_ratios["ours_over_mjx"]), _ratio_cell(batch_ratios["ours_over_brax"]),
                      _ratio_cell(batch_ratios["ours_over_c2"]))
    console.print(table)
    console.print(f"ours at batch {summary['ours_largest_batch']} vs MuJoCo C 2 threads: "
                  f"{_ratio_cell(summary['ours_largest_batch_over_c2_same_batch'])} at the same batch, "
                  f"{_ratio_cell(summary['ours_largest_batch_over_c2_best'])} against its best batch "
                  f"({summary['c2_best_batch']}).")
    console.print("MJX: physics only (5 mjx.step); Brax: its own port of the model, env.step without auto-reset; "
                  "ours: env.step with reward and auto-reset. JIT s is compile only, in no SPS figure. "
                  "ours 2 proc.: two processes of batch/2 envs, a core each, timed together (summed); "
                  "MJX and Brax are compared with ours in one process, MuJoCo C on 2 threads with the faster of the two. "
                  "* = faster with whole loops compiled as one function (shared/xla_cpu.py); "
                  "each JAX cell is the faster of the XLA settings measured.")
    for batch, rows in results.items():
        for name, row in rows.items():
            for xla, setting in row.get("settings", {}).items():
                if setting["status"] == "ok":
                    console.print(f"  {LABELS[name]} at batch {batch}, XLA {xla}: {_sps_cell(dict(setting, xla=None))} "
                                  f"(JIT {setting['jit_s']:.1f} s)")
                else:
                    console.print(f"[yellow]{LABELS[name]} at batch {batch}, XLA {xla}: {setting['status']}[/yellow]")
            if row["status"] != "ok" and not row.get("settings"):
                console.print(f"[yellow]{LABELS[name]} at batch {batch}: {row['status']}[/yellow]")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="batches 1, 64, 512 and 1.5 s per row")
    parser.add_argument("--batches", type=batch_list, default=None)
    parser.add_argument("--seconds", type=positive_seconds, default=None, help="timing per row, shared by 3 windows (default 6)")
    parser.add_argument("--jit-limit", type=float, default=300.0, help="skip a JAX row whose compile takes longer")
    parser.add_argument("--call-limit", type=float, default=300.0,
                        help="a JAX row's first call taking longer counts as frozen")
    parser.add_argument("--out", default=os.path.join(os.environ.get("ENVPORT_BENCH_DIR", "bench-results"),
                                                      "halfcheetah.json"))
    parser.add_argument("--xla-loops", choices=("both",) + XLA_SETTINGS, default="both",
                        help="XLA CPU settings each JAX backend is measured under (the faster is kept)")
    parser.add_argument("--no-two-processes", dest="two_processes", action="store_false",
                        help="leave out the row of ours in two processes")
    parser.add_argument("--gym-batches", type=lambda s: [int(x) for x in s.split(",")] if s else [], default=None,
                        help="batches of the Gymnasium-API table (default 1,16,256,1024; --quick 16,256; '' for none)")
    add_plot_from_option(parser)
    args = parser.parse_args(argv)
    args.xla_loops = XLA_SETTINGS if args.xla_loops == "both" else (args.xla_loops,)
    args.batches = args.batches or ([1, 64, 512] if args.quick else [1, 64, 512, 4096])
    args.seconds = args.seconds or (1.5 if args.quick else 6.0)
    if args.gym_batches is None:
        args.gym_batches = [16, 256] if args.quick else [1, 16, 256, 1024]
    return args


def measure(console, args) -> dict[int, dict[str, dict]]:
    results: dict[int, dict[str, dict]] = {}
    for batch in args.batches:
        rows = results[batch] = {}
        for name, nthread in (("c1", 1), ("c2", 2)):
            with console.status(f"batch {batch}: {LABELS[name]}"):
                rows[name] = mujoco_c_sps(batch, nthread, args.seconds)
        jax_rows = [(name, name, 1) for name in JAX_BACKENDS]
        if batch >= 2 and args.two_processes:
            jax_rows.append(("ours2", "ours", 2))
        for name, backend, processes in jax_rows:
            settings = {}
            for xla in args.xla_loops:
                with console.status(f"batch {batch}: {LABELS[name]}, XLA {xla} (own processes: set-up, compile, timing)"):
                    settings[xla] = jax_sps(backend, batch, args.seconds, args.jit_limit, args.call_limit, xla,
                                            processes)
            rows[name] = faster_setting(settings)
        console.print(f"  batch {batch}: " + ", ".join(
            f"{LABELS[name]} {_sps_cell(row)}" + (f" (JIT {row['jit_s']:.1f} s)" if row.get("jit_s") else "")
            for name, row in rows.items()))
    return results


def measure_and_print_gym_api(console, args) -> list[dict]:
    """The second table (gym_api_bench.py): the Gymnasium vector API, one Python step per batch."""
    from envs.halfcheetah.gym_api_bench import COLUMNS, measure_gym_api, table_cells
    from shared.benchmark import rich_table

    with console.status("Gymnasium API") as status:
        rows = measure_gym_api(args.gym_batches, args.seconds, lambda text: status.update(text))
    console.print(rich_table(
        f"HalfCheetah through Gymnasium's vector API: env steps/s, one Python step call per batch "
        f"({args.seconds:g} s per row)", COLUMNS, table_cells(rows)))
    console.print("native make_vec: make_vec('envport/HalfCheetahJax-v0', num_envs=N), one vmapped step, XLA's "
                  "default; whole loops: the same in a process with shared.xla_cpu.enable_whole_loops(); "
                  "SyncVectorEnv of singles: vectorization_mode='sync' (up to batch 16, each single env compiles "
                  "its own step); MuJoCo C: make_vec('envport/HalfCheetah-v0', ...), Gymnasium's HalfCheetah-v5.")
    for row in rows:
        if row.get("status"):
            console.print(f"[yellow]{row['label']}: {row['status']}[/yellow]")
    return rows


def plot_panels(results: dict) -> list:
    """The saved run as a scaling plot (shared/bench_plot.py): every backend's env steps/s against
    the batch (rows that failed or were skipped are left out)."""
    from shared.bench_plot import Panel, series_from

    measurements = results["measurements"]
    labels = list(dict.fromkeys(row["label"] for row in measurements))
    series = [series_from(label, [(row["batch"], row["sps"]) for row in measurements if row["label"] == label])
              for label in labels]
    panels = [Panel("random actions (frame_skip 5)", "env steps per second", [s for s in series if s])]
    gym_rows = results.get("gym_api", [])
    gym_series = [series_from(label, [(row["batch"], row["sps"]) for row in gym_rows if row["label"] == label])
                  for label in dict.fromkeys(row["label"] for row in gym_rows)]
    if any(gym_series):
        panels.append(Panel("Gymnasium vector API (a Python step per batch)", "env steps per second",
                            [s for s in gym_series if s], x_label="num_envs of the vector env"))
    return panels


def save_plot(results: dict, path: Path) -> Path:
    from shared.bench_plot import run_title, save_panels

    return save_panels(path, plot_panels(results), run_title("HalfCheetah: MuJoCo C, MJX, Brax and ours", results))


def main(argv=None) -> int:
    from rich.console import Console

    args = parse_args(argv)
    if args.plot_from:
        redraw(args.plot_from, save_plot)
        return 0
    console = Console(width=None if sys.stdout.isatty() else 160)
    console.print(f"[bold]HalfCheetah benchmark[/bold]: batches {args.batches}, {args.seconds:g} s per row, "
                  f"JIT limit {args.jit_limit:g} s")
    started, load_at_start = time.perf_counter(), os.getloadavg()
    results = measure(console, args)
    summary = ratios(results)
    print_table(console, results, summary, args.seconds)
    gym_api = measure_and_print_gym_api(console, args) if args.gym_batches else []
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    measurements = [dict(row, backend=name, label=LABELS[name], batch=batch)
                    for batch, rows in results.items() for name, row in rows.items()]
    saved = {
        "benchmark": "halfcheetah", "unit": "env steps per second (frame_skip 5)",
        "timestamp": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "seconds_per_row": args.seconds, "batches": args.batches, "jit_limit_s": args.jit_limit,
        "timing": "best of 3 windows; JAX: jitted lax.scan of K vmapped env steps per call, "
                  "the faster of the XLA settings measured",
        "xla_settings": list(args.xla_loops),
        "machine": dict(machine(), load_average_start=load_at_start, load_average_end=os.getloadavg()),
        "versions": versions(), "measurements": measurements, "ratios": summary, "gym_api": gym_api,
        "wall_s": time.perf_counter() - started}
    out.write_text(json.dumps(saved, indent=2))
    console.print(f"wrote {out.resolve()} and {plot_beside(saved, out, save_plot)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
