"""L2: components together over several steps, the real C code against the translation."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from envs.pong.params import PongConfig
from envs.pong.tests import harness
from envs.pong.tests.harness import assert_same_steps, base_fields, coordinates, libc_rand_sequence
from shared.verification.strategies import action_sequences, seeds

LEFT_MISS = dict(ball_x=5.0, ball_vx=-10.0, ball_y=600.0, paddle_yl=-35.0)


def test_point_then_serve_then_observation():
    """Point scored (stale observation), the serve drawn from rand(), then the next frame's
    observation shows the served ball one frame on."""
    rand_seed = 12345
    outputs = assert_same_steps(base_fields(**LEFT_MISS), [0, 0], rand_seed)
    (before, *_), (stale, reward, _, served), (fresh, _, _, moved) = outputs
    expected_vy = libc_rand_sequence(rand_seed, 1)[0] % 2 - 1
    assert float(reward) == 1.0 and harness.bits(stale) == harness.bits(before)
    assert float(served["ball_vy"]) == expected_vy and float(served["ball_x"]) == 100.0
    assert float(moved["ball_x"]) == 110.0 and float(moved["ball_y"]) == 304.0 + expected_vy
    assert fresh[2] == np.float32(110.0) / np.float32(500.0)
    assert fresh[3] == np.float32(304.0 + expected_vy) / np.float32(640.0)


def test_episode_end_resets_without_reseeding():
    """The last point ends the episode; c_reset serves with the next rand() of the same stream."""
    rand_seed = 4242
    fields = base_fields(**LEFT_MISS, score_r=20)
    outputs = assert_same_steps(fields, [0, 2, 1, 0], rand_seed)
    _, reward, done, internal = outputs[1]
    assert (float(reward), done) == (1.0, True)
    assert float(internal["ball_vy"]) == libc_rand_sequence(rand_seed, 1)[0] % 2 - 1
    assert int(internal["score_r"]) == 0 and outputs[1][0][2] == np.float32(0.2)  # fresh obs after c_reset


@settings(max_examples=40, deadline=None)
@given(frameskip=st.integers(2, 8), actions=st.lists(st.integers(0, 2), min_size=1, max_size=12),
       start_x=coordinates(0, 468), vx=st.sampled_from([-10.0, 10.0]),
       paddle_yl=coordinates(-35, 605), paddle_yr=coordinates(-35, 605),
       rand_seed=st.integers(0, 2**31 - 1))
def test_frameskip_stops_at_a_point(frameskip, actions, start_x, vx, paddle_yl, paddle_yr, rand_seed):
    """With frameskip, a point ends the step early (C returns from inside its frame loop)."""
    fields = base_fields(ball_x=start_x, ball_vx=vx, paddle_yl=paddle_yl, paddle_yr=paddle_yr)
    assert_same_steps(fields, actions, rand_seed, PongConfig(frameskip=frameskip))


@settings(max_examples=25, deadline=None)
@given(actions=action_sequences(3, min_size=50, max_size=400), seed=seeds(signed=True))
def test_random_play_from_reset(actions, seed):
    from envs.pong.backends import c_backend, jax_backend
    from shared.verification.l3 import EXACT, first_divergence, play_actions
    divergence = first_divergence(play_actions(c_backend(), seed, actions), play_actions(jax_backend(), seed, actions), EXACT)
    assert divergence is None, divergence


def test_vector_env_seeding_matches_pufferlib():
    """Vector envs seed env i with srand(i + seed * num_envs), as PufferLib's vec_reset."""
    import gymnasium

    import envs.pong  # noqa: F401  (registers the ids)

    for env_id in ("envport/Pong-v0", "envport/PongJax-v0"):
        vector = gymnasium.make_vec(env_id, num_envs=5, vectorization_mode="vector_entry_point")
        observations, _ = vector.reset(seed=3)
        for i in range(5):
            expected_vy = libc_rand_sequence(i + 3 * 5, 1)[0] % 2 - 1
            assert observations[i][5] == np.float32(expected_vy + 13.0) / np.float32(26.0), (env_id, i)
        vector.close()


def test_a_policy_scores_the_same_on_both_backends():
    """L4's evaluation path, untrained: one greedy policy, the same 3 episodes on C and on JAX."""
    import dataclasses

    import jax

    from envs.pong import policy_transfer
    from shared.ppo.core import make_network

    settings = dataclasses.replace(policy_transfer.L4Settings(), eval_episodes=3)
    for init_seed in (0, 1):
        params = make_network(settings.ppo, 3).init(jax.random.PRNGKey(init_seed), np.zeros(8, np.float32))
        on_jax = policy_transfer.evaluate_on_jax(settings, params, seed=init_seed)
        on_c = policy_transfer.evaluate_on_c(settings, params, seed=init_seed)
        assert on_jax == on_c and -21.0 <= on_c <= 21.0 + 0.1 * 2000
