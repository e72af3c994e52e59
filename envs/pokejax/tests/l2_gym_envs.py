"""L2: the Gymnasium envs of both backends and the functional JAX env: conformance, seeding, the
same trajectory on Showdown and on PokeJAX from the same seed and actions, and clear errors."""

from __future__ import annotations

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
from envs.pokejax.jax.env import OBS_SIZE, RANDOM_BATTLE, encode_observation, random_legal_action
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
    Standard ruleset, on both backends."""
    envs = [gymnasium.make(env_id, battle_format=RANDOM_BATTLE) for env_id in IDS]
    try:
        for seed in range(3):
            jax_episode, showdown_episode = (_episode(env, seed, seed) for env in envs)
            assert len(jax_episode) > 5 and jax_episode[-1][2], "a whole battle, played to its end"
            assert _equal(jax_episode, showdown_episode)
        # the format reached both: the engine's rules, and Showdown's
        assert bool(envs[0].unwrapped._state.battle.standard_format)
        assert envs[1].unwrapped._snap["format"] == RANDOM_BATTLE
    finally:
        for env in envs:
            env.close()


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


@POKEJAX.covers("battle")
def test_functional_env_batched_rollout():
    """jit(vmap) over 64 battles for 300 steps: battles end and restart, rewards are the battle
    outcomes, no step ever runs out of prefetched PRNG draws."""
    # the Gymnasium envs' functional env and jitted step (test_check_env compiled that step in this
    # process: the one-battle step below reuses it rather than compiling it again)
    env, _, jitted_step, _, _ = _shared_env(prng.SODIUM)
    params = env.default_params
    batch = 64
    obs, state = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))(jax.random.split(jax.random.PRNGKey(0), batch), params)

    def one(state, key):
        action_key, step_key = jax.random.split(key)
        mask = jax.vmap(env.legal_mask)(state)
        actions = jax.vmap(random_legal_action)(jax.random.split(action_key, batch), mask)
        obs, state, reward, done, info = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
            jax.random.split(step_key, batch), state, actions, params
        )
        ended_without_winner = info["drawn"] | info["truncated"]
        return state, (reward, done, ended_without_winner, info["illegal_action"], state.battle.prng_overflow)

    state, (reward, done, no_winner, illegal, overflow) = jax.jit(
        lambda s, k: jax.lax.scan(one, s, jax.random.split(k, 300))
    )(state, jax.random.PRNGKey(1))
    assert int(done.sum()) > 64, "many battles finished"
    assert set(np.unique(np.asarray(reward)).tolist()) <= {-1.0, 0.0, 1.0}
    # every end is a win or a loss, except a draw (both last Pokemon falling together) or a cut
    assert np.array_equal(np.asarray((reward != 0) | no_winner), np.asarray(done))
    assert not bool((no_winner & (reward != 0)).any())
    assert not bool(illegal.any()) and not bool(overflow.any())
    # an illegal action is a loss in the functional env: take a battle where something is illegal
    masks = np.asarray(jax.jit(jax.vmap(env.legal_mask))(state))
    index = int(np.flatnonzero(~masks.all(axis=1))[0])
    one_state = jax.tree_util.tree_map(lambda x: x[index], state)
    illegal_action = jnp.int32(int(np.flatnonzero(~masks[index])[0]))
    # jitted, not eager (op by op, this one step took ~290 s on 2 cores)
    _, _, r, d, info = jitted_step(jax.random.PRNGKey(6), one_state, illegal_action, params)
    assert float(r) == -1.0 and bool(d) and bool(info["illegal_action"])
    assert masks.shape == (batch, jb.NUM_ACTIONS)
