"""A run's log folder, .translations/<env>/<run-id>/ (git-ignored): every prompt, the agent's
output and usage, the diff it made, each level's result and log, and run.json, the whole run
summarised and rewritten after every event so that an interrupted run still explains itself."""

from __future__ import annotations

import datetime
import json
import secrets
from pathlib import Path
from typing import Any


def new_run_id() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


class RunLog:
    def __init__(self, root: Path, env: str, run_id: str, options: dict[str, Any]):
        self.run_id = run_id
        self.directory = root / ".translations" / env / run_id
        self.directory.mkdir(parents=True, exist_ok=False)
        self.record: dict[str, Any] = {"run_id": run_id, "env": env, "options": options, "events": [],
                                       "started": datetime.datetime.now(datetime.UTC).isoformat()}
        self._save()

    def iteration_dir(self, iteration: int) -> Path:
        path = self.directory / f"iter-{iteration:02d}"
        path.mkdir(exist_ok=True)
        return path

    def event(self, **fields: Any) -> None:
        self.record["events"].append(fields)
        self._save()

    def finish(self, **fields: Any) -> None:
        self.record.update(fields)
        self.record["finished"] = datetime.datetime.now(datetime.UTC).isoformat()
        self._save()

    def _save(self) -> None:
        partial = self.directory / "run.json.part"
        partial.write_text(json.dumps(self.record, indent=2, default=str) + "\n")
        partial.replace(self.directory / "run.json")
