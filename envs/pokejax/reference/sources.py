"""Pokemon Showdown's source text for the agent driver (translation.toml's source_loader): the files
of the pinned npm package as `npm ci` installed them, e.g. "pokemon-showdown/dist/data/mods/gen1/scripts.js"."""

from __future__ import annotations

from pathlib import Path

from envs.pokejax.reference.showdown import install_dir

PACKAGE = "pokemon-showdown"


def read_source(path: str) -> str:
    package, _, inside = path.partition("/")
    if package != PACKAGE or not inside:
        raise FileNotFoundError(f"{path}: the PokeJAX reference files are {PACKAGE}/...")
    root = (install_dir() / PACKAGE).resolve()
    file = (root / inside).resolve()
    if root not in file.parents or not file.is_file():
        raise FileNotFoundError(f"{path}: not a file of the installed {PACKAGE}")
    return Path(file).read_text()
