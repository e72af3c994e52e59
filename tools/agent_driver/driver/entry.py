"""The pex's entry point. It puts the repository's working tree first on sys.path before anything
else is imported, so that the env code the driver loads (reference adapters, the `shared`
libraries) is the working tree's, not the copy packaged in the pex."""

from __future__ import annotations

import sys
from pathlib import Path


def find_root(explicit: str | None = None) -> Path:
    """--root if given, else the nearest folder above the working directory with a pants.toml."""
    if explicit:
        return Path(explicit).resolve()
    here = Path.cwd().resolve()
    for candidate in (here, *here.parents):
        if (candidate / "pants.toml").exists():
            return candidate
    return here


def repository_root(argv: list[str]) -> Path:
    """find_root with --root read from argv, before argparse runs (nothing else is imported yet)."""
    for index, word in enumerate(argv):
        if word == "--root" and index + 1 < len(argv):
            return find_root(argv[index + 1])
        if word.startswith("--root="):
            return find_root(word.split("=", 1)[1])
    return find_root()


def main() -> int:
    root = str(repository_root(sys.argv[1:]))
    if root in sys.path:
        sys.path.remove(root)
    sys.path.insert(0, root)
    for name in [m for m in sys.modules if m == "shared" or m.startswith("shared.")]:
        del sys.modules[name]
    from tools.agent_driver.driver.cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
