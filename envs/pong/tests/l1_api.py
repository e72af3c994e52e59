"""L1, the public surface: Gymnasium conformance, seeding, and clear errors on bad input."""

import os
import subprocess
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings

import envs.pong  # noqa: F401  (registers envport/Pong-v0 and envport/PongJax-v0)
from envs.pong.params import PongConfig
from envs.pong.reference import build, sdist
from envs.pong.reference.c_pong import CPongVec
from shared.gym_registration import submodules_loaded_by_import
from shared.verification.strategies import invalid_discrete_actions

IDS = ["envport/Pong-v0", "envport/PongJax-v0"]
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module", params=IDS)
def env(request):
    env = gymnasium.make(request.param)
    yield env
    env.close()


def test_check_env(env):
    check_env(env.unwrapped, skip_render_check=True)


def _trajectory(env, seed, steps=300):
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out = [obs.copy()]
    for _ in range(steps):
        obs, reward, terminated, truncated, _ = env.step(int(rng.integers(3)))
        out.append(np.append(obs, [reward, terminated]))
    return np.concatenate(out)


def test_same_seed_same_trajectory(env):
    assert np.array_equal(_trajectory(env, 11), _trajectory(env, 11))
    # seeds 2 and 3 serve differently (libc rand() % 2 after srand: 0 and 1)
    assert not np.array_equal(_trajectory(env, 2), _trajectory(env, 3))


def test_unseeded_reset_follows_the_first_seed(env):
    env.reset(seed=5)
    first = [env.reset()[0].copy() for _ in range(4)]
    env.reset(seed=5)
    assert all(np.array_equal(a, env.reset()[0]) for a in first)


def test_both_backends_agree_through_gymnasium():
    c_env, jax_env = (gymnasium.make(i) for i in IDS)
    assert np.array_equal(_trajectory(c_env, 7, 500), _trajectory(jax_env, 7, 500))


@settings(max_examples=30, deadline=None)
@given(action=invalid_discrete_actions(3))
def test_invalid_actions_are_rejected(action):
    for env_id in IDS:
        env = _ENVS[env_id]
        env.reset(seed=0)
        with pytest.raises(ValueError, match=r"an action is an integer in \[0, 3\)|action -?\d+ is out of range"):
            env.step(action)


_ENVS = {env_id: gymnasium.make(env_id) for env_id in IDS}


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("action", [np.array([1, 2]), np.zeros((2, 1), dtype=np.int64), np.array([], dtype=np.int64)])
def test_single_env_refuses_more_or_fewer_than_one_action(env_id, action):
    env = _ENVS[env_id]
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"one action per step, .* got shape"):
        env.step(action)


@pytest.mark.parametrize("env_id", IDS)
def test_single_env_takes_the_repos_discrete_actions(env_id):
    """shared/discrete_action.py: an integer scalar or one-element integer array; floats refused even
    when integral (C's action buffer is float, so C alone would take them), bools too."""
    env = _ENVS[env_id]
    env.reset(seed=0)
    for action in (1, np.int8(2), np.array(0), np.array([1], np.uint16)):
        env.step(action)
    for action in (1.0, np.float32(2), True):
        with pytest.raises(ValueError, match=r"an action is an integer in \[0, 3\), got .*\((float64|float32|bool)\)"):
            env.step(action)
    with pytest.raises(ValueError, match=r"action 3 is out of range \[0, 3\); 0 stay, 1 up, 2 down"):
        env.step(3)


@pytest.mark.parametrize("env_id", IDS)
def test_vector_env_checks_action_shape(env_id):
    vector = gymnasium.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point")
    vector.reset(seed=0)
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        vector.step(np.zeros(4, dtype=np.int64))
    with pytest.raises(ValueError, match=r"integer array of shape \(3,\), got float64"):
        vector.step(np.ones(3))
    with pytest.raises(ValueError, match=r"out of range \[0, 3\) in envs \[2\]: \[3\]; 0 stay, 1 up, 2 down"):
        vector.step(np.array([0, 1, 3]))
    for bad, message in (([1, 2], "one per env: got 2 for 3 envs"), ([1, 2.0, 3], r"seed\[1\] must be an int or None, got 2.0"),
                         ([1, True, 3], "must be an int"), ([1, 2, 2**31], r"in \[0, 2\*\*31\)"),
                         ([1, -2, 3], "non-negative")):
        with pytest.raises(ValueError, match=message):
            vector.reset(seed=bad)
    for bad in ([1, 2], [1.0, 2.0, 3.0], [1, -2, 3], [1, 2, 2**32]):
        with pytest.raises(ValueError, match="seeds"):
            vector.reset(options={"env_seeds": bad})
    vector.close()


@pytest.mark.parametrize("env_id", IDS)
def test_vector_env_seeded_with_a_list_plays_as_single_envs(env_id):
    """reset(seed=[s_0, s_1, s_2]), Gymnasium's per-env form: env i plays as a single env reset with
    s_i (the C vector on private streams, so that its envs do not share the process's rand())."""
    seeds = [11, 0, 2**31 - 1]
    kwargs = {"private_streams": True} if env_id == IDS[0] else {}
    vector = gymnasium.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point", frameskip=8,
                                **kwargs)
    singles = [gymnasium.make(env_id, frameskip=8) for _ in seeds]
    actions = np.random.default_rng(3).integers(0, 3, (600, 3))
    vector_observations = [vector.reset(seed=seeds)[0]]
    single_observations = [np.stack([env.reset(seed=seed)[0] for env, seed in zip(singles, seeds, strict=True)])]
    ends = 0
    for step in actions:
        observations, _, terminated, _, _ = vector.step(step)
        vector_observations.append(observations)
        single_observations.append(np.stack([env.step(int(a))[0] for env, a in zip(singles, step, strict=True)]))
        ends += int(terminated.sum())
    assert ends >= 1 and np.array_equal(np.asarray(vector_observations), np.asarray(single_observations))
    again = vector.reset(seed=seeds)[0]
    assert np.array_equal(again, vector_observations[0])  # and the same list seeds the same starts
    # a None entry: env i draws its next seed from its own generator, as a single env reset without a
    # seed does (seeded by its last seed above), so envs 0 and 2 start new games and env 1 replays seed 7
    for env, seed in zip(singles, seeds, strict=True):
        env.reset(seed=seed)
    partly_listed = [None, 7, None]
    vector_observations = [vector.reset(seed=partly_listed)[0]]
    single_observations = [np.stack([env.reset(seed=seed)[0] for env, seed in zip(singles, partly_listed, strict=True)])]
    for step in actions[:300]:
        vector_observations.append(vector.step(step)[0])
        single_observations.append(np.stack([env.step(int(a))[0] for env, a in zip(singles, step, strict=True)]))
    assert np.array_equal(np.asarray(vector_observations), np.asarray(single_observations))
    assert not np.array_equal(vector_observations[0][0], again[0])  # env 0 did not replay seed 11
    vector.close()
    for env in singles:
        env.close()


@pytest.mark.parametrize("env_id", IDS)
def test_step_before_reset(env_id):
    with pytest.raises(RuntimeError, match="reset"):
        gymnasium.make(env_id, disable_env_checker=True).unwrapped.step(0)


def test_seed_outside_c_int_is_rejected():
    with pytest.raises(ValueError, match="fit a C int"):
        _ENVS[IDS[0]].reset(seed=2**31)


def test_closed_c_env_refuses_to_step():
    vec = CPongVec(2)
    vec.close()
    with pytest.raises(RuntimeError, match="closed"):
        vec.step(np.zeros(2))


def test_corrupt_sdist_is_reported(tmp_path, monkeypatch):
    corrupt = tmp_path / "pufferlib-3.0.0.tar.gz"
    corrupt.write_bytes(b"not a tarball")
    monkeypatch.setenv("ENVPORT_PUFFERLIB_SDIST", str(corrupt))
    with pytest.raises(sdist.ReferenceUnavailable, match="pinned to 7df3a3e3"):
        sdist.pong_header_source()


def test_unreachable_registry_is_reported(tmp_path, monkeypatch):
    import pypi_simple

    def refuse(*args, **kwargs):
        raise ConnectionError("registry unreachable (simulated)")

    monkeypatch.setenv("ENVPORT_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("ENVPORT_PUFFERLIB_SDIST", raising=False)
    monkeypatch.setattr(pypi_simple.PyPISimple, "get_project_page", refuse)
    with pytest.raises(sdist.ReferenceUnavailable, match="ENVPORT_PUFFERLIB_SDIST"):
        sdist.pufferlib_sdist()


def test_missing_compiler_is_reported(tmp_path, monkeypatch):
    monkeypatch.setenv("ENVPORT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(build.shutil, "which", lambda name: None)
    with pytest.raises(sdist.ReferenceUnavailable, match="no C compiler"):
        build.build_library()


def test_action_cache_is_checked_once_and_must_fit():
    from envs.pong.reference.c_pong import ActionCache

    with pytest.raises(ValueError, match="actions must be"):
        ActionCache(np.full((4, 2), 3))
    cache = ActionCache(np.ones((4, 2), dtype=np.int64))
    vec = CPongVec(2)
    vec.reset(0)
    assert vec.rollout(cache, record=False) is None
    with pytest.raises(ValueError, match="made for 2 envs"):
        CPongVec(3).rollout(cache, record=False)


_ASYNC_AFTER_JAX = """
import sys
import gymnasium
import jax
import numpy as np
import envs.pong  # noqa: F401

if __name__ == "__main__":
    jax.numpy.ones(2).block_until_ready()  # a script whose JAX has started, e.g. for its policy
    kwargs = {} if sys.argv[1] == "fork" else {"vector_kwargs": {"context": sys.argv[1]}}
    envs = gymnasium.make_vec("envport/PongJax-v0", num_envs=2, vectorization_mode="async", **kwargs)
    observations, _ = envs.reset(seed=0)
    envs.step(np.array([1, 2]))
    envs.close()
    print("stepped", observations.shape)
"""


@pytest.mark.parametrize("context", ["fork", "forkserver"])
def test_async_vector_env_after_jax_started_errs_or_works_but_never_hangs(tmp_path, context):
    """Gymnasium's AsyncVectorEnv forks by default: a JAX env made in the fork would hang at its first
    computation, so its constructor refuses (shared/jax_fork_guard.py); workers that start fresh work."""
    script = tmp_path / "async_after_jax.py"
    script.write_text(_ASYNC_AFTER_JAX)
    done = subprocess.run([sys.executable, str(script), context], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    if context == "fork":
        assert done.returncode != 0
        assert "envport/PongJax-v0 runs JAX, and this process was forked" in done.stderr
    else:
        assert done.returncode == 0, done.stderr[-3000:]
        assert done.stdout.strip().endswith("stepped (2, 8)")


def test_c_vector_env_refuses_to_step_before_reset():
    # C would step games that were never served (paddle at -8, ball at rest in a corner)
    vector = gymnasium.make_vec(IDS[0], num_envs=2)
    with pytest.raises(RuntimeError, match="reset"):
        vector.step(np.zeros(2, dtype=np.int64))
    vector.close()


@pytest.mark.parametrize("env_id", IDS)
def test_every_observation_lies_in_the_declared_space(env_id):
    """PufferLib's Box(0, 1) is too narrow (the ball's x after a left paddle hit and its y after a wall
    bounce are not clipped); the declared space holds every observation of long random play, and is
    needed: observations 2 and 3 do go below 0."""
    vector = gymnasium.make_vec(env_id, num_envs=32)
    space = vector.single_observation_space
    observations, _ = vector.reset(seed=5)
    rng = np.random.default_rng(0)
    lowest = observations.min(axis=0)
    for _ in range(3000):
        assert all(space.contains(row) for row in observations), observations
        observations, *_ = vector.step(rng.integers(0, 3, 32))
        lowest = np.minimum(lowest, observations.min(axis=0))
    vector.close()
    assert lowest[2] < 0 and lowest[3] < 0
    assert space.low[2] == pytest.approx(-10 / 500, rel=1e-6) and space.low[3] == pytest.approx(-13 / 640, rel=1e-6)


@pytest.mark.parametrize("fields, error, message", [
    ({"width": 0.0}, ValueError, "width must be a finite number > 0"),
    ({"ball_initial_speed_x": float("nan")}, ValueError, "ball_initial_speed_x must be a finite number"),
    ({"paddle_speed": -8.0}, ValueError, "paddle_speed must be a finite number >= 0"),
    ({"frameskip": 2.5}, TypeError, "frameskip must be an int"),
    ({"frameskip": "8"}, TypeError, "frameskip must be an int"),
    ({"max_score": 0}, ValueError, "max_score must be at least 1"),
    ({"height": "640"}, TypeError, "height must be a number"),
    ({"paddle_height": 700.0}, ValueError, "must fit the court"),
])
def test_a_game_that_cannot_be_played_is_refused(fields, error, message):
    with pytest.raises(error, match=message):
        PongConfig(**fields)
    with pytest.raises(error, match=message):
        gymnasium.make(IDS[1], **fields)


@pytest.mark.parametrize("env_id", IDS)
def test_config_and_its_fields_together_are_refused_not_ignored(env_id):
    with pytest.raises(ValueError, match=r"either config= or PongConfig's fields.*\['frameskip'\]"):
        gymnasium.make(env_id, config=PongConfig(), frameskip=8)
    with pytest.raises(ValueError, match="either config="):
        gymnasium.make_vec(env_id, num_envs=2, config=PongConfig(), frameskip=8)
    with pytest.raises(TypeError, match="config must be a PongConfig"):
        gymnasium.make(env_id, config={"frameskip": 8})


@pytest.mark.parametrize("env_id", IDS)
def test_a_bool_seed_is_refused_as_in_a_list(env_id):
    with pytest.raises(ValueError, match="seed must be an int or None, got True"):
        gymnasium.make(env_id).reset(seed=True)
    with pytest.raises(ValueError, match="seed must be an int or None, got True"):
        gymnasium.make_vec(env_id, num_envs=2).reset(seed=True)


@pytest.mark.parametrize("action", [1.7, np.float32(1.0), np.array([1, 2], np.int32), np.zeros((1,), np.int32)])
def test_the_functional_step_checks_what_it_can_see_when_traced(action):
    """Values cannot be checked inside jit (out-of-range ints mean 'stay', as in C, and the Gymnasium envs
    refuse them), but a float or a batch handed to the one-env step is known at trace time."""
    import jax

    from envs.pong.jax import env as pong

    _, state = pong.reset(jax.random.PRNGKey(0))
    with pytest.raises(ValueError, match="one Pong env's action is one integer .*step a batch with jax.vmap"):
        pong.step(None, state, action)


def test_importing_the_package_loads_none_of_its_modules():
    """Importing the package registers its ids by name only: no module of it is loaded, so importing
    it stays cheap and `python -m envs.pong.reference.build` runs without runpy's warning that the module was
    imported before it ran."""
    assert submodules_loaded_by_import("envs.pong") == []
    assert all(gymnasium.spec(env_id).entry_point.startswith("envs.pong.gym_envs:") for env_id in IDS)
