"""Frames of the JAX envs, drawn by MuJoCo's renderer exactly as HalfCheetah-v5 draws its own: the
JAX state's qpos and qvel go into the MjData of a HalfCheetah-v5 env kept for drawing only (its
`set_state`, which runs mj_forward), and that env renders. A frame of envport/HalfCheetahJax-v0 is
therefore the frame HalfCheetah-v5 shows in the same state: the same size and camera arguments, and by
default the same free camera, which Gymnasium aims at the bodies' median position at an env's first
frame and keeps there.

MuJoCo renders through OpenGL. Without a display, choose an off-screen backend before mujoco is
imported: `MUJOCO_GL=egl` (a GPU's, or Mesa's software one with `EGL_PLATFORM=surfaceless`, which is
how this repository's tests render on a machine with neither display nor GPU) or `MUJOCO_GL=osmesa`.
A missing OpenGL is a RuntimeError that says so, raised at the first frame.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .reference.mujoco_messages import known_notices_silenced

RENDER_MODES = ["rgb_array", "depth_array"]
RENDER_ARGUMENTS = ("width", "height", "camera_id", "camera_name")

GL_HINT = ("MuJoCo could not draw a frame: it needs an OpenGL context. Without a display, set MUJOCO_GL=egl "
           "(with EGL_PLATFORM=surfaceless where there is no GPU: Mesa's software renderer) or MUJOCO_GL=osmesa "
           "in the environment before mujoco is imported (e.g. `MUJOCO_GL=egl EGL_PLATFORM=surfaceless python "
           "train.py`)")


def render_fps(frame_skip: int) -> int:
    """HalfCheetah-v5's render_fps: one frame per env step of frame_skip timesteps of 0.01 s."""
    return int(np.round(1.0 / (0.01 * frame_skip)))


def checked_render_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """The renderer's keyword arguments (HalfCheetah-v5's own: width, height, camera_id, camera_name)."""
    unknown = sorted(set(arguments) - set(RENDER_ARGUMENTS))
    if unknown:
        raise TypeError(f"unexpected keyword arguments {unknown}: the env takes HalfCheetah-v5's forward_reward_weight, "
                        f"ctrl_cost_weight, reset_noise_scale, exclude_current_positions_from_observation and "
                        f"frame_skip, and dtype, and the renderer takes {list(RENDER_ARGUMENTS)}; the model is "
                        f"v5's own half_cheetah.xml (no xml_file)")
    for name in ("width", "height"):
        value = arguments.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1):
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    return {name: value for name, value in arguments.items() if value is not None}


def draw_with_gl_hint(render) -> Any:
    """render() of a MuJoCo env, a missing OpenGL made a RuntimeError that says what to set."""
    try:
        return render()
    except Exception as error:  # noqa: BLE001 - GL failures surface as many types (FatalError, EGLError, ...)
        if _is_gl_failure(error):
            raise RuntimeError(f"{GL_HINT}; MuJoCo said: {_described(error)}") from error
        raise


def _described(error: BaseException) -> str:
    try:
        text = str(error)
    except Exception:  # noqa: BLE001 - PyOpenGL's EGLError can fail to print itself
        text = "(no message)"
    return f"{type(error).__module__}.{type(error).__name__}: {text}"


def _is_gl_failure(error: BaseException) -> bool:
    text = _described(error).lower()
    return any(word in text for word in ("opengl", "gl context", "glfw", "egl", "osmesa", "glgeterror",
                                         "mjr_makecontext", "display"))


class MujocoFrames:
    """Draws frames from (qpos, qvel) with a HalfCheetah-v5 env made at the first frame."""

    def __init__(self, render_mode: str, frame_skip: int, arguments: dict[str, Any]):
        self.render_mode, self._frame_skip, self._arguments = render_mode, frame_skip, arguments
        self._env: Optional[Any] = None

    def draw(self, qpos: Any, qvel: Any) -> np.ndarray:
        if self._env is None:
            from gymnasium.envs.mujoco.half_cheetah_v5 import HalfCheetahEnv

            with known_notices_silenced():
                self._env = HalfCheetahEnv(render_mode=self.render_mode, frame_skip=self._frame_skip, **self._arguments)
        self._env.set_state(np.asarray(qpos, np.float64), np.asarray(qvel, np.float64))
        return draw_with_gl_hint(self._env.render)

    def close(self) -> None:
        if self._env is not None:
            self._env.close()
            self._env = None
