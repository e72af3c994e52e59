"""The closed loop: translate each module, verify it at L1, repair until it passes; then L2, L3 and
(if asked) L4, going back to the lowest failing level after every repair. Stops on success, when
the budget is spent, after max iterations (agent calls), or on an agent error, and says which."""

from __future__ import annotations

import dataclasses
import importlib
import sys
from pathlib import Path
from typing import Callable, Optional

from . import agents, levels, lockfile, prompts, regression, workspace
from .manifest import Manifest, Module
from .runlog import RunLog, new_run_id

SUCCESS, BUDGET, MAX_ITERATIONS, AGENT_ERROR, SETUP_ERROR = (
    "success", "budget spent", "max iterations reached", "agent error", "setup error")
EXIT_CODES = {SUCCESS: 0, AGENT_ERROR: 2, BUDGET: 3, MAX_ITERATIONS: 4, SETUP_ERROR: 5}


@dataclasses.dataclass
class Options:
    agent: agents.AgentSpec
    model: str = ""
    modules: Optional[list[str]] = None
    budget_usd: Optional[float] = None
    max_iterations: int = 6
    run_l4: bool = False
    agent_timeout_s: float = 1800
    level_timeout_s: float = 3600
    python: Optional[str] = None


@dataclasses.dataclass
class Outcome:
    status: str
    message: str
    run_dir: Path
    agent_calls: int
    cost_usd: Optional[float]
    lock_path: Optional[Path] = None
    regression_tests: list[str] = dataclasses.field(default_factory=list)
    last_failure: Optional[levels.LevelResult] = None

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]


def _say(text: str) -> None:
    print(text, flush=True)  # progress must show as it happens, also when stdout is a pipe


class StopRun(Exception):
    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def load_reference_source(manifest: Manifest, module: Module) -> str:
    """The reference file's text, through translation.toml's source_loader ("module:function")."""
    if not manifest.source_loader:
        path = manifest.root / module.reference
        if path.is_file():
            return path.read_text()
        raise StopRun(SETUP_ERROR, f"{manifest.path}: no [reference] source_loader, and {module.reference} is not a "
                                 "file of the repository")
    module_name, _, function = manifest.source_loader.partition(":")
    if str(manifest.root) not in sys.path:
        sys.path.insert(0, str(manifest.root))
    try:
        return getattr(importlib.import_module(module_name), function)(module.reference)
    except Exception as error:
        raise StopRun(SETUP_ERROR, f"could not read the reference {module.reference} through "
                                 f"{manifest.source_loader}: {type(error).__name__}: {error}") from error


class Driver:
    def __init__(self, manifest: Manifest, options: Options, say: Optional[Callable[[str], None]] = None):
        self.manifest, self.options = manifest, options
        self.say = say or _say
        self.run_id = new_run_id()
        self.log = RunLog(manifest.root, manifest.env, self.run_id, {
            "agent": options.agent.name, "command": options.agent.command, "model": options.model,
            "modules": options.modules, "budget_usd": options.budget_usd, "max_iterations": options.max_iterations,
            "l4": options.run_l4})
        self.calls = 0
        self.cost = 0.0
        self.cost_reported = True
        self.tokens = {"input": 0, "output": 0}
        self.models: list[str] = []
        self.level_counts = {level: {"runs": 0, "failed": 0} for level in ("l1", "l2", "l3", "l4")}
        self.divergences: list[tuple[dict, list[str]]] = []
        self.sources: dict[str, str] = {}

    # --- the agent -----------------------------------------------------------------------------

    def _call_agent(self, prompt: str, module: Module, kind: str) -> list[str]:
        opts = self.options
        if self.calls >= opts.max_iterations:
            raise StopRun(MAX_ITERATIONS, f"max iterations reached ({opts.max_iterations} agent calls)")
        if opts.budget_usd is not None and self.cost_reported and self.cost >= opts.budget_usd:
            raise StopRun(BUDGET, f"budget spent: ${self.cost:.4f} of ${opts.budget_usd:.4f}")
        self.calls += 1
        directory = self.log.iteration_dir(self.calls)
        prompt_file = directory / f"prompt-{kind}.md"
        prompt_file.write_text(prompt)
        self.say(f"[{self.calls}/{opts.max_iterations}] {kind} {module.name}: running {opts.agent.name} ...")
        before = workspace.snapshot(self.manifest)
        try:
            result = agents.run(opts.agent, prompt_file, self.manifest.root, model=opts.model,
                                timeout_s=opts.agent_timeout_s)
        except agents.AgentError as error:
            after = workspace.snapshot(self.manifest)
            (directory / "agent.diff").write_text(workspace.diff(before, after))
            workspace.restore_protected(self.manifest, before, after)
            self.log.event(iteration=self.calls, kind=kind, module=module.name, agent_error=str(error))
            raise StopRun(AGENT_ERROR, str(error)) from error
        after = workspace.snapshot(self.manifest)
        (directory / "agent.stdout").write_text(result.stdout)
        (directory / "agent.stderr").write_text(result.stderr)
        (directory / "agent.diff").write_text(workspace.diff(before, after))
        restored = workspace.restore_protected(self.manifest, before, after)
        usage = result.usage
        if usage.cost_usd is None:
            self.cost_reported = False
        else:
            self.cost += float(usage.cost_usd)
        self.tokens["input"] += usage.input_tokens or 0
        self.tokens["output"] += usage.output_tokens or 0
        if usage.model and usage.model not in self.models:
            self.models.append(usage.model)
        changed = workspace.changed_paths(before, after)
        self.log.event(iteration=self.calls, kind=kind, module=module.name, seconds=round(result.seconds, 1),
                       returncode=result.returncode, usage=usage.as_dict(), changed=changed, restored=restored)
        cost_text = f", ${usage.cost_usd:.4f}" if usage.cost_usd is not None else ""
        self.say(f"    agent finished in {result.seconds:.0f} s{cost_text}; changed {len(changed)} files"
                 + (f"; restored protected {restored}" if restored else ""))
        if result.returncode != 0:
            tail = (result.stderr.strip() or result.stdout.strip())[-1500:]
            raise StopRun(AGENT_ERROR, f"agent {opts.agent.name} exited with status {result.returncode}:\n{tail}")
        if opts.budget_usd is not None and usage.cost_usd is None and self.calls == 1:
            self.say(f"    warning: {opts.agent.name} reports no cost; --budget-usd cannot be enforced")
        if opts.budget_usd is not None and self.cost_reported and self.cost > opts.budget_usd:
            raise StopRun(BUDGET, f"budget exceeded: ${self.cost:.4f} spent, budget ${opts.budget_usd:.4f}")
        return restored

    # --- the levels ----------------------------------------------------------------------------

    def _verify(self, level: str, entries: tuple[str, ...], module: Optional[Module] = None,
                counted: bool = True) -> levels.LevelResult:
        label = level.upper() + (f" ({module.name})" if module and len(self.manifest.modules) > 1 else "")
        self.say(f"    {label} ...")
        directory = self.log.directory / f"iter-{self.calls:02d}"
        result = levels.run_level(self.manifest, level, entries, directory, python=self.options.python,
                                  timeout_s=self.options.level_timeout_s)
        if counted:
            self.level_counts[level]["runs"] += 1
        if counted and not result.passed:
            self.level_counts[level]["failed"] += 1
            for divergence in result.divergences:
                self.divergences.append((divergence, result.components))
        self.log.event(iteration=self.calls, **result.as_dict())
        self.say(f"    {result.summary()}")
        return result

    def _levels_after_l1(self) -> list[tuple[str, tuple[str, ...]]]:
        upper = [("l2", self.manifest.tests["l2"]), ("l3", self.manifest.tests["l3"])]
        if self.options.run_l4:
            upper.append(("l4", self.manifest.tests["l4"]))
        return upper

    def _l1_runs(self) -> list[tuple[tuple[str, ...], Optional[Module]]]:
        """Each module's L1 tests, once per distinct list (modules usually share the env's)."""
        runs: list[tuple[tuple[str, ...], Optional[Module]]] = []
        for module in self.manifest.modules:
            if all(entries != module.l1 for entries, _ in runs):
                runs.append((module.l1, module))
        return runs

    def _repair(self, result: levels.LevelResult, module: Optional[Module], restored: list[str]) -> list[str]:
        if module is None:
            module = (self.manifest.module_of_component(result.components[0]) if result.components
                      else self._selected_modules()[0])
        prompt = prompts.repair_prompt(self.manifest, module, self._source(module), level=result.level,
                                       report=result.report(), components=result.components,
                                       iteration=self.calls + 1, reverted=restored)
        return self._call_agent(prompt, module, f"repair-{result.level}")

    def _source(self, module: Module) -> str:
        if module.name not in self.sources:
            self.sources[module.name] = load_reference_source(self.manifest, module)
        return self.sources[module.name]

    def _selected_modules(self) -> list[Module]:
        if not self.options.modules:
            return list(self.manifest.modules)
        return [self.manifest.module(name) for name in self.options.modules]

    # --- the loop ------------------------------------------------------------------------------

    def run(self) -> Outcome:
        last_failure: Optional[levels.LevelResult] = None
        try:
            modules = self._selected_modules()
            for module in modules:
                self._source(module)
            for module in modules:
                restored = self._call_agent(prompts.translation_prompt(self.manifest, module, self._source(module)),
                                            module, "translate")
                while True:
                    result = self._verify("l1", module.l1, module)
                    if result.passed:
                        break
                    last_failure = result
                    restored = self._repair(result, module, restored)
            restored = []
            start_at_l1 = len(modules) < len(self.manifest.modules)  # other modules' L1 not yet run this time
            while True:
                failure = None
                checks: list[tuple[str, tuple[str, ...], Optional[Module]]] = []
                if start_at_l1:
                    checks += [("l1", entries, module) for entries, module in self._l1_runs()]
                checks += [(level, entries, None) for level, entries in self._levels_after_l1()]
                for level, entries, module in checks:
                    result = self._verify(level, entries, module)
                    if not result.passed:
                        failure = (result, module if level == "l1" else None)
                        break
                if failure is None:
                    break
                last_failure = failure[0]
                restored = self._repair(failure[0], failure[1], restored)
                start_at_l1 = True  # after any repair, go back to the lowest level
        except StopRun as stop:
            return self._finish(stop.status, stop.message, last_failure)
        return self._success()

    def _success(self) -> Outcome:
        pinned = []
        seen = set()
        for divergence, components in self.divergences:
            key = (divergence.get("seed"), divergence.get("step"), divergence.get("field"))
            if key in seen:
                continue
            seen.add(key)
            path = regression.write_test(self.manifest, divergence, run_id=self.run_id, components=components)
            if path is not None:
                pinned.append(str(path.relative_to(self.manifest.root)))
        if pinned:
            self.say(f"    pinned {len(pinned)} fixed L3 divergence(s) as regression tests: {', '.join(pinned)}")
            check = self._verify("l3", tuple(pinned), counted=False)
            if not check.passed:
                return self._finish(SETUP_ERROR, "a pinned regression test fails on the fixed translation; "
                                                 f"see {self.log.directory}", check)
        iterations = {"agent_calls": self.calls, **{level: counts for level, counts in self.level_counts.items()}}
        if not self.options.run_l4:
            iterations["l4"] = "not run (--l4 to include it)"
        record = lockfile.build(
            self.manifest,
            source_hashes={m.reference: lockfile.sha256_bytes(self._source(m).encode()) for m in self.manifest.modules},
            agent={"name": self.options.agent.name, "command": self.options.agent.command,
                   "model": self.options.model or ", ".join(self.models) or None},
            iterations=iterations, cost_usd=round(self.cost, 6) if self.cost_reported else None, tokens=self.tokens,
            run_id=self.run_id, regression_tests=pinned)
        path = lockfile.write(self.manifest, record)
        outcome = self._finish(SUCCESS, f"every level passed after {self.calls} agent call(s); lock written to "
                                        f"{path.relative_to(self.manifest.root)}", None)
        outcome.lock_path, outcome.regression_tests = path, pinned
        return outcome

    def _finish(self, status: str, message: str, last_failure: Optional[levels.LevelResult]) -> Outcome:
        cost = round(self.cost, 6) if self.cost_reported else None
        self.log.finish(status=status, message=message, agent_calls=self.calls, cost_usd=cost, tokens=self.tokens,
                        levels=self.level_counts,
                        last_failure=last_failure.as_dict() if last_failure else None)
        if status != SUCCESS and last_failure is not None:
            message += f"\nlast failure: {last_failure.summary()}"
        return Outcome(status, message, self.log.directory, self.calls, cost, last_failure=last_failure)


def adopt(manifest: Manifest, options: Options, author: str, say: Optional[Callable[[str], None]] = None) -> Outcome:
    """Verify a translation that no agent wrote (L1 to L3, and L4 if asked) and, if every level
    passes, lock it with agent "none" and its author, so that status can tell when it goes stale."""
    driver = Driver(manifest, options, say)
    try:
        for module in manifest.modules:
            driver._source(module)
        checks = [("l1", entries) for entries, _ in driver._l1_runs()] + driver._levels_after_l1()
        for level, entries in checks:
            result = driver._verify(level, entries)
            if not result.passed:
                return driver._finish(SETUP_ERROR, f"not adopted: {result.summary()}\n{result.report()}", result)
    except StopRun as stop:
        return driver._finish(stop.status, stop.message, None)
    driver.options = dataclasses.replace(options, agent=agents.AgentSpec(f"none ({author})", ""))
    return driver._success()


def dry_run(manifest: Manifest, modules: Optional[list[str]] = None) -> list[Path]:
    """Render each selected module's translation prompt into a new log folder, and run nothing."""
    log = RunLog(manifest.root, manifest.env, new_run_id() + "-dry-run", {"dry_run": True, "modules": modules})
    selected = [manifest.module(name) for name in modules] if modules else list(manifest.modules)
    paths = []
    for module in selected:
        path = log.directory / f"prompt-translate-{module.name}.md"
        path.write_text(prompts.translation_prompt(manifest, module, load_reference_source(manifest, module)))
        paths.append(path)
    log.finish(status="dry run", prompts=[str(p) for p in paths])
    return paths


def translate(manifest: Manifest, options: Options, say: Optional[Callable[[str], None]] = None) -> Outcome:
    return Driver(manifest, options, say).run()
