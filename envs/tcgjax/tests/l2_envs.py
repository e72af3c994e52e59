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
from envs.tcgjax.reference import engine as E
from envs.tcgjax.reference.decks import fixed_deck
from envs.tcgjax.reference.observation import (
    BOARD_SIZE,
    GLOBAL_SIZE,
    MASK_SLICE,
    OBS_SIZE,
    POKEMON_FEATURES,
    ZONE_SIZE,
    observe,
)
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


def _place_every_basic_then_end(game) -> int:
    """The setup player puts every Basic of its hand into play (Active first), then ends; returns how many."""
    placed = 0
    while True:
        hand = game.players[game.current].hand
        playable = [h for h in range(len(hand)) if E.why_illegal(game, A.encode("play", h, 0)) is None]
        if not playable:
            break
        E.step(game, A.encode("play", playable[0], 0))
        placed += 1
    E.step(game, A.encode("end"))
    return placed


@TCGJAX.covers("observation")
@pytest.mark.parametrize("seed", [3, 4])
def test_setup_placements_are_face_down_until_both_are_done_R_2_3(seed):
    """R-2.3's engine default: neither placement is visible to the other until both are done. The second
    player, placing, sees no Pokemon on the first player's side and the first player's opening hand size
    (R-2.2: 5); once both have placed, each sees the other's board."""
    board = GLOBAL_SIZE + ZONE_SIZE
    theirs = slice(board + 4 * POKEMON_FEATURES, board + BOARD_SIZE)
    mine = slice(board, board + 4 * POKEMON_FEATURES)
    foe_hand_size = 10  # GLOBAL: turn, my turn?, phase (3), points (2), deck sizes (2), my hand, the foe's hand
    game = E.new_game(fixed_deck("fire"), fixed_deck("water"), seed=seed)
    first = game.current
    placed = _place_every_basic_then_end(game)
    assert placed >= 1 and game.phase == "setup" and game.current == 1 - first
    second_view = observe(game)
    assert not second_view[theirs].any()
    assert second_view[foe_hand_size] == np.float32(5) * np.float32(1 / 10)
    first_view = observe(game, viewer=first)
    assert first_view[mine][0] == 1.0  # its own Active is shown to itself
    _place_every_basic_then_end(game)
    assert game.phase == "main"
    for viewer in (first, 1 - first):
        view = observe(game, viewer=viewer)
        assert view[theirs][0] == 1.0  # the other's Active
        assert view[foe_hand_size] == np.float32(len(game.players[1 - viewer].hand)) * np.float32(1 / 10)


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
