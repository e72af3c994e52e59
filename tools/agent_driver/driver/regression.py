"""An L3 divergence that the agent fixed becomes a pinned test in the env's tests/ folder: the seed,
the actions up to the divergence and the reference's values there, as the reference produced them
(shared.verification.regression checks them)."""

from __future__ import annotations

import json
import math
import pprint
import re
from pathlib import Path
from typing import Optional

from .manifest import Manifest


def _wrapped_list(values: list, indent: str = "    ", width: int = 100) -> str:
    items = [repr(v) for v in values]
    lines, line = [], ""
    for item in items:
        piece = item + ", "
        if len(indent) + len(line) + len(piece) > width and line:
            lines.append(indent + line.rstrip())
            line = ""
        line += piece
    if line:
        lines.append(indent + line.rstrip())
    return "[\n" + "\n".join(lines) + "\n]" if lines else "[]"


def _has_non_finite(value) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_has_non_finite(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_non_finite(v) for v in value)
    return False


def _literal(values: dict) -> str:
    """A Python literal for the pinned values; through JSON text when they hold NaN or infinities,
    which have no literal."""
    if _has_non_finite(values):
        return f"__import__('json').loads({json.dumps(values)!r})"
    return pprint.pformat(values, width=100, sort_dicts=True)


def pinned_test_name(divergence: dict) -> str:
    field = re.sub(r"\W+", "_", divergence["field"]).strip("_")
    return f"l3_regression_seed{divergence['seed']}_step{divergence['step']}_{field}"


def write_test(manifest: Manifest, divergence: dict, *, run_id: str, components: list[str]) -> Optional[Path]:
    """Write tests/<name>.py for this divergence; None when the report has no backend factories
    (the test could not rebuild the backends) or the file already exists."""
    reference, translation = divergence.get("reference_factory"), divergence.get("translation_factory")
    if not (reference and translation):
        return None
    path = manifest.root / manifest.env_dir / "tests" / f"{pinned_test_name(divergence)}.py"
    if path.exists():
        return None
    tolerance = divergence.get("tolerance") or {}
    exact = not tolerance.get("default") and not any((tolerance.get("per_field") or {}).values())
    imports = "from shared.verification.regression import check_pinned_divergence\n"
    tolerance_arg = ""
    if not exact:
        imports = "from shared.verification.l3 import Tolerance\n" + imports
        tolerance_arg = (f",\n        tolerance=Tolerance({tolerance.get('default', 0.0)!r}, "
                         f"{tolerance.get('per_field') or {}!r})")
    index = f"[{', '.join(map(str, divergence.get('index') or []))}]" if divergence.get("index") else ""
    first = divergence.get("first_internal_field")
    first_text = f"; first internal field {first}" if first else ""
    expected = _literal(divergence["reference_values"])
    name = pinned_test_name(divergence)
    text = f'''"""Pinned by tools/agent_driver (run {run_id}): an L3 divergence that the agent fixed.

{divergence["translation"]} differed from {divergence["reference"]} in episode {divergence["episode"]}
(seed {divergence["seed"]}) at step {divergence["step"]}, field {divergence["field"]}{index}{first_text}.
Component: {", ".join(components) or "not named"}. EXPECTED holds the reference's values at that step.
"""

{imports}
SEED = {divergence["seed"]}
ACTIONS = {_wrapped_list(divergence["actions"])}
EXPECTED = {expected}


def test_{name.removeprefix("l3_")}():
    check_pinned_divergence(
        {reference!r}, {translation!r},
        seed=SEED, actions=ACTIONS, expected=EXPECTED{tolerance_arg})
'''
    path.write_text(text)
    return path
