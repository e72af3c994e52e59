"""L2: the Gymnasium env of the reference and the JAX functional env: check_env, the same seed gives
the same trajectory, bad input is a clear error, and the two backends play the same episodes (the
same observations, rewards and ends) from the same decks, seed and actions."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from envs.tcgjax import l3_games
from envs.tcgjax.gym_envs import TcgReferenceEnv
from envs.tcgjax.reference import actions as A
from envs.tcgjax.reference.observation import MASK_SLICE, OBS_SIZE
from envs.tcgjax.reference.rng import Stream
from envs.tcgjax.tests.components import TCGJAX


def _episode(env, seed, policy_seed):
    obs, info = env.reset(seed=seed)
    policy = Stream(policy_seed)
    trajectory = [obs]
    done = False
    while not done:
        action = l3_games.policy_action(policy, info["action_mask"])
        obs, reward, terminated, truncated, info = env.step(action)
        trajectory.append((obs, reward, terminated, truncated))
        done = terminated or truncated
    return trajectory


@TCGJAX.covers("env")
@pytest.mark.parametrize("decks", [("fire", "water"), "random"])
def test_check_env(decks):
    # check_env samples actions at random, most of them illegal: the "lose" mode ends the episode
    check_env(TcgReferenceEnv(decks=decks, illegal_action="lose"), skip_render_check=True)


@TCGJAX.covers("env")
def test_same_seed_same_trajectory():
    first = _episode(TcgReferenceEnv(decks="random"), seed=11, policy_seed=3)
    second = _episode(TcgReferenceEnv(decks="random"), seed=11, policy_seed=3)
    other = _episode(TcgReferenceEnv(decks="random"), seed=12, policy_seed=3)
    assert len(first) == len(second)
    assert all(np.array_equal(a[0] if isinstance(a, tuple) else a, b[0] if isinstance(b, tuple) else b)
               for a, b in zip(first, second, strict=False))
    assert not (len(first) == len(other) and all(
        np.array_equal(a[0] if isinstance(a, tuple) else a, b[0] if isinstance(b, tuple) else b)
        for a, b in zip(first, other, strict=False)))


@TCGJAX.covers("env", "observation")
def test_observation_ends_with_the_mask_and_stays_in_the_box():
    env = TcgReferenceEnv(decks="random")
    for seed in range(5):
        for step in _episode(env, seed, seed):
            obs = step[0] if isinstance(step, tuple) else step
            assert obs.shape == (OBS_SIZE,) and obs.dtype == np.float32
            assert env.observation_space.contains(obs)
    obs, info = env.reset(seed=0)
    assert np.array_equal(obs[MASK_SLICE[0]:MASK_SLICE[1]] > 0.5, info["action_mask"])
    assert info["action_mask"].any()


@TCGJAX.covers("env")
def test_bad_actions_are_clear_errors():
    env = TcgReferenceEnv()
    _, info = env.reset(seed=0)
    illegal = int(np.flatnonzero(~info["action_mask"])[0])
    with pytest.raises(ValueError, match="illegal"):
        env.step(illegal)
    for bad in (A.NUM_ACTIONS, -1, 2.5, np.array([1, 2]), "end"):
        with pytest.raises(ValueError, match="action"):
            env.step(bad)
    with pytest.raises(ValueError, match="decks"):
        TcgReferenceEnv(decks="mystery")
    with pytest.raises(ValueError, match=r"no fixed deck named 'mystery'; the fixed decks are \["):
        TcgReferenceEnv(decks=("fire", "mystery"))
    with pytest.raises(ValueError, match="illegal_action"):
        TcgReferenceEnv(illegal_action="ignore")


@TCGJAX.covers("env")
def test_illegal_action_can_lose_and_a_finished_episode_needs_reset():
    env = TcgReferenceEnv(illegal_action="lose")
    _, info = env.reset(seed=1)
    obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(~info["action_mask"])[0]))
    assert (reward, terminated, truncated, info["illegal_action"]) == (-1.0, True, False, True)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


@TCGJAX.covers("env", "engine", "observation")
@pytest.mark.parametrize("seed", range(16))
def test_reference_and_jax_envs_play_the_same_episode(seed):
    decks = ("fire", "water") if seed % 2 else "random"
    assert l3_games.play_env_episode(seed, decks, policy_seed=seed) is None


@TCGJAX.covers("env")
def test_the_jax_env_refuses_what_it_cannot_play():
    """Both engines honour every RuleConfig flag (tests/l3_rule_configs.py); the JAX engine's fixed-size
    state bounds the hand limit, and says so rather than clipping hands."""
    from envs.tcgjax.jax.env import TcgJaxEnv
    from envs.tcgjax.reference.config import RuleConfig

    with pytest.raises(ValueError, match="hand_limit 11"):
        TcgJaxEnv(config=RuleConfig(hand_limit=11))
    with pytest.raises(ValueError, match="bank"):
        TcgJaxEnv(bank="mystery")
    TcgReferenceEnv(config=RuleConfig(hand_limit=11)).reset(seed=0)
