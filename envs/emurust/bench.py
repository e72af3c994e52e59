"""EmuRust benchmark: PyBoy 2.8.1 against envport's Rust emulator, side by side in one run.

    ./pants run envs/emurust:bench [-- --quick] [--seconds S] [--batches 1,4,16,64,256] [--sections frames,steps,ppo] [--out PATH]

Workloads, each with rendering on (every frame drawn) and off:
- frames/s on a ROM that keeps the CPU busy (blargg's cpu_instrs: no HALT) and on 2048 (the game
  sits in HALT between frames, as games do);
- 2048 env steps/s: one step = a direction held for 4 frames then released for 20 (24 frames),
  then the board and score read from RAM, plus a copy of the screen when rendering is on;
- PPO SPS on 2048 (`--sections ppo`): shared/ppo's host loop (small MLP, 8 envs x 128 steps) over
  Gymnasium vector envs of `envport/Game2048-v0` (PyBoy) and `envport/Game2048Rust-v0` (ours),
  synchronous (1 process) and asynchronous (one process per env, on the 2 cores); the first
  update (JIT compile) is not timed.

Backends, each in its fastest honest configuration:
- PyBoy: `PyBoy(rom, window="null", cgb=False, sound_emulated=False)`, frames run with
  `tick(n, render)` (rendering on = `tick(1, True)` per frame, so every frame is drawn), in 1
  process and in 2 processes at once (the machine's two cores; the figure is their sum);
- ours: `emurust_core.GameBoy` on the calling thread, and `GameBoyVec` (Rayon, GIL released) with 1
  and 2 threads at batch 1..256.
The ratios divide by PyBoy's 2-process figure of the same workload. Results go to the console and
to bench-results/emurust.json.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # `python envs/emurust/bench.py` and the Pants pex alike
    sys.path.insert(0, str(REPO))

from shared.benchmark import best_rate, format_rate, machine  # noqa: E402

ROMS = REPO / "envs" / "emurust" / "data" / "roms"
CPU_BUSY_ROM = ROMS / "blargg" / "cpu_instrs" / "cpu_instrs.gb"
GAME_ROM = ROMS / "games" / "2048-wyattferguson" / "2048.gb"
WORKLOADS = (("cpu_busy", CPU_BUSY_ROM), ("2048", GAME_ROM))
BOARD = (0xC0B1, 0xC0EB)  # board (25 x u16) and score (u16)
STEP_PRESS, STEP_FRAMES = 4, 24
DIRECTIONS = ("up", "down", "left", "right")
DIRECTION_BITS = (1 << 6, 1 << 7, 1 << 5, 1 << 4)
FRAMES_PER_CALL = 60
WARMUP_FRAMES = 120


# -- PyBoy ------------------------------------------------------------------------------------------


def _pyboy(rom: Path):
    import io

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        from pyboy import PyBoy
    from envs.emurust.reference.pyboy_ref import _WRAPPER_2048_SYMBOLS

    pyboy = PyBoy(io.BytesIO(rom.read_bytes()), window="null", cgb=False, sound_emulated=False, log_level="ERROR")
    pyboy.set_emulation_speed(0)
    if type(pyboy.game_wrapper).__name__ == "GameWrapper2048":
        # PyBoy enables its 2048 wrapper by cart title; without the addresses it prints a traceback
        # every tick, which would slow PyBoy down unfairly (see reference/pyboy_ref.py).
        for symbol, address in _WRAPPER_2048_SYMBOLS.items():
            pyboy.rom_symbols_inverse.setdefault(symbol, (0, address))
    pyboy.tick(WARMUP_FRAMES, False)
    return pyboy


def _pyboy_frames_call(pyboy, render: bool):
    if render:
        def call():
            for _ in range(FRAMES_PER_CALL):
                pyboy.tick(1, True)
    else:
        def call():
            pyboy.tick(FRAMES_PER_CALL, False)
    return call, FRAMES_PER_CALL


def _pyboy_steps_call(pyboy, render: bool):
    rng = np.random.default_rng(0)
    memory = pyboy.memory

    def call():
        direction = DIRECTIONS[int(rng.integers(4))]
        pyboy.button_press(direction)
        pyboy.tick(STEP_PRESS, False)
        pyboy.button_release(direction)
        pyboy.tick(STEP_FRAMES - STEP_PRESS, render)
        if render:
            np.array(pyboy.screen.ndarray, copy=True)
        bytes(memory[BOARD[0]:BOARD[1]])
    return call, 1


def _pyboy_worker(kind: str, rom: str, render: bool, seconds: float, barrier, results) -> None:
    pyboy = _pyboy(Path(rom))
    call, per_call = (_pyboy_frames_call if kind == "frames" else _pyboy_steps_call)(pyboy, render)
    call()
    barrier.wait()
    results.put(best_rate(call, per_call, seconds))
    pyboy.stop(save=False)


def pyboy_rate(kind: str, rom: Path, render: bool, processes: int, seconds: float) -> float:
    """Total rate of `processes` PyBoy processes running at the same time."""
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(processes), context.Queue()
    workers = [context.Process(target=_pyboy_worker, args=(kind, str(rom), render, seconds, barrier, results))
               for _ in range(processes)]
    for worker in workers:
        worker.start()
    rates = [results.get(timeout=600) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    return float(sum(rates))


# -- ours -------------------------------------------------------------------------------------------


def ours_single_rate(core, kind: str, rom: Path, render: bool, seconds: float) -> float:
    gb = core.GameBoy(rom.read_bytes(), render=render)
    gb.run_frames(WARMUP_FRAMES)
    if kind == "frames":
        return best_rate(lambda: gb.run_frames(FRAMES_PER_CALL), FRAMES_PER_CALL, seconds)
    rng = np.random.default_rng(0)

    def call():
        gb.set_buttons(DIRECTION_BITS[int(rng.integers(4))])
        gb.run_frames(STEP_PRESS)
        gb.set_buttons(0)
        gb.run_frames(STEP_FRAMES - STEP_PRESS)
        if render:
            np.array(gb.screen, copy=True)
        gb.read_range(*BOARD)
    return best_rate(call, 1, seconds)


def ours_vec_rate(core, kind: str, rom: Path, render: bool, batch: int, threads: int, seconds: float) -> float:
    vec = core.GameBoyVec(rom.read_bytes(), batch, threads=threads, render=render)
    idle = np.zeros(batch, np.uint8)
    vec.step(idle, WARMUP_FRAMES)
    if kind == "frames":
        frames = max(1, FRAMES_PER_CALL // 4)
        return best_rate(lambda: vec.step(idle, frames), frames * batch, seconds)
    rng = np.random.default_rng(0)
    bits = np.array(DIRECTION_BITS, np.uint8)

    def call():
        vec.step(bits[rng.integers(0, 4, batch)], STEP_PRESS)
        vec.step(idle, STEP_FRAMES - STEP_PRESS)
        if render:
            vec.screens()
        vec.read_range(*BOARD)
    return best_rate(call, batch, seconds)


# -- PPO ------------------------------------------------------------------------------------------

PPO_UPDATES = 4


def ppo_sps(backend: str, vectorization: str) -> float:
    """Env steps per second of host-loop PPO on 2048, updates 2..PPO_UPDATES (the first compiles)."""
    import gymnasium

    from envs.emurust import gym_envs  # noqa: F401  (registers the ids)
    from shared.ppo import PPOConfig, train_host

    config = PPOConfig(num_envs=8, num_steps=128, total_timesteps=8 * 128 * PPO_UPDATES, seed=0)
    env_id = "envport/Game2048-v0" if backend == "pyboy" else "envport/Game2048Rust-v0"
    wrappers = [gymnasium.wrappers.FlattenObservation,
                lambda env: gymnasium.wrappers.DtypeObservation(env, np.float32)]
    env = gymnasium.make_vec(env_id, num_envs=config.num_envs, vectorization_mode=vectorization,
                             wrappers=wrappers,
                             vector_kwargs={"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP})
    _, _, times = train_host(config, env, show_progress=False, name=f"2048 {backend}")
    env.close()
    timed = times.per_update[1:]
    return config.batch_size * len(timed) / sum(timed)


def run_ppo(results: dict) -> None:
    rows = {}
    for backend in ("pyboy", "rust"):
        for vectorization in ("sync", "async"):
            rate = ppo_sps(backend, vectorization)
            rows[f"{backend}_{vectorization}"] = rate
            print(f"  PPO on 2048, {backend}, {vectorization} vector env: {format_rate(rate)} SPS", flush=True)
    rows["ratio_best_ours_vs_best_pyboy"] = max(rows["rust_sync"], rows["rust_async"]) / max(
        rows["pyboy_sync"], rows["pyboy_async"])
    results["ppo"] = rows


# -- table ------------------------------------------------------------------------------------------


def run(args) -> dict:
    from envs.emurust.build_ext import load_core

    core = load_core()
    rows = []
    plan = []
    for workload, rom in WORKLOADS:
        kinds = [k for k in ("frames", "steps") if k in args.sections and (k == "frames" or rom == GAME_ROM)]
        for kind in kinds:
            for render in (False, True):
                plan.append((workload, rom, kind, render))
    for workload, rom, kind, render in plan:
        label = f"{workload} {'frames/s' if kind == 'frames' else 'env steps/s'}, render {'on' if render else 'off'}"
        print(f"\n{label}", flush=True)
        entry = {"workload": workload, "kind": kind, "render": render, "rates": {}}
        for processes in (1, 2):
            rate = pyboy_rate(kind, rom, render, processes, args.seconds)
            entry["rates"][f"pyboy_{processes}p"] = rate
            print(f"  PyBoy {processes} process{'es' if processes > 1 else ''}: {format_rate(rate)}", flush=True)
        rate = ours_single_rate(core, kind, rom, render, args.seconds)
        entry["rates"]["ours_single"] = rate
        print(f"  ours, one GameBoy: {format_rate(rate)}", flush=True)
        for threads in (1, 2):
            for batch in args.batches:
                rate = ours_vec_rate(core, kind, rom, render, batch, threads, args.seconds)
                entry["rates"][f"ours_vec_t{threads}_b{batch}"] = rate
                print(f"  ours, GameBoyVec {threads} thread(s), batch {batch}: {format_rate(rate)}", flush=True)
        best_ours = max(v for k, v in entry["rates"].items() if k.startswith("ours"))
        entry["best_ours"] = best_ours
        entry["ratio_best_ours_vs_pyboy_2p"] = best_ours / entry["rates"]["pyboy_2p"]
        rows.append(entry)
    results = {"machine": machine(), "seconds_per_row": args.seconds, "batches": args.batches,
               "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "rows": rows}
    if "ppo" in args.sections:
        print("\nPPO on 2048 (host loop, 8 envs x 128 steps)", flush=True)
        run_ppo(results)
    return results


def _best_vec(rates: dict, threads: int) -> str:
    items = [(k, v) for k, v in rates.items() if k.startswith(f"ours_vec_t{threads}_")]
    key, value = max(items, key=lambda kv: kv[1])
    return f"{format_rate(value)} (b{key.rsplit('_b', 1)[1]})"


def print_table(results: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=200)
    if results["rows"]:
        table = Table(title="EmuRust vs PyBoy 2.8.1 (best of 3 windows; ratio = best ours / PyBoy 2 processes)")
        for column in ("workload", "render", "PyBoy 1p", "PyBoy 2p", "ours 1 GameBoy",
                       "ours vec 1 thread (best batch)", "ours vec 2 threads (best batch)", "ratio"):
            table.add_column(column, justify="right")
        for row in results["rows"]:
            rates = row["rates"]
            unit = "frames/s" if row["kind"] == "frames" else "steps/s"
            table.add_row(f"{row['workload']} {unit}", "on" if row["render"] else "off",
                          format_rate(rates["pyboy_1p"]), format_rate(rates["pyboy_2p"]),
                          format_rate(rates["ours_single"]), _best_vec(rates, 1), _best_vec(rates, 2),
                          f"{row['ratio_best_ours_vs_pyboy_2p']:.1f}x")
        console.print(table)
    if "ppo" in results:
        ppo = results["ppo"]
        table = Table(title="PPO SPS on 2048 (host loop; ratio = best ours / best PyBoy)")
        for column in ("PyBoy sync", "PyBoy async", "ours sync", "ours async", "ratio"):
            table.add_column(column, justify="right")
        table.add_row(format_rate(ppo["pyboy_sync"]), format_rate(ppo["pyboy_async"]), format_rate(ppo["rust_sync"]),
                      format_rate(ppo["rust_async"]), f"{ppo['ratio_best_ours_vs_best_pyboy']:.1f}x")
        console.print(table)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="EmuRust vs PyBoy benchmark")
    parser.add_argument("--quick", action="store_true", help="short windows, batches 1 and 64")
    parser.add_argument("--seconds", type=float, default=None, help="timing per row, shared by 3 windows (default 3)")
    parser.add_argument("--batches", type=lambda s: [int(x) for x in s.split(",")], default=None)
    parser.add_argument("--out", type=Path,
                        default=Path(os.environ.get("ENVPORT_BENCH_DIR", "bench-results")) / "emurust.json",
                        help="where the JSON goes (default bench-results/emurust.json under the working directory)")
    parser.add_argument("--sections", type=lambda s: s.split(","), default=["frames", "steps", "ppo"],
                        help="comma-separated: frames, steps, ppo (default all)")
    args = parser.parse_args(argv)
    if args.seconds is None:
        args.seconds = 1.0 if args.quick else 3.0
    if args.batches is None:
        args.batches = [1, 64] if args.quick else [1, 4, 16, 64, 256]
    results = run(args)
    print_table(results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
