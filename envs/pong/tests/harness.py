"""Start the real C Pong and the JAX translation from one chosen state, step both, compare bitwise."""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache

import jax
import numpy as np

from envs.pong.jax import env as jax_pong
from envs.pong.params import INTERNAL_FIELDS, PongConfig
from envs.pong.reference.c_pong import CPongVec

DEFAULT = PongConfig()
MIN_PADDLE_Y = -DEFAULT.paddle_height / 2  # -35: pong.h's init()
MAX_PADDLE_Y = DEFAULT.height - DEFAULT.paddle_height / 2  # 605


@cache
def _c_env(config: PongConfig) -> CPongVec:
    return CPongVec(1, 0, config)


@cache
def _jax_fns(config: PongConfig):
    params = jax_pong.EnvParams.from_config(config)
    make = jax.jit(lambda fields, seed: jax_pong.state_from_fields(fields, seed, params))
    step = jax.jit(lambda state, action: jax_pong.step(None, state, action, params))
    return make, step


LIBC = ctypes.CDLL(ctypes.util.find_library("c"))
LIBC.srand.argtypes = [ctypes.c_uint]


def libc_rand_sequence(seed: int, count: int) -> list[int]:
    """What libc's own rand() returns after srand(seed): the reference for the serve generator."""
    LIBC.srand(seed % 2**32)
    return [LIBC.rand() for _ in range(count)]


def coordinates(low: float, high: float):
    """float32 values for positions and speeds. Subnormals are left out: every state reachable from
    a reset holds whole numbers, and XLA on CPU flushes subnormals to zero where C keeps them
    (pinned by l1_components.test_subnormals_are_flushed_by_xla)."""
    from hypothesis import strategies as st

    return st.floats(low, high, width=32, allow_subnormal=False).filter(lambda x: x == 0 or abs(x) >= 2**-20)


def base_fields(**overrides) -> dict:
    """A mid-rally state: paddles centred, ball in the middle moving right."""
    fields = dict(paddle_yl=285.0, paddle_yr=285.0, ball_x=234.0, ball_y=304.0, ball_vx=10.0, ball_vy=0.0,
                  score_l=0, score_r=0, tick=5, n_bounces=0, win=0)
    fields.update(overrides)
    return fields


def _typed(fields: dict) -> dict:
    return {name: (np.float32(fields[name]) if i < 6 else
                   np.uint32(fields[name]) if name.startswith("score") else np.int32(fields[name]))
            for i, name in enumerate(INTERNAL_FIELDS)}


def c_steps(fields: dict, actions, rand_seed: int = 1, config: PongConfig = DEFAULT):
    """Outputs of the real C code: [(observation, reward, terminal, internal)] per action."""
    env = _c_env(config)
    env.set_internal_state(0, _typed(fields), rand_seed)
    out = [(env.observations[0].copy(), np.float32(0), False, env.internal_state(0))]
    for action in actions:
        obs, reward, terminal = env.step(np.asarray([action]))
        out.append((obs[0].copy(), np.float32(reward[0]), bool(terminal[0]), env.internal_state(0)))
    return out


def jax_steps(fields: dict, actions, rand_seed: int = 1, config: PongConfig = DEFAULT):
    make, step = _jax_fns(config)
    state = make(_typed(fields), np.uint32(rand_seed % 2**32))
    out = [(np.asarray(state.observation), np.float32(0), False, _internal(state))]
    for action in actions:
        obs, state, reward, done, _ = step(state, np.int32(action))
        out.append((np.asarray(obs), np.float32(reward), bool(done), _internal(state)))
    return out


def _internal(state) -> dict:
    return {name: np.asarray(getattr(state, name)) for name in INTERNAL_FIELDS}


def bits(value) -> object:
    array = np.asarray(value)
    return array.view(np.uint32).tolist() if array.dtype == np.float32 else array.tolist()


def assert_same_steps(fields: dict, actions, rand_seed: int = 1, config: PongConfig = DEFAULT):
    """Step both backends from `fields`; every output and internal field must be bitwise equal.
    Returns the C outputs so a test can also check what the step did."""
    expected, actual = c_steps(fields, actions, rand_seed, config), jax_steps(fields, actions, rand_seed, config)
    for t, ((c_obs, c_rew, c_done, c_int), (j_obs, j_rew, j_done, j_int)) in enumerate(zip(expected, actual, strict=True)):
        context = f"after step {t} of actions {list(actions)} from {fields}"
        assert bits(c_obs) == bits(j_obs), f"observation {context}: C {c_obs} vs JAX {j_obs}"
        assert bits(c_rew) == bits(j_rew), f"reward {context}: C {c_rew} vs JAX {j_rew}"
        assert c_done == j_done, f"done {context}: C {c_done} vs JAX {j_done}"
        for name in INTERNAL_FIELDS:
            assert bits(c_int[name]) == bits(j_int[name]), f"{name} {context}: C {c_int[name]} vs JAX {j_int[name]}"
    return expected
