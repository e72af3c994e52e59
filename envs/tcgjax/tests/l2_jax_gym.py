"""L2: envport/TcgPocketJax-v0 (the Gymnasium env on the JAX engine) and its native vector env against
the reference's Gymnasium env: check_env, the same episodes from the same seeds and actions (every
observation, reward, end and info value, through illegal actions, truncations and Gymnasium's
autoreset), and bad input refused before anything is played."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

import envs.tcgjax.gym_envs  # noqa: F401  (registers the ids)
from envs.tcgjax.gym_envs import TcgReferenceEnv
from envs.tcgjax.jax.gym_env import TcgJaxGymEnv
from envs.tcgjax.jax.vector_env import TcgJaxVectorEnv
from envs.tcgjax.reference import actions as A
from envs.tcgjax.reference.config import RuleConfig
from envs.tcgjax.reference.rng import Stream
from envs.tcgjax.tests.components import TCGJAX
from shared.verification.vector_info import assert_same_vector_info

ILLEGAL_EVERY = 23  # the agents below try an illegal action about this often (illegal_action="lose")


def agent_action(stream: Stream, mask: np.ndarray, illegal: bool) -> int:
    """A legal action uniformly, or (illegal) an illegal one uniformly; 0 when nothing is legal (the
    episode has ended: a vector env's next step starts the next one and ignores the action)."""
    if not mask.any():
        return 0
    pool = np.flatnonzero(~mask if illegal and not mask.all() else mask)
    return int(pool[stream.below(len(pool))])


def play_side_by_side(seed: int, decks, illegal_every: int = 0, max_decisions: int = 2000) -> list:
    """One episode on both single envs with the same actions; asserts every output equal and returns
    the (reward, terminated, truncated, illegal) of its last step."""
    mode = "lose" if illegal_every else "raise"
    reference = TcgReferenceEnv(decks=decks, illegal_action=mode, max_decisions=max_decisions)
    ours = TcgJaxGymEnv(decks=decks, illegal_action=mode, max_decisions=max_decisions)
    expected, actual = reference.reset(seed=seed), ours.reset(seed=seed)
    assert np.array_equal(expected[0], actual[0]), f"seed {seed}: reset observation"
    assert_same_vector_info(expected[1], actual[1], f"seed {seed}, reset")
    policy = Stream(seed)
    for decision in range(5000):
        illegal = bool(illegal_every) and policy.below(illegal_every) == 0
        action = agent_action(policy, expected[-1]["action_mask"], illegal)
        expected, actual = reference.step(action), ours.step(action)
        where = f"seed {seed}, decision {decision}, action {action}"
        assert np.array_equal(expected[0], actual[0]), f"{where}: observation"
        assert expected[1:4] == actual[1:4], f"{where}: (reward, terminated, truncated) {expected[1:4]} vs {actual[1:4]}"
        assert_same_vector_info(expected[4], actual[4], where)
        if expected[2] or expected[3]:
            return [*expected[1:4], expected[4].get("illegal_action", False)]
    raise AssertionError(f"seed {seed}: no end after 5000 decisions")


@TCGJAX.covers("env")
def test_check_env():
    # check_env samples actions at random, most of them illegal: the "lose" mode ends the episode
    check_env(TcgJaxGymEnv(decks="random", illegal_action="lose", render_mode="ansi"))


@TCGJAX.covers("env", "engine", "observation")
def test_jax_gym_env_plays_the_reference_envs_episodes():
    endings = []
    for seed in range(12):
        decks = ("fire", "water") if seed % 3 == 0 else ("fixed" if seed % 3 == 1 else "random")
        endings.append(play_side_by_side(seed, decks))
    for seed in range(12, 20):  # illegal actions end episodes as losses
        endings.append(play_side_by_side(seed, "fixed", illegal_every=ILLEGAL_EVERY))
    for seed in range(20, 24):  # cut at the decision limit
        endings.append(play_side_by_side(seed, "random", max_decisions=12))
    # the episodes ended every way an episode can end: a win, a loss, a draw, an illegal action, a cut
    kinds = {(reward, terminated, truncated, illegal) for reward, terminated, truncated, illegal in endings}
    assert {(1.0, True, False, False), (-1.0, True, False, False), (0.0, True, False, False),
            (-1.0, True, False, True), (0.0, False, True, False)} <= kinds, kinds


@TCGJAX.covers("env")
def test_jax_gym_env_refuses_bad_input_before_playing():
    env = TcgJaxGymEnv()
    obs, info = env.reset(seed=0)
    illegal = int(np.flatnonzero(~info["action_mask"])[0])
    with pytest.raises(ValueError, match="illegal now; legal actions"):
        env.step(illegal)
    for bad in (A.NUM_ACTIONS, -1, 2.5, np.array([1, 2]), "end"):
        with pytest.raises(ValueError, match="action"):
            env.step(bad)
    # nothing was played: the episode goes on as a fresh one from the same seed
    legal = int(np.flatnonzero(info["action_mask"])[0])
    fresh = TcgJaxGymEnv()
    fresh.reset(seed=0)
    assert np.array_equal(env.step(legal)[0], fresh.step(legal)[0])
    with pytest.raises(ValueError, match="decks"):
        TcgJaxGymEnv(decks="mystery")
    with pytest.raises(ValueError, match="illegal_action"):
        TcgJaxGymEnv(illegal_action="ignore")
    with pytest.raises(ValueError, match="max_energy_types 4"):
        TcgJaxGymEnv(config=RuleConfig(max_energy_types=4))
    # past the game's stream's range, then the opponent's (seed + its salt), then its first seed out of range
    for seed in (2**64, 2**64 - 1, 2**64 - 0x0DDBA11):
        for backend in (TcgReferenceEnv, TcgJaxGymEnv):
            with pytest.raises(ValueError, match=r"seed must be in \[0, 2\*\*64 - 0x0DDBA11\) .*got " + str(seed)):
                backend().reset(seed=seed)
    ended = TcgJaxGymEnv(illegal_action="lose")
    _, info = ended.reset(seed=1)
    ended.step(int(np.flatnonzero(~info["action_mask"])[0]))
    with pytest.raises(RuntimeError, match="reset"):
        ended.step(0)


def vector_actions(streams: list[Stream], masks: np.ndarray) -> np.ndarray:
    return np.array([agent_action(stream, mask, stream.below(ILLEGAL_EVERY) == 0)
                     for stream, mask in zip(streams, masks, strict=True)], np.int64)


@TCGJAX.covers("env", "engine", "observation")
@pytest.mark.parametrize("autoreset_mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP], ids=lambda m: m.name)
def test_native_vector_env_plays_the_reference_sync_vector_envs_episodes(autoreset_mode):
    """Env i of make_vec's native vector env is the reference env seeded 40 + i, through illegal
    actions, cuts at 15 decisions and autoresets (whose seeds each env's generator draws), under either
    autoreset mode: every observation, reward, end, info (keys, `_key` masks, dtypes, SAME_STEP's
    final_obs and final_info) and render_mode="ansi" text as SyncVectorEnv gives them."""
    kwargs = dict(decks="random", illegal_action="lose", max_decisions=15, render_mode="ansi")
    ours = gymnasium.make_vec("envport/TcgPocketJax-v0", num_envs=3, autoreset_mode=autoreset_mode, **kwargs)
    assert isinstance(ours, TcgJaxVectorEnv) and ours.metadata["autoreset_mode"] == autoreset_mode
    reference = gymnasium.make_vec("envport/TcgPocketReference-v0", num_envs=3, vectorization_mode="sync",
                                   vector_kwargs={"autoreset_mode": autoreset_mode}, **kwargs)
    expected, actual = reference.reset(seed=40), ours.reset(seed=40)
    streams = [Stream(1000 + i) for i in range(3)]
    ends, illegal_steps = np.zeros(3, int), 0
    for step in range(160):
        assert np.array_equal(expected[0], actual[0]), f"step {step}: observations"
        assert_same_vector_info(actual[-1], expected[-1], f"step {step}")
        assert expected[-1]["action_mask"].dtype == bool, f"step {step}: masks"
        texts = reference.render()
        assert isinstance(texts, tuple) and len(texts) == 3 and texts == ours.render(), f"step {step}: texts"
        actions = vector_actions(streams, expected[-1]["action_mask"])
        expected, actual = reference.step(actions), ours.step(actions)
        for k, name in enumerate(("reward", "terminated", "truncated"), start=1):
            assert np.array_equal(expected[k], actual[k]), f"step {step}: {name} {expected[k]} vs {actual[k]}"
        ends += expected[2] | expected[3]
        illegal_steps += "illegal_action" in expected[-1] or "illegal_action" in expected[-1].get("final_info", {})
    assert_same_vector_info(actual[-1], expected[-1], "last step")
    assert (ends >= 3).all() and illegal_steps >= 3, (ends, illegal_steps)  # several autoresets, illegal actions


@TCGJAX.covers("env")
def test_native_vector_env_refuses_bad_actions_before_playing():
    env = TcgJaxVectorEnv(num_envs=3)  # 3 as above: one compiled program for both tests
    obs, info = env.reset(seed=5)
    legal = np.array([np.flatnonzero(mask)[0] for mask in info["action_mask"]])
    illegal = legal.copy()
    illegal[1] = np.flatnonzero(~info["action_mask"][1])[0]
    for bad, message in ((illegal, "env 1 .* illegal"), (legal[:2], r"shape \(3,\)"),
                         (legal.astype(float), "integer array"), (np.array([0, A.NUM_ACTIONS, 0]), "out of range")):
        with pytest.raises(ValueError, match=message):
            env.step(bad)
    # nothing was played: the same as a fresh vector env's first step
    fresh = TcgJaxVectorEnv(num_envs=3)
    fresh.reset(seed=5)
    assert np.array_equal(env.step(legal)[0], fresh.step(legal)[0])
    with pytest.raises(ValueError, match="num_envs"):
        TcgJaxVectorEnv(num_envs=0)
    with pytest.raises(ValueError, match="seeds"):
        env.reset(seed=[1, 2])
    with pytest.raises(ValueError, match=r"seed\[1\] must be an int or None, got 2.5"):
        env.reset(seed=[1, 2.5, 3])  # a single env refuses seed=2.5 too
    with pytest.raises(RuntimeError, match="reset"):
        TcgJaxVectorEnv(num_envs=3).step(legal)
    with pytest.raises(RuntimeError, match="reset"):
        TcgJaxVectorEnv(num_envs=3, render_mode="ansi").render()
    with pytest.raises(ValueError, match="render_mode must be None or one of"):
        TcgJaxVectorEnv(num_envs=3, render_mode="rgb_array")
    with pytest.warns(UserWarning, match='render_mode="ansi"'):
        assert env.render() is None


@TCGJAX.covers("env", "observation")
def test_both_envs_render_the_same_text_and_it_tells_the_game_as_the_reference_holds_it():
    """render_mode="ansi" (describe.py reads the observation): equal on both engines along an episode,
    and what it says checked against the reference's game itself, not against the observation."""
    reference = TcgReferenceEnv(render_mode="ansi")
    ours = TcgJaxGymEnv(render_mode="ansi")
    check_env(TcgReferenceEnv(render_mode="ansi", illegal_action="lose"))
    expected = reference.reset(seed=9)
    ours.reset(seed=9)
    policy = Stream(9)
    for decision in range(5000):
        text = reference.render()
        assert text == ours.render(), f"decision {decision}: the two texts differ"
        game = reference.unwrapped.game
        me, foe = game.players[0], game.players[1]
        assert f"Points: you {me.points}, opponent {foe.points}" in text
        if me.board[0] is not None:
            active = game.pool[me.board[0].top]
            left = active.hp - me.board[0].damage
            assert f"Active  {active.name} ({active.type}) HP {max(left, 0)}/{active.hp}" in text, text
        # during setup the opponent's placement is face down
        assert ("(face down until both players have placed)" in text) == (game.phase == "setup"), text
        shown = [game.pool[card].name for card in me.hand[:A.HAND_SLOTS]]
        assert f"Your hand: {', '.join(shown) if shown else '(empty)'}" in text, text
        assert all(game.pool[card].name not in text.split("Your hand:")[1] for card in foe.hand
                   if game.pool[card].name not in shown), "the opponent's hand is hidden"
        action = agent_action(policy, expected[-1]["action_mask"], illegal=False)
        expected = reference.step(action)
        ours.step(action)
        if expected[2] or expected[3]:
            break
    assert expected[2], "an episode played to its end"


@TCGJAX.covers("env")
@pytest.mark.parametrize("make", [TcgReferenceEnv, TcgJaxGymEnv], ids=["reference", "jax"])
def test_rendering_errors_and_warnings(make):
    with pytest.raises(ValueError, match="render_mode must be None or one of"):
        make(render_mode="rgb_array")
    with pytest.raises(RuntimeError, match="reset"):
        make(render_mode="ansi").render()
    plain = make()
    plain.reset(seed=0)
    with pytest.warns(UserWarning, match='render_mode="ansi"'):
        assert plain.render() is None
