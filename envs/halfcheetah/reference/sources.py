"""The reference's source text for the agent driver: files of installed packages, named by their
path inside site-packages (e.g. "mujoco/mjx/_src/solver.py", "gymnasium/envs/mujoco/half_cheetah_v5.py").
The packages are pinned in 3rdparty/python/jax-requirements.txt, so the text is pinned with them."""

from __future__ import annotations

import importlib
from pathlib import Path


def read_source(path: str) -> str:
    """Import the deepest package on the path and look in its __path__: mujoco and mujoco-mjx
    both install into mujoco/, and some installers (pex) split it over several folders that only
    the imported package's __path__ lists."""
    parts = path.split("/")
    for depth in range(len(parts) - 1, 0, -1):
        try:
            package = importlib.import_module(".".join(parts[:depth]))
        except ImportError:
            continue
        for location in getattr(package, "__path__", []):
            file = Path(location, *parts[depth:])
            if file.is_file():
                return file.read_text()
    raise FileNotFoundError(f"{path}: not a file of an installed package")
