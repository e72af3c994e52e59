"""The Gymnasium envs: check_env on both, equal seeds give equal starts (ours and HalfCheetah-v5)
and equal trajectories (ours), bad actions are refused with a clear error."""

from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import envs.halfcheetah  # noqa: F401 - registers the ids
from shared.gym_registration import submodules_loaded_by_import
from shared.verification.components import Components

# not from the harness: it turns on jax_enable_x64, and these envs must work without it
CHEETAH = Components.from_translation_toml(Path(__file__).resolve().parents[1] / "translation.toml")


@CHEETAH.covers("env")
@pytest.mark.parametrize("env_id", ["envport/HalfCheetah-v0", "envport/HalfCheetahJax-v0"])
def test_check_env(env_id):
    env = gymnasium.make(env_id)
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


@CHEETAH.covers("env")
def test_same_seed_same_start_as_halfcheetah_v5_and_same_trajectory():
    ours, reference = gymnasium.make("envport/HalfCheetahJax-v0"), gymnasium.make("envport/HalfCheetah-v0")
    obs, _ = ours.reset(seed=7)
    ref_obs, _ = reference.reset(seed=7)
    assert np.array_equal(obs.astype(np.float32), ref_obs.astype(np.float32))
    actions = np.random.default_rng(1).uniform(-1, 1, (30, 6)).astype(np.float32)
    first = [ours.step(a)[:2] for a in actions]
    ours.reset(seed=7)
    second = [ours.step(a)[:2] for a in actions]
    for (o1, r1), (o2, r2) in zip(first, second, strict=False):
        assert np.array_equal(o1, o2) and r1 == r2
    ours.close()
    reference.close()


V5_ARGUMENTS = [
    {"forward_reward_weight": 2.5, "ctrl_cost_weight": 0.02},
    {"reset_noise_scale": 0.4, "exclude_current_positions_from_observation": False},
    {"frame_skip": 2, "ctrl_cost_weight": 1.0},
]


@CHEETAH.covers("env")
@pytest.mark.parametrize("kwargs", V5_ARGUMENTS, ids=lambda kwargs: ",".join(kwargs))
def test_halfcheetah_v5_arguments_mean_the_same_on_both(kwargs):
    """HalfCheetah-v5's arguments, given to both ids, give the same env: the same start, then float32
    against MuJoCo's float64 within the README example's bound (1e-2 after 20 steps; about 3e-4 seen),
    the reward's parts as the weights say, and all of qpos observed when asked."""
    ours, reference = gymnasium.make("envport/HalfCheetahJax-v0", **kwargs), gymnasium.make("envport/HalfCheetah-v0", **kwargs)
    assert ours.observation_space.shape == reference.observation_space.shape
    obs, _ = ours.reset(seed=5)
    ref_obs, _ = reference.reset(seed=5)
    assert np.array_equal(obs.astype(np.float32), ref_obs.astype(np.float32))
    for action in np.random.default_rng(6).uniform(-1, 1, (20, 6)).astype(np.float32):
        obs, reward, _, _, info = ours.step(action)
        ref_obs, ref_reward, _, _, ref_info = reference.step(action)
        assert np.abs(obs - ref_obs).max() < 1e-2
        assert abs(reward - ref_reward) < 1e-2 * max(1.0, abs(ref_reward))
        for key in ("x_position", "x_velocity", "reward_forward", "reward_ctrl"):
            assert abs(info[key] - ref_info[key]) < 1e-2 * max(1.0, abs(ref_info[key])), key
        weight = kwargs.get("ctrl_cost_weight", 0.1)
        assert info["reward_ctrl"] == pytest.approx(-weight * float(np.sum(action.astype(np.float64) ** 2)), rel=1e-5)
        if not kwargs.get("exclude_current_positions_from_observation", True):
            assert obs[0] == pytest.approx(info["x_position"], abs=1e-6)
    ours.close()
    reference.close()


@pytest.mark.parametrize("kwargs, message", [
    ({"frame_skip": 0}, "frame_skip must be a positive int"), ({"frame_skip": 2.0}, "frame_skip"),
    ({"ctrl_cost_weight": float("nan")}, "ctrl_cost_weight must be a finite number"),
    ({"forward_reward_weight": "1"}, "forward_reward_weight"), ({"reset_noise_scale": -0.1}, "at least 0"),
    ({"dtype": "float16"}, "dtype must be 'float32' or 'float64'"), ({"dtype": "int32"}, "dtype must be"),
    ({"exclude_current_positions_from_observation": "no"}, "must be a bool, got 'no'"),
])
def test_bad_v5_arguments_are_refused(kwargs, message):
    from envs.halfcheetah.gym_envs import HalfCheetahJaxEnv
    from envs.halfcheetah.vector_env import HalfCheetahJaxVectorEnv

    with pytest.raises(ValueError, match=message):
        HalfCheetahJaxEnv(**kwargs)
    with pytest.raises(ValueError, match=message):
        HalfCheetahJaxVectorEnv(num_envs=2, **kwargs)


@pytest.mark.parametrize("kwargs", [{"ctrl_cost_weigth": 0.05}, {"xml_file": "/nonexistent.xml"}],
                         ids=["misspelt", "xml_file"])
@pytest.mark.parametrize("render_mode", [None, "rgb_array"])
def test_an_argument_the_env_does_not_take_is_refused_with_or_without_a_renderer(kwargs, render_mode):
    """It used to be checked only when rendering, and silently dropped otherwise."""
    for make in (lambda: gymnasium.make("envport/HalfCheetahJax-v0", render_mode=render_mode, **kwargs),
                 lambda: gymnasium.make_vec("envport/HalfCheetahJax-v0", num_envs=2, render_mode=render_mode, **kwargs)):
        with pytest.raises(TypeError, match=rf"unexpected keyword arguments \['{next(iter(kwargs))}'\]: the env takes "
                                            r"HalfCheetah-v5's forward_reward_weight.*no xml_file"):
            make()


@CHEETAH.covers("env")
@pytest.mark.parametrize("env_id", ["envport/HalfCheetah-v0", "envport/HalfCheetahJax-v0"])
@pytest.mark.parametrize(
    "action, message",
    [
        (np.zeros(5), r"action shape \(5,\); expected \(6,\)"),
        (np.zeros((2, 6)), r"action shape \(2, 6\); expected \(6,\)"),
        (np.array([0, 0, np.nan, 0, 0, 0]), "non-finite"),
        (np.array([0, np.inf, 0, 0, 0, 0]), "non-finite"),
        (None, r"action shape \(\); expected \(6,\)"),
    ],
)
def test_bad_actions_are_refused_by_both_backends(env_id, action, message):
    env = gymnasium.make(env_id)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=message):
        env.step(action)
    env.close()


def test_reference_env_is_halfcheetah_v5_unchanged():
    """The reference's refusals are its only change: the same seed and actions give HalfCheetah-v5's
    own trajectory, bit for bit."""
    ours, gymnasiums = gymnasium.make("envport/HalfCheetah-v0"), gymnasium.make("HalfCheetah-v5")
    for env in (ours, gymnasiums):
        env.reset(seed=3)
    for action in np.random.default_rng(2).uniform(-1.5, 1.5, (50, 6)):
        a, b = ours.step(action), gymnasiums.step(action)
        assert np.array_equal(a[0], b[0]) and a[1:4] == b[1:4]
    ours.close()
    gymnasiums.close()


def test_step_before_reset_is_refused():
    from envs.halfcheetah.gym_envs import HalfCheetahJaxEnv

    with pytest.raises(RuntimeError, match="reset"):
        HalfCheetahJaxEnv().step(np.zeros(6))


def test_float64_without_x64_is_a_clear_error():
    import jax

    from envs.halfcheetah.gym_envs import HalfCheetahJaxEnv

    # other test files in the same process may have turned x64 on: turn it off here
    with jax.enable_x64(False), pytest.raises(ValueError, match="jax_enable_x64"):
        HalfCheetahJaxEnv(dtype="float64")


@pytest.mark.parametrize("shape", [(5,), (2, 6), ()])
def test_the_functional_step_refuses_an_action_of_another_shape(shape):
    """Known when the step is traced: a batch must go through jax.vmap, not into the one-env step."""
    import jax

    from envs.halfcheetah.jax import env as jax_cheetah

    _, state = jax_cheetah.reset(jax.random.PRNGKey(0))
    with pytest.raises(ValueError, match=r"one HalfCheetah's action is 6 torques, shape \(6,\), got shape"):
        jax_cheetah.step(jax.random.PRNGKey(1), state, np.zeros(shape, np.float32))


@CHEETAH.covers("env")
def test_importing_the_package_loads_none_of_its_modules():
    """Importing the package registers its ids by name only: no module of it is loaded, so importing
    it stays cheap and `python -m envs.halfcheetah.reference.model_file` runs without runpy's warning that the module was
    imported before it ran."""
    assert submodules_loaded_by_import("envs.halfcheetah") == []
    assert gymnasium.spec("envport/HalfCheetah-v0").max_episode_steps == 1000
    assert gymnasium.spec("envport/HalfCheetahJax-v0").max_episode_steps == 1000
