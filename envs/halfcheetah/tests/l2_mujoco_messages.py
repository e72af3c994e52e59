"""Making the MuJoCo envs leaves no MUJOCO_LOG.TXT in the user's folder and prints no deprecation notice,
while any other MuJoCo warning still reaches the user (reference/mujoco_messages.py); MJX and Brax, the
bench's comparisons, load without their notices about optional or unmaintained parts."""

import os
import subprocess
import sys
from pathlib import Path

import gymnasium
import mujoco
import numpy as np
import pytest

import envs.halfcheetah  # noqa: F401  (registers the ids)
from envs.halfcheetah.policy_transfer import mujoco_vector_env
from envs.halfcheetah.reference.brax_ref import brax_env
from envs.halfcheetah.reference.model_file import load_model, model_path
from envs.halfcheetah.reference.mujoco_messages import known_notices_silenced
from envs.halfcheetah.reference.mujoco_ref import make_gym_env

ROOT = Path(__file__).resolve().parents[3]

MAKERS = {
    "envport/HalfCheetah-v0": lambda: gymnasium.make("envport/HalfCheetah-v0"),
    "make_vec envport/HalfCheetah-v0": lambda: gymnasium.make_vec("envport/HalfCheetah-v0", num_envs=2,
                                                                  vectorization_mode="sync"),
    "reference make_gym_env": make_gym_env,
    "L4's MuJoCo vector env": lambda: mujoco_vector_env(2),
    "load_model, compiled afresh": load_model.__wrapped__,
    "Brax's halfcheetah (bench comparison)": brax_env,
}


@pytest.mark.parametrize("maker", MAKERS, ids=list(MAKERS))
def test_making_an_env_writes_no_log_and_prints_no_notice(maker, tmp_path, monkeypatch, capfd):
    monkeypatch.chdir(tmp_path)
    made = MAKERS[maker]()
    if hasattr(made, "close"):
        made.close()
    out, err = capfd.readouterr()
    assert not (tmp_path / "MUJOCO_LOG.TXT").exists()
    assert "settotalmass" not in out + err


def test_without_the_handler_mujoco_does_log_the_notice(tmp_path, monkeypatch, capfd):
    """The test above can fail: the same compile outside the context writes the log file."""
    monkeypatch.chdir(tmp_path)
    mujoco.MjModel.from_xml_path(model_path())
    assert "settotalmass" in (tmp_path / "MUJOCO_LOG.TXT").read_text()


def test_other_warnings_become_python_warnings_and_the_handler_is_restored(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = []
    mujoco.set_mju_user_warning(before.append)
    try:
        model = load_model()
        data = mujoco.MjData(model)
        data.qvel[:] = np.nan  # MuJoCo warns that the simulation is unstable and resets the data
        with pytest.warns(RuntimeWarning, match="MuJoCo: Nan, Inf or huge value in QVEL"):
            with known_notices_silenced():
                mujoco.mj_step(model, data)
        data = mujoco.MjData(model)  # MuJoCo reports a kind of warning once per MjData
        data.qvel[:] = np.nan
        mujoco.mj_step(model, data)  # the handler in place before the context gets this one
        assert len(before) == 1 and "QVEL" in before[0]
    finally:
        mujoco.set_mju_user_warning(None)
    assert not (tmp_path / "MUJOCO_LOG.TXT").exists()


def _fresh_interpreter(code: str) -> subprocess.CompletedProcess:
    # mujoco.mjx prints its notices only at its first import, which this test process may be past
    return subprocess.run([sys.executable, "-W", "default", "-c", code], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "JAX_PLATFORMS": "cpu"})


def test_mjx_and_brax_load_without_warp_notices_or_brax_maintenance_warning():
    plain = _fresh_interpreter("from mujoco import mjx; from brax import envs; envs.get_environment('halfcheetah')")
    assert "Failed to import warp" in plain.stdout, "the notices these filters drop are printed by mujoco.mjx"
    assert "not actively being maintained" in plain.stderr
    ours = _fresh_interpreter("from envs.halfcheetah.reference import brax_ref, mjx_ref\n"
                              "brax_ref.brax_env(); mjx_ref.mjx_model(); print('loaded')")
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == "loaded\n"
    assert "not actively being maintained" not in ours.stderr and "settotalmass" not in ours.stderr
