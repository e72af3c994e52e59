"""PufferLib 3.0.0's C Pong (pufferlib/ocean/pong/pong.h) translated to JAX, bit for bit.

gymnax-style and functional: `reset(key, params)`, `step(key, state, action, params)`, a pytree
`EnvState`, fixed-size arrays and no Python control flow on traced values, so that envs batch
with `vmap` and whole episodes fuse into one `lax.scan` (`rollout`).

The C behaviour is reproduced as it is, quirks included:
- the serve's vertical speed is `(rand() % 2 - 1) * ball_initial_speed_y`, i.e. 0 or -1, drawn
  from glibc's rand(): each env carries its own generator (glibc_random.ServeBits);
- the score observations divide unsigned ints (score / max_score), so they are 0 except at
  max_score, where the env has already reset: always 0;
- after a point that does not end the episode, the observation is not recomputed: the step
  returns the previous frame's (stale) observation;
- at the end of an episode the env resets itself inside step (no re-seeding: the generator runs
  on), and that step returns the new episode's first observation with done = True;
- `fabsf(ball_vy) < 0.01` compares a float with a double in C; in float32 that is
  `|vy| <= float32(0.01)` (float32(0.01) < 0.01 and the next float32 is > 0.01).
All arithmetic is float32 in C's order, with no operation that XLA could reassociate.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from ..params import NUM_ACTIONS, OBSERVATION_SIZE, PongConfig
from . import glibc_random

F32 = jnp.float32
# Largest float32 below the double 0.01: C's `fabsf(vy) < 0.01` is `|vy| <= this` in float32.
_HORIZONTAL_LIMIT = np.float32(0.01)


@struct.dataclass
class EnvParams:
    """Pong's parameters as float32 scalars (C stores them in float fields)."""

    width: Any = np.float32(500)
    height: Any = np.float32(640)
    paddle_width: Any = np.float32(20)
    paddle_height: Any = np.float32(70)
    ball_width: Any = np.float32(32)
    ball_height: Any = np.float32(32)
    paddle_speed: Any = np.float32(8)
    ball_initial_speed_x: Any = np.float32(10)
    ball_initial_speed_y: Any = np.float32(1)
    ball_max_speed_y: Any = np.float32(13)
    ball_speed_y_increment: Any = np.float32(3)
    max_score: Any = np.uint32(21)
    frameskip: int = struct.field(pytree_node=False, default=1)

    @classmethod
    def from_config(cls, config: PongConfig) -> EnvParams:
        floats = {name: np.float32(getattr(config, name)) for name in (
            "width", "height", "paddle_width", "paddle_height", "ball_width", "ball_height", "paddle_speed",
            "ball_initial_speed_x", "ball_initial_speed_y", "ball_max_speed_y", "ball_speed_y_increment")}
        return cls(**floats, max_score=np.uint32(config.max_score), frameskip=int(config.frameskip))

    @property
    def min_paddle_y(self):
        return -self.paddle_height / F32(2)

    @property
    def max_paddle_y(self):
        return self.height - self.paddle_height / F32(2)


@struct.dataclass
class EnvState:
    paddle_yl: jax.Array
    paddle_yr: jax.Array
    ball_x: jax.Array
    ball_y: jax.Array
    ball_vx: jax.Array
    ball_vy: jax.Array
    score_l: jax.Array  # uint32, as in C
    score_r: jax.Array
    tick: jax.Array
    n_bounces: jax.Array
    win: jax.Array
    observation: jax.Array  # C's observation buffer: persists when a step does not rewrite it
    serve_bits: glibc_random.ServeBits


def _divide(numerator, denominator):
    """IEEE float32 division, as C does it. XLA's algebraic simplifier rewrites `x / constant` into
    `x * (1 / constant)`, which is not exact (110 / 500 would give 0.22000001, not C's 0.22); the
    optimization barrier hides the constant from that rewrite."""
    return numerator / jax.lax.optimization_barrier(jnp.asarray(denominator, F32))


def _observe(state: EnvState, params: EnvParams) -> jax.Array:
    paddle_range = params.max_paddle_y - params.min_paddle_y
    return jnp.stack([
        _divide(state.paddle_yl - params.min_paddle_y, paddle_range),
        _divide(state.paddle_yr - params.min_paddle_y, paddle_range),
        _divide(state.ball_x, params.width),
        _divide(state.ball_y, params.height),
        _divide(state.ball_vx + params.ball_initial_speed_x, F32(2) * params.ball_initial_speed_x),
        _divide(state.ball_vy + params.ball_max_speed_y, F32(2) * params.ball_max_speed_y),
        (state.score_l // params.max_score).astype(F32),
        (state.score_r // params.max_score).astype(F32),
    ])


def _reset_round(state: EnvState, params: EnvParams, where=True) -> EnvState:
    """C's reset_round where `where` holds (a serve drawn from rand()); elsewhere `state` as it is.
    Written as selects, not as a second whole state, so that XLA fuses a frame into few loops."""
    serve_bits, parity = glibc_random.next_rand_parity(state.serve_bits)
    centred_paddle = params.height / F32(2) - params.paddle_height / F32(2)
    served = dict(
        paddle_yl=centred_paddle,
        paddle_yr=centred_paddle,
        ball_x=_divide(params.width, F32(5)),
        ball_y=params.height / F32(2) - params.ball_height / F32(2),
        ball_vx=jnp.asarray(params.ball_initial_speed_x, F32),
        ball_vy=(parity.astype(jnp.int32) - 1).astype(F32) * params.ball_initial_speed_y,
        tick=jnp.int32(0),
        n_bounces=jnp.int32(0),
        serve_bits=serve_bits,
    )
    return state.replace(**{
        name: jax.tree.map(lambda new, old: jnp.where(where, new, old), value, getattr(state, name))
        for name, value in served.items()
    })


def _new_episode(state: EnvState, params: EnvParams) -> EnvState:
    """C's c_reset: a new round, scores to zero, fresh observation."""
    state = _reset_round(state, params).replace(score_l=jnp.uint32(0), score_r=jnp.uint32(0))
    return state.replace(observation=_observe(state, params))


def reset_from_seed(seed, params: EnvParams = EnvParams()) -> tuple[jax.Array, EnvState]:
    """What C does for one env after `srand(seed)`: c_reset. seed is C's unsigned int."""
    zero_f, zero_i = jnp.float32(0), jnp.int32(0)
    blank = EnvState(
        paddle_yl=zero_f, paddle_yr=zero_f, ball_x=zero_f, ball_y=zero_f, ball_vx=zero_f, ball_vy=zero_f,
        score_l=jnp.uint32(0), score_r=jnp.uint32(0), tick=zero_i, n_bounces=zero_i, win=zero_i,
        observation=jnp.zeros(OBSERVATION_SIZE, F32),
        serve_bits=glibc_random.seed_serve_bits(seed),
    )
    state = _new_episode(blank, params)
    return state.observation, state


def state_from_fields(fields, rand_seed, params: EnvParams = EnvParams()) -> EnvState:
    """An EnvState holding the given internal fields (params.INTERNAL_FIELDS), with the observation a
    frame would compute and the generator just after srand(rand_seed): the same state that the C
    driver's envport_pong_set_internal makes, for tests that start both backends from one state."""
    state = EnvState(
        paddle_yl=jnp.float32(fields["paddle_yl"]), paddle_yr=jnp.float32(fields["paddle_yr"]),
        ball_x=jnp.float32(fields["ball_x"]), ball_y=jnp.float32(fields["ball_y"]),
        ball_vx=jnp.float32(fields["ball_vx"]), ball_vy=jnp.float32(fields["ball_vy"]),
        score_l=jnp.uint32(fields["score_l"]), score_r=jnp.uint32(fields["score_r"]),
        tick=jnp.int32(fields["tick"]), n_bounces=jnp.int32(fields["n_bounces"]), win=jnp.int32(fields["win"]),
        observation=jnp.zeros(OBSERVATION_SIZE, F32),
        serve_bits=glibc_random.seed_serve_bits(rand_seed),
    )
    return state.replace(observation=_observe(state, params))


def seed_of_key(key: jax.Array) -> jax.Array:
    """The 31-bit C seed that `reset(key)` starts from (uint32)."""
    return jax.random.bits(key, dtype=jnp.uint32) >> jnp.uint32(1)


def reset(key: jax.Array, params: EnvParams = EnvParams()) -> tuple[jax.Array, EnvState]:
    """gymnax reset: the key picks a 31-bit C seed (seed_of_key). Use reset_from_seed to match a C seed."""
    return reset_from_seed(seed_of_key(key), params)


def _computed_once(events: jax.Array) -> jax.Array:
    """The identity, computed once per step. XLA on CPU gives each state field its own fused loop
    and copies every cheap operation it needs into each loop: left alone, the whole frame's hit
    tests run again inside each of the ~14 loops, which made the step 3x slower. An integer
    division counts as expensive to XLA, so it is computed once and shared; dividing by a 1 that
    XLA cannot see through changes nothing else."""
    return jax.lax.div(events, jax.lax.optimization_barrier(jnp.int32(1)))


def _frame(state: EnvState, active, paddle_dir, reward, done, params: EnvParams):
    """One iteration of c_step's frameskip loop. Inactive (after a point): state passes through.
    `active` is True (first frame) or a traced bool."""
    speed = params.paddle_speed
    paddle_yr = state.paddle_yr + speed * paddle_dir
    opponent_delta = state.ball_y - (state.paddle_yl + params.paddle_height / F32(2))
    opponent_delta = jnp.minimum(jnp.maximum(opponent_delta, -speed), speed)
    paddle_yl = state.paddle_yl + opponent_delta
    paddle_yr = jnp.minimum(jnp.maximum(paddle_yr, params.min_paddle_y), params.max_paddle_y)
    paddle_yl = jnp.minimum(jnp.maximum(paddle_yl, params.min_paddle_y), params.max_paddle_y)

    ball_x = state.ball_x + state.ball_vx
    ball_y = state.ball_y + state.ball_vy
    hits_wall = (ball_y < 0) | (ball_y + params.ball_height > params.height)
    ball_vy = jnp.where(hits_wall, -state.ball_vy, state.ball_vy)

    at_left = ball_x < 0
    left_paddle_hit = at_left & (ball_y + params.ball_height > paddle_yl) & (ball_y < paddle_yl + params.paddle_height)
    agent_scores = at_left & ~left_paddle_hit

    at_right = ~agent_scores & (ball_x + params.ball_width > params.width)
    right_paddle_hit = at_right & (ball_y + params.ball_height > paddle_yr) & (ball_y < paddle_yr + params.paddle_height)
    opponent_scores = at_right & ~right_paddle_hit
    # Every field's update depends on these four events: compute them once (see _computed_once).
    events = _computed_once(left_paddle_hit.astype(jnp.int32) | (agent_scores.astype(jnp.int32) << 1)
                            | (right_paddle_hit.astype(jnp.int32) << 2) | (opponent_scores.astype(jnp.int32) << 3))
    left_paddle_hit, agent_scores = (events & 1) != 0, (events & 2) != 0
    right_paddle_hit, opponent_scores = (events & 4) != 0, (events & 8) != 0
    ball_vx = jnp.where(left_paddle_hit, -state.ball_vx, state.ball_vx)
    ball_vx = jnp.where(right_paddle_hit, -ball_vx, ball_vx)
    n_bounces = state.n_bounces + left_paddle_hit.astype(jnp.int32) + right_paddle_hit.astype(jnp.int32)
    spun_vy = ball_vy + params.ball_speed_y_increment * paddle_dir
    spun_vy = jnp.minimum(jnp.maximum(spun_vy, -params.ball_max_speed_y), params.ball_max_speed_y)
    spun_vy = jnp.where(jnp.abs(spun_vy) <= _HORIZONTAL_LIMIT, params.ball_speed_y_increment, spun_vy)
    ball_vy = jnp.where(right_paddle_hit, spun_vy, ball_vy)
    clipped_x = jnp.minimum(jnp.maximum(ball_x, F32(0)), params.width - params.ball_width)
    clipped_y = jnp.minimum(jnp.maximum(ball_y, F32(0)), params.height - params.ball_height)
    ball_x = jnp.where(right_paddle_hit, clipped_x, ball_x)
    ball_y = jnp.where(right_paddle_hit, clipped_y, ball_y)

    score_r = state.score_r + agent_scores.astype(jnp.uint32)
    score_l = state.score_l + opponent_scores.astype(jnp.uint32)
    point = agent_scores | opponent_scores
    episode_over = (agent_scores & (score_r == params.max_score)) | (opponent_scores & (score_l == params.max_score))

    # A point runs reset_round; the episode's last point runs c_reset, which also zeroes the scores.
    moved = state.replace(
        paddle_yl=paddle_yl, paddle_yr=paddle_yr, ball_x=ball_x, ball_y=ball_y, ball_vx=ball_vx, ball_vy=ball_vy,
        score_l=jnp.where(episode_over, jnp.uint32(0), score_l),
        score_r=jnp.where(episode_over, jnp.uint32(0), score_r),
        n_bounces=n_bounces,
        win=jnp.where(agent_scores, 1, jnp.where(opponent_scores, 0, state.win)).astype(jnp.int32),
    )
    after = _reset_round(moved, params, where=point)
    # No point: the frame ends by recomputing the observation. A point: the observation is left
    # stale; the episode's last point: c_reset recomputes it.
    stale = point & ~episode_over
    after = after.replace(observation=jnp.where(stale, state.observation, _observe(after, params)))
    if not isinstance(active, bool):
        after = jax.tree.map(lambda new, old: jnp.where(active, new, old), after, state)

    reward = jnp.where(active & right_paddle_hit, F32(0.1), reward)
    reward = jnp.where(active & agent_scores, F32(1), reward)
    reward = jnp.where(active & opponent_scores, F32(-1), reward)
    done = done | (active & episode_over)
    return after, active & ~point, reward, done


def step(key: jax.Array, state: EnvState, action, params: EnvParams = EnvParams()):
    """C's c_step for one env. `key` is unused (Pong's only randomness is its rand() stream); it is
    kept for the gymnax signature. Actions outside {0, 1, 2} mean 'stay', as in C: the Gymnasium
    wrappers reject them before they get here (a traced value cannot be checked); a shape or dtype,
    known when the step is traced, is checked here."""
    del key
    action = jnp.asarray(action)
    if action.shape != () or not jnp.issubdtype(action.dtype, jnp.integer):
        raise ValueError(f"one Pong env's action is one integer (0 stay, 1 up, 2 down), got shape {action.shape} "
                         f"dtype {action.dtype}; step a batch with jax.vmap")
    paddle_dir = jnp.where(action == 1, F32(1), jnp.where(action == 2, F32(-1), F32(0)))
    state = state.replace(tick=state.tick + 1)
    # `active` is a Python True for the first frame (nothing to mask), then a traced flag that
    # turns off once a point ends the step, as C's `return` inside its frame loop does.
    active, reward, done = True, F32(0), jnp.bool_(False)
    for _ in range(params.frameskip):
        state, active, reward, done = _frame(state, active, paddle_dir, reward, done, params)
    return state.observation, state, reward, done, {}


def rollout(state: EnvState, actions: jax.Array, params: EnvParams = EnvParams()):
    """Step one env through actions[t] with lax.scan: (final state, (obs [T, 8], reward [T], done [T],
    state after each step))."""
    def body(carry, action):
        obs, carry, reward, done, _ = step(None, carry, action, params)
        return carry, (obs, reward, done, carry)
    return jax.lax.scan(body, state, actions)


def env_spec(config: PongConfig = PongConfig()):
    """Pong as a shared.ppo.JaxEnvSpec, for make_train."""
    from shared.ppo.jax_loop import JaxEnvSpec

    return JaxEnvSpec(name=f"pong (frameskip {config.frameskip})", reset=reset, step=step,
                      params=EnvParams.from_config(config), observation_shape=(OBSERVATION_SIZE,),
                      num_actions=NUM_ACTIONS)
