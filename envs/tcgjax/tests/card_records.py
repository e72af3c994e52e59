"""The raw card records, read straight from data/cards_a1.json, for tests that take expected values
from the data rather than from the engine's card pool."""

from __future__ import annotations

import functools
import json

from envs.tcgjax.reference.cards import DATA


@functools.lru_cache(maxsize=1)
def records() -> dict[str, dict]:
    """The first printing of every English name (and every printing id) in cards_a1.json."""
    out: dict[str, dict] = {}
    for record in json.loads(DATA.read_text()):
        out.setdefault(record["name"], record)
        out[record["id"]] = record
    return out
