"""L2: the functional JAX env batched (vmap over 64 battles, jitted), in gen1randombattle (the format L4
trains on): Showdown's random battles played on both backends, and a long batched rollout. The batched
step is a program of its own, minutes to compile on 2 cores; under Pants this file runs in one pytest
process with l2_gym_envs.py and the README's examples (tests/BUILD), which play the same batched
random battles (whichever of the two traces it second finds it in the persistent compilation cache)."""

from __future__ import annotations

import functools

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np

import envs.pokejax  # noqa: F401  (registers the ids)
from envs.pokejax.gym_envs import _shared_env
from envs.pokejax.jax import battle as jb
from envs.pokejax.jax import prng
from envs.pokejax.jax.env import RANDOM_BATTLE, EnvParams, random_legal_action
from envs.pokejax.tests.components import POKEJAX
from envs.pokejax.tests.episodes import play_episode, same_episode

BATCH = 64


@POKEJAX.covers("battle")
def test_random_battles_give_the_same_episode_on_both_backends():
    """battle_format="gen1randombattle": Showdown's random-battle teams (generated in JAX) and its
    Standard ruleset, on both backends. The JAX side plays through the functional env's batched
    step (the program test_functional_env_batched_rollout runs; a one-battle random-format step
    would be another program of minutes to compile), with the keys the Gymnasium env would give it;
    the Gymnasium env's reset in that format starts the same battle."""
    showdown = gymnasium.make("envport/PokeShowdown-v0", battle_format=RANDOM_BATTLE)
    pokejax = gymnasium.make("envport/PokeJax-v0", battle_format=RANDOM_BATTLE)
    try:
        seeds = range(3)
        functional_episodes = _functional_episodes(seeds)
        for seed in seeds:
            showdown_episode = play_episode(showdown, seed, seed)
            assert len(showdown_episode) > 5 and showdown_episode[-1][2], "a whole battle, played to its end"
            assert same_episode(functional_episodes[seed], showdown_episode)
            first_obs, _ = pokejax.reset(seed=seed)
            assert np.array_equal(first_obs, functional_episodes[seed][0])
        # the format reached both: the engine's rules, and Showdown's
        assert bool(pokejax.unwrapped._state.battle.standard_format)
        assert pokejax.unwrapped.params.battle_format == RANDOM_BATTLE
        assert showdown.unwrapped._snap["format"] == RANDOM_BATTLE
    finally:
        showdown.close()
        pokejax.close()


def _functional_episodes(seeds) -> list:
    """`play_episode(gymnasium.make("envport/PokeJax-v0", battle_format=RANDOM_BATTLE), seed, seed)` for
    each seed, played in lanes of the batched step: the Gymnasium env's keys (PRNGKey(seed), split
    once for the reset and once per decision), its choices (the same generator over the same
    masks), and its outputs (the final observation and mask of each step, the reward and ends)."""
    _, params, reset, step, legal_masks = _batched()
    seeds = list(seeds)
    lanes = np.arange(BATCH) % len(seeds)  # the spare lanes repeat the episodes
    keys, reset_keys = [], []
    for seed in seeds:
        key, reset_key = jax.random.split(jax.random.PRNGKey(seed))
        keys.append(key)
        reset_keys.append(reset_key)
    obs, state = reset(jnp.stack(reset_keys)[lanes], params)
    step_keys = list(reset_keys)  # a finished lane keeps its last key: its outputs are not read
    masks = np.asarray(legal_masks(state))
    episodes = [[np.asarray(obs[i])] for i in range(len(seeds))]
    choices = [np.random.default_rng(seed) for seed in seeds]
    live = [True] * len(seeds)
    actions = np.zeros(len(seeds), np.int32)
    while any(live):
        for i in np.flatnonzero(live):
            actions[i] = int(choices[i].choice(np.flatnonzero(masks[i])))
            keys[i], step_keys[i] = jax.random.split(keys[i])
        _, state, _, _, info = step(jnp.stack(step_keys)[lanes], state, jnp.asarray(actions[lanes]), params)
        info = jax.device_get(info)
        for i in np.flatnonzero(live):
            won, lost, drawn = bool(info["won"][i]), bool(info["lost"][i]), bool(info["drawn"][i])
            terminated = won or lost or drawn
            truncated = not terminated and len(episodes[i]) >= params.max_decisions
            reward = 1.0 if won else -1.0 if lost else 0.0
            episodes[i].append((info["final_observation"][i], reward, terminated, truncated))
            live[i] = not (terminated or truncated)
        masks = info["final_action_mask"]
    return episodes


@functools.cache
def _batched():
    """The functional env's reset, step and legal mask vmapped over BATCH gen1randombattles, jitted
    once for the process: (env, params, reset, step, legal_masks)."""
    env = _shared_env(prng.SODIUM).env
    return (
        env,
        EnvParams(battle_format=RANDOM_BATTLE),
        jax.jit(jax.vmap(env.reset, in_axes=(0, None))),
        jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0, None))),
        jax.jit(jax.vmap(env.legal_mask)),
    )


@POKEJAX.covers("battle")
def test_functional_env_batched_rollout():
    """vmap over 64 gen1randombattle battles (the format L4 trains on) for 300 steps: battles end
    and restart, rewards are the battle outcomes, no step ever runs out of prefetched PRNG draws."""
    _, params, reset, step, legal_masks = _batched()
    _, state = reset(jax.random.split(jax.random.PRNGKey(0), BATCH), params)
    choose = jax.jit(jax.vmap(random_legal_action))
    mask, key, outputs = legal_masks(state), jax.random.PRNGKey(1), []
    for _ in range(300):
        key, action_key, step_key = jax.random.split(key, 3)
        actions = choose(jax.random.split(action_key, BATCH), mask)
        _, state, reward, done, info = step(jax.random.split(step_key, BATCH), state, actions, params)
        mask = info["action_mask"]
        ended_without_winner = info["drawn"] | info["truncated"]
        outputs.append(jax.device_get((reward, done, ended_without_winner, info["illegal_action"],
                                       state.battle.prng_overflow)))
    reward, done, no_winner, illegal, overflow = (np.stack(column) for column in zip(*outputs, strict=True))
    assert int(done.sum()) > 64, "many battles finished"
    assert set(np.unique(reward).tolist()) <= {-1.0, 0.0, 1.0}
    # every end is a win or a loss, except a draw (both last Pokemon falling together) or a cut
    assert np.array_equal((reward != 0) | no_winner, done)
    assert not bool((no_winner & (reward != 0)).any())
    assert not bool(illegal.any()) and not bool(overflow.any())
    assert bool(np.asarray(state.battle.standard_format).all())
    # an illegal action is a loss in the functional env: take a battle where something is illegal
    masks = np.asarray(mask)
    index = int(np.flatnonzero(~masks.all(axis=1))[0])
    actions = np.array(choose(jax.random.split(key, BATCH), mask))
    actions[index] = int(np.flatnonzero(~masks[index])[0])
    _, _, r, d, info = step(jax.random.split(key, BATCH), state, jnp.asarray(actions), params)
    assert float(r[index]) == -1.0 and bool(d[index]) and bool(info["illegal_action"][index])
    assert int(np.asarray(info["illegal_action"]).sum()) == 1
    assert masks.shape == (BATCH, jb.NUM_ACTIONS)
