"""Shared pieces of the HalfCheetah tests: MuJoCo C from a chosen state, our stages jitted in
float64, and hypothesis strategies for states that reach every branch (contacts on every capsule,
joints past both limits, the cheetah far from the origin, upside down, fast)."""

from __future__ import annotations

import functools
from pathlib import Path

import jax
import numpy as np
from hypothesis import strategies as st

jax.config.update("jax_enable_x64", True)

from envs.halfcheetah.jax import dynamics  # noqa: E402
from envs.halfcheetah.jax.constraints import expand_to_mujoco  # noqa: E402
from envs.halfcheetah.jax.model import planar_model  # noqa: E402
from envs.halfcheetah.reference.model_file import load_model  # noqa: E402
from shared.verification.components import Components  # noqa: E402

CHEETAH = Components.from_translation_toml(Path(__file__).resolve().parents[1] / "translation.toml")
PM = planar_model()


def _floats(low, high):
    return st.floats(low, high, allow_nan=False, allow_infinity=False)


@st.composite
def cheetah_states(draw, contact_heavy: bool = False):
    """(qpos, qvel, ctrl) as float64 arrays."""
    x = draw(_floats(-200.0, 200.0))
    z = draw(_floats(-0.7, -0.3)) if contact_heavy else draw(_floats(-0.75, 0.6))
    pitch = draw(_floats(-np.pi, np.pi))
    joints = [draw(_floats(lo - 0.3, hi + 0.3)) for lo, hi in PM.limit_range]
    qpos = np.array([x, z, pitch, *joints])
    qvel = np.array([draw(_floats(-10.0, 10.0)) for _ in range(9)])
    ctrl = np.array([draw(_floats(-1.2, 1.2)) for _ in range(6)])
    return qpos, qvel, ctrl


def mujoco_forward(qpos, qvel, ctrl):
    """MjData after mj_forward at (qpos, qvel, ctrl), warm start cleared."""
    import mujoco

    m = load_model()
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:], d.ctrl[:] = qpos, qvel, ctrl
    mujoco.mj_forward(m, d)
    return m, d


def mujoco_full_mass(m, d):
    import mujoco

    full = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, full)
    return full


@functools.cache
def jitted_forward(max_iterations: int = 100):
    return jax.jit(lambda q, v, u: dynamics.forward(PM, q, v, u, max_iterations))


@functools.cache
def jitted_physics_step():
    return jax.jit(lambda q, v, u: dynamics.physics_step(PM, q, v, u))


def ours_forward(qpos, qvel, ctrl):
    return jitted_forward()(np.asarray(qpos), np.asarray(qvel), np.asarray(ctrl))


def in_mujoco_layout(values) -> np.ndarray:
    """Our per-row values in MuJoCo's efc layout (contact J_n rows twice)."""
    return expand_to_mujoco(PM, np.asarray(values))


def rows_in_effect(fwd) -> np.ndarray:
    return in_mujoco_layout(fwd.rows.in_effect).astype(bool)


def assert_close(ours, reference, atol, what, rtol=0.0):
    ours, reference = np.asarray(ours, np.float64), np.asarray(reference, np.float64)
    assert ours.shape == reference.shape, f"{what}: shape {ours.shape} vs MuJoCo {reference.shape}"
    error = np.abs(ours - reference)
    bound = atol + rtol * np.abs(reference)
    worst = int(np.argmax(error - bound)) if error.size else 0
    assert np.all(error <= bound), (
        f"{what}: off by {error.flat[worst]:.3e} at index {np.unravel_index(worst, error.shape)} "
        f"(ours {ours.flat[worst]!r}, MuJoCo {reference.flat[worst]!r}; tolerance {atol:g} + {rtol:g}*|ref|)")
