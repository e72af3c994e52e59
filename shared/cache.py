"""Where envport keeps things it builds or downloads at run time (reference sdists, compiled C)."""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path
from typing import Iterator, Mapping


def cache_dir(*parts: str, environ: Mapping[str, str] | None = None) -> Path:
    """$ENVPORT_CACHE_DIR, else $XDG_CACHE_HOME/envport, else ~/.cache/envport (read from `environ`,
    default os.environ); created on demand."""
    environ = os.environ if environ is None else environ
    root = environ.get("ENVPORT_CACHE_DIR")
    if not root:
        xdg = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(xdg, "envport")
    path = Path(root, *parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock between processes: parallel test processes build a cached file only once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
