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
    # mujoco and mujoco-mjx both install into mujoco/, which some installers (pex) make a
    # namespace package with several locations: look in each
    rest = path.split("/", 1)[1] if "/" in path else ""
    for location in spec.submodule_search_locations:
        file = Path(location) / rest
        if file.is_file():
            return file.read_text()
    raise FileNotFoundError(f"{path}: no such file in the installed {top!r} ({list(spec.submodule_search_locations)})")
