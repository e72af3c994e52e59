"""translation.lock.json: the provenance of a translation, and the staleness check against it.

The lock records the sha256 of every input (reference pin and source files, adapter files, prompt
templates, target spec, translation.toml) and of every generated file, with the agent, model,
iterations per level, cost and date. It is written only after every level passed, atomically (a
temporary file renamed over the old one), and carries a digest of its own content so that a
hand-edited or truncated lock is reported as corrupt rather than trusted.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import os
from pathlib import Path
from typing import Any, Optional

from .manifest import Manifest
from .prompts import template_files

SCHEMA = 1
REQUIRED = ("schema", "env", "reference", "prompts", "translation_toml", "generated", "agent", "iterations",
            "date", "content_sha256")


class LockError(RuntimeError):
    pass


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    return sha256_bytes(path.read_bytes())


def _hash_paths(root: Path, paths) -> dict[str, Optional[str]]:
    return {str(p): (sha256_file(root / p) if (root / p).is_file() else None) for p in paths}


def current_inputs(manifest: Manifest) -> dict[str, Any]:
    """The inputs as they are now (reference source files are covered by the package pin: the
    adapter verifies the sdist against sdist_sha256, so they cannot change without it changing)."""
    prompts = _hash_paths(manifest.root, template_files(manifest.target_language).values())
    return {
        "reference": {"package": manifest.package, "version": manifest.version, "sdist_sha256": manifest.sdist_sha256,
                      "adapter": _hash_paths(manifest.root, manifest.adapter)},
        "prompts": prompts,
        "translation_toml": sha256_file(manifest.path),
    }


def _content_digest(record: dict) -> str:
    body = {k: v for k, v in record.items() if k != "content_sha256"}
    return sha256_bytes(json.dumps(body, sort_keys=True).encode())


def build(manifest: Manifest, *, source_hashes: dict[str, str], agent: dict, iterations: dict, cost_usd: Optional[float],
          tokens: dict, run_id: str, regression_tests: list[str]) -> dict:
    inputs = current_inputs(manifest)
    inputs["reference"]["source_files"] = source_hashes
    record = {
        "schema": SCHEMA, "env": manifest.env, "env_dir": str(manifest.env_dir),
        "target_language": manifest.target_language, **inputs,
        "generated": _hash_paths(manifest.root, manifest.generated_files()),
        "agent": agent, "iterations": iterations, "cost_usd": cost_usd, "tokens": tokens,
        "regression_tests": regression_tests, "run_id": run_id,
        "date": datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat(),
    }
    record["content_sha256"] = _content_digest(record)
    return record


def write(manifest: Manifest, record: dict) -> Path:
    path = manifest.lock_path
    partial = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        partial.write_text(json.dumps(record, indent=2, sort_keys=False) + "\n")
        os.replace(partial, path)  # atomic: readers see the old lock or the new one, never half of one
    finally:
        partial.unlink(missing_ok=True)
    return path


def read(manifest: Manifest) -> Optional[dict]:
    path = manifest.lock_path
    if not path.exists():
        return None
    try:
        record = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise LockError(f"{path} is corrupt (not JSON: {error}); regenerate it with "
                        f"`./pants run tools/agent_driver -- translate {manifest.env_dir}`") from error
    if not isinstance(record, dict):
        raise LockError(f"{path} is corrupt (not a JSON object)")
    missing = [k for k in REQUIRED if k not in record]
    if missing:
        raise LockError(f"{path} is corrupt (missing {missing})")
    if record["schema"] != SCHEMA:
        raise LockError(f"{path} has schema {record['schema']}; this driver reads schema {SCHEMA}")
    if _content_digest(record) != record["content_sha256"]:
        raise LockError(f"{path} is corrupt: its content does not match its content_sha256 (edited by hand, "
                        f"or truncated); regenerate it with `./pants run tools/agent_driver -- translate "
                        f"{manifest.env_dir}`")
    return record


@dataclasses.dataclass
class Status:
    env_dir: str
    state: str                      # "up to date", "stale", "not translated", "corrupt lock"
    reasons: list[str]
    details: list[str]

    @property
    def stale(self) -> bool:
        return self.state != "up to date"


def status(manifest: Manifest) -> Status:
    env_dir = str(manifest.env_dir)
    try:
        lock = read(manifest)
    except LockError as error:
        return Status(env_dir, "corrupt lock", ["corrupt lock"], [str(error)])
    if lock is None:
        return Status(env_dir, "not translated", ["no lock"], [f"{manifest.lock_path.name} does not exist"])
    now = current_inputs(manifest)
    reasons: list[str] = []
    details: list[str] = []

    def changed(reason: str, detail: str) -> None:
        if reason not in reasons:
            reasons.append(reason)
        details.append(detail)

    locked_ref, now_ref = lock["reference"], now["reference"]
    for key in ("package", "version", "sdist_sha256"):
        if locked_ref.get(key) != now_ref[key]:
            changed("reference changed", f"reference {key}: {locked_ref.get(key)} -> {now_ref[key]}")
    for path in sorted(set(locked_ref.get("adapter", {})) | set(now_ref["adapter"])):
        if locked_ref.get("adapter", {}).get(path) != now_ref["adapter"].get(path):
            changed("reference changed", f"adapter file {path} changed")
    for path in sorted(set(lock["prompts"]) | set(now["prompts"])):
        if lock["prompts"].get(path) != now["prompts"].get(path):
            changed("prompt changed", f"prompt template {path} changed")
    if lock["translation_toml"] != now["translation_toml"]:
        changed("translation.toml changed", "translation.toml changed")
    generated_now = _hash_paths(manifest.root, manifest.generated_files())
    for path in sorted(set(lock["generated"]) | set(generated_now)):
        if lock["generated"].get(path) != generated_now.get(path):
            state = "deleted" if generated_now.get(path) is None else "edited by hand"
            changed("generated code edited by hand", f"generated file {path} {state} since the lock")
    return Status(env_dir, "stale" if reasons else "up to date", reasons, details)
