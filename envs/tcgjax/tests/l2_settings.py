"""L2: what both engines' envs are made with and reset from is checked when given, with a message
naming the setting, and both engines' envs treat the end of an episode alike (an audit found each of
these taken silently or failing deep inside JAX)."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.envs.registration import EnvSpec

import envs.tcgjax  # noqa: F401  (registers the ids)
from envs.tcgjax.gym_envs import TcgReferenceEnv
from envs.tcgjax.tests.components import TCGJAX
from shared.gym_registration import submodules_loaded_by_import

IDS = ["envport/TcgPocketReference-v0", "envport/TcgPocketJax-v0"]


def _makers():
    return [lambda **kw: gymnasium.make(IDS[0], **kw), lambda **kw: gymnasium.make(IDS[1], **kw),
            lambda **kw: gymnasium.make_vec(IDS[1], num_envs=2, **kw)]


@TCGJAX.covers("env")
@pytest.mark.parametrize("kwargs, message", [
    ({"max_decisions": -5}, "max_decisions must be a whole number >= 1, got -5"),
    ({"max_decisions": 0}, "max_decisions must be a whole number >= 1, got 0"),
    ({"max_decisions": "x"}, "max_decisions must be a whole number >= 1, got 'x'"),
    ({"config": "x"}, r"config must be a RuleConfig .*got 'x'"),
    ({"config": {"hand_limit": 10}}, "config must be a RuleConfig"),
    ({"decks": ("fire", "nope")}, r"no fixed deck named 'nope'; the fixed decks are \['"),
])
@pytest.mark.parametrize("make", range(3), ids=["reference", "jax", "jax-vector"])
def test_bad_settings_are_refused_when_the_env_is_made(kwargs, message, make):
    with pytest.raises(ValueError, match=message):
        _makers()[make](**kwargs)


@TCGJAX.covers("env")
def test_the_vector_envs_gather_switch_must_be_a_bool():
    with pytest.raises(ValueError, match="gather must be a bool, got 'no'"):
        gymnasium.make_vec(IDS[1], num_envs=2, gather="no")


@TCGJAX.covers("env")
@pytest.mark.parametrize("env_id", IDS)
def test_a_deck_pair_survives_the_spec_as_json(env_id):
    """A JSON spec gives the pair back as a list; the env takes it as the pair."""
    env = gymnasium.make(env_id, decks=("fire", "water"))
    again = gymnasium.make(EnvSpec.from_json(env.spec.to_json()))
    assert again.unwrapped.decks == ("fire", "water")
    assert np.array_equal(env.reset(seed=4)[0], again.reset(seed=4)[0])


@TCGJAX.covers("env")
def test_a_seed_past_the_range_leaves_the_game_as_it_was():
    env = TcgReferenceEnv()
    env.reset(seed=6)
    game = env.game
    with pytest.raises(ValueError, match=r"seed must be in \[0, 2\*\*64 - 0x0DDBA11\)"):
        env.reset(seed=2**64 - 1)
    assert env.game is game


@TCGJAX.covers("env")
def test_the_vector_env_names_a_seed_past_the_range_and_its_place():
    vector = gymnasium.make_vec(IDS[1], num_envs=2)
    with pytest.raises(ValueError, match=r"seed\[1\] must be below 18446744073695020527 \(the opponent's stream"):
        vector.reset(seed=[0, 2**64 - 1])
    with pytest.raises(ValueError, match="with 2 envs it must be below 18446744073695020526"):
        vector.reset(seed=2**64 - 0x0DDBA11 - 1)


@TCGJAX.covers("env")
@pytest.mark.parametrize("env_id", IDS)
def test_both_engines_end_a_truncated_episode_alike(env_id):
    """Truncation at max_decisions ends the episode on both engines: a further step needs reset()
    (the reference used to play on, the JAX env refused)."""
    env = gymnasium.make(env_id, decks="random", max_decisions=3)
    _, info = env.reset(seed=3)
    truncated = False
    for _ in range(3):
        _, _, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        assert not terminated
    assert truncated
    with pytest.raises(RuntimeError, match="episode has ended: call reset"):
        env.step(int(np.flatnonzero(info["action_mask"])[0]))


@TCGJAX.covers("env")
@pytest.mark.parametrize("env_id", IDS)
def test_a_step_before_any_reset_says_to_reset(env_id):
    with pytest.raises(RuntimeError, match=r"^call reset\(\) before step\(\)$"):
        gymnasium.make(env_id, disable_env_checker=True).unwrapped.step(0)


@TCGJAX.covers("env")
def test_an_empty_deck_bank_is_refused():
    """reset draws a deck index below the bank's size; an empty bank used to fail inside JAX's gather."""
    from envs.tcgjax.jax.env import deck_bank, random_bank

    with pytest.raises(ValueError, match="a deck bank needs at least one deck"):
        deck_bank([])
    for size in (0, -5, 2.5):
        with pytest.raises(ValueError, match="a random bank's size must be a whole number >= 1"):
            random_bank(size=size)


@TCGJAX.covers("env")
def test_the_functional_envs_cut_is_checked_when_given():
    """EnvParams.max_decisions set by hand (the Gymnasium envs check theirs): 0 or a negative cut made
    every step end the episode, a float cut was taken. Tracers JAX puts in its place are not checked
    (l2_step_batch runs jitted steps with a cut of 30)."""
    import jax.numpy as jnp

    from envs.tcgjax.jax.env import fixed_bank

    for bad in (0, -3, True, 2.5, "10", np.float32(10), np.array([5, 0]), jnp.int32(0), jnp.float32(30)):
        with pytest.raises(ValueError, match="max_decisions must be a whole number >= 1"):
            fixed_bank().replace(max_decisions=bad)
    for good in (1, np.int64(7), jnp.int32(30), jnp.array([5, 2])):
        assert fixed_bank().replace(max_decisions=good).max_decisions is good


@TCGJAX.covers("env")
def test_importing_the_package_loads_none_of_its_modules():
    """Importing the package registers its ids by name only: no module of it is loaded, so importing
    it stays cheap and `python -m envs.tcgjax.reference.cards` runs without runpy's warning that the module was
    imported before it ran."""
    assert submodules_loaded_by_import("envs.tcgjax") == []
    assert gymnasium.spec(IDS[1]).vector_entry_point == "envs.tcgjax.jax.vector_env:TcgJaxVectorEnv"
