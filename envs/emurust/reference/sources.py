"""PyBoy's source text for the agent driver (translation.toml's source_loader): the pinned wheel
installs its Python sources beside the compiled modules, so "pyboy/core/lcd.py" is read from the
installed package, after checking that it is the pinned version."""

from __future__ import annotations

import importlib.metadata
import importlib.resources

PINNED_VERSION = "2.8.1"


def read_source(path: str) -> str:
    package, _, inside = path.partition("/")
    if package != "pyboy" or not inside:
        raise FileNotFoundError(f"{path}: the EmuRust reference files are pyboy/...")
    installed = importlib.metadata.version("pyboy")
    if installed != PINNED_VERSION:
        raise RuntimeError(f"pyboy {installed} is installed; the translation follows pyboy=={PINNED_VERSION}")
    file = importlib.resources.files("pyboy").joinpath(inside)
    if not file.is_file():
        raise FileNotFoundError(f"{path}: not a file of the installed pyboy")
    return file.read_text()
