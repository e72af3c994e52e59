"""Rendering: the JAX envs draw HalfCheetah-v5's frames (MuJoCo's renderer, given the JAX state).

MuJoCo needs OpenGL: each check runs in a fresh interpreter whose MUJOCO_GL is chosen before mujoco is
imported (Mesa's software EGL, as a machine without display or GPU renders; README, "Rendering"), so
that no other test's process is touched."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
OFFSCREEN = {"MUJOCO_GL": "egl", "EGL_PLATFORM": "surfaceless"}

_FRAMES = """
import json, warnings
import numpy as np, gymnasium
import envs.halfcheetah

def equal_fraction(a, b):
    return float((a == b).all(axis=-1).mean()) if a.ndim == 3 else float((a == b).mean())

ours = gymnasium.make("envport/HalfCheetahJax-v0", render_mode="rgb_array")
reference = gymnasium.make("envport/HalfCheetah-v0", render_mode="rgb_array")
out = {"fps": [ours.metadata["render_fps"], reference.metadata["render_fps"]]}
for seed in (3, 4):
    ours.reset(seed=seed)
    reference.reset(seed=seed)
    frame, reference_frame = ours.render(), reference.render()
    out[f"reset {seed}"] = [list(frame.shape), str(frame.dtype), equal_fraction(frame, reference_frame),
                            float(frame.std())]
    first = frame
    for step, action in enumerate(np.random.default_rng(seed).uniform(-1, 1, (5, 6))):
        ours.step(action)
        reference.step(action)
    as_stepped = reference.render()
    data = reference.unwrapped.data
    reference.unwrapped.set_state(data.qpos.copy(), data.qvel.copy())  # mj_forward: positions of qpos now
    frame, reference_frame = ours.render(), reference.render()
    out[f"5 steps {seed}"] = [equal_fraction(frame, reference_frame), equal_fraction(as_stepped, reference_frame),
                              equal_fraction(frame, first)]
ours.close()
reference.close()

kwargs = {"width": 96, "height": 64, "frame_skip": 2}
vector = gymnasium.make_vec("envport/HalfCheetahJax-v0", num_envs=3, render_mode="depth_array", **kwargs)
singles = [gymnasium.make("envport/HalfCheetahJax-v0", render_mode="depth_array", **kwargs) for _ in range(3)]
vector.reset(seed=[7, 8, 9])
for env, seed in zip(singles, [7, 8, 9]):
    env.reset(seed=seed)
actions = np.random.default_rng(1).uniform(-1, 1, (4, 3, 6))
for step in actions:
    vector.step(step)
    for env, action in zip(singles, step):
        env.step(action)
frames = vector.render()
out["vector"] = [type(frames).__name__, [list(f.shape) for f in frames], str(frames[0].dtype),
                 all(np.array_equal(f, env.render()) for f, env in zip(frames, singles)),
                 vector.metadata["render_fps"]]
vector.close()
for env in singles:
    env.close()
print(json.dumps(out))
"""


def _run(script: str, environ: dict) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **environ}
    return subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)


def test_frames_are_halfcheetah_v5s_for_the_same_state():
    done = _run(_FRAMES, OFFSCREEN)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["fps"] == [20, 20]
    for seed in (3, 4):
        shape, dtype, equal, spread = out[f"reset {seed}"]
        # after reset both draw the same state (ours rounded to float32): the very same pixels
        assert shape == [480, 480, 3] and dtype == "uint8" and equal == 1.0 and spread > 10
        ours_vs_synced, as_stepped_vs_synced, moved = out[f"5 steps {seed}"]
        # 5 steps on, float32 against float64 (README: about 1e-4 apart) moves an edge by a pixel here and there
        assert ours_vs_synced > 0.999
        # Gymnasium draws MjData as mj_step left it, the bodies one timestep back from qpos (README)
        assert as_stepped_vs_synced < 0.99
        assert moved < 0.99  # the cheetah moved, and the frame with it
    kind, shapes, dtype, equal_to_singles, fps = out["vector"]
    assert kind == "tuple" and shapes == [[64, 96]] * 3 and dtype == "float32" and equal_to_singles and fps == 50


@pytest.mark.parametrize("env_id", ["envport/HalfCheetahJax-v0", "envport/HalfCheetah-v0"])
def test_no_opengl_is_a_clear_error(env_id):
    """GLFW without a display cannot make a context: both ids say what to set instead."""
    script = (f"import gymnasium, envs.halfcheetah\nenv = gymnasium.make({env_id!r}, render_mode='rgb_array')\n"
              "env.reset(seed=0)\nenv.render()\n")
    environ = {"MUJOCO_GL": "glfw", "DISPLAY": "", "WAYLAND_DISPLAY": ""}
    done = _run(script, environ)
    assert done.returncode != 0
    assert "RuntimeError: MuJoCo could not draw a frame: it needs an OpenGL context" in done.stderr, done.stderr[-3000:]
    assert "MUJOCO_GL=egl" in done.stderr


def test_render_errors_and_warnings():
    import gymnasium

    import envs.halfcheetah  # noqa: F401 - registers the ids
    from envs.halfcheetah.gym_envs import HalfCheetahJaxEnv
    from envs.halfcheetah.vector_env import HalfCheetahJaxVectorEnv

    for make in (lambda **kwargs: HalfCheetahJaxEnv(**kwargs), lambda **kwargs: HalfCheetahJaxVectorEnv(2, **kwargs)):
        with pytest.raises(ValueError, match=r"render_mode must be None or one of \['rgb_array', 'depth_array'\]"):
            make(render_mode="human")
        with pytest.raises(ValueError, match="width must be a positive int"):
            make(render_mode="rgb_array", width=0)
        with pytest.raises(TypeError, match=r"unexpected keyword arguments \['colour'\]"):
            make(render_mode="rgb_array", colour="red")
        with pytest.raises(RuntimeError, match="reset"):
            make(render_mode="rgb_array").render()  # nothing drawn: no OpenGL needed to get here
        env = make()
        env.reset(seed=0)
        with pytest.warns(UserWarning, match='render_mode="rgb_array"'):
            assert env.render() is None
    assert gymnasium.make("envport/HalfCheetahJax-v0", frame_skip=2).metadata["render_fps"] == 50
