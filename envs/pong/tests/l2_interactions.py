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


def _random_play(vector, seeds, steps: int, rng_seed: int = 1):
    """Observations, rewards and terminals of `steps` random-action steps after reset(env_seeds=seeds)."""
    rng = np.random.default_rng(rng_seed)
    first, _ = vector.reset(options={"env_seeds": seeds})
    frames = [(first, np.zeros(vector.num_envs, np.float32), np.zeros(vector.num_envs, bool))]
    for _ in range(steps):
        observations, rewards, terminated, _, _ = vector.step(rng.integers(0, 3, vector.num_envs))
        frames.append((observations.copy(), np.asarray(rewards, np.float32), np.asarray(terminated)))
    return frames


def test_c_envs_with_private_streams_replay_the_jax_vector_env():
    """Each C env on its own libc rand() state serves as a lone C env seeded alike, which is what
    each JAX env does; on the process's one stream (PufferLib's way) the serves differ."""
    from envs.pong.gym_envs import CPongVectorEnv, JaxPongVectorEnv

    config = PongConfig(frameskip=8)
    seeds = np.random.default_rng(0).integers(0, 2**31, 12)
    jax_frames = _random_play(JaxPongVectorEnv(12, config=config), seeds, 400)
    private = CPongVectorEnv(12, config=config, private_streams=True)
    shared_stream = CPongVectorEnv(12, config=config)
    for t, (c, j) in enumerate(zip(_random_play(private, seeds, 400), jax_frames, strict=True)):
        for field, a, b in zip(("observation", "reward", "terminal"), c, j, strict=True):
            assert np.array_equal(a, b), (t, field)
    assert sum(int(f[2].sum()) for f in jax_frames) >= 12  # episodes ended, so later serves were drawn
    differs = [not np.array_equal(c[0], j[0]) for c, j in zip(_random_play(shared_stream, seeds, 400), jax_frames, strict=True)]
    assert any(differs) and not differs[0]  # the same starts, then the shared stream's serves
    private.close()
    shared_stream.close()


def test_private_streams_leave_the_process_stream_as_it_was():
    """A vector on private streams stepping in between does not move the process's rand()."""
    from envs.pong.reference.c_pong import CPongVec

    config = PongConfig(frameskip=8)
    actions = np.random.default_rng(2).integers(0, 3, (300, 4))

    def shared_run(interleave: bool):
        shared_stream = CPongVec(num_envs=4, seed=0, config=config)
        shared_stream.reset(7)
        private = CPongVec(num_envs=3, seed=5, config=config, private_streams=True)
        observations = []
        for step in actions:
            if interleave:
                private.step(np.asarray([1, 2, 0]))
            observations.append(shared_stream.step(step)[0].copy())
        shared_stream.close()
        private.close()
        return np.asarray(observations)

    assert np.array_equal(shared_run(True), shared_run(False))


def test_single_c_envs_side_by_side_play_as_their_jax_twins():
    """Gymnasium's SyncVectorEnv steps single envs one after the other in one process: the C envs'
    games are those of the JAX envs with the same seeds (each CPongEnv draws from its own stream),
    and envs/test_gym_ids' promise of the same episodes on both ids holds there too."""
    import gymnasium

    import envs.pong  # noqa: F401  (registers the ids)

    actions = np.random.default_rng(4).integers(0, 3, (1500, 3))

    def play(env_id):
        vector = gymnasium.make_vec(env_id, num_envs=3, vectorization_mode="sync", frameskip=8)
        observations = [vector.reset(seed=[5, 6, 7])[0]]
        ends = 0
        for step in actions:
            observation, _, terminated, _, _ = vector.step(step)
            observations.append(observation)
            ends += int(terminated.sum())
        vector.close()
        return np.asarray(observations), ends

    c_observations, ends = play("envport/Pong-v0")
    jax_observations, _ = play("envport/PongJax-v0")
    assert ends >= 3  # episodes ended, so later serves were drawn with the three envs interleaved
    assert np.array_equal(c_observations, jax_observations)


def test_ppo_trains_bitwise_the_same_policy_on_both_backends():
    """L4's two training loops from one seed: make_train on JAX and the host loop on C (private
    streams, make_train's starts) end with the same parameters, bit for bit; C on the process's one
    stream (PufferLib's way) trains another policy."""
    import dataclasses

    import jax

    from envs.pong import policy_transfer
    from envs.pong.gym_envs import CPongVectorEnv
    from shared.ppo import train_host

    settings = policy_transfer.L4Settings(ppo=dataclasses.replace(
        policy_transfer.L4Settings().ppo, total_timesteps=8 * 64 * 3, num_envs=8, num_steps=64))

    def leaves(params):
        return [np.asarray(x) for x in jax.tree.leaves(params)]

    on_jax = leaves(policy_transfer.jax_backend(settings).train(4).policy)
    on_c = leaves(policy_transfer.c_backend(settings).train(4).policy)
    assert all(np.array_equal(a, b) for a, b in zip(on_jax, on_c, strict=True))
    config = dataclasses.replace(settings.ppo, seed=4)
    shared_stream = CPongVectorEnv(config.num_envs, config=settings.pong)
    other, _, _ = train_host(config, shared_stream, show_progress=False,
                             reset_options=policy_transfer.make_train_starts(config.num_envs))
    shared_stream.close()
    assert not all(np.array_equal(a, b) for a, b in zip(on_jax, leaves(other.params), strict=True))
