"""L2: the Gymnasium envs of both backends and the functional JAX env: conformance, seeding, the
same trajectory on Showdown and on PokeJAX from the same seed and actions, and clear errors."""

from __future__ import annotations

import functools

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import envs.pokejax  # noqa: F401  (registers the ids)
from envs.pokejax.gym_envs import _shared_env
from envs.pokejax.jax import battle as jb
from envs.pokejax.jax import prng, stats
from envs.pokejax.jax.env import OBS_SIZE, RANDOM_BATTLE, EnvParams, encode_observation, random_legal_action
from envs.pokejax.jax.tables import BOOST_KEYS, STATUSES, VOLATILES, gen1_tables
from envs.pokejax.tests.components import POKEJAX

IDS = ["envport/PokeJax-v0", "envport/PokeShowdown-v0"]


@pytest.fixture(scope="module")
def both():
    envs = {env_id: gymnasium.make(env_id) for env_id in IDS}
    yield envs
    for env in envs.values():
        env.close()


def _episode(env, seed: int, choice_seed: int) -> list:
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(choice_seed)
    out = [obs]
    while True:
        action = int(rng.choice(np.flatnonzero(info["legal_mask"])))
        obs, reward, terminated, truncated, info = env.step(action)
        out.append((obs, reward, terminated, truncated))
        if terminated or truncated:
            return out


def _equal(a: list, b: list) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if isinstance(x, np.ndarray):
            if not np.array_equal(x, y):
                return False
        elif not (np.array_equal(x[0], y[0]) and x[1:] == y[1:]):
            return False
    return True


@POKEJAX.covers("battle")
@pytest.mark.parametrize("env_id", IDS)
def test_check_env(both, env_id):
    check_env(both[env_id].unwrapped, skip_render_check=True)


@POKEJAX.covers("battle")
def test_every_move_status_stage_and_volatile_encodes_inside_the_observation_space(both):
    """The extremes check_env's few resets may never meet: each of the supported moves in p1's
    slots (Explosion's 170 power, PP 0, full, -1 and 63: a move used at 0 PP goes to -1 in the
    custom game and wraps to 63 in the standard format), each status, stages -6 and +6, every
    volatile."""
    env = both["envport/PokeJax-v0"].unwrapped
    t = gen1_tables()
    tables = env.jax_env.tables
    moves = np.array([t.move_index(m) for m in jb.SUPPORTED_MOVES])
    moves = np.concatenate([moves, np.zeros((-len(moves)) % jb.NUM_MOVE_SLOTS, dtype=moves.dtype)])
    shape = (jb.NUM_SIDES, jb.TEAM_SIZE)
    for index, slots in enumerate(moves.reshape(-1, jb.NUM_MOVE_SLOTS)):
        stage = 6 if index % 2 else -6
        max_pp = np.asarray(stats.max_pp(tables.move_pp[slots]))
        obs = np.asarray(
            encode_observation(
                tables,
                hp=np.full(shape, 1 + index % 2),
                max_hp=np.full(shape, 2),
                level=np.full(shape, 100),
                types=np.full((*shape, 2), index % 15),
                status=np.full(shape, index % len(STATUSES)),
                boosts=np.full((jb.NUM_SIDES, len(BOOST_KEYS)), stage),
                volatiles=np.full((jb.NUM_SIDES, len(VOLATILES)), index % 2 == 0),
                active_moves=slots,
                active_pp=max_pp * (index % 2) if index % 3 else np.full_like(max_pp, 63 if index % 2 else -1),
                legal_mask=np.ones(jb.NUM_ACTIONS, dtype=bool),
                turn=1000 * index,
            )
        )
        assert obs in env.observation_space, [t.move_ids[i] for i in slots]
        assert obs.min() == 0.0 and obs.max() == 1.0


@POKEJAX.covers("battle")
@pytest.mark.parametrize("seed", range(5))
def test_showdown_and_pokejax_give_the_same_episode(both, seed):
    jax_episode = _episode(both["envport/PokeJax-v0"], seed, seed)
    showdown_episode = _episode(both["envport/PokeShowdown-v0"], seed, seed)
    assert len(jax_episode) > 5 and jax_episode[-1][2], "a whole battle, played to its end"
    assert _equal(jax_episode, showdown_episode)


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
            showdown_episode = _episode(showdown, seed, seed)
            assert len(showdown_episode) > 5 and showdown_episode[-1][2], "a whole battle, played to its end"
            assert _equal(functional_episodes[seed], showdown_episode)
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
    """`_episode(gymnasium.make("envport/PokeJax-v0", battle_format=RANDOM_BATTLE), seed, seed)` for
    each seed, played in lanes of the batched step: the Gymnasium env's keys (PRNGKey(seed), split
    once for the reset and once per decision), its choices (the same generator over the same
    masks), and its outputs (the final observation and mask of each step, the reward and ends)."""
    env, params, reset, step, legal_masks = _batched(RANDOM_BATTLE)
    seeds = list(seeds)
    lanes = np.arange(BATCH) % len(seeds)  # the spare lanes repeat the episodes
    keys, reset_keys = [], []
    for seed in seeds:
        key, reset_key = jax.random.split(jax.random.PRNGKey(seed))
        keys.append(key)
        reset_keys.append(reset_key)
    obs, state = reset(jnp.stack(reset_keys)[lanes], params)
    step_keys = reset_keys  # a finished lane keeps its last key: its outputs are not read
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
        masks = info["final_legal_mask"]
    return episodes


@POKEJAX.covers("battle")
def test_same_seed_same_trajectory(both):
    env = both["envport/PokeJax-v0"]
    assert _equal(_episode(env, 3, 7), _episode(env, 3, 7))
    assert not _equal(_episode(env, 3, 7), _episode(env, 4, 7))


@POKEJAX.covers("battle")
@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("bad", [9, -1, 2.5, "move 1", np.array([1, 2]), None])
def test_bad_actions_are_errors(both, env_id, bad):
    env = both[env_id]
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action"):
        env.step(bad)


def _play_until_something_is_illegal(env, seed: int) -> int:
    """Every action is legal at the start (four moves with PP, five Pokemon on the bench): play the
    last legal action (a switch: p1 never attacks) until one of p1's Pokemon faints and makes
    something illegal; returns that action."""
    _, info = env.reset(seed=seed)
    while info["legal_mask"].all():
        _, _, terminated, truncated, info = env.step(int(np.flatnonzero(info["legal_mask"])[-1]))
        assert not (terminated or truncated)
    return int(np.flatnonzero(~info["legal_mask"])[0])


@POKEJAX.covers("battle")
@pytest.mark.parametrize("env_id", IDS)
def test_illegal_action_raises_or_loses(env_id):
    env = gymnasium.make(env_id)
    try:
        illegal = _play_until_something_is_illegal(env, 1)
        with pytest.raises(ValueError, match="illegal"):
            env.step(illegal)
    finally:
        env.close()
    lose = gymnasium.make(env_id, illegal_action="lose")
    try:
        illegal = _play_until_something_is_illegal(lose, 1)
        _, reward, terminated, truncated, info = lose.step(illegal)
        assert (reward, terminated, truncated, info["illegal_action"]) == (-1.0, True, False, True)
        with pytest.raises(RuntimeError, match="reset"):
            lose.step(0)
    finally:
        lose.close()


def test_bad_illegal_action_mode():
    with pytest.raises(ValueError, match="illegal_action"):
        gymnasium.make("envport/PokeJax-v0", illegal_action="ignore")


@POKEJAX.covers("battle")
def test_vector_env():
    envs = gymnasium.make_vec("envport/PokeJax-v0", num_envs=2)
    obs, info = envs.reset(seed=0)
    assert obs.shape == (2, OBS_SIZE)
    actions = np.array([int(np.flatnonzero(m)[0]) for m in info["legal_mask"]])
    obs, reward, terminated, truncated, info = envs.step(actions)
    assert obs.shape == (2, OBS_SIZE) and reward.shape == (2,)
    envs.close()


BATCH = 64


@functools.cache
def _batched(battle_format: str):
    """The functional env's reset, step and legal mask vmapped over BATCH battles, jitted once for
    the process: (env, params, reset, step, legal_masks)."""
    env = _shared_env(prng.SODIUM)[0]
    return (
        env,
        EnvParams(battle_format=battle_format),
        jax.jit(jax.vmap(env.reset, in_axes=(0, None))),
        jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0, None))),
        jax.jit(jax.vmap(env.legal_mask)),
    )


@POKEJAX.covers("battle")
def test_functional_env_batched_rollout():
    """vmap over 64 gen1randombattle battles (the format L4 trains on) for 300 steps: battles end
    and restart, rewards are the battle outcomes, no step ever runs out of prefetched PRNG draws."""
    env, params, reset, step, legal_masks = _batched(RANDOM_BATTLE)
    obs, state = reset(jax.random.split(jax.random.PRNGKey(0), BATCH), params)
    choose = jax.jit(jax.vmap(random_legal_action))
    mask, key, outputs = legal_masks(state), jax.random.PRNGKey(1), []
    for _ in range(300):
        key, action_key, step_key = jax.random.split(key, 3)
        actions = choose(jax.random.split(action_key, BATCH), mask)
        obs, state, reward, done, info = step(jax.random.split(step_key, BATCH), state, actions, params)
        mask = info["legal_mask"]
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
