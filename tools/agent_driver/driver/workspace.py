"""What an agent changed: a snapshot of the env folder and of the shared libraries and tools before
and after each agent call, the unified diff between them, and the restoring of protected files
(tests, reference adapter, translation.toml, anything under shared/ or tools/, such as the
verification library and the prompt templates) that an agent must not edit to make its
translation pass."""

from __future__ import annotations

import difflib
from pathlib import Path

from .manifest import Manifest

SKIP_PARTS = {"__pycache__", ".hypothesis", ".pytest_cache", "target", "node_modules"}
WATCHED_OUTSIDE_ENV = ("shared", "tools")

Snapshot = dict[str, bytes]


def _files(root: Path, directory: str) -> list[Path]:
    base = root / directory
    if not base.exists():
        return []
    return [p for p in base.rglob("*") if p.is_file() and not SKIP_PARTS.intersection(p.relative_to(root).parts)]


def snapshot(manifest: Manifest) -> Snapshot:
    root = manifest.root
    paths = set(_files(root, str(manifest.env_dir)))
    for directory in WATCHED_OUTSIDE_ENV:
        paths.update(_files(root, directory))
    paths.update(root / t for t in manifest.generated_files() if (root / t).is_file())
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(paths)}


def protected(manifest: Manifest, path: str) -> bool:
    env = str(manifest.env_dir)
    if path in manifest.generated_files():
        return False
    return (path.startswith(f"{env}/tests/") or path in manifest.adapter
            or path in (f"{env}/translation.toml", f"{env}/translation.lock.json")
            or any(path.startswith(d + "/") for d in WATCHED_OUTSIDE_ENV))


def changed_paths(before: Snapshot, after: Snapshot) -> list[str]:
    return sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))


def diff(before: Snapshot, after: Snapshot) -> str:
    chunks = []
    for path in changed_paths(before, after):
        old, new = before.get(path), after.get(path)
        try:
            old_lines = old.decode().splitlines(keepends=True) if old is not None else []
            new_lines = new.decode().splitlines(keepends=True) if new is not None else []
        except UnicodeDecodeError:
            chunks.append(f"Binary file {path} changed\n")
            continue
        chunks.append("".join(difflib.unified_diff(old_lines, new_lines, f"a/{path}" if old is not None else "/dev/null",
                                                   f"b/{path}" if new is not None else "/dev/null")))
    return "".join(chunks)


def restore_protected(manifest: Manifest, before: Snapshot, after: Snapshot) -> list[str]:
    """Put back every protected file the agent changed, created or deleted; returns their paths."""
    restored = []
    for path in changed_paths(before, after):
        if not protected(manifest, path):
            continue
        target = manifest.root / path
        if path in before:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(before[path])
        else:
            target.unlink(missing_ok=True)
        restored.append(path)
    return restored
