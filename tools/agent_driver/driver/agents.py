"""Coding agents as external CLIs: a command template, a subprocess with a timeout, and a parser
for the token use and cost the CLI reports.

Placeholders in a command template: {prompt_file} (the rendered prompt, also piped on stdin),
{workdir} (the repository root, also the working directory) and {model} (--model, or the preset's
default; an option whose value would be an empty {model} is dropped with it).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Callable, Optional


class AgentError(RuntimeError):
    """The agent could not be run, or failed; the message says which and what to do."""


@dataclasses.dataclass
class Usage:
    input_tokens: Optional[int] = None
    output_tokens: Optional[int] = None
    cost_usd: Optional[float] = None
    model: Optional[str] = None

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class AgentResult:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    usage: Usage


def _parse_claude(stdout: str) -> Usage:
    """`claude -p --output-format json`: one object with total_cost_usd, usage and modelUsage."""
    try:
        payload = json.loads(stdout.strip().splitlines()[-1]) if stdout.strip() else {}
    except json.JSONDecodeError:
        return Usage()
    if not isinstance(payload, dict):
        return Usage()
    usage = payload.get("usage") or {}
    inputs = [usage.get(k) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")]
    models = payload.get("modelUsage") or {}
    return Usage(
        input_tokens=sum(v for v in inputs if isinstance(v, int)) if any(isinstance(v, int) for v in inputs) else None,
        output_tokens=usage.get("output_tokens"),
        cost_usd=payload.get("total_cost_usd", payload.get("cost_usd")),
        model=next(iter(models), None) if isinstance(models, dict) else None,
    )


def _parse_gemini(stdout: str) -> Usage:
    """`gemini --output-format json`: {"response", "stats": {"models": {name: {"tokens": {...}}}}}; no cost."""
    try:
        payload = json.loads(stdout)
    except json.JSONDecodeError:
        return Usage()
    models = ((payload or {}).get("stats") or {}).get("models") or {}
    if not isinstance(models, dict) or not models:
        return Usage()
    prompt = sum(int((m.get("tokens") or {}).get("prompt", 0)) for m in models.values())
    output = sum(int((m.get("tokens") or {}).get("candidates", 0)) for m in models.values())
    return Usage(input_tokens=prompt, output_tokens=output, model=", ".join(models))


def _parse_codex(stdout: str) -> Usage:
    """`codex exec --json`: JSON lines; each turn.completed event carries that turn's usage; no cost."""
    inputs = outputs = 0
    seen = False
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict) and event.get("type") == "turn.completed":
            usage = event.get("usage") or {}
            inputs += int(usage.get("input_tokens", 0))
            outputs += int(usage.get("output_tokens", 0))
            seen = True
    return Usage(input_tokens=inputs, output_tokens=outputs) if seen else Usage()


@dataclasses.dataclass(frozen=True)
class AgentSpec:
    name: str
    command: str
    parse: Callable[[str], Usage] = lambda stdout: Usage()
    default_model: str = ""

    def argv(self, prompt_file: Path, workdir: Path, model: str = "") -> list[str]:
        model = model or self.default_model
        words = shlex.split(self.command)
        argv: list[str] = []
        skip = False
        for index, word in enumerate(words):
            if skip:
                skip = False
                continue
            # "--model {model}" with no model: drop both words, let the CLI pick its default
            if not model and index + 1 < len(words) and words[index + 1] == "{model}" and word.startswith("-"):
                skip = True
                continue
            if word == "{model}" and not model:
                continue
            argv.append(word.format(prompt_file=prompt_file, workdir=workdir, model=model))
        return argv


PRESETS = {
    "claude": AgentSpec("claude", "claude -p --output-format json --dangerously-skip-permissions --model {model}",
                        _parse_claude),
    "gemini": AgentSpec("gemini", "gemini --yolo --output-format json --model {model}", _parse_gemini),
    "codex": AgentSpec("codex", "codex exec --json --full-auto --cd {workdir} --model {model} -", _parse_codex),
}

PARSERS = {"claude": _parse_claude, "gemini": _parse_gemini, "codex": _parse_codex, "none": lambda s: Usage()}


def resolve(agent: Optional[str], agent_cmd: Optional[str] = None, output_format: str = "") -> AgentSpec:
    """--agent NAME (a preset) or a command template (--agent-cmd, else $AGENT_CMD). A custom command's
    output is parsed as the preset named by --agent-output (claude, gemini, codex or none)."""
    agent_cmd = agent_cmd or os.environ.get("AGENT_CMD")
    if agent and agent in PRESETS and not agent_cmd:
        return PRESETS[agent]
    if agent_cmd:
        fmt = output_format or (agent if agent in PARSERS else "") or os.environ.get("AGENT_OUTPUT", "none")
        if fmt not in PARSERS:
            raise AgentError(f"unknown agent output format {fmt!r}; one of {sorted(PARSERS)}")
        return AgentSpec(agent or "custom", agent_cmd, PARSERS[fmt])
    if agent:
        raise AgentError(f"unknown agent {agent!r}: presets are {sorted(PRESETS)}; any other CLI can be given "
                         "as a command template with --agent-cmd or AGENT_CMD, e.g. "
                         "AGENT_CMD='my-agent --prompt-file {prompt_file}'")
    raise AgentError("no agent configured: pass --agent claude|gemini|codex, or a command template with "
                     "--agent-cmd / AGENT_CMD")


def run(spec: AgentSpec, prompt_file: Path, workdir: Path, *, model: str = "", timeout_s: float = 1800) -> AgentResult:
    argv = spec.argv(prompt_file, workdir, model)
    executable = argv[0]
    if shutil.which(executable, path=os.environ.get("PATH")) is None and not Path(executable).is_file():
        raise AgentError(f"agent CLI {executable!r} ({spec.name}) not found on PATH; install it, or give another "
                         "command with --agent-cmd / AGENT_CMD")
    start = time.monotonic()
    with open(prompt_file, "rb") as stdin:
        try:
            # its own process group, so that a timeout also stops whatever the agent started
            process = subprocess.Popen(argv, cwd=workdir, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       start_new_session=True)
        except OSError as error:
            raise AgentError(f"could not start agent {argv[0]!r}: {error}") from error
        try:
            stdout, stderr = process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            try:
                process.communicate(timeout=10)
            except subprocess.TimeoutExpired:  # a child that left the group still holds the pipes
                pass
            raise AgentError(f"agent {spec.name} did not finish within {timeout_s:g} s and was stopped "
                             f"(--agent-timeout to allow more)") from None
    text_out, text_err = stdout.decode("utf-8", "replace"), stderr.decode("utf-8", "replace")
    return AgentResult(process.returncode, text_out, text_err, time.monotonic() - start, spec.parse(text_out))


def _kill_group(process: subprocess.Popen) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            continue
