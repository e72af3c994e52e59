"""MJX (`from mujoco import mjx`, MuJoCo's own JAX port) on Gymnasium's HalfCheetah-v5 model.

A comparison only, not a reference: MuJoCo C (`mujoco_ref`) is what our translation must match.
MJX runs the same compiled model (`load_model()`) and the same env step (frame_skip = 5 `mjx.step`
calls with ctrl = action), so tests can put its error against MuJoCo C beside ours
(`mjx_one_step`), and the benchmark can time it batched (`make_batched_step`,
`make_batched_rollout`, from states made by `initial_data`).

Arithmetic runs in `dtype`: float32 by default (MJX's fast mode), or float64, which needs
`jax.config.update('jax_enable_x64', True)` first. MJX mixes float64 constants into its
arithmetic whenever x64 is on, so the float32 functions here trace and run with x64 switched off
locally (`jax.enable_x64(False)`): float32 MJX stays float32 in a process that enabled x64 for
float64 checks. Versions are pinned in 3rdparty/python/jax-requirements.txt (mujoco-mjx with the
matching mujoco and jax).
"""

from __future__ import annotations

import contextlib
import functools
import io
import sys
from typing import Iterator

import jax
import jax.numpy as jnp
import numpy as np

from .model_file import load_model
from .mujoco_ref import FRAME_SKIP

# What `mujoco.mjx` prints on stdout at its first import when the optional `warp` package (MJX's
# CUDA backend, not installed here) is missing: no error, we run MJX's JAX implementation (impl="jax").
WARP_NOTICES = ("Failed to import warp:", "Failed to import mujoco_warp:")


@contextlib.contextmanager
def warp_notices_dropped() -> Iterator[None]:
    """Inside, the first import of `mujoco.mjx` (directly or through Brax) prints nothing but what is not
    WARP_NOTICES; what else goes to stdout meanwhile is passed on when the block ends."""
    if "mujoco.mjx" in sys.modules:
        yield
        return
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            yield
    finally:
        kept = [line for line in printed.getvalue().splitlines(keepends=True) if not line.startswith(WARP_NOTICES)]
        sys.stdout.write("".join(kept))


def mjx_module():
    """`mujoco.mjx`, imported without the warp notices."""
    with warp_notices_dropped():
        from mujoco import mjx
    return mjx


def _checked_dtype(dtype: str) -> str:
    name = jnp.dtype(dtype).name
    if name not in ("float32", "float64"):
        raise ValueError(f"dtype {dtype!r}: MJX runs in float32 or float64")
    if name == "float64" and not jax.config.jax_enable_x64:
        raise ValueError("MJX in float64 needs jax.config.update('jax_enable_x64', True) before use")
    return name


def _precision(dtype: str):
    """The x64 setting MJX needs to compute in `dtype` (see the module docstring)."""
    return jax.enable_x64(dtype == "float64")


class _InPrecision:
    """A jitted (or compiled) function that traces and runs under `_precision(dtype)`."""

    def __init__(self, function, dtype: str):
        self._function, self._dtype = function, dtype

    def __call__(self, *args):
        with _precision(self._dtype):
            return self._function(*args)

    def compile(self, *args) -> _InPrecision:
        """Ahead-of-time compile for these arguments (the benchmark times this apart)."""
        with _precision(self._dtype):
            return _InPrecision(self._function.lower(*args).compile(), self._dtype)


@functools.lru_cache(maxsize=2)
def mjx_model(dtype: str = "float32"):
    """The HalfCheetah model on the JAX device, pure-JAX implementation (impl='jax')."""
    mjx = mjx_module()

    dtype = _checked_dtype(dtype)
    with _precision(dtype):
        return mjx.put_model(load_model(), impl="jax")


def initial_data(qpos, qvel, dtype: str = "float32"):
    """A batch of mjx.Data from qpos (B, 9) and qvel (B, 9); everything else as after
    mj_resetData (zero ctrl, zero warm start), like MujocoCheetah.set_state. mjx.step computes
    the position-dependent quantities itself, so no forward pass is needed here."""
    mjx = mjx_module()

    dtype = _checked_dtype(dtype)
    nq = load_model().nq
    if np.ndim(qpos) != 2 or np.shape(qpos) != np.shape(qvel) or np.shape(qpos)[1] != nq:
        raise ValueError(f"qpos {np.shape(qpos)} and qvel {np.shape(qvel)}: expected (B, {nq}) each")
    with _precision(dtype):
        template = mjx.make_data(mjx_model(dtype))
        qpos, qvel = jnp.asarray(qpos, dtype), jnp.asarray(qvel, dtype)
        return jax.vmap(lambda q, v: template.replace(qpos=q, qvel=v))(qpos, qvel)


def env_step(model, data, action):
    """One HalfCheetah env step for one env: FRAME_SKIP mjx.step calls under ctrl = action."""
    mjx = mjx_module()

    data = data.replace(ctrl=action.astype(data.ctrl.dtype))
    return jax.lax.fori_loop(0, FRAME_SKIP, lambda _, d: mjx.step(model, d), data)


def make_batched_step(dtype: str = "float32") -> _InPrecision:
    """(data (B,), actions (B, 6)) -> data: one env step for each of B envs (jit of vmap)."""
    dtype = _checked_dtype(dtype)
    return _InPrecision(jax.jit(jax.vmap(functools.partial(env_step, mjx_model(dtype)))), dtype)


def make_batched_rollout(dtype: str = "float32") -> _InPrecision:
    """(data (B,), actions (K, B, 6)) -> data: K env steps of B envs fused in one lax.scan, so
    that dispatch costs once per K steps (how the benchmark times every JAX backend). Nothing is
    donated, as for every backend the benchmark times (see brax_ref.make_batched_rollout)."""
    dtype = _checked_dtype(dtype)
    batched_step = jax.vmap(functools.partial(env_step, mjx_model(dtype)))

    def rollout(data, actions):
        return jax.lax.scan(lambda d, a: (batched_step(d, a), None), data, actions)[0]

    return _InPrecision(jax.jit(rollout), dtype)


@functools.lru_cache(maxsize=2)
def _one_step(dtype: str) -> _InPrecision:
    return _InPrecision(jax.jit(functools.partial(env_step, mjx_model(dtype))), dtype)


def mjx_one_step(qpos, qvel, action, dtype: str = "float32") -> tuple[np.ndarray, np.ndarray]:
    """One env step of one env from (qpos (9,), qvel (9,)) under `action` (6,): the next
    (qpos, qvel) as float64 numpy arrays, for comparing MJX's error against MuJoCo C."""
    dtype = _checked_dtype(dtype)
    if np.shape(action) != (load_model().nu,):
        raise ValueError(f"action shape {np.shape(action)}; expected ({load_model().nu},)")
    batch_of_one = initial_data(np.asarray(qpos)[None], np.asarray(qvel)[None], dtype)
    data = jax.tree_util.tree_map(lambda leaf: leaf[0], batch_of_one)
    data = _one_step(dtype)(data, np.asarray(action, dtype))
    return np.asarray(data.qpos, np.float64), np.asarray(data.qvel, np.float64)
