"""Gymnasium ids registered by name, so that registering imports none of an env's code.

Each env package registers its ids when imported (`import envs.pong`) with "module:Class" entry
points: Gymnasium imports an env's module when the env is first made. So importing the package is
cheap (no JAX, no C compiler, no Node), and `python -m envs.pokejax.gen_data` runs that module once,
rather than after the registration had already imported it (runpy's RuntimeWarning "found in
sys.modules after import of package ..., this may result in unpredictable behaviour").

Pants does not see an import written as a string: each env's BUILD names the entry points' modules
as dependencies of its `__init__.py`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Optional

import gymnasium

REPO = Path(__file__).resolve().parents[1]


def register_once(env_id: str, entry_point: str, vector_entry_point: Optional[str] = None, **kwargs) -> None:
    """gymnasium.register, unless `env_id` is registered already (Gymnasium warns on a second one)."""
    if env_id not in gymnasium.registry:
        gymnasium.register(env_id, entry_point=entry_point, vector_entry_point=vector_entry_point, **kwargs)


def submodules_loaded_by_import(package: str) -> list[str]:
    """The modules under `package` that `import package` loads, in a fresh interpreter."""
    code = f"import sys, {package}; print(*sorted(m for m in sys.modules if m.startswith('{package}.')))"
    environ = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", code], env=environ, cwd=REPO, capture_output=True, text=True,
                          timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"import {package} failed:\n{done.stderr}")
    return done.stdout.split()
