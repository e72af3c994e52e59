"""Pinned L3 regressions: a divergence that was found and fixed, kept as a test.

The agent driver writes one test file per fixed divergence (tests/l3_regression_*.py) that calls
`check_pinned_divergence` with the seed, the actions up to the divergence and the reference's
values at that step, as the reference produced them when the divergence was found. The test checks
both sides: the reference must still produce the pinned values (if it does not, the reference
changed and the pin must be renewed), and the translation must agree with the reference on every
step up to and including that one.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .l3 import EXACT, Tolerance, _different, _format_value, _load, first_divergence, play_actions
from .reports import decode_array


def check_pinned_divergence(reference_factory: str, translation_factory: str, *, seed: int, actions: Sequence,
                            expected: dict, tolerance: Tolerance = EXACT) -> None:
    reference, translation = _load(reference_factory), _load(translation_factory)
    step = len(actions)
    ref_traj = play_actions(reference, seed, actions)
    fields = ref_traj.fields()
    for field, record in expected.items():
        pinned = decode_array(record)
        if field not in fields:
            raise AssertionError(f"{reference.name} no longer exposes {field!r}; renew this pinned test")
        actual = np.asarray(fields[field][step]).astype(pinned.dtype, copy=False)
        if _different(pinned, actual, tolerance.for_field(field)).any():
            raise AssertionError(
                f"the reference ({reference.name}) changed: at step {step} of seed {seed}, {field} is "
                f"{_format_value(actual, ())} but {_format_value(pinned, ())} was pinned; renew this test")
    trans_traj = play_actions(translation, seed, actions)
    divergence = first_divergence(ref_traj, trans_traj, tolerance)
    if divergence is not None:
        index = f"[{', '.join(map(str, divergence.index))}]" if divergence.index else ""
        raise AssertionError(
            f"pinned L3 regression is back: {translation.name} differs from {reference.name} at step "
            f"{divergence.step} of {step} (seed {seed}), {divergence.field}{index}: reference "
            f"{_format_value(divergence.reference_value, divergence.index)}, translation "
            f"{_format_value(divergence.translation_value, divergence.index)}")
