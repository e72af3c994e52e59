"""An env's translation.toml, read into typed records with errors that say which key is wrong."""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path
from typing import Any

LEVELS = ("l1", "l2", "l3", "l4")
TARGET_LANGUAGES = ("jax", "rust")


class ManifestError(ValueError):
    pass


@dataclasses.dataclass(frozen=True)
class Module:
    name: str
    reference: str            # file of the reference package (inside its distribution) that this module translates
    targets: tuple[str, ...]  # repo-relative files the agent writes
    components: tuple[str, ...]
    l1: tuple[str, ...]       # this module's L1 tests (the env's L1 tests when the module names none)


@dataclasses.dataclass(frozen=True)
class Manifest:
    root: Path                # repository root
    env_dir: Path             # repo-relative, e.g. envs/pong
    env: str
    target_language: str
    reason: str
    package: str
    version: str
    sdist_sha256: str
    source_files: tuple[str, ...]
    source_loader: str        # "module:function" returning a reference file's text, given its path
    adapter: tuple[str, ...]
    modules: tuple[Module, ...]
    tests: dict[str, tuple[str, ...]]
    field_components: dict[str, tuple[str, ...]]  # L3 field -> components it belongs to
    equivalence: dict[str, Any]

    @property
    def path(self) -> Path:
        return self.root / self.env_dir / "translation.toml"

    @property
    def lock_path(self) -> Path:
        return self.root / self.env_dir / "translation.lock.json"

    def module(self, name: str) -> Module:
        for module in self.modules:
            if module.name == name:
                return module
        raise ManifestError(f"{self.path}: no module {name!r}; modules: {[m.name for m in self.modules]}")

    def components_of(self, field: str) -> tuple[str, ...]:
        return self.field_components.get(field, ())

    def module_of_component(self, component: str) -> Module:
        for module in self.modules:
            if component in module.components:
                return module
        return self.modules[0]

    def generated_files(self) -> list[str]:
        return sorted({t for module in self.modules for t in module.targets})


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ManifestError(f"{where}: expected a string or a list of strings, got {value!r}")
    return tuple(value)


def _require(table: dict, key: str, where: str) -> Any:
    if key not in table:
        raise ManifestError(f"{where}: missing key {key!r}")
    return table[key]


def load(env_dir: str | Path, root: str | Path = ".") -> Manifest:
    root = Path(root).resolve()
    env_dir = Path(env_dir)
    if env_dir.is_absolute():
        env_dir = env_dir.resolve().relative_to(root)
    path = root / env_dir / "translation.toml"
    if not path.is_file():
        raise ManifestError(f"{path} not found: every env folder needs a translation.toml "
                            "(see README, 'Translating a new environment')")
    try:
        spec = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as error:
        raise ManifestError(f"{path}: not valid TOML: {error}") from error
    where = str(path)
    language = _require(spec, "target_language", where)
    if language not in TARGET_LANGUAGES:
        raise ManifestError(f"{where}: target_language must be one of {TARGET_LANGUAGES}, got {language!r}")
    reference = _require(spec, "reference", where)
    tests = spec.get("tests", {})
    unknown = set(tests) - set(LEVELS)
    if unknown:
        raise ManifestError(f"{where}: [tests] has unknown levels {sorted(unknown)}; levels are {LEVELS}")
    level_tests = {level: _strings(tests.get(level, []), f"{where} [tests] {level}") for level in LEVELS}
    raw_modules = _require(spec, "modules", where)
    if not raw_modules:
        raise ManifestError(f"{where}: [[modules]] is empty")
    modules = []
    for index, raw in enumerate(raw_modules):
        at = f"{where} [[modules]] #{index + 1}"
        name = _require(raw, "name", at)
        targets = _strings(_require(raw, "targets", at), f"{at} targets")
        if not targets:
            raise ManifestError(f"{at}: targets is empty")
        for target in targets:
            if Path(target).is_absolute() or ".." in Path(target).parts:
                raise ManifestError(f"{at}: target {target!r} must be a path inside the repository")
        modules.append(Module(
            name=name, reference=_require(raw, "reference", at), targets=targets,
            components=_strings(raw.get("components", []), f"{at} components"),
            l1=_strings(raw.get("l1", list(level_tests["l1"])), f"{at} l1"),
        ))
    names = [m.name for m in modules]
    if len(set(names)) != len(names):
        raise ManifestError(f"{where}: duplicate module names {names}")
    field_components = {field: _strings(value, f"{where} [l3_fields] {field}")
                        for field, value in spec.get("l3_fields", {}).items()}
    return Manifest(
        root=root, env_dir=env_dir, env=spec.get("env", env_dir.name), target_language=language,
        reason=spec.get("reason", ""),
        package=_require(reference, "package", f"{where} [reference]"),
        version=_require(reference, "version", f"{where} [reference]"),
        sdist_sha256=reference.get("sdist_sha256", ""),
        source_files=_strings(reference.get("source_files", []), f"{where} [reference] source_files"),
        source_loader=reference.get("source_loader", ""),
        adapter=_strings(reference.get("adapter", []), f"{where} [reference] adapter"),
        modules=tuple(modules), tests=level_tests, field_components=field_components,
        equivalence=dict(spec.get("equivalence", {})),
    )


def discover(root: str | Path = ".") -> list[Path]:
    """Every env folder (repo-relative) that has a translation.toml."""
    root = Path(root).resolve()
    return sorted(p.parent.relative_to(root) for p in (root / "envs").glob("*/translation.toml"))
