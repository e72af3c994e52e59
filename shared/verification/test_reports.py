"""The JSON divergence report and the pinned regression check built from it."""

import json

import numpy as np
import pytest

from shared.verification import toy_backends
from shared.verification.l3 import L3Divergence, compare_rollouts, uniform_discrete
from shared.verification.regression import check_pinned_divergence
from shared.verification.reports import REPORT_DIR_VARIABLE, decode_array, encode_array, read_reports


def test_arrays_round_trip_through_json_bit_for_bit():
    values = np.asarray([0.1, np.nextafter(np.float32(0.1), np.float32(1)), -0.0, 1e-45], dtype=np.float32)
    back = decode_array(json.loads(json.dumps(encode_array(values))))
    assert back.dtype == np.float32
    assert back.view(np.uint32).tolist() == values.view(np.uint32).tolist()
    assert decode_array(json.loads(json.dumps(encode_array(np.bool_(True))))).item() is True


def _divergence_report(tmp_path, monkeypatch):
    monkeypatch.setenv(REPORT_DIR_VARIABLE, str(tmp_path))
    with pytest.raises(L3Divergence):
        compare_rollouts(toy_backends.Counter(), toy_backends.buggy(), env_name="toy", episodes=3,
                         action_source=uniform_discrete(2),
                         reference_factory="shared.verification.toy_backends:reference",
                         translation_factory="shared.verification.toy_backends:buggy")
    (report,) = read_reports(tmp_path, "l3-divergence")
    return report


def test_divergence_is_written_as_json_when_asked(tmp_path, monkeypatch):
    report = _divergence_report(tmp_path, monkeypatch)
    assert report["env"] == "toy" and report["episode"] == 0 and report["seed"] == 0
    assert report["step"] == 17 and report["field"] == "state.drift"
    assert report["first_internal_field"] == "state.drift" and len(report["actions"]) == 17
    assert decode_array(report["reference_values"]["state.drift"]).item() == 0.0
    assert decode_array(report["translation_values"]["state.drift"]).item() == 1e-6
    assert report["translation_factory"] == "shared.verification.toy_backends:buggy"


def test_nothing_is_written_without_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv(REPORT_DIR_VARIABLE, raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(L3Divergence):
        compare_rollouts(toy_backends.Counter(), toy_backends.buggy(), env_name="toy", episodes=1,
                         action_source=uniform_discrete(2))
    assert list(tmp_path.iterdir()) == []


def test_pinned_check_passes_on_the_fix_and_fails_on_the_bug_or_a_changed_reference(tmp_path, monkeypatch):
    report = _divergence_report(tmp_path, monkeypatch)
    pinned = dict(seed=report["seed"], actions=report["actions"], expected=report["reference_values"])
    reference = "shared.verification.toy_backends:reference"
    check_pinned_divergence(reference, reference, **pinned)  # the "fixed" translation
    with pytest.raises(AssertionError, match="pinned L3 regression is back: .* step 17 of 17 .*state.drift"):
        check_pinned_divergence(reference, "shared.verification.toy_backends:buggy", **pinned)
    changed = dict(pinned, expected=dict(pinned["expected"], observation=encode_array(np.asarray([9, 9], np.float32))))
    with pytest.raises(AssertionError, match="the reference .* changed"):
        check_pinned_divergence(reference, reference, **changed)
