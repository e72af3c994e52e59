"""The names the rest of an env uses from each generated file: the contract a translation must
keep, which the prompt spells out (the tests reach the translation through these names)."""

from __future__ import annotations

import ast
from pathlib import Path

from .manifest import Manifest, Module


def _dotted(path: str) -> str:
    return path.removesuffix(".py").replace("/", ".")


def _package_of(relative: Path) -> list[str]:
    """The package a file's relative imports start from (for __init__.py, its own folder)."""
    return list(relative.with_suffix("").parts)[:-1]


def _resolve(node: ast.ImportFrom, relative: Path) -> str:
    if not node.level:
        return node.module or ""
    package = _package_of(relative)
    base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
    return ".".join(base + ([node.module] if node.module else []))


def used_names(manifest: Manifest, target: str) -> dict[str, list[str]]:
    """{user file: sorted names it takes from `target`} over the env folder's other Python files."""
    module_name = _dotted(target)
    parent, _, stem = module_name.rpartition(".")
    users: dict[str, list[str]] = {}
    env_root = manifest.root / manifest.env_dir
    for path in sorted(env_root.rglob("*.py")):
        relative = path.relative_to(manifest.root)
        if str(relative) == target or "__pycache__" in relative.parts:
            continue
        try:
            tree = ast.parse(path.read_text())
        except (SyntaxError, UnicodeDecodeError):
            continue
        handles: set[str] = set()
        names: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = _resolve(node, relative)
                for alias in node.names:
                    if source == parent and alias.name == stem:
                        handles.add(alias.asname or alias.name)
                    elif source == module_name:
                        names.add(alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == module_name and alias.asname:
                        handles.add(alias.asname)
        if handles:
            for node in ast.walk(tree):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in handles:
                    names.add(node.attr)
        if names:
            users[str(relative)] = sorted(names)
    return users


def describe(manifest: Manifest, module: Module) -> str:
    lines = []
    for target in module.targets:
        users = used_names(manifest, target)
        if not users:
            lines.append(f"- `{target}`: no other file of the env uses it directly")
            continue
        everything = sorted({name for names in users.values() for name in names})
        lines.append(f"- `{target}` must provide: {', '.join(f'`{n}`' for n in everything)}")
        lines.append(f"  (used by {', '.join(f'`{u}`' for u in users)}; read them for the signatures)")
    return "\n".join(lines)
