"""Scratch repositories for the driver's tests: a copy of the Pong env (with the libraries its tests
import), or a tiny toy env, in a temporary folder that the driver and its agent may edit freely."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
IGNORE = shutil.ignore_patterns("__pycache__", ".hypothesis", "*.png", "translation.lock.json", "l3_regression_*.py")


def _copy(items: list[str], destination: Path) -> None:
    for item in items:
        source = REPO / item
        target = destination / item
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=IGNORE)
        else:
            shutil.copy2(source, target)


def base_repo(destination: Path) -> Path:
    _copy(["shared", "tools/__init__.py", "tools/agent_driver/prompts"], destination)
    (destination / "envs").mkdir(exist_ok=True)
    (destination / "envs" / "__init__.py").write_text("")
    (destination / "pants.toml").write_text("# marks the repository root for the driver\n")
    return destination


def pong_repo(destination: Path, tests: dict[str, list[str]]) -> Path:
    """A copy of envs/pong whose translation.toml lists `tests` per level."""
    base_repo(destination)
    _copy(["envs/pong"], destination)
    toml = destination / "envs/pong/translation.toml"
    text = toml.read_text()
    head, _, rest = text.partition("[tests]")
    tail = rest[rest.index("\n["):] if "\n[" in rest else ""
    lines = "".join(f"{level} = {json.dumps(entries)}\n" for level, entries in tests.items())
    toml.write_text(f"{head}[tests]\n{lines}{tail}")
    return destination


def install_agent(destination: Path) -> Path:
    """The scripted agent as an executable file (file permissions do not always survive a sandbox)."""
    agent = destination / "bin" / "scripted_agent"
    agent.parent.mkdir(exist_ok=True)
    shutil.copy2(FIXTURES / "scripted_agent", agent)
    agent.chmod(agent.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    # the shebang finds python3 on PATH; make it the test's interpreter
    (destination / "bin" / "python3").symlink_to(sys.executable)
    return agent


def write_scenario(destination: Path, rounds: list[dict]) -> Path:
    path = destination / "scenario.json"
    path.write_text(json.dumps({"rounds": rounds}, indent=1))
    return path


def run_driver(root: Path, scenario: Path, *args: str, timeout: float = 1500) -> subprocess.CompletedProcess:
    agent = root / "bin" / "scripted_agent"
    env = dict(os.environ)
    env["SCRIPTED_AGENT_SCENARIO"] = str(scenario)
    env["PATH"] = f"{root / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("AGENT_CMD", None)
    argv = [sys.executable, "-m", "tools.agent_driver.driver", "--root", str(root), *args]
    if args and args[0] in ("translate", "ci") and "--agent-cmd" not in args:
        argv += ["--agent", "scripted", "--agent-cmd", f"{agent} -p --output-format json", "--agent-output", "claude"]
    return subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)


TOY_REFERENCE = '''"""The toy reference: a counter that wraps at 10."""


def step(count, action):
    return (count + action) % 10
'''

TOY_TRANSLATION = '''def step(count, action):
    return (count + action) % 10
'''

TOY_L1 = '''from envs.toy.reference.counter import step as reference_step
from envs.toy.translated.counter import step
from shared.verification.components import Components

TOY = Components("toy", ["counter"])


@TOY.covers("counter")
def test_step_matches_reference():
    for count in range(10):
        for action in range(3):
            assert step(count, action) == reference_step(count, action), (count, action)
'''


def toy_repo(destination: Path) -> Path:
    """A minimal env whose L1 runs in a second: envs/toy, reference in the repo, no loader."""
    base_repo(destination)
    toy = destination / "envs" / "toy"
    for folder in ("", "reference", "translated", "tests"):
        (toy / folder).mkdir(parents=True, exist_ok=True)
        (toy / folder / "__init__.py").write_text("")
    (toy / "reference" / "counter.py").write_text(TOY_REFERENCE)
    (toy / "tests" / "l1_counter.py").write_text(TOY_L1)
    (toy / "translation.toml").write_text('''env = "toy"
target_language = "jax"

[reference]
package = "toy-counter"
version = "1.0"
adapter = ["envs/toy/reference/counter.py"]

[[modules]]
name = "counter"
reference = "envs/toy/reference/counter.py"
targets = ["envs/toy/translated/counter.py"]
components = ["counter"]

[tests]
l1 = ["envs/toy/tests:l1"]
''')
    return destination
