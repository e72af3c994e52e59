"""TCGJax benchmark: the Python reference engine against the JAX engine, measured side by side in one run.

    ./pants run envs/tcgjax:bench                  # full table (several minutes on 2 cores)
    ./pants run envs/tcgjax:bench -- --quick       # batches 1 and 1024, shorter timings
    ./pants run envs/tcgjax:bench -- --ppo-updates 0   # no PPO rows
    ./pants run envs/tcgjax:bench -- --out FILE    # where the JSON goes (default bench-results/tcgjax.json)
    ./pants run envs/tcgjax:bench -- --plot-from FILE.json   # redraw a saved run's plot, measure nothing

What is measured: random-action steps per second, a step being one action of either player, chosen
uniformly among the legal ones (the legal mask is computed every step, as an agent needs it), in
games of random legal decks (a bank of 256 made before the timing, the same for both engines).

  reference, 1 process    the Python engine (reference/engine.py) in a loop: mask, choose, step;
                          a finished game is replaced by a new one from the bank (setup included)
  reference, 2 processes  the same loop in 2 worker processes (this machine has 2 cores); their
                          rates summed
  JAX batch N             N games vmapped, a lax.scan of steps with the random choices drawn inside;
                          a finished game restarts from a fresh game made before the scan
  JAX, 2 processes        batch 1,024 in each of 2 processes, each pinned to its own core; their
                          rates summed (one process already keeps both cores partly busy)

Then PPO end to end (the shared PureJaxRL-style PPO, 64x64 MLP, masked logits: the policy only samples
legal actions): on the reference through 8 Gymnasium envs and the host loop, on JAX with make_train
(one jit over rollouts and updates, the batch stepped by the env's step_batch), the agent against a
random opponent; agent steps per second, compile (or the first update) excluded.

Columns: steps/s (best of 3 timing windows), JIT seconds (not in any rate), the process's peak resident
memory after the row, and the ratio to the 2-process reference from this run (the issue's baseline).
This is a benchmark, not a test: nothing here asserts a speed.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__" and not __package__:
    # run as a file, its folder would come first on sys.path and envs/tcgjax/jax would shadow jax
    sys.path[0] = str(Path(__file__).resolve().parents[2])

import argparse
import json
import multiprocessing
import os
import random
import resource
import time

from shared.bench_plot import add_plot_from_option, plot_beside, redraw
from shared.benchmark import best_rate, format_rate
from shared.benchmark import machine as shared_machine
from shared.benchmark import rich_table as _table
from shared.cli_args import batch_list, count_at_least, positive_seconds

BANK_SIZE = 256


def machine() -> dict:
    import jax

    return {**shared_machine(), "jax": jax.__version__, "jax_backend": jax.default_backend()}


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _bank():
    from envs.tcgjax.reference.decks import random_deck

    return [random_deck(i) for i in range(BANK_SIZE)]


def reference_random(seconds: float, worker: int = 0) -> float:
    """Steps per second of the reference engine under uniform random legal play."""
    from envs.tcgjax.reference import engine as E

    bank = _bank()
    chooser = random.Random(worker)
    state = {"game": None, "seed": worker * 1_000_000}

    def new_game():
        state["seed"] += 1
        seed = state["seed"]
        state["game"] = E.new_game(bank[seed % BANK_SIZE], bank[(seed * 7 + 3) % BANK_SIZE], seed)

    new_game()

    def call():
        game = state["game"]
        if game.winner != E.ONGOING:
            new_game()
            game = state["game"]
        mask = E.action_mask(game)
        legal = [a for a, ok in enumerate(mask) if ok]
        E.step(game, legal[chooser.randrange(len(legal))])

    return best_rate(call, 1, seconds)


def _worker(args):
    seconds, worker = args
    return reference_random(seconds, worker)


def reference_random_processes(seconds: float, processes: int) -> float:
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        return float(sum(pool.map(_worker, [(seconds, w) for w in range(processes)])))


def random_legal_actions(key, masks):
    """A uniformly random legal action per row of `masks` ([..., actions] bools; row 0 where none is
    legal), picked as the reference's random play picks (`legal[randrange(len(legal))]`): one random
    index among the legal actions, the n-th legal one found by a cumulative count.
    `jax.random.categorical` over masked logits has the same distribution but draws a Gumbel number
    for each of the 111 actions: random play at batch 1,024 ran 10-15% faster with this (2026-12-04)."""
    import jax
    import jax.numpy as jnp

    n_legal = masks.sum(axis=-1)
    picks = jax.random.randint(key, n_legal.shape, 0, jnp.maximum(n_legal, 1))
    return jnp.argmax(jnp.cumsum(masks, axis=-1) > picks[..., None], axis=-1)


def make_random_play(batch: int, steps: int):
    """(start(key) -> games, play(games, fresh, key) -> (games, steps taken)), jitted."""
    import jax
    import jax.numpy as jnp

    from envs.tcgjax.jax import engine as J
    from envs.tcgjax.jax.env import deck_bank
    from envs.tcgjax.jax.state import OVER
    from envs.tcgjax.jax.tables import engine_tables

    tables = {k: jnp.asarray(v) for k, v in engine_tables().items()}
    params = deck_bank(_bank())

    def start_one(key):
        deck_key, seed_key = jax.random.split(key)
        index = jax.random.randint(deck_key, (2,), 0, BANK_SIZE)
        bits = jax.random.bits(seed_key, (2,), jnp.uint32)
        return J.new_game(tables, params.deck_cards[index], params.deck_types[index], params.deck_n_types[index],
                          bits[0], bits[1])

    def one_step(carry, key):
        games, fresh = carry
        masks = jax.vmap(J.legal_mask, in_axes=(None, 0))(tables, games)
        actions = random_legal_actions(key, masks)
        games = jax.vmap(J.step, in_axes=(None, 0, 0))(tables, games, actions)
        over = games.phase == OVER
        games = jax.tree_util.tree_map(
            lambda f, g: jnp.where(over.reshape((-1,) + (1,) * (g.ndim - 1)), f, g), fresh, games)
        return (games, fresh), None

    @jax.jit
    def start(key):
        return jax.vmap(start_one)(jax.random.split(key, batch))

    @jax.jit
    def play(games, fresh, key):
        (games, _), _ = jax.lax.scan(one_step, (games, fresh), jax.random.split(key, steps))
        return games

    return start, play


def jax_random(batch: int, seconds: float, barrier=None) -> dict:
    """Random play at `batch`; with a barrier, the timing starts when every process sharing it has
    compiled (jax_random_processes)."""
    import jax

    steps = max(4, min(256, (1 << 16) // batch))
    start, play = make_random_play(batch, steps)
    started = time.perf_counter()
    fresh = start(jax.random.PRNGKey(0))
    games = play(fresh, fresh, jax.random.PRNGKey(1))
    jax.block_until_ready(games)
    compile_s = time.perf_counter() - started
    if barrier is not None:
        barrier.wait(timeout=1800)
    state = {"games": games, "key": jax.random.PRNGKey(2)}

    def call():
        key, sub = jax.random.split(state["key"])
        state["games"] = play(state["games"], fresh, sub)
        state["key"] = key
        jax.block_until_ready(state["games"])

    return {"steps_per_s": best_rate(call, batch * steps, seconds), "compile_s": compile_s, "steps_per_call": steps}


def _jax_worker(batch, seconds, barrier, results, core=None):
    if core is not None:
        # before JAX starts its threads: they inherit the process's core, so the processes do not
        # preempt each other's threads (measured at batch 1,024: 64K steps/s in total against 59K unpinned)
        os.sched_setaffinity(0, {core})
    results.put(jax_random(batch, seconds, barrier))


def jax_random_processes(batch: int, seconds: float, processes: int) -> dict:
    """JAX random play in `processes` processes at once, `batch` games each, as the reference's
    2-process row uses both cores: XLA's CPU backend runs these small kernels on one core. The rates
    are summed over windows timed together (a barrier after every process has compiled). Where the
    machine has a core per process, each process is pinned to its own."""
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(processes), context.Queue()
    cores = sorted(os.sched_getaffinity(0))
    pin = [cores[w] if len(cores) >= processes else None for w in range(processes)]
    workers = [context.Process(target=_jax_worker, args=(batch, seconds, barrier, results, pin[w]))
               for w in range(processes)]
    for worker in workers:
        worker.start()
    try:
        outcomes = [results.get(timeout=2400) for _ in workers]
    finally:
        for worker in workers:
            worker.join(timeout=60)
            if worker.is_alive():
                worker.terminate()
    return {"steps_per_s": sum(o["steps_per_s"] for o in outcomes), "compile_s": max(o["compile_s"] for o in outcomes),
            "steps_per_call": outcomes[0]["steps_per_call"]}


def ppo_config(num_envs: int, num_steps: int, updates: int):
    from envs.tcgjax.reference.observation import MASK_SLICE
    from shared.ppo import PPOConfig

    return PPOConfig(num_envs=num_envs, num_steps=num_steps, total_timesteps=num_envs * num_steps * updates,
                     num_minibatches=4, action_mask=MASK_SLICE)


def jax_ppo_sps(num_envs: int, updates: int) -> dict:

    from envs.tcgjax.jax.env import TcgJaxEnv
    from envs.tcgjax.reference.observation import OBS_SIZE
    from shared.ppo.jax_loop import JaxEnvSpec, measure_sps

    env = TcgJaxEnv(bank="random")
    spec = JaxEnvSpec("tcgjax", env.reset, env.step, env.default_params, (OBS_SIZE,), env.num_actions,
                      step_batch=env.step_batch)
    config = ppo_config(num_envs, max(4, (1 << 16) // num_envs), updates)
    return measure_sps(config, spec)


def reference_ppo_sps(num_envs: int, updates: int) -> dict:
    import gymnasium
    import numpy as np

    from envs.tcgjax.gym_envs import TcgReferenceEnv
    from shared.ppo import train_host

    config = ppo_config(num_envs, 128, updates + 1)
    vector_env = gymnasium.vector.SyncVectorEnv([lambda: TcgReferenceEnv(decks="random") for _ in range(num_envs)],
                                                autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP)
    try:
        _, _, times = train_host(config, vector_env, show_progress=False)
    finally:
        vector_env.close()
    return {"sps": config.batch_size / float(np.mean(times.per_update[1:])), "compile_s": float(times.per_update[0])}


TARGET_X_REFERENCE = 50  # the target: random-action steps/s, times the 2-process reference


def plot_panels(results: dict) -> list:
    """The saved run as scaling plots (shared/bench_plot.py): random play against the reference's
    1 and 2 processes and the 50x target, and PPO's two points."""
    from shared.bench_plot import Level, Panel, ppo_panels, series_from

    rows = results["rows"]
    reference = {row["backend"]: row["steps_per_s"] for row in rows if row["backend"].startswith("Python reference")}
    two = reference["Python reference, 2 processes"]
    random = [series_from("TCGJax, 1 process", [(row["batch"], row["steps_per_s"]) for row in rows
                                                 if row["backend"] == "TCGJax (JAX)"]),
              series_from("TCGJax, 2 processes (a core each)",
                          [(row["batch"], row["steps_per_s"]) for row in rows if row.get("processes") == 2])]
    levels = [Level(label, rate) for label, rate in reference.items()]
    levels.append(Level(f"target: {TARGET_X_REFERENCE}x the 2-process reference", TARGET_X_REFERENCE * two, target=True))
    panels = [Panel("random legal actions", "steps per second (one action of either player)",
                    [s for s in random if s], levels)]
    return panels + ppo_panels(results.get("ppo_rows", []))


def save_plot(results: dict, path: Path) -> Path:
    from shared.bench_plot import run_title, save_panels

    return save_panels(path, plot_panels(results), run_title("TCGJax vs the Python reference", results))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="batches 1 and 1024, 1.5 s per measurement")
    parser.add_argument("--batches", type=batch_list, default=None)
    parser.add_argument("--seconds", type=positive_seconds, default=None, help="time per measurement")
    parser.add_argument("--processes-batch", type=int, default=1024,
                        help="batch of each process in the 2-process JAX row (0: no such row)")
    parser.add_argument("--ppo-updates", type=count_at_least(0), default=3, help="PPO updates timed per PPO row (0: no PPO rows)")
    parser.add_argument("--ppo-batch", type=int, default=1024, help="JAX PPO envs (reference PPO: 8 envs)")
    parser.add_argument("--out", default=os.path.join(os.environ.get("ENVPORT_BENCH_DIR", "bench-results"),
                                                      "tcgjax.json"))
    add_plot_from_option(parser)
    args = parser.parse_args(argv)
    if args.plot_from:
        redraw(args.plot_from, save_plot)
        return 0
    batches = args.batches or ([1, 1024] if args.quick else [1, 1024, 4096, 16384])
    seconds = args.seconds or (1.5 if args.quick else 4.0)
    if any(b < 1 for b in batches) or seconds <= 0:
        parser.error("batches must be positive integers and --seconds positive")

    from rich.console import Console

    console = Console(width=None if sys.stdout.isatty() else 150)
    console.print(f"[bold]TCGJax benchmark[/bold]: random legal actions in games of random legal decks, batches {batches}")
    rows = []
    with console.status("reference, 1 process"):
        one = reference_random(seconds)
    rows.append({"backend": "Python reference, 1 process", "batch": 1, "steps_per_s": one, "rss_mb": _peak_rss_mb()})
    with console.status("reference, 2 processes"):
        two = reference_random_processes(seconds, 2)
    rows.append({"backend": "Python reference, 2 processes", "batch": 2, "steps_per_s": two})
    for batch in batches:
        with console.status(f"JAX batch {batch}"):
            result = jax_random(batch, seconds)
        rows.append({"backend": "TCGJax (JAX)", "batch": batch, **result, "rss_mb": _peak_rss_mb()})
        console.print(f"  JAX batch {batch}: {format_rate(result['steps_per_s'])} steps/s")
    if args.processes_batch > 0:
        with console.status(f"JAX, 2 processes of batch {args.processes_batch}"):
            result = jax_random_processes(args.processes_batch, seconds, 2)
        rows.append({"backend": f"TCGJax (JAX), 2 processes of {args.processes_batch:,}, a core each", "batch": 2 * args.processes_batch,
                     "processes": 2, **result})
        console.print(f"  JAX 2 processes: {format_rate(result['steps_per_s'])} steps/s")
    for row in rows:
        row["ratio_vs_reference_2_processes"] = row["steps_per_s"] / two
    ppo_rows = []
    if args.ppo_updates > 0:
        with console.status("PPO on the reference (8 Gymnasium envs, host loop)"):
            reference_ppo = reference_ppo_sps(8, args.ppo_updates)
        ppo_rows.append({"backend": "PPO on the Python reference (host loop)", "envs": 8, **reference_ppo})
        with console.status(f"PPO on TCGJax ({args.ppo_batch} envs, make_train)"):
            jax_ppo = jax_ppo_sps(args.ppo_batch, args.ppo_updates)
        ppo_rows.append({"backend": "PPO on TCGJax (make_train, step_batch)", "envs": args.ppo_batch, **jax_ppo})
        for row in ppo_rows:
            row["ratio_vs_reference_ppo"] = row["sps"] / reference_ppo["sps"]

    console.print(_table(
        f"TCGJax vs the Python reference ({os.cpu_count()} CPUs, JAX {machine()['jax_backend']})",
        ("backend", "batch", "steps/s", "x reference (2 processes)", "JIT s", "peak RSS MB"),
        [(row["backend"], str(row["batch"]), format_rate(row["steps_per_s"]),
          f"{row['ratio_vs_reference_2_processes']:.2f}x",
          f"{row['compile_s']:.1f}" if "compile_s" in row else "n/a",
          f"{row['rss_mb']:.0f}" if row.get("rss_mb") else "n/a") for row in rows]))
    if ppo_rows:
        console.print(_table(
            "PPO agent steps per second (rollout + GAE + 4 epochs x 4 minibatches, 64x64 MLP, masked)",
            ("backend", "envs", "steps/s", "x PPO on the reference", "compile / first update s"),
            [(row["backend"], str(row["envs"]), format_rate(row["sps"]), f"{row['ratio_vs_reference_ppo']:.1f}x",
              f"{row['compile_s']:.1f}") for row in ppo_rows]))
    console.print("A step is one action of either player. An agent step (PPO) includes the opponent's actions "
                  "up to the agent's next decision. Peak RSS is the bench process's.")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    results = {"benchmark": "tcgjax", "seconds_per_measurement": seconds, "machine": machine(),
               "rows": rows, "ppo_updates": args.ppo_updates, "ppo_rows": ppo_rows}
    out.write_text(json.dumps(results, indent=2))
    console.print(f"wrote {out.resolve()} and {plot_beside(results, out, save_plot)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
