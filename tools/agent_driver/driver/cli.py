"""./pants run tools/agent_driver -- COMMAND ...

  translate envs/<env> [--agent NAME | --agent-cmd CMD] [--module M] [--budget-usd X] [--max-iterations N] [--l4]
  translate envs/<env> --dry-run     render the prompts only
  status [envs/<env> ...] [--check]
  ci                 status --check, regenerating stale translations when an agent is configured
  adopt envs/<env> --author NAME     verify a hand-written translation and lock it
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Optional

from . import agents, lockfile, loop
from . import manifest as manifest_module
from .entry import find_root
from .manifest import ManifestError


def _options(args, spec: agents.AgentSpec) -> loop.Options:
    return loop.Options(agent=spec, model=args.model, modules=args.module or None, budget_usd=args.budget_usd,
                        max_iterations=args.max_iterations, run_l4=args.l4, agent_timeout_s=args.agent_timeout,
                        level_timeout_s=args.level_timeout, python=args.python)


def _add_loop_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent", help=f"agent preset ({', '.join(sorted(agents.PRESETS))}) or a name for --agent-cmd")
    parser.add_argument("--agent-cmd", help="agent command template with {prompt_file} {workdir} {model}; "
                                            "the prompt is also piped on stdin (default: $AGENT_CMD)")
    parser.add_argument("--agent-output", default="", help="how to read a custom command's usage: claude, gemini, "
                                                           "codex or none (default: $AGENT_OUTPUT or none)")
    parser.add_argument("--model", default="", help="model passed to the agent as {model}")
    parser.add_argument("--budget-usd", type=float, default=None, help="stop once the agent's reported cost reaches this")
    parser.add_argument("--max-iterations", type=int, default=6, help="most agent calls in this run (default 6)")
    parser.add_argument("--l4", action="store_true", help="also run L4 (PPO training; slow)")
    parser.add_argument("--agent-timeout", type=float, default=1800, help="seconds before a hung agent is stopped")
    parser.add_argument("--level-timeout", type=float, default=3600, help="seconds allowed for one level's tests")
    parser.add_argument("--python", default=None, help="interpreter that runs the tests (default: this one)")


def _print_outcome(outcome: loop.Outcome) -> int:
    cost = f"${outcome.cost_usd:.4f}" if outcome.cost_usd is not None else "not reported"
    stream = sys.stdout if outcome.status == loop.SUCCESS else sys.stderr
    print(f"{outcome.status}: {outcome.message}", file=stream)
    print(f"agent calls: {outcome.agent_calls}; cost: {cost}; log: {outcome.run_dir}", file=stream)
    return outcome.exit_code


def cmd_translate(args) -> int:
    manifest = manifest_module.load(args.env, find_root(args.root))
    if args.dry_run:
        try:
            paths = loop.dry_run(manifest, args.module)
        except loop.StopRun as stop:
            print(f"error: {stop.message}", file=sys.stderr)
            return 2
        for path in paths:
            print(f"prompt written to {path} ({len(path.read_text())} characters)")
        return 0
    spec = agents.resolve(args.agent, args.agent_cmd, args.agent_output)
    return _print_outcome(loop.translate(manifest, _options(args, spec)))


def cmd_adopt(args) -> int:
    manifest = manifest_module.load(args.env, find_root(args.root))
    spec = agents.AgentSpec("none", "")
    return _print_outcome(loop.adopt(manifest, _options(args, spec), args.author))


def _statuses(root: Path, envs: list[str]) -> list[lockfile.Status]:
    env_dirs = envs or [str(p) for p in manifest_module.discover(root)]
    return [lockfile.status(manifest_module.load(env, root)) for env in env_dirs]


def _print_table(statuses: list[lockfile.Status], verbose: bool) -> None:
    width = max([len(s.env_dir) for s in statuses] + [3])
    print(f"{'env':<{width}}  status")
    for s in statuses:
        print(f"{s.env_dir:<{width}}  {s.state if not s.reasons or s.state != 'stale' else ' / '.join(s.reasons)}")
        if verbose or s.state == "corrupt lock":
            for detail in s.details:
                print(f"{'':<{width}}    {detail}")


def cmd_status(args) -> int:
    root = find_root(args.root)
    statuses = _statuses(root, args.env)
    if not statuses:
        print("no env folder with a translation.toml under envs/")
        return 0
    _print_table(statuses, args.verbose)
    stale = [s for s in statuses if s.stale]
    return 1 if (args.check and stale) else 0


def cmd_ci(args) -> int:
    """CI's incremental step: every translation must be up to date. Stale ones are regenerated when an
    agent is configured (--agent, --agent-cmd or $AGENT_CMD); otherwise CI fails and says how."""
    root = find_root(args.root)
    statuses = _statuses(root, [])
    _print_table(statuses, verbose=True)
    stale = [s for s in statuses if s.stale]
    if not stale:
        print("every translation is up to date with its lock")
        return 0
    if not (args.agent or args.agent_cmd or os.environ.get("AGENT_CMD")):
        print("\nstale translations, and no agent configured (--agent or AGENT_CMD) to regenerate them:", file=sys.stderr)
        for s in stale:
            print(f"  {s.env_dir}: {' / '.join(s.reasons)}\n"
                  f"    regenerate: ./pants run tools/agent_driver -- translate {s.env_dir} --agent claude", file=sys.stderr)
        print("(a translation written by hand is re-verified and locked with "
              "`./pants run tools/agent_driver -- adopt ENV --author NAME`)", file=sys.stderr)
        return 1
    spec = agents.resolve(args.agent, args.agent_cmd, args.agent_output)
    worst = 0
    for s in stale:
        print(f"\nregenerating {s.env_dir} ({' / '.join(s.reasons)})")
        manifest = manifest_module.load(s.env_dir, root)
        worst = max(worst, _print_outcome(loop.translate(manifest, _options(args, spec))))
    return worst


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="agent_driver", description="Closed-loop translation of envport environments")
    top.add_argument("--root", default=None, help="repository root (default: the nearest folder with pants.toml)")
    commands = top.add_subparsers(dest="command", required=True)
    translate = commands.add_parser("translate", help="translate (or regenerate) one env with a coding agent")
    translate.add_argument("env", help="env folder, e.g. envs/pong")
    translate.add_argument("--module", action="append", help="only this module (repeatable)")
    translate.add_argument("--dry-run", action="store_true", help="render the translation prompts and stop (no agent)")
    _add_loop_arguments(translate)
    translate.set_defaults(func=cmd_translate)
    status = commands.add_parser("status", help="compare every lock with the current inputs")
    status.add_argument("env", nargs="*", help="env folders (default: all)")
    status.add_argument("--check", action="store_true", help="exit 1 when any translation is stale")
    status.add_argument("-v", "--verbose", action="store_true", help="list what changed")
    status.set_defaults(func=cmd_status)
    ci = commands.add_parser("ci", help="fail on stale translations, or regenerate them with a configured agent")
    ci.add_argument("--module", action="append", help=argparse.SUPPRESS)
    _add_loop_arguments(ci)
    ci.set_defaults(func=cmd_ci)
    adopt = commands.add_parser("adopt", help="verify a hand-written translation and write its lock")
    adopt.add_argument("env")
    adopt.add_argument("--author", required=True, help="who wrote it (recorded in the lock)")
    adopt.add_argument("--module", action="append", help=argparse.SUPPRESS)
    _add_loop_arguments(adopt)
    adopt.set_defaults(func=cmd_adopt)
    return top


def main(argv: Optional[list[str]] = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except (ManifestError, agents.AgentError, lockfile.LockError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; no lock was written", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
