"""PokeJAX benchmark: Pokemon Showdown against the JAX engine, measured side by side in one run.

    ./pants run envs/pokejax:bench                 # full table (a few minutes on 2 cores)
    ./pants run envs/pokejax:bench -- --quick      # batches 1 and 1024, shorter timings
    ./pants run envs/pokejax:bench -- --out FILE   # where the JSON goes (default bench-results/pokejax.json)
    ./pants run envs/pokejax:bench -- --plot-from FILE.json   # redraw a saved run's plot, measure nothing
    ./pants run envs/pokejax:bench -- --ppo-updates 0   # no PPO rows
    ./pants run envs/pokejax:bench -- --format gen1randombattle   # Showdown's random battles

What is measured: random-action decisions per second (a decision is one side's choice; both sides
play uniformly random legal choices) in one of two games (--format): gen1customgame, teams of six
random species knowing four random moves of the 164, as l3_battles.py makes them (the same teams
are given to Showdown), or gen1randombattle, Showdown's random-battle teams and rules (Showdown
gets 50 team pairs from its own generator, PokeJAX draws from the env's bank of 4,096 pairs from
its JAX generator; both made before the timing). Both sides of every ratio play the same game.

  Showdown in-process   the fastest honest way to run Showdown: one Node process plays whole
                        battles in a loop (showdown_driver.js play_random), no IPC per decision
  Showdown via Python   the adapter (reference/showdown.py): one JSON round trip per decision
  PokeJAX batch N       N battles vmapped, a lax.scan of battle steps with the random choices drawn
                        inside it; finished battles are replaced by new ones inside the scan.
                        Both of Showdown's PRNGs: sodium (ChaCha20, Showdown's default) and gen5.
  PokeJAX whole loops   the sodium engine in a spawned process whose XLA compiles the whole scan
                        as one function (shared/xla_cpu.py), at --whole-loops-batches (default 1,
                        none with --quick): no per-kernel dispatch, so small batches run several
                        times faster, for a long compile (about 160 s at batch 1) and one core

Then PPO end to end (the shared PureJaxRL-style PPO, 64x64 MLP): on Showdown through 8 Gymnasium
envs and the host loop, and on PokeJAX with make_train (one jit over rollouts and updates), both
with the agent as p1 against a random opponent; agent steps per second, compile excluded.

Columns: decisions/s (best of 3 timing windows), JIT compile seconds (not in any rate), memory, and
the ratio to Showdown in-process from this run. Memory is what each backend holds for its battles:
for Showdown the Node process's peak resident set (VmHWM, /proc; V8 and Showdown's data included), for
PokeJAX the buffers XLA allocates for one timed call of the compiled program (arguments, outputs and
temporaries: the batch's battles in and out, the fresh battles, the scan's scratch), from
`memory_analysis()`. The JAX runtime and Python around it (about 1 GB of RSS in this process, the
same at every batch) are in neither; the process's peak RSS, which only grows, is in the JSON.
This is a benchmark, not a test: nothing here asserts a speed.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__" and not __package__:
    # run as a file, its folder would come first on sys.path and envs/pokejax/jax would shadow jax
    sys.path[0] = str(Path(__file__).resolve().parents[2])

import argparse
import json
import os
import resource
import time

import numpy as np

from shared.bench_plot import add_plot_from_option, plot_beside, redraw
from shared.benchmark import best_rate, call_in_whole_loops_process, format_rate
from shared.benchmark import machine as shared_machine
from shared.benchmark import rich_table as _table
from shared.cli_args import batch_list, count_at_least, positive_seconds

# (the envs' formats, repeated here so that --help needs no JAX import)
CUSTOM_GAME, RANDOM_BATTLE = "gen1customgame", "gen1randombattle"
BATTLE_FORMATS = (CUSTOM_GAME, RANDOM_BATTLE)
GAMES = {
    CUSTOM_GAME: "Gen 1 battles of random teams of the 164 moves (gen1customgame)",
    RANDOM_BATTLE: "Gen 1 random battles (gen1randombattle: Showdown's teams and rules)",
}


def machine() -> dict:
    import jax

    return {**shared_machine(), "jax": jax.__version__, "jax_backend": jax.default_backend()}


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _process_peak_rss_mb(pid) -> float | None:
    """Another process's peak resident set (VmHWM in /proc/PID/status) in MB; None where /proc lacks it."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _format_mb(mb) -> str:
    return "n/a" if mb is None else f"{mb:.2f}" if mb < 1 else f"{mb:.1f}" if mb < 10 else f"{mb:,.0f}"


def _xla_buffers_mb(compiled) -> float:
    """The buffers XLA allocates for one call of a compiled program: arguments, outputs (those aliased to
    an argument counted once) and temporaries."""
    stats = compiled.memory_analysis()
    return (stats.argument_size_in_bytes + stats.output_size_in_bytes - stats.alias_size_in_bytes
            + stats.temp_size_in_bytes) / 2**20


def _team_pairs(count: int, battle_format: str, showdown) -> list:
    """Team pairs for Showdown's side of the table: random teams of the supported moves (as
    l3_battles makes them), or gen1randombattle teams from Showdown's own generator (made before
    the timing, so Showdown's rows do not pay for team generation; PokeJAX's do)."""
    from envs.pokejax.jax.env import RANDOM_BATTLE
    from envs.pokejax.l3_battles import supported_team

    if battle_format == RANDOM_BATTLE:
        return [
            [showdown.generate_team(RANDOM_BATTLE, f"gen5,{2 * i + side:016x}") for side in range(2)]
            for i in range(count)
        ]
    rng = np.random.default_rng(12345)
    return [[supported_team(rng).showdown_sets(), supported_team(rng).showdown_sets()] for _ in range(count)]


def showdown_in_process(seconds: float, battle_format: str) -> dict:
    """Decisions/s of Showdown's own loop over the same kind of battles (best of 3 windows of whole battles)."""
    from envs.pokejax.reference.showdown import Showdown

    with Showdown(timeout_s=600) as showdown:
        teams = _team_pairs(50, battle_format, showdown)
        showdown.play_random(battle_format, 5, "gen5,0000000000000001", teams=teams)  # warm up V8
        best = None
        for window in range(3):
            battles, decisions, elapsed = 0, 0, 0.0
            while elapsed < seconds / 3:
                result = showdown.play_random(battle_format, 10, f"gen5,{window:016x}", teams=teams)
                battles += result["battles"]
                decisions += result["decisions"]
                elapsed += result["seconds"]
            rate = decisions / elapsed
            best = rate if best is None else max(best, rate)
            turns_per_battle = result["turns"] / result["battles"]
        memory_mb = _process_peak_rss_mb(showdown.pid)
    return {"decisions_per_s": best, "turns_per_battle": turns_per_battle, "memory_mb": memory_mb}


def showdown_via_python(seconds: float, battle_format: str) -> dict:
    """Decisions/s through the Python adapter: one choose() round trip per decision pair."""
    from envs.pokejax.reference.showdown import Showdown
    from envs.pokejax.showdown_io import choice_string, showdown_legal

    rng = np.random.default_rng(0)
    with Showdown(timeout_s=600) as showdown:
        teams = _team_pairs(20, battle_format, showdown)
        showdown.play_random(battle_format, 2, "gen5,0000000000000001", teams=teams)  # load Showdown's data
        decisions, start, index = 0, time.perf_counter(), 0
        while time.perf_counter() - start < seconds:
            name = f"b{index}"
            pair = teams[index % len(teams)]
            snap = showdown.start(name, battle_format, f"gen5,{index:016x}", {"team": pair[0]}, {"team": pair[1]})
            while not snap["ended"] and time.perf_counter() - start < seconds:
                choices = []
                for request in snap["requests"]:
                    legal = np.flatnonzero(showdown_legal(request))
                    choices.append(choice_string(int(rng.choice(legal))) if len(legal) else "")
                decisions += sum(1 for c in choices if c)
                snap = showdown.choose(name, *choices, state=False)
            showdown.end(name)
            index += 1
        rate = decisions / (time.perf_counter() - start)
        return {"decisions_per_s": rate, "memory_mb": _process_peak_rss_mb(showdown.pid)}


def make_random_play(kind: str, batch: int, steps: int, battle_format: str):
    """A jitted function: `steps` battle steps of `batch` battles with random choices on both sides;
    returns (battles, decisions made). Each call first makes one new battle per env (new teams, new
    seed), and an env whose battle ends during the call restarts from it, as Brax's AutoResetWrapper
    restarts from a stored first state: making new battles at every step, for every env, cost twice
    the battle steps themselves."""
    import jax
    import jax.numpy as jnp

    from envs.pokejax.jax import battle as jb
    from envs.pokejax.jax.env import EnvParams, PokeJaxEnv, random_legal_action

    env = PokeJaxEnv(kind)
    params = EnvParams(battle_format=battle_format)
    new_battles = jax.vmap(lambda key: env.reset(key, params)[1].battle)

    def one_step(carry, key):
        battles, fresh, decisions = carry
        masks = jax.vmap(jb.legal_actions)(battles)  # [batch, 2, 9]
        keys = jax.random.split(key, batch * 2).reshape(batch, 2, -1)
        actions = jax.vmap(jax.vmap(random_legal_action))(keys, masks)
        stepped = jax.vmap(lambda b, a: jb.step(kind, b, a, env.tables))(battles, actions)
        battles = jax.tree_util.tree_map(
            lambda new, old: jnp.where(stepped.ended.reshape((-1,) + (1,) * (new.ndim - 1)), new, old), fresh, stepped
        )
        return (battles, fresh, decisions + masks.any(axis=-1).sum()), None

    @jax.jit
    def play(battles, key):
        fresh_key, scan_key = jax.random.split(key)
        fresh = new_battles(jax.random.split(fresh_key, batch))
        carry = (battles, fresh, jnp.int32(0))
        (battles, _, decisions), _ = jax.lax.scan(one_step, carry, jax.random.split(scan_key, steps))
        return battles, decisions

    start_battles = jax.jit(new_battles)
    return start_battles, play


def ppo_config(num_envs: int, num_steps: int, updates: int):
    from shared.ppo import PPOConfig

    return PPOConfig(
        num_envs=num_envs, num_steps=num_steps, total_timesteps=num_envs * num_steps * updates, num_minibatches=4
    )


def pokejax_ppo_sps(kind: str, num_envs: int, updates: int, battle_format: str) -> dict:
    """PPO end to end on the JAX env (make_train: rollout, GAE, 4 epochs x 4 minibatches, one jit):
    agent steps per second, compile excluded. The agent is p1 against the env's random opponent; an
    illegal action ends the episode as a loss (no action mask here, nor in the Showdown row; L4's
    masked PPO adds one select over the 9 logits)."""

    from envs.pokejax.jax.env import EnvParams, PokeJaxEnv
    from shared.ppo.jax_loop import JaxEnvSpec, measure_sps

    env = PokeJaxEnv(kind)
    params = EnvParams(battle_format=battle_format)
    spec = JaxEnvSpec("pokejax", env.reset, env.step, params, env.observation_shape, env.num_actions)
    config = ppo_config(num_envs, max(4, (1 << 16) // num_envs), updates)
    return measure_sps(config, spec)


def showdown_ppo_sps(num_envs: int, updates: int, battle_format: str) -> dict:
    """The same PPO on Showdown through the Gymnasium env (one Node process per env, a synchronous
    vector env, the policy and update jitted on the host): agent steps per second over the updates
    after the first (which compiles)."""
    import gymnasium

    import envs.pokejax  # noqa: F401  (registers the ids)
    from shared.ppo import train_host

    config = ppo_config(num_envs, 128, updates + 1)
    vector_env = gymnasium.make_vec(
        "envport/PokeShowdown-v0",
        num_envs=num_envs,
        vectorization_mode="sync",
        illegal_action="lose",
        battle_format=battle_format,
        vector_kwargs={"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP},
    )
    try:
        _, _, times = train_host(config, vector_env, show_progress=False)
    finally:
        vector_env.close()
    return {"sps": config.batch_size / float(np.mean(times.per_update[1:])), "compile_s": float(times.per_update[0])}


def pokejax_random(kind: str, batch: int, seconds: float, battle_format: str) -> dict:
    import jax

    steps = max(4, min(256, (1 << 16) // batch))
    start_battles, play = make_random_play(kind, batch, steps, battle_format)
    started = time.perf_counter()
    battles = start_battles(jax.random.split(jax.random.PRNGKey(0), batch))
    battles, decisions = play(battles, jax.random.PRNGKey(1))
    jax.block_until_ready(decisions)
    compile_s = time.perf_counter() - started
    # the executable just compiled (lower and compile hit jit's cache: no second compile)
    memory_mb = _xla_buffers_mb(play.lower(battles, jax.random.PRNGKey(1)).compile())
    counted = {"decisions": int(decisions)}
    state = {"battles": battles, "key": jax.random.PRNGKey(2)}

    def call():
        key, sub = jax.random.split(state["key"])
        state["battles"], made = play(state["battles"], sub)
        state["key"] = key
        counted["decisions"] = int(made)  # blocks until done

    # decisions per call vary a little (forced switches ask one side only): time calls, then scale
    calls_rate = best_rate(call, 1, seconds)
    return {
        "decisions_per_s": calls_rate * counted["decisions"],
        "compile_s": compile_s,
        "steps_per_call": steps,
        "memory_mb": memory_mb,
        "overflow": bool(np.asarray(state["battles"].prng_overflow).any()),
    }


TARGET_X_SHOWDOWN = 1000  # the target: decisions/s, times Showdown in-process


def plot_panels(results: dict) -> list:
    """The saved run as scaling plots (shared/bench_plot.py): PokeJAX's decisions/s against batch
    beside Showdown's two ways of running and the 1,000x target; PPO's two points."""
    from shared.bench_plot import Level, Panel, ppo_panels, series_from

    rows = results["rows"]
    showdown = [row for row in rows if row["backend"].startswith("Showdown")]
    in_process = next(row["decisions_per_s"] for row in showdown if "in-process" in row["backend"])
    backends = list(dict.fromkeys(row["backend"] for row in rows if row["backend"].startswith("PokeJAX")))
    series = [series_from(backend, [(row["batch"], row["decisions_per_s"]) for row in rows if row["backend"] == backend])
              for backend in backends]
    levels = [Level(row["backend"], row["decisions_per_s"]) for row in showdown]
    levels.append(Level(f"target: {TARGET_X_SHOWDOWN:,}x Showdown in-process", TARGET_X_SHOWDOWN * in_process,
                        target=True))
    panels = [Panel("random legal choices", "decisions per second", [s for s in series if s], levels)]
    return panels + ppo_panels(results.get("ppo_rows", []))


def save_plot(results: dict, path: Path) -> Path:
    from shared.bench_plot import run_title, save_panels

    title = f"PokeJAX vs Showdown, {results.get('game', '')}"
    return save_panels(path, plot_panels(results), run_title(title, results))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="batches 1 and 1024, 1 s per measurement")
    parser.add_argument("--batches", type=batch_list, default=None)
    parser.add_argument("--seconds", type=positive_seconds, default=None, help="time per measurement")
    parser.add_argument("--whole-loops-batches", type=lambda s: [int(x) for x in s.split(",") if x], default=None,
                        help="batches of the sodium engine compiled with whole loops (default 1, none with "
                             "--quick; an empty value: none)")
    parser.add_argument("--ppo-updates", type=count_at_least(0), default=3, help="PPO updates timed per PPO row (0: no PPO rows)")
    parser.add_argument("--ppo-batch", type=int, default=1024, help="JAX PPO envs (Showdown PPO: 8 envs)")
    parser.add_argument(
        "--out", default=os.path.join(os.environ.get("ENVPORT_BENCH_DIR", "bench-results"), "pokejax.json")
    )
    parser.add_argument(
        "--format",
        choices=BATTLE_FORMATS,
        default=CUSTOM_GAME,
        help=f"{CUSTOM_GAME}: random teams of any of the 164 moves; {RANDOM_BATTLE}: Showdown's random battles",
    )
    add_plot_from_option(parser)
    args = parser.parse_args(argv)
    if args.plot_from:
        redraw(args.plot_from, save_plot)
        return 0
    game = GAMES[args.format]
    batches = args.batches or ([1, 1024] if args.quick else [1, 1024, 16384, 65536])
    seconds = args.seconds or (1.5 if args.quick else 4.0)
    whole_loops_batches = args.whole_loops_batches if args.whole_loops_batches is not None else ([] if args.quick else [1])

    from rich.console import Console

    console = Console(width=None if sys.stdout.isatty() else 150)
    console.print(f"[bold]PokeJAX benchmark[/bold]: {game}, random legal choices, batches {batches}")
    rows = []
    with console.status("Showdown in-process"):
        in_process = showdown_in_process(seconds, args.format)
    rows.append({"backend": "Showdown in-process (Node loop)", "batch": 1, **in_process, "rss_mb": None})
    with console.status("Showdown through the Python adapter"):
        via_python = showdown_via_python(seconds, args.format)
    rows.append({"backend": "Showdown via Python adapter", "batch": 1, **via_python})
    for kind in ("sodium", "gen5"):
        for batch in batches:
            with console.status(f"PokeJAX {kind} batch {batch}"):
                result = pokejax_random(kind, batch, seconds, args.format)
            rows.append({"backend": f"PokeJAX ({kind} PRNG)", "batch": batch, **result, "rss_mb": _peak_rss_mb()})
            console.print(f"  PokeJAX {kind} batch {batch}: {format_rate(result['decisions_per_s'])} decisions/s")
    for batch in whole_loops_batches:
        with console.status(f"PokeJAX sodium batch {batch}, whole loops (its own process)"):
            status, result = call_in_whole_loops_process(pokejax_random, ("sodium", batch, seconds, args.format))
        if status != "ok":
            console.print(f"[red]  PokeJAX sodium batch {batch}, whole loops: {result}[/red]")
            continue
        rows.append({"backend": "PokeJAX (sodium PRNG), whole loops", "batch": batch, **result, "rss_mb": None})
        console.print(f"  PokeJAX sodium batch {batch}, whole loops: {format_rate(result['decisions_per_s'])} decisions/s")
    reference = in_process["decisions_per_s"]
    for row in rows:
        row["ratio_vs_showdown_in_process"] = row["decisions_per_s"] / reference
    ppo_rows = []
    if args.ppo_updates > 0:
        with console.status("PPO on Showdown (8 Gymnasium envs, host loop)"):
            showdown_ppo = showdown_ppo_sps(8, args.ppo_updates, args.format)
        ppo_rows.append({"backend": "PPO on Showdown (host loop)", "envs": 8, **showdown_ppo})
        with console.status(f"PPO on PokeJAX ({args.ppo_batch} envs, make_train)"):
            jax_ppo = pokejax_ppo_sps("sodium", args.ppo_batch, args.ppo_updates, args.format)
        ppo_rows.append({"backend": "PPO on PokeJAX (sodium, make_train)", "envs": args.ppo_batch, **jax_ppo})
        for row in ppo_rows:
            row["ratio_vs_showdown_ppo"] = row["sps"] / showdown_ppo["sps"]

    console.print(
        _table(
            f"PokeJAX vs Showdown, {game} ({os.cpu_count()} CPUs, " f"JAX {machine()['jax_backend']})",
            ("backend", "batch", "decisions/s", "x Showdown in-process", "JIT s", "memory MB"),
            [
                (
                    row["backend"],
                    str(row["batch"]),
                    format_rate(row["decisions_per_s"]),
                    f"{row['ratio_vs_showdown_in_process']:.2f}x",
                    f"{row['compile_s']:.1f}" if "compile_s" in row else "n/a",
                    _format_mb(row.get("memory_mb")),
                )
                for row in rows
            ],
        )
    )
    if ppo_rows:
        console.print(
            _table(
                "PPO agent steps per second (rollout + GAE + 4 epochs x 4 minibatches, 64x64 MLP)",
                ("backend", "envs", "steps/s", "x PPO on Showdown", "compile / first update s"),
                [
                    (
                        row["backend"],
                        str(row["envs"]),
                        format_rate(row["sps"]),
                        f"{row['ratio_vs_showdown_ppo']:.1f}x",
                        f"{row['compile_s']:.1f}",
                    )
                    for row in ppo_rows
                ],
            )
        )
    console.print(
        "A decision is one side's choice. Showdown in-process: whole battles in one Node loop; via Python: one "
        "JSON round trip per turn. Memory: Showdown's Node process's peak RSS; PokeJAX's XLA buffers for one timed "
        "call (the batch's battles, fresh battles, scratch), without the JAX runtime around them."
    )
    if any(row.get("overflow") for row in rows):
        console.print("[red]a battle step wanted more PRNG draws than it prefetched: results are not exact[/red]")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    results = {
        "benchmark": "pokejax",
        "game": game,
        "format": args.format,
        "seconds_per_measurement": seconds,
        "machine": machine(),
        "rows": rows,
        "ppo_updates": args.ppo_updates,
        "ppo_rows": ppo_rows,
    }
    out.write_text(json.dumps(results, indent=2))
    console.print(f"wrote {out.resolve()} and {plot_beside(results, out, save_plot)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
