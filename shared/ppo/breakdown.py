"""Where one PPO iteration's time goes: env step, host-device transfer, policy forward, backward
(the paper's Figure 3), for any registered env and backend and any network size.

    ./pants run shared/ppo:breakdown -- --env pong --backends jax,c --networks small,2M
    python -m shared.ppo.breakdown --env pong --networks small,2M,20M --num-envs 1024 --num-steps 16
    ./pants run shared/ppo:breakdown -- --env tcgjax --num-envs 8     # every env of the repository is registered
    ./pants run shared/ppo:breakdown -- --list                        # the registry, each backend imported

JAX backends run PPO fused on the device: nothing crosses to the host, so their transfer is 0; each
phase is timed as its own compiled program (a scan of env steps, a scan of forwards, the update).
Host backends (C, Rust, Python references) are timed inside the host loop, phase by phase, on the
update after the first (which compiles). There the observation goes to the jitted policy call as
numpy, so its copy to the device is timed as forward; transfer is the way back (actions, log-probs,
values) and the rollout's upload to the update. Prints a table and saves a stacked bar chart (PNG) and JSON.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__" and not __package__:
    sys.path[0] = str(Path(__file__).resolve().parents[2])

import argparse
import dataclasses
import importlib
import json
import time

import numpy as np

PHASES = ("env_step", "transfer", "forward", "backward")

# env -> backend -> "module:function" returning a dict with either "jax_env" (a JaxEnvSpec) or
# "make_vector_env" (num_envs -> Gymnasium VectorEnv), and optionally "ppo_config": the PPOConfig fields
# the env's PPO needs (an action mask, continuous actions). New envs add themselves here.
REGISTRY: dict[str, dict[str, str]] = {
    "pong": {"jax": "envs.pong.ppo_backends:jax_backend", "c": "envs.pong.ppo_backends:c_backend"},
    "halfcheetah": {"jax": "envs.halfcheetah.ppo_backends:jax_backend",
                    "mujoco": "envs.halfcheetah.ppo_backends:mujoco_backend"},
    "emurust": {"rust": "envs.emurust.ppo_backends:rust_backend", "pyboy": "envs.emurust.ppo_backends:pyboy_backend"},
    "pokejax": {"jax": "envs.pokejax.ppo_backends:jax_backend",
                "showdown": "envs.pokejax.ppo_backends:showdown_backend"},
    "tcgjax": {"jax": "envs.tcgjax.ppo_backends:jax_backend", "reference": "envs.tcgjax.ppo_backends:reference_backend"},
}


def _backend_function(path: str):
    """The function a registration names ("module:function"), its module imported."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def _load(path: str):
    return _backend_function(path)()


def list_backends() -> int:
    """Print env, backend and module of every registration after importing its module; 1 if any fails."""
    failed = 0
    for env, backends in REGISTRY.items():
        for backend, path in backends.items():
            try:
                _backend_function(path)
                status = "ok"
            except Exception as error:  # every failing registration is reported, not just the first
                failed += 1
                status = f"FAILED: {type(error).__name__}: {error}"
            print(f"{env:12} {backend:9} {path:48} {status}")
    return 1 if failed else 0


def _timed(fn, *args, repeats: int = 3) -> float:
    import jax

    jax.block_until_ready(fn(*args))  # compile and warm
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        best = min(best, time.perf_counter() - start)
    return best


def jax_breakdown(env, config) -> dict:
    import jax
    import jax.numpy as jnp

    from .core import Transition, make_network, make_train_state, update

    network = make_network(config, env.num_actions)
    key = jax.random.PRNGKey(0)
    train_state = make_train_state(config, network, key, env.observation_shape)
    obs, state = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(key, config.num_envs), env.params)
    rollout = (config.num_steps, config.num_envs)
    if config.continuous:
        actions = jax.random.normal(key, rollout + (env.num_actions,))
    else:
        actions = jax.random.randint(key, rollout, 0, env.num_actions)
    keys = jax.random.split(key, config.num_envs)
    step = env.step_batch or jax.vmap(env.step, in_axes=(0, 0, 0, None))  # as make_train steps it

    @jax.jit
    def env_steps(state, actions):
        def body(state, action):
            obs, state, reward, done, _ = step(keys, state, action, env.params)
            return state, obs
        return jax.lax.scan(body, state, actions)

    _, observations = env_steps(state, actions)

    @jax.jit
    def forwards(params, observations):
        return jax.lax.map(lambda o: network.apply(params, o), observations)

    logits, values = forwards(train_state.params, observations)
    transitions = Transition(done=jnp.zeros(rollout, bool), action=actions, value=values,
                             reward=jnp.zeros(rollout), log_prob=jnp.full(rollout, -1.0), obs=observations)
    backward = jax.jit(lambda ts, tr, last, k: update(ts, tr, last, k, config)[0].params)
    return {
        "env_step": _timed(env_steps, state, actions),
        "transfer": 0.0,
        "forward": _timed(forwards, train_state.params, observations),
        "backward": _timed(backward, train_state, transitions, obs, key),
    }


def host_breakdown(make_vector_env, config, name: str) -> dict:
    from .host_loop import train_host

    env = make_vector_env(config.num_envs)
    config = dataclasses.replace(config, total_timesteps=config.batch_size * 3)  # the first update compiles
    _, _, times = train_host(config, env, show_progress=False, name=name)
    env.close()
    later = times.phases_per_update[1:]  # the first update compiles
    return {phase: float(np.median([p[phase] for p in later])) for phase in PHASES}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="pong", choices=sorted(REGISTRY))
    parser.add_argument("--backends", default=None, help="comma-separated (default: all registered)")
    parser.add_argument("--networks", default="small,2M", help="presets: small, 2M, 20M, 200M")
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--num-steps", type=int, default=128)
    parser.add_argument("--num-minibatches", type=int, default=4,
                        help="the update's minibatches (num-envs x num-steps must divide into them)")
    parser.add_argument("--out", default="bench-results/breakdown")
    parser.add_argument("--list", action="store_true",
                        help="import every registered backend's module, print the registry and exit (a check that "
                             "this program holds every env's dependencies)")
    args = parser.parse_args(argv)
    if args.list:
        return list_backends()

    from rich.console import Console
    from rich.table import Table

    from .core import PPOConfig
    from .networks import parameter_count

    console = Console(width=None if sys.stdout.isatty() else 150)
    backends = args.backends.split(",") if args.backends else list(REGISTRY[args.env])
    unknown = [b for b in backends if b not in REGISTRY[args.env]]
    if unknown:
        parser.error(f"{args.env} has no backend {unknown}; registered: {sorted(REGISTRY[args.env])}")
    presets = args.networks.split(",")
    # every configuration is checked before anything is measured, so that a typo in the last preset
    # does not throw away the minutes spent on the first
    sizes = dict(num_envs=args.num_envs, num_steps=args.num_steps, num_minibatches=args.num_minibatches,
                 total_timesteps=max(1, args.num_envs * args.num_steps) * 3)  # host_breakdown runs 3 updates
    for preset in presets:
        try:
            PPOConfig(network=preset, **sizes)
        except (TypeError, ValueError) as error:
            parser.error(str(error))
    results = []
    for preset in presets:
        for backend in backends:
            spec = _load(REGISTRY[args.env][backend])
            config = PPOConfig(network=preset, **sizes, **spec.get("ppo_config", {}))
            with console.status(f"{args.env}/{backend}, network {preset}"):
                if "jax_env" in spec:
                    phases = jax_breakdown(spec["jax_env"], config)
                    import jax

                    from .core import make_network
                    params = make_network(config, spec["jax_env"].num_actions).init(
                        jax.random.PRNGKey(0), np.zeros(spec["jax_env"].observation_shape, np.float32))
                else:
                    phases = host_breakdown(spec["make_vector_env"], config, f"{args.env}/{backend}")
                    params = None
            results.append({"env": args.env, "backend": backend, "network": preset,
                            "parameters": parameter_count(params) if params is not None else None,
                            "num_envs": args.num_envs, "num_steps": args.num_steps, **phases,
                            "total": sum(phases.values())})

    table = Table(title=f"One PPO iteration, {args.env}: {args.num_envs} envs x {args.num_steps} steps")
    for column in ("backend", "network", *PHASES, "total s", "env share"):
        table.add_column(column, justify="right")
    for r in results:
        table.add_row(r["backend"], r["network"], *(f"{r[p]:.4f}" for p in PHASES), f"{r['total']:.4f}",
                      f"{100 * r['env_step'] / r['total']:.1f}%")
    console.print(table)

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(results, indent=2))
    _plot(results, out.with_suffix(".png"))
    console.print(f"wrote {out.with_suffix('.json')} and {out.with_suffix('.png')}")
    return 0


def _plot(results: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r['backend']}\n{r['network']}" for r in results]
    figure, axis = plt.subplots(figsize=(max(5, 1.4 * len(results)), 4))
    bottom = np.zeros(len(results))
    for phase in PHASES:
        shares = np.asarray([100 * r[phase] / r["total"] for r in results])
        axis.bar(labels, shares, bottom=bottom, label=phase.replace("_", " "))
        bottom += shares
    axis.set_ylabel("% of one PPO iteration")
    axis.set_title(f"{results[0]['env']}: PPO iteration time by phase")
    axis.legend(loc="upper right", fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


if __name__ == "__main__":
    sys.exit(main())
