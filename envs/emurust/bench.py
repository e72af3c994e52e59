"""EmuRust benchmark: PyBoy 2.8.1 against envport's Rust emulator, side by side in one run.

    ./pants run envs/emurust:bench [-- --quick] [--seconds S] [--batches 1,4,16,64,256] [--rounds 3] [--sections frames,steps,ppo] [--timing pyboy|dmg] [--out PATH]

Workloads (frames/s with rendering on = every frame drawn, and off):
- `cpu_instrs`: blargg's CPU test ROM, kept in its testing phase (it finishes after about 3,200
  frames and then loops, at another speed): every call loads the state saved at frame 120 and
  runs 240 frames from there;
- `2048 title`: 2048's title screen, where the CPU sits in HALT between frames, as idle games do;
- `2048 play`: 2048 while it is played, the RL workload. The game redraws its board every frame,
  its CPU busy the whole frame (it polls STAT before each VRAM write; ours passes over most of
  those rounds, see the README), so this is a CPU-bound workload. To keep it steady, every call
  loads the state saved just after START and plays the same 20 moves (480 frames) from there.
- env steps/s on 2048 play: one step = a direction held 4 frames then released for 20 (24
  frames), then the board and score read from RAM; with rendering on, the last frame is drawn and
  the screen copied (PyBoy's `tick(20, True)`, ours `run_phases(..., draw_last_only=True)`).
- PPO SPS on 2048 (`--sections ppo`): shared/ppo's host loop (small MLP, 8 envs x 128 steps) over
  `envport/Game2048-v0` (PyBoy) and `envport/Game2048Rust-v0` (ours) in Gymnasium's synchronous
  (1 process) and asynchronous (one process per env) vector envs, and ours in its native vector
  env (vector_2048.py: all envs in one Rayon call); the first update (JIT compile) is not timed.

Backends, each in its fastest honest configuration:
- PyBoy: `PyBoy(rom, window="null", cgb=False, sound_emulated=False)`, frames run with
  `tick(n, render)`, in 1 process and in 2 processes at once (the machine's two cores; the figure
  is their sum);
- ours: `emurust_core.GameBoy` on the calling thread, and `GameBoyVec` (Rayon, GIL released) with 1
  and 2 threads at batch 1..256, in PyBoy-compatible timing by default (what the Gymnasium envs
  run; `--timing dmg` for hardware timing), with the sound registers off as PyBoy's are here
  (`sound_emulated=False`: the same configuration on both, and the Gymnasium envs' default), and
  its compiled blocks on (the default: machine code compiled from the ROM on a block's 16th visit,
  shared by the emulators of a ROM in the process; the compiling falls in each row's first timing
  window, of the three whose best is kept).
The ratios divide by PyBoy's 2-process figure of the same workload. Each frames/s row (the target's)
is then measured again side by side: `--rounds` rounds (default 3) of PyBoy's 2 processes and our best
configuration of the sweep one right after the other, the median of the rounds' ratios beside the
sweep's ratio (this VM's host changes speed over minutes, and the sweep's figures of a row are minutes
apart). Results go to the console, to
bench-results/emurust.json and to a plot beside it (emurust.png: each workload's rate against the
batch); `--plot-from FILE.json` redraws a saved run's plot without measuring.
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

from shared.bench_plot import add_plot_from_option, plot_beside, redraw  # noqa: E402
from shared.benchmark import best_rate, format_rate, machine  # noqa: E402
from shared.cli_args import batch_list, positive_seconds  # noqa: E402

ROMS = REPO / "envs" / "emurust" / "data" / "roms"
CPU_BUSY_ROM = ROMS / "blargg" / "cpu_instrs" / "cpu_instrs.gb"
GAME_ROM = ROMS / "games" / "2048-wyattferguson" / "2048.gb"
# (name, ROM, mode): "loop" runs on from the warm-up, "reload" runs RELOAD_FRAMES from the state
# saved after the warm-up, "play" plays 2048 from the state saved after START.
WORKLOADS = (("cpu_instrs", CPU_BUSY_ROM, "reload"), ("2048 title", GAME_ROM, "loop"), ("2048 play", GAME_ROM, "play"))
RELOAD_FRAMES = 240
BOARD = (0xC0B1, 0xC0EB)  # board (25 x u16) and score (u16)
STEP_PRESS, STEP_FRAMES = 4, 24
DIRECTIONS = ("up", "down", "left", "right")
DIRECTION_BITS = (1 << 6, 1 << 7, 1 << 5, 1 << 4)
START_BIT = 1 << 3
FRAMES_PER_CALL = 60
WARMUP_FRAMES = 120
# 2048 play: from the state just after START, the same 20 moves every call (480 frames).
PLAY_MOVES = tuple(int(m) for m in np.random.default_rng(2048).integers(0, 4, 20))
PLAY_FRAMES = STEP_FRAMES * len(PLAY_MOVES)
# PyBoy runs its boot ROM first; START goes in on the same frame of the game on both (game2048.py).
PYBOY_BOOT_ROM_FRAMES, GAME_BOOT_FRAMES, START_SETTLE_FRAMES = 64, 60, 30


# -- PyBoy ------------------------------------------------------------------------------------------


def _pyboy(rom: Path, mode: str):
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
    if mode == "loop":
        pyboy.tick(WARMUP_FRAMES, False)
        return pyboy, None
    if mode == "reload":
        pyboy.tick(PYBOY_BOOT_ROM_FRAMES + WARMUP_FRAMES, False)
        warm = io.BytesIO()
        pyboy.save_state(warm)
        return pyboy, warm
    pyboy.tick(PYBOY_BOOT_ROM_FRAMES + GAME_BOOT_FRAMES + 1, False)
    pyboy.button_press("start")
    pyboy.tick(STEP_PRESS, False)
    pyboy.button_release("start")
    pyboy.tick(START_SETTLE_FRAMES, False)
    start = io.BytesIO()
    pyboy.save_state(start)
    return pyboy, start


def _pyboy_move(pyboy, move: int, render_last: bool) -> None:
    direction = DIRECTIONS[move]
    pyboy.button_press(direction)
    pyboy.tick(STEP_PRESS, False)
    pyboy.button_release(direction)
    pyboy.tick(STEP_FRAMES - STEP_PRESS, render_last)


def _pyboy_call(pyboy, start, kind: str, render: bool, mode: str):
    """(call, steps per call) for PyBoy."""
    memory = pyboy.memory
    if mode == "reload":
        def call():
            start.seek(0)
            pyboy.load_state(start)
            if render:
                for _ in range(RELOAD_FRAMES):
                    pyboy.tick(1, True)
            else:
                pyboy.tick(RELOAD_FRAMES, False)
        return call, RELOAD_FRAMES
    if kind == "frames" and start is None:
        if render:
            def call():
                for _ in range(FRAMES_PER_CALL):
                    pyboy.tick(1, True)
        else:
            def call():
                pyboy.tick(FRAMES_PER_CALL, False)
        return call, FRAMES_PER_CALL
    if kind == "frames":
        def call():
            start.seek(0)
            pyboy.load_state(start)
            for move in PLAY_MOVES:
                direction = DIRECTIONS[move]
                pyboy.button_press(direction)
                if render:
                    for frame in range(STEP_FRAMES):
                        if frame == STEP_PRESS:
                            pyboy.button_release(direction)
                        pyboy.tick(1, True)
                else:
                    pyboy.tick(STEP_PRESS, False)
                    pyboy.button_release(direction)
                    pyboy.tick(STEP_FRAMES - STEP_PRESS, False)
        return call, PLAY_FRAMES

    def call():
        start.seek(0)
        pyboy.load_state(start)
        for move in PLAY_MOVES:
            _pyboy_move(pyboy, move, render)
            if render:
                np.array(pyboy.screen.ndarray, copy=True)
            bytes(memory[BOARD[0]:BOARD[1]])
    return call, len(PLAY_MOVES)


def _pyboy_worker(kind: str, rom: str, mode: str, render: bool, seconds: float, barrier, results) -> None:
    pyboy, start = _pyboy(Path(rom), mode)
    call, per_call = _pyboy_call(pyboy, start, kind, render, mode)
    call()
    barrier.wait()
    results.put(best_rate(call, per_call, seconds))
    pyboy.stop(save=False)


def pyboy_rate(kind: str, rom: Path, mode: str, render: bool, processes: int, seconds: float) -> float:
    """Total rate of `processes` PyBoy processes running at the same time."""
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(processes), context.Queue()
    workers = [context.Process(target=_pyboy_worker, args=(kind, str(rom), mode, render, seconds, barrier, results))
               for _ in range(processes)]
    for worker in workers:
        worker.start()
    rates = [results.get(timeout=600) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    return float(sum(rates))


# -- ours -------------------------------------------------------------------------------------------


def _play_phases() -> list[tuple[int, int]]:
    """The 20 moves as (buttons, frames) phases (with rendering on, ours draws every frame)."""
    phases = []
    for move in PLAY_MOVES:
        phases += [(DIRECTION_BITS[move], STEP_PRESS), (0, STEP_FRAMES - STEP_PRESS)]
    return phases


def _ours_start_state(gb) -> bytes:
    """2048 just after START, as `_pyboy` leaves it (ours has no boot ROM to run)."""
    gb.run_phases([(0, GAME_BOOT_FRAMES + 1), (START_BIT, STEP_PRESS), (0, START_SETTLE_FRAMES)])
    return gb.save_state()


def ours_single_rate(core, kind: str, rom: Path, mode: str, render: bool, seconds: float, power_on: str) -> float:
    gb = core.GameBoy(rom.read_bytes(), render=render, power_on=power_on, sound_emulated=False)
    if mode != "play":
        gb.run_frames(WARMUP_FRAMES)
        if mode == "loop":
            return best_rate(lambda: gb.run_frames(FRAMES_PER_CALL), FRAMES_PER_CALL, seconds)
        warm = gb.save_state()

        def call():
            gb.load_state(warm)
            gb.run_frames(RELOAD_FRAMES)
        return best_rate(call, RELOAD_FRAMES, seconds)
    start = _ours_start_state(gb)
    if kind == "frames":
        phases = _play_phases()

        def call():
            gb.load_state(start)
            gb.run_phases(phases)
        return best_rate(call, PLAY_FRAMES, seconds)
    gb.render = False
    moves = [[(DIRECTION_BITS[m], STEP_PRESS), (0, STEP_FRAMES - STEP_PRESS)] for m in PLAY_MOVES]

    def call():
        gb.load_state(start)
        for phases in moves:
            gb.run_phases(phases, draw_last_only=render)
            if render:
                _ = gb.screen  # a copy (the core copies), as the PyBoy row copies its screen
            gb.read_range(*BOARD)
    return best_rate(call, len(PLAY_MOVES), seconds)


def ours_vec_rate(core, kind: str, rom: Path, mode: str, render: bool, batch: int, threads: int,
                  seconds: float, power_on: str) -> float:
    vec = core.GameBoyVec(rom.read_bytes(), batch, threads=threads, render=render, power_on=power_on, sound_emulated=False)
    idle = np.zeros(batch, np.uint8)
    if mode == "loop":
        vec.step(idle, WARMUP_FRAMES)
        frames = max(1, FRAMES_PER_CALL // 4)
        return best_rate(lambda: vec.step(idle, frames), frames * batch, seconds)
    if mode == "reload":
        warm_gb = core.GameBoy(rom.read_bytes(), render=False, power_on=power_on, sound_emulated=False)
        warm_gb.run_frames(WARMUP_FRAMES)
        start = warm_gb.save_state()
    else:
        start = _ours_start_state(core.GameBoy(rom.read_bytes(), render=False, power_on=power_on, sound_emulated=False))

    def load_all():
        for i in range(batch):
            vec.load_state(i, start)

    if mode == "reload":
        def call():
            load_all()
            vec.step(idle, RELOAD_FRAMES)
        return best_rate(call, RELOAD_FRAMES * batch, seconds)

    def as_arrays(phases):
        buttons = np.tile(np.array([b for b, _ in phases], np.uint8), (batch, 1))
        frames = np.tile(np.array([f for _, f in phases], np.int64), (batch, 1))
        return buttons, frames

    if kind == "frames":
        buttons, frames = as_arrays(_play_phases())

        def call():
            load_all()
            vec.run_phases(buttons, frames)
        return best_rate(call, PLAY_FRAMES * batch, seconds)
    moves = [as_arrays([(DIRECTION_BITS[m], STEP_PRESS), (0, STEP_FRAMES - STEP_PRESS)]) for m in PLAY_MOVES]

    def call():
        load_all()
        for buttons, frames in moves:
            vec.run_phases(buttons, frames, draw_last_only=render)
            if render:
                vec.screens()
            vec.read_range(*BOARD)
    return best_rate(call, len(PLAY_MOVES) * batch, seconds)


# -- PPO ------------------------------------------------------------------------------------------

PPO_UPDATES = 6


def ppo_sps(backend: str, vectorization: str) -> float:
    """Env steps per second of host-loop PPO on 2048, updates 2..PPO_UPDATES (the first compiles)."""
    import gymnasium

    from envs.emurust import gym_envs  # noqa: F401  (registers the ids)
    from shared.ppo import PPOConfig, train_host

    config = PPOConfig(num_envs=8, num_steps=128, total_timesteps=8 * 128 * PPO_UPDATES, seed=0)
    env_id = "envport/Game2048-v0" if backend == "pyboy" else "envport/Game2048Rust-v0"
    same_step = gymnasium.vector.AutoresetMode.SAME_STEP
    if vectorization == "native":  # ours only: all envs in one Rayon call (vector_2048.py)
        from envs.emurust.vector_2048 import FlatFloatObservations

        env = FlatFloatObservations(gymnasium.make_vec(env_id, num_envs=config.num_envs,
                                                       vectorization_mode="vector_entry_point",
                                                       autoreset_mode=same_step))
    else:
        wrappers = [gymnasium.wrappers.FlattenObservation,
                    lambda env: gymnasium.wrappers.DtypeObservation(env, np.float32)]
        vector_kwargs = {"autoreset_mode": same_step}
        if vectorization == "async":  # JAX runs in this process (the policy): its workers must not be forks of it
            vector_kwargs["context"] = "forkserver"
        env = gymnasium.make_vec(env_id, num_envs=config.num_envs, vectorization_mode=vectorization,
                                 wrappers=wrappers, vector_kwargs=vector_kwargs)
    _, _, times = train_host(config, env, show_progress=False, name=f"2048 {backend}")
    env.close()
    timed = times.per_update[1:]
    return config.batch_size * len(timed) / sum(timed)


def run_ppo(results: dict) -> None:
    rows = {}
    for backend, modes in (("pyboy", ("sync", "async")), ("rust", ("sync", "async", "native"))):
        for vectorization in modes:
            rate = ppo_sps(backend, vectorization)
            rows[f"{backend}_{vectorization}"] = rate
            print(f"  PPO on 2048, {backend}, {vectorization} vector env: {format_rate(rate)} SPS", flush=True)
    rows["ratio_best_ours_vs_best_pyboy"] = max(rows["rust_sync"], rows["rust_async"], rows["rust_native"]) / max(
        rows["pyboy_sync"], rows["pyboy_async"])
    results["ppo"] = rows


# -- table ------------------------------------------------------------------------------------------


def run(args) -> dict:
    from envs.emurust.build_ext import load_core

    core = load_core()
    rows = []
    plan = []
    for workload, rom, mode in WORKLOADS:
        kinds = [k for k in ("frames", "steps") if k in args.sections and (k == "frames" or mode == "play")]
        for kind in kinds:
            for render in (False, True):
                plan.append((workload, rom, mode, kind, render))
    for workload, rom, mode, kind, render in plan:
        label = f"{workload} {'frames/s' if kind == 'frames' else 'env steps/s'}, render {'on' if render else 'off'}"
        print(f"\n{label}", flush=True)
        entry = {"workload": workload, "kind": kind, "render": render, "timing": args.timing, "rates": {}}
        for processes in (1, 2):
            rate = pyboy_rate(kind, rom, mode, render, processes, args.seconds)
            entry["rates"][f"pyboy_{processes}p"] = rate
            print(f"  PyBoy {processes} process{'es' if processes > 1 else ''}: {format_rate(rate)}", flush=True)
        rate = ours_single_rate(core, kind, rom, mode, render, args.seconds, args.timing)
        entry["rates"]["ours_single"] = rate
        print(f"  ours, one GameBoy: {format_rate(rate)}", flush=True)
        for threads in (1, 2):
            for batch in args.batches:
                rate = ours_vec_rate(core, kind, rom, mode, render, batch, threads, args.seconds, args.timing)
                entry["rates"][f"ours_vec_t{threads}_b{batch}"] = rate
                print(f"  ours, GameBoyVec {threads} thread(s), batch {batch}: {format_rate(rate)}", flush=True)
        best_ours = max(v for k, v in entry["rates"].items() if k.startswith("ours"))
        entry["best_ours"] = best_ours
        entry["ratio_best_ours_vs_pyboy_2p"] = best_ours / entry["rates"]["pyboy_2p"]
        if kind == "frames" and args.rounds > 0:
            entry["side_by_side"] = side_by_side(core, entry, rom, mode, args)
        rows.append(entry)
    results = {"machine": machine(), "seconds_per_row": args.seconds, "batches": args.batches,
               "timing": args.timing, "play_moves": list(PLAY_MOVES), "side_by_side_rounds": args.rounds,
               "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "rows": rows}
    if "ppo" in args.sections:
        print("\nPPO on 2048 (host loop, 8 envs x 128 steps)", flush=True)
        run_ppo(results)
    return results


def _ours_rate(core, key: str, kind: str, rom: Path, mode: str, render: bool, seconds: float, power_on: str) -> float:
    """Our configuration named by its rate's key ("ours_single" or "ours_vec_t<threads>_b<batch>"), measured again."""
    if key == "ours_single":
        return ours_single_rate(core, kind, rom, mode, render, seconds, power_on)
    threads, batch = (int(part) for part in key[len("ours_vec_t"):].split("_b"))
    return ours_vec_rate(core, kind, rom, mode, render, batch, threads, seconds, power_on)


def side_by_side(core, entry: dict, rom: Path, mode: str, args) -> dict:
    """The row's ratio measured again in `args.rounds` rounds of PyBoy's 2 processes and our best
    configuration of the sweep, one right after the other (in the order ABBA...), so that each
    round's ratio divides two figures from the same minutes. This VM's host changes speed over
    minutes (our figures have halved for a quarter of an hour while PyBoy's fell by a fifth), so a
    ratio of two figures measured minutes apart can be off by more than the margin it is read
    against; the median of the rounds' ratios is the one the targets are read from."""
    kind, render = entry["kind"], entry["render"]
    key = max((k for k in entry["rates"] if k.startswith("ours")), key=entry["rates"].get)
    pyboy, ours = [], []
    for round_index in range(args.rounds):
        steps = ("pyboy", "ours") if round_index % 2 == 0 else ("ours", "pyboy")
        for which in steps:
            if which == "pyboy":
                pyboy.append(pyboy_rate(kind, rom, mode, render, 2, args.seconds))
            else:
                ours.append(_ours_rate(core, key, kind, rom, mode, render, args.seconds, args.timing))
        print(f"  side by side, round {round_index + 1}: PyBoy 2 processes {format_rate(pyboy[-1])}, "
              f"ours ({key[len('ours_'):]}) {format_rate(ours[-1])}: {ours[-1] / pyboy[-1]:.2f}x", flush=True)
    ratios = [o / p for o, p in zip(ours, pyboy, strict=True)]
    return {"ours_config": key, "pyboy_2p": pyboy, "ours": ours, "ratios": ratios,
            "median_ratio": float(np.median(ratios))}


def _side_by_side_cell(row: dict) -> str:
    side = row.get("side_by_side")
    if not side:
        return "-"
    ratios = side["ratios"]
    spread = f" ({min(ratios):.1f}-{max(ratios):.1f})" if len(ratios) > 1 else ""
    return f"{side['median_ratio']:.1f}x{spread}"


def _best_vec(rates: dict, threads: int) -> str:
    items = [(k, v) for k, v in rates.items() if k.startswith(f"ours_vec_t{threads}_")]
    key, value = max(items, key=lambda kv: kv[1])
    return f"{format_rate(value)} (b{key.rsplit('_b', 1)[1]})"


def print_table(results: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=200)
    if results["rows"]:
        table = Table(title=f"EmuRust ({results['timing']} timing) vs PyBoy 2.8.1 (best of 3 windows; ratio = best ours / PyBoy 2 processes)")
        for column in ("workload", "render", "PyBoy 1p", "PyBoy 2p", "ours 1 GameBoy",
                       "ours vec 1 thread (best batch)", "ours vec 2 threads (best batch)", "ratio",
                       "side by side: median (range)"):
            table.add_column(column, justify="right")
        for row in results["rows"]:
            rates = row["rates"]
            unit = "frames/s" if row["kind"] == "frames" else "steps/s"
            table.add_row(f"{row['workload']} {unit}", "on" if row["render"] else "off",
                          format_rate(rates["pyboy_1p"]), format_rate(rates["pyboy_2p"]),
                          format_rate(rates["ours_single"]), _best_vec(rates, 1), _best_vec(rates, 2),
                          f"{row['ratio_best_ours_vs_pyboy_2p']:.1f}x", _side_by_side_cell(row))
        console.print(table)
    if "ppo" in results:
        ppo = results["ppo"]
        table = Table(title="PPO SPS on 2048 (host loop; ratio = best ours / best PyBoy)")
        for column in ("PyBoy sync", "PyBoy async", "ours sync", "ours async", "ours native vector env", "ratio"):
            table.add_column(column, justify="right")
        table.add_row(format_rate(ppo["pyboy_sync"]), format_rate(ppo["pyboy_async"]), format_rate(ppo["rust_sync"]),
                      format_rate(ppo["rust_async"]), format_rate(ppo["rust_native"]),
                      f"{ppo['ratio_best_ours_vs_best_pyboy']:.1f}x")
        console.print(table)


TARGET_X_PYBOY_2P = 5  # the target: frames/s, times PyBoy's 2-process figure


def plot_panels(results: dict) -> list:
    """The saved run as scaling plots (shared/bench_plot.py), a panel per workload: GameBoyVec on 1
    and 2 threads against batch, beside PyBoy's 1 and 2 processes, one GameBoy, and (frames/s) the
    5x target."""
    from shared.bench_plot import Level, Panel, series_from

    panels = []
    for row in results["rows"]:
        rates = row["rates"]
        series = [series_from(f"ours, GameBoyVec {threads} thread{'s' if threads > 1 else ''}",
                              [(int(key.rsplit("_b", 1)[1]), rate) for key, rate in rates.items()
                               if key.startswith(f"ours_vec_t{threads}_b")]) for threads in (1, 2)]
        levels = [Level("PyBoy, 1 process", rates["pyboy_1p"]), Level("PyBoy, 2 processes", rates["pyboy_2p"]),
                  Level("ours, one GameBoy", rates["ours_single"])]
        unit = "frames per second" if row["kind"] == "frames" else "env steps per second"
        if row["kind"] == "frames":
            levels.append(Level(f"target: {TARGET_X_PYBOY_2P}x PyBoy's 2 processes", TARGET_X_PYBOY_2P * rates["pyboy_2p"],
                                target=True))
        panels.append(Panel(f"{row['workload']}, {unit.split(' per')[0]}, render {'on' if row['render'] else 'off'}",
                            unit, [s for s in series if s], levels))
    return panels


def save_plot(results: dict, path: Path) -> Path:
    from shared.bench_plot import run_title, save_panels

    title = f"EmuRust ({results.get('timing', 'pyboy')} timing) vs PyBoy 2.8.1"
    return save_panels(path, plot_panels(results), run_title(title, results))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="EmuRust vs PyBoy benchmark")
    parser.add_argument("--quick", action="store_true", help="short windows, batches 1 and 64")
    parser.add_argument("--seconds", type=positive_seconds, default=None, help="timing per row, shared by 3 windows (default 3)")
    parser.add_argument("--batches", type=batch_list, default=None)
    parser.add_argument("--out", type=Path,
                        default=Path(os.environ.get("ENVPORT_BENCH_DIR", "bench-results")) / "emurust.json",
                        help="where the JSON goes (default bench-results/emurust.json under the working directory)")
    parser.add_argument("--timing", choices=("pyboy", "dmg"), default="pyboy",
                        help="our emulator's timing: PyBoy-compatible (default, what the envs run) or hardware")
    parser.add_argument("--rounds", type=int, default=None,
                        help="side-by-side rounds of PyBoy's 2 processes and our best configuration per frames row "
                             "(default 3, 1 with --quick, 0 for none)")
    parser.add_argument("--sections", type=lambda s: s.split(","), default=["frames", "steps", "ppo"],
                        help="comma-separated: frames, steps, ppo (default all)")
    add_plot_from_option(parser)
    args = parser.parse_args(argv)
    if args.plot_from:
        redraw(args.plot_from, save_plot)
        return
    if args.seconds is None:
        args.seconds = 1.0 if args.quick else 3.0
    if args.rounds is None:
        args.rounds = 1 if args.quick else 3
    if args.rounds < 0:
        parser.error("--rounds must be 0 or more")
    if args.batches is None:
        args.batches = [1, 64] if args.quick else [1, 4, 16, 64, 256]
    results = run(args)
    print_table(results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))
    if results["rows"]:
        print(f"wrote {args.out} and {plot_beside(results, args.out, save_plot)}")
    else:
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
