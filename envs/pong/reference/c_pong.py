"""ctypes adapter over PufferLib's C Pong: a vector of envs stepped in one C call, as PufferLib does."""

from __future__ import annotations

import ctypes
from functools import lru_cache

import numpy as np

from ..params import INTERNAL_FIELDS, NUM_ACTIONS, OBSERVATION_SIZE, PongConfig
from .build import build_library


class _CConfig(ctypes.Structure):
    _fields_ = [(name, ctypes.c_float) for name in (
        "width", "height", "paddle_width", "paddle_height", "ball_width", "ball_height", "paddle_speed",
        "ball_initial_speed_x", "ball_initial_speed_y", "ball_max_speed_y", "ball_speed_y_increment",
    )] + [("max_score", ctypes.c_uint), ("frameskip", ctypes.c_int), ("continuous", ctypes.c_int)]


class _CInternal(ctypes.Structure):
    _fields_ = [(name, ctypes.c_float) for name in INTERNAL_FIELDS[:6]] + [
        ("score_l", ctypes.c_uint), ("score_r", ctypes.c_uint),
        ("tick", ctypes.c_int), ("n_bounces", ctypes.c_int), ("win", ctypes.c_int),
    ]


_FLOAT_P = ctypes.POINTER(ctypes.c_float)
_UCHAR_P = ctypes.POINTER(ctypes.c_ubyte)


@lru_cache(maxsize=1)
def _library() -> ctypes.CDLL:
    lib = ctypes.CDLL(str(build_library()))
    lib.envport_pong_init.restype = ctypes.c_void_p
    lib.envport_pong_init.argtypes = [_FLOAT_P, _FLOAT_P, _FLOAT_P, _UCHAR_P, ctypes.c_int, ctypes.c_int,
                                      ctypes.POINTER(_CConfig)]
    lib.envport_pong_reset.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.envport_pong_step.argtypes = [ctypes.c_void_p]
    lib.envport_pong_private_streams.restype = ctypes.c_int
    lib.envport_pong_private_streams.argtypes = [ctypes.c_void_p]
    lib.envport_pong_reset_each.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint)]
    lib.envport_pong_rollout.argtypes = [ctypes.c_void_p, _FLOAT_P, ctypes.c_int, _FLOAT_P, _FLOAT_P, _UCHAR_P]
    lib.envport_pong_internal.restype = ctypes.c_int
    lib.envport_pong_internal.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(_CInternal)]
    lib.envport_pong_set_internal.restype = ctypes.c_int
    lib.envport_pong_set_internal.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(_CInternal), ctypes.c_uint]
    lib.envport_pong_free.argtypes = [ctypes.c_void_p]
    return lib


def _pointer(array: np.ndarray, ctype) -> ctypes.POINTER:
    return array.ctypes.data_as(ctypes.POINTER(ctype))


def _int32(value: int, what: str) -> int:
    if not -(2**31) <= int(value) < 2**31:
        raise ValueError(f"{what} must fit a C int, got {value}")
    return int(value)


def validate_discrete_actions(actions, num_envs: int) -> np.ndarray:
    """Actions as float32 for the C buffer, after checking shape and values (C would silently read
    any other value as 'stay')."""
    array = np.asarray(actions)
    if array.shape != (num_envs,):
        raise ValueError(f"expected actions of shape ({num_envs},), got {array.shape}")
    if not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)):
        raise TypeError(f"actions must be integers in [0, {NUM_ACTIONS}), got dtype {array.dtype}")
    if np.any(array != np.round(array)) or np.any((array < 0) | (array >= NUM_ACTIONS)):
        bad = array[(array != np.round(array)) | (array < 0) | (array >= NUM_ACTIONS)]
        raise ValueError(f"actions must be integers in [0, {NUM_ACTIONS}), got {bad[:5].tolist()}")
    return array.astype(np.float32)


def validate_env_seeds(seeds, num_envs: int) -> np.ndarray:
    """One C unsigned int seed per env, as uint32, after checking shape, type and range."""
    array = np.asarray(seeds)
    if array.shape != (num_envs,) or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"expected {num_envs} integer seeds, got {array.dtype} of shape {array.shape}")
    if np.any((array < 0) | (array >= 2**32)):
        raise ValueError("seeds must be C unsigned ints, in [0, 2**32)")
    return np.ascontiguousarray(array, dtype=np.uint32)


class ActionCache:
    """A [T, num_envs] block of actions, checked once, for replaying many times (benchmarks)."""

    def __init__(self, actions):
        actions = np.asarray(actions)
        if actions.ndim != 2:
            raise ValueError(f"expected actions of shape (T, num_envs), got {actions.shape}")
        self.steps, self.num_envs = actions.shape
        self.flat = np.ascontiguousarray(validate_discrete_actions(actions.reshape(-1), actions.size))


class CPongVec:
    """num_envs copies of PufferLib's C Pong, seeded as PufferLib seeds them.

    The observation, reward and terminal buffers are numpy arrays that C writes in place; step()
    returns them (not copies), as PufferLib does. libc's rand() is global to the process: every
    CPongVec in one process draws serves from the same stream after its reset.

    private_streams=True gives each env its own state of libc's generator instead (glibc's
    initstate/setstate around each env's step; the process's stream is left as it was): env i then
    serves exactly as a lone env seeded like it, as each JAX env does. The vector is reset with
    `seed` when made, so that every stream is seeded before the first step.
    """

    def __init__(self, num_envs: int = 1, seed: int = 0, config: PongConfig = PongConfig(),
                 private_streams: bool = False):
        if int(num_envs) < 1:
            raise ValueError(f"num_envs must be at least 1, got {num_envs}")
        self.num_envs = int(num_envs)
        self.config = config
        self.observations = np.zeros((self.num_envs, OBSERVATION_SIZE), dtype=np.float32)
        self.actions = np.zeros(self.num_envs, dtype=np.float32)
        self.rewards = np.zeros(self.num_envs, dtype=np.float32)
        self.terminals = np.zeros(self.num_envs, dtype=np.uint8)
        c_config = _CConfig(
            **{name: getattr(config, name) for name, _ in _CConfig._fields_
               if name not in ("max_score", "frameskip", "continuous")},
            max_score=config.max_score, frameskip=config.frameskip, continuous=0,
        )
        self._lib = _library()
        self._handle = self._lib.envport_pong_init(
            _pointer(self.observations, ctypes.c_float), _pointer(self.actions, ctypes.c_float),
            _pointer(self.rewards, ctypes.c_float), _pointer(self.terminals, ctypes.c_ubyte),
            self.num_envs, _int32(seed, "seed"), ctypes.byref(c_config),
        )
        if not self._handle:
            raise MemoryError("envport_pong_init failed to allocate the environments")
        self.private_streams = bool(private_streams)
        if self.private_streams:
            if self._lib.envport_pong_private_streams(self._handle) != 0:
                self.close()
                raise MemoryError("envport_pong_private_streams failed to allocate the generator states")
            self.reset(seed)

    def reset(self, seed: int = 0) -> np.ndarray:
        self._check_open()
        self._lib.envport_pong_reset(self._handle, _int32(seed, "seed"))
        return self.observations

    def reset_each(self, seeds) -> np.ndarray:
        """Seed env i's stream with seeds[i] (C unsigned ints) and reset it: srand(seeds[i]) on the
        process's stream, or env i's own stream with private_streams."""
        self._check_open()
        c_seeds = validate_env_seeds(seeds, self.num_envs)
        self._lib.envport_pong_reset_each(self._handle, _pointer(c_seeds, ctypes.c_uint))
        return self.observations

    def step(self, actions) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        self._check_open()
        self.actions[:] = validate_discrete_actions(actions, self.num_envs)
        self._lib.envport_pong_step(self._handle)
        return self.observations, self.rewards, self.terminals

    def rollout(self, actions: np.ndarray, record: bool = True):
        """Step through actions[t, i] for every t in one C call. With record, returns per-step copies
        (observations [T, N, 8], rewards [T, N], terminals [T, N]); without, returns None and only
        steps (what a throughput benchmark should time). `actions` may be an ActionCache, checked
        once when made, so that a benchmark replaying it times C's loop alone."""
        self._check_open()
        if isinstance(actions, ActionCache):
            if actions.num_envs != self.num_envs:
                raise ValueError(f"action cache made for {actions.num_envs} envs, this vector has {self.num_envs}")
            flat, steps = actions.flat, actions.steps
        else:
            actions = np.asarray(actions)
            if actions.ndim != 2 or actions.shape[1] != self.num_envs:
                raise ValueError(f"expected actions of shape (T, {self.num_envs}), got {actions.shape}")
            flat = np.ascontiguousarray(validate_discrete_actions(actions.reshape(-1), actions.size))
            steps = actions.shape[0]
        if not record:
            self._lib.envport_pong_rollout(self._handle, _pointer(flat, ctypes.c_float), _int32(steps, "steps"),
                                           None, None, None)
            return None
        observations = np.empty((steps, self.num_envs, OBSERVATION_SIZE), dtype=np.float32)
        rewards = np.empty((steps, self.num_envs), dtype=np.float32)
        terminals = np.empty((steps, self.num_envs), dtype=np.uint8)
        self._lib.envport_pong_rollout(
            self._handle, _pointer(flat, ctypes.c_float), _int32(steps, "steps"),
            _pointer(observations, ctypes.c_float), _pointer(rewards, ctypes.c_float),
            _pointer(terminals, ctypes.c_ubyte),
        )
        return observations, rewards, terminals

    def internal_state(self, index: int = 0) -> dict[str, np.ndarray]:
        """The fields of env `index` that define its dynamics (see params.INTERNAL_FIELDS)."""
        self._check_open()
        out = _CInternal()
        if self._lib.envport_pong_internal(self._handle, int(index), ctypes.byref(out)) != 0:
            raise IndexError(f"env index {index} out of range for {self.num_envs} envs")
        return {
            name: np.asarray(getattr(out, name), dtype=np.float32 if i < 6 else
                             (np.uint32 if name.startswith("score") else np.int32))
            for i, name in enumerate(INTERNAL_FIELDS)
        }

    def set_internal_state(self, index: int, fields: dict, rand_seed: int) -> None:
        """Put env `index` into the given state (all INTERNAL_FIELDS), recompute its observation,
        and seed its stream with rand_seed (srand on the process's rand(), or its private stream)."""
        self._check_open()
        missing = [name for name in INTERNAL_FIELDS if name not in fields]
        if missing:
            raise ValueError(f"missing internal fields {missing}")
        c_fields = _CInternal(**{name: fields[name].item() if hasattr(fields[name], "item") else fields[name]
                                 for name in INTERNAL_FIELDS})
        if self._lib.envport_pong_set_internal(self._handle, int(index), ctypes.byref(c_fields),
                                               int(rand_seed) % 2**32) != 0:
            raise IndexError(f"env index {index} out of range for {self.num_envs} envs")

    def close(self) -> None:
        if getattr(self, "_handle", None):
            self._lib.envport_pong_free(self._handle)
            self._handle = None

    def _check_open(self) -> None:
        if not self._handle:
            raise RuntimeError("this CPongVec is closed")

    def __del__(self) -> None:
        self.close()
