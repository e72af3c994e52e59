"""L1: each of Pong's components, one C step from a chosen state, bitwise against the real C code,
plus the behaviour pong.h specifies, checked with values worked out by hand from its source."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envs.pong.backends import c_backend, jax_backend
from envs.pong.params import PongConfig
from envs.pong.tests import components, harness
from envs.pong.tests.harness import MAX_PADDLE_Y, MIN_PADDLE_Y, assert_same_steps, base_fields, coordinates
from shared.verification.strategies import states

PONG = components.PONG
C_BACKEND, JAX_BACKEND = c_backend(), jax_backend()
ACTIONS = st.integers(0, 2)
RAND_SEEDS = st.integers(0, 2**31 - 1)
EXAMPLES = settings(max_examples=60, deadline=None)


# --- paddle: the agent's (right) paddle moves by paddle_speed * direction, clamped -------------

@PONG.covers("paddle")
@EXAMPLES
@given(paddle_yr=coordinates(MIN_PADDLE_Y - 10, MAX_PADDLE_Y + 10), action=ACTIONS)
def test_paddle_moves_and_clamps_like_c(paddle_yr, action):
    assert_same_steps(base_fields(paddle_yr=paddle_yr), [action])


@PONG.covers("paddle")
@pytest.mark.parametrize("start, action, expected", [
    (285.0, 1, 293.0),   # up: +8
    (285.0, 2, 277.0),   # down: -8
    (285.0, 0, 285.0),   # stay
    (600.0, 1, 605.0),   # clamped at height - paddle_height / 2
    (-30.0, 2, -35.0),   # clamped at -paddle_height / 2
])
def test_paddle_spec(start, action, expected):
    for backend in (harness.c_steps, harness.jax_steps):
        internal = backend(base_fields(paddle_yr=start), [action])[-1][3]
        assert float(internal["paddle_yr"]) == expected, backend.__name__


# --- opponent: the left paddle follows the ball's y, at most paddle_speed per frame ------------

@PONG.covers("opponent")
@EXAMPLES
@given(paddle_yl=coordinates(MIN_PADDLE_Y, MAX_PADDLE_Y), ball_y=coordinates(0, 608))
def test_opponent_tracking_like_c(paddle_yl, ball_y):
    assert_same_steps(base_fields(paddle_yl=paddle_yl, ball_y=ball_y), [0])


@PONG.covers("opponent")
def test_opponent_spec():
    # delta = ball_y - (paddle_yl + 35), clipped to [-8, 8]
    for backend in (harness.c_steps, harness.jax_steps):
        assert float(backend(base_fields(paddle_yl=100.0, ball_y=300.0), [0])[-1][3]["paddle_yl"]) == 108.0
        assert float(backend(base_fields(paddle_yl=260.0, ball_y=300.0), [0])[-1][3]["paddle_yl"]) == 265.0


# --- ball: moves by its velocity; top and bottom walls flip vy (no clipping) --------------------

@PONG.covers("ball")
@EXAMPLES
@given(ball_y=coordinates(-20, 630), ball_vy=coordinates(-13, 13),
       ball_x=coordinates(40, 440))
def test_ball_motion_and_walls_like_c(ball_y, ball_vy, ball_x):
    assert_same_steps(base_fields(ball_y=ball_y, ball_vy=ball_vy, ball_x=ball_x), [0, 0, 0])


@PONG.covers("ball")
def test_wall_flip_spec():
    for backend in (harness.c_steps, harness.jax_steps):
        internal = backend(base_fields(ball_y=2.0, ball_vy=-5.0), [0])[-1][3]
        assert (float(internal["ball_y"]), float(internal["ball_vy"])) == (-3.0, 5.0)
        internal = backend(base_fields(ball_y=600.0, ball_vy=13.0), [0])[-1][3]  # 613 + 32 > 640
        assert (float(internal["ball_y"]), float(internal["ball_vy"])) == (613.0, -13.0)


# --- bounce: paddle hits flip vx; the agent's adds spin, clamps vy, avoids a flat ball ---------

@PONG.covers("bounce")
@settings(max_examples=120, deadline=None)
@given(ball_y=coordinates(0, 608), paddle_yr=coordinates(MIN_PADDLE_Y, MAX_PADDLE_Y),
       ball_vy=st.sampled_from([-13.0, -12.0, -3.0, -1.0, 0.0, 1.0, 2.0, 3.0, 10.0, 13.0]) | coordinates(-13, 13),
       action=ACTIONS)
def test_right_paddle_bounce_like_c(ball_y, paddle_yr, ball_vy, action):
    assert_same_steps(base_fields(ball_x=460.0, ball_y=ball_y, paddle_yr=paddle_yr, ball_vy=ball_vy), [action])


@PONG.covers("bounce")
@EXAMPLES
@given(ball_y=coordinates(0, 608), paddle_yl=coordinates(MIN_PADDLE_Y, MAX_PADDLE_Y))
def test_left_paddle_bounce_like_c(ball_y, paddle_yl):
    assert_same_steps(base_fields(ball_x=5.0, ball_vx=-10.0, ball_y=ball_y, paddle_yl=paddle_yl), [0])


@PONG.covers("bounce")
@pytest.mark.parametrize("vy, action, expected_vy", [
    (0.0, 1, 3.0),     # spin up: 0 + 3
    (12.0, 1, 13.0),   # clamped at ball_max_speed_y
    (-12.0, 2, -13.0),
    (3.0, 2, 3.0),     # 3 - 3 = 0 is too flat: set to ball_speed_y_increment
    (5.0, 0, 5.0),     # no spin when the paddle stays
])
def test_spin_spec(vy, action, expected_vy):
    # ball at x 460 moves to 470; 470 + 32 > 500 and the paddle (y 285..355) covers y 304..336
    for backend in (harness.c_steps, harness.jax_steps):
        obs, reward, done, internal = backend(base_fields(ball_x=460.0, ball_vy=vy, paddle_yr=285.0), [action])[-1]
        assert float(internal["ball_vx"]) == -10.0 and float(internal["ball_vy"]) == expected_vy, backend.__name__
        assert reward == np.float32(0.1) and float(internal["ball_x"]) == 468.0  # clipped to 500 - 32
        assert int(internal["n_bounces"]) == 1


# --- scoring: a miss gives the point, +-1 reward; max_score ends the episode ------------------

@PONG.covers("scoring")
@EXAMPLES
@given(score_l=st.integers(0, 20), score_r=st.integers(0, 20), side=st.sampled_from(["left", "right"]),
       rand_seed=RAND_SEEDS)
def test_points_like_c(score_l, score_r, side, rand_seed):
    # the ball passes the paddle on `side`, whose paddle is far away
    if side == "left":
        fields = base_fields(ball_x=5.0, ball_vx=-10.0, ball_y=600.0, paddle_yl=-35.0, score_l=score_l, score_r=score_r)
    else:
        fields = base_fields(ball_x=465.0, ball_y=600.0, paddle_yr=-35.0, score_l=score_l, score_r=score_r)
    assert_same_steps(fields, [0, 1], rand_seed)


@PONG.covers("scoring")
def test_scoring_spec():
    for backend in (harness.c_steps, harness.jax_steps):
        left_miss = base_fields(ball_x=5.0, ball_vx=-10.0, ball_y=600.0, paddle_yl=-35.0, score_r=3)
        _, reward, done, internal = backend(left_miss, [0])[-1]
        assert (float(reward), done, int(internal["score_r"]), int(internal["win"])) == (1.0, False, 4, 1)
        right_miss = base_fields(ball_x=465.0, ball_y=600.0, paddle_yr=-35.0, score_l=20)
        _, reward, done, internal = backend(right_miss, [0])[-1]
        assert (float(reward), done) == (-1.0, True)
        assert (int(internal["score_l"]), int(internal["score_r"])) == (0, 0)  # c_reset after the last point


@PONG.covers("scoring")
@pytest.mark.parametrize("max_score", [1, 5])
def test_max_score_parameter(max_score):
    config = PongConfig(max_score=max_score)
    fields = base_fields(ball_x=5.0, ball_vx=-10.0, ball_y=600.0, paddle_yl=-35.0, score_r=max_score - 1)
    outputs = assert_same_steps(fields, [0], config=config)
    assert outputs[-1][2] is True


# --- serve_rng at the game level: a serve's vy is (rand() % 2 - 1) * 1 ----------------------------

@PONG.covers("serve_rng")
@EXAMPLES
@given(rand_seed=RAND_SEEDS)
def test_serve_direction_from_rand(rand_seed):
    fields = base_fields(ball_x=5.0, ball_vx=-10.0, ball_y=600.0, paddle_yl=-35.0)
    outputs = assert_same_steps(fields, [0], rand_seed)
    expected_vy = float(harness_rand_parity(rand_seed) - 1)
    assert float(outputs[-1][3]["ball_vy"]) == expected_vy


def harness_rand_parity(seed: int) -> int:
    return harness.libc_rand_sequence(seed, 1)[0] % 2


# --- observation: normalisations, unsigned score division, stale after a point ----------------

@PONG.covers("observation")
@EXAMPLES
@given(fields=states(dict(
    paddle_yl=coordinates(MIN_PADDLE_Y, MAX_PADDLE_Y), paddle_yr=coordinates(MIN_PADDLE_Y, MAX_PADDLE_Y),
    ball_x=coordinates(0, 468), ball_y=coordinates(0, 608),
    ball_vx=st.sampled_from([-10.0, 10.0]), ball_vy=coordinates(-13, 13),
    score_l=st.integers(0, 20), score_r=st.integers(0, 20))))
def test_observation_like_c(fields):
    assert_same_steps(base_fields(**fields), [0, 1, 2])


@PONG.covers("observation")
def test_observation_spec():
    obs = harness.c_steps(base_fields(ball_x=110.0, score_l=20, score_r=20), [])[0][0]
    jax_obs = harness.jax_steps(base_fields(ball_x=110.0, score_l=20, score_r=20), [])[0][0]
    for o in (obs, jax_obs):
        assert o[0] == np.float32(320.0) / np.float32(640.0)   # (285 + 35) / (605 + 35)
        assert o[2] == np.float32(110.0) / np.float32(500.0)   # float32 division: 0.22, not 0.22000001
        assert o[4] == np.float32(1.0) and o[5] == np.float32(0.5)
        assert o[6] == 0.0 and o[7] == 0.0                      # 20 / 21 in unsigned ints is 0


@PONG.covers("observation")
def test_observation_is_stale_after_a_point():
    fields = base_fields(ball_x=5.0, ball_vx=-10.0, ball_y=600.0, paddle_yl=-35.0)
    for backend in (harness.c_steps, harness.jax_steps):
        (before, *_), (after, reward, done, internal) = backend(fields, [0])
        assert float(reward) == 1.0 and float(internal["ball_x"]) == 100.0  # served again ...
        assert harness.bits(after) == harness.bits(before)                   # ... but obs not recomputed


@PONG.covers("observation")
def test_subnormals_are_flushed_by_xla():
    """The one known difference, outside the reachable states: XLA on CPU flushes subnormal floats
    to zero, C does not. If this starts failing, XLA changed and the README's note must too."""
    fields = base_fields(ball_x=float(np.finfo(np.float32).tiny))  # smallest normal; / 500 is subnormal
    c_obs, jax_obs = harness.c_steps(fields, [])[0][0], harness.jax_steps(fields, [])[0][0]
    assert c_obs[2] != 0.0 and jax_obs[2] == 0.0


# --- reset ----------------------------------------------------------------------------------------

@PONG.covers("reset")
@EXAMPLES
@given(seed=st.integers(-(2**31), 2**31 - 1))
def test_reset_like_c(seed):
    c, j = C_BACKEND.reset(seed), JAX_BACKEND.reset(seed)
    assert harness.bits(c.observation) == harness.bits(j.observation)
    assert {k: harness.bits(v) for k, v in c.state.items()} == {k: harness.bits(v) for k, v in j.state.items()}


@PONG.covers("reset")
def test_reset_spec():
    for backend in (C_BACKEND, JAX_BACKEND):
        state = backend.reset(0).state
        assert (float(state["paddle_yl"]), float(state["paddle_yr"])) == (285.0, 285.0)
        assert (float(state["ball_x"]), float(state["ball_y"]), float(state["ball_vx"])) == (100.0, 304.0, 10.0)
        assert float(state["ball_vy"]) in (0.0, -1.0)
        assert int(state["score_l"]) == int(state["score_r"]) == int(state["tick"]) == 0
