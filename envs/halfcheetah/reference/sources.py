"""The reference's source text for the agent driver: files of installed packages, named by their
path inside site-packages (e.g. "mujoco/mjx/_src/solver.py", "gymnasium/envs/mujoco/half_cheetah_v5.py").
The packages are pinned in 3rdparty/python/jax-requirements.txt, so the text is pinned with them."""

from __future__ import annotations

import importlib.util
from pathlib import Path


def read_source(path: str) -> str:
    top = path.split("/", 1)[0]
    spec = importlib.util.find_spec(top)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"{path}: the package {top!r} is not installed")
    file = Path(list(spec.submodule_search_locations)[0]).parent / path
    if not file.is_file():
        raise FileNotFoundError(f"{path}: no such file in the installed {top!r} ({file})")
    return file.read_text()
