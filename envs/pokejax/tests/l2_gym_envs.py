"""L2: the Gymnasium envs of both backends: conformance, seeding, the same trajectory on Showdown and
on PokeJAX from the same seed and actions, and clear errors (the functional env batched, and the
random-battle format: l2_functional_env.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

import envs.pokejax  # noqa: F401  (registers the ids)
from envs.pokejax.jax import battle as jb
from envs.pokejax.jax import stats
from envs.pokejax.jax.env import OBS_SIZE, encode_observation
from envs.pokejax.jax.tables import BOOST_KEYS, STATUSES, VOLATILES, gen1_tables
from envs.pokejax.tests.components import POKEJAX
from envs.pokejax.tests.episodes import play_episode, same_episode
from envs.pokejax.vector_env import PokeJaxVectorEnv
from shared.gym_registration import submodules_loaded_by_import
from shared.verification.vector_info import assert_same_vector_info

IDS = ["envport/PokeJax-v0", "envport/PokeShowdown-v0"]


@pytest.fixture(scope="module")
def both():
    envs = {env_id: gymnasium.make(env_id, render_mode="ansi") for env_id in IDS}
    yield envs
    for env in envs.values():
        env.close()


@POKEJAX.covers("battle")
@pytest.mark.parametrize("env_id", IDS)
def test_check_env(both, env_id):
    check_env(both[env_id].unwrapped)


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
    jax_episode = play_episode(both["envport/PokeJax-v0"], seed, seed)
    showdown_episode = play_episode(both["envport/PokeShowdown-v0"], seed, seed)
    assert len(jax_episode) > 5 and jax_episode[-1][2], "a whole battle, played to its end"
    assert same_episode(jax_episode, showdown_episode)


def _request_lines(request: dict) -> list[str]:
    """What a player's own request says of each of its Pokemon ("Mr. Mime, L80" and "120/186 par"),
    as patterns for render()'s lines: Showdown's words for the player, not the state the view reads."""
    patterns = []
    for slot, pokemon in enumerate(request["side"]["pokemon"]):
        name, *rest = pokemon["details"].split(", ")
        level = next((part[1:] for part in rest if re.fullmatch(r"L\d+", part)), "100")  # Showdown omits L100
        condition = pokemon["condition"].split(" ")
        head = rf"  {'>' if slot == 0 else ' '} {re.escape(name)} +L{level} +"
        if condition[-1] == "fnt":
            patterns.append(head + "fainted")
        else:
            status = rf"  {condition[1].upper()}" if len(condition) > 1 else ""
            patterns.append(head + rf"HP {condition[0]}{status}")
    return patterns


@POKEJAX.covers("battle")
@pytest.mark.parametrize("seed", [5, 11])
def test_both_backends_render_the_same_battle_as_showdown_tells_its_players(both, seed):
    """render_mode="ansi": the two backends' texts are equal at every decision of a whole battle
    (the JAX env's from its battle state, the Showdown env's from Showdown's), and the Showdown env's
    lines say what Showdown's requests tell each player of its team (names, levels, HP, status)."""
    texts = {}
    for env_id, env in both.items():
        _, info = env.reset(seed=seed)
        rng, seen, done = np.random.default_rng(seed), [env.render()], False
        while not done:
            _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            seen.append(env.render())
            done = terminated or truncated
            if env_id == "envport/PokeShowdown-v0":
                snap = env.unwrapped._snap
                for side, request in enumerate(snap["requests"]):
                    transformed = snap["state"]["sides"][side]["pokemon"][0]["transformed"]
                    if request is None or "side" not in request:
                        continue
                    block = seen[-1].split(f"\np{side + 1}\n")[1].splitlines()
                    pokemon_lines = [line for line in block if not line.startswith("      ")][: len(request["side"]["pokemon"])]
                    for slot, (pattern, line) in enumerate(zip(_request_lines(request), pokemon_lines, strict=True)):
                        # details keep a transformed Pokemon's own species, the state (and the text) its target's
                        if not (slot == 0 and transformed):
                            assert re.fullmatch(pattern, line), f"p{side + 1} slot {slot + 1}: {line!r} !~ {pattern!r}"
        texts[env_id] = seen
    jax_texts, showdown_texts = texts["envport/PokeJax-v0"], texts["envport/PokeShowdown-v0"]
    assert len(jax_texts) > 20 and "Battle over: p" in jax_texts[-1]
    for decision, (ours, theirs) in enumerate(zip(jax_texts, showdown_texts, strict=True)):
        assert ours == theirs, f"decision {decision}:\n{ours}\n!=\n{theirs}"


@pytest.mark.parametrize("env_id", IDS)
def test_rendering_errors_and_warnings(env_id):
    with pytest.raises(ValueError, match="render_mode must be None or one of"):
        gymnasium.make(env_id, render_mode="rgb_array")
    env = gymnasium.make(env_id, render_mode="ansi")
    try:
        with pytest.raises(RuntimeError, match="reset"):
            env.unwrapped.render()  # (under Gymnasium's order-enforcing wrapper, its own ResetNeeded)
    finally:
        env.close()
    silent = gymnasium.make(env_id)
    try:
        silent.reset(seed=0)
        with pytest.warns(UserWarning, match='render_mode="ansi"'):
            assert silent.render() is None
    finally:
        silent.close()


@POKEJAX.covers("battle")
def test_same_seed_same_trajectory(both):
    env = both["envport/PokeJax-v0"]
    assert same_episode(play_episode(env, 3, 7), play_episode(env, 3, 7))
    assert not same_episode(play_episode(env, 3, 7), play_episode(env, 4, 7))


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
    while info["action_mask"].all():
        _, _, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
        assert not (terminated or truncated)
    return int(np.flatnonzero(~info["action_mask"])[0])


_ASYNC_THEN_SYNC = """
import numpy as np, gymnasium
import envs.pokejax

def play(mode):
    vector = gymnasium.make_vec("envport/PokeShowdown-v0", num_envs=2, vectorization_mode=mode)
    observations, info = vector.reset(seed=[3, 4])
    seen = [observations]
    for _ in range(12):
        actions = np.array([np.flatnonzero(mask)[0] if mask.any() else 0 for mask in info["action_mask"]])
        observations, _, _, _, info = vector.step(actions)
        seen.append(observations)
    vector.close()
    return np.asarray(seen)

if __name__ == "__main__":
    forked = play("async")  # this process has run no JAX yet: Gymnasium forks its workers
    assert np.array_equal(forked, play("sync")), "async and sync differ"
    print("same battles")
"""


def test_showdown_envs_in_gymnasiums_async_vector_env():
    """Showdown is the slow backend, so AsyncVectorEnv is how a researcher uses both cores on it. It
    forks its workers after making a probe env in the parent: the envs start no JAX until their first
    reset (nor does importing envs.pokejax), so the workers can run JAX and play the sync battles.
    (Before, the probe started JAX and every worker refused, by shared/jax_fork_guard.)"""
    done = subprocess.run([sys.executable, "-c", _ASYNC_THEN_SYNC], cwd=Path(__file__).resolve().parents[3],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "same battles" in done.stdout, done.stderr[-3000:]


def test_a_closed_showdown_env_says_so():
    """After close() the Node process is gone: a step or reset says so (the adapter's auto-restart
    used to start a fresh process and answer that it knew no such battle); closing twice is fine."""
    env = gymnasium.make("envport/PokeShowdown-v0")
    _, info = env.reset(seed=0)
    env.close()
    env.close()
    for call in (lambda: env.step(int(np.flatnonzero(info["action_mask"])[0])), lambda: env.reset(seed=0)):
        with pytest.raises(RuntimeError, match="closed .*make a new env"):
            call()


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


@pytest.mark.parametrize("kwargs, message", [
    ({"kind": "bogus"}, r"kind \(Showdown's PRNG\) must be one of \('sodium', 'gen5'\), got 'bogus'"),
    ({"max_decisions": -5}, "max_decisions must be a whole number >= 1, got -5"),
    ({"max_decisions": 0}, "max_decisions must be a whole number >= 1, got 0"),
    ({"max_decisions": "x"}, "max_decisions must be a whole number >= 1, got 'x'"),
])
# the single envs of both ids, and the JAX id's native vector env (Showdown's make_vec is Gymnasium's
# SyncVectorEnv of single envs)
@pytest.mark.parametrize("env_id, make", [(IDS[0], gymnasium.make), (IDS[1], gymnasium.make),
                                          (IDS[0], lambda env_id, **kw: gymnasium.make_vec(env_id, num_envs=2, **kw))],
                         ids=["jax", "showdown", "jax-vector"])
def test_bad_settings_are_refused_when_the_env_is_made(env_id, make, kwargs, message):
    """Each used to be taken: a negative or zero max_decisions truncated at the first step, a str
    failed inside JAX at reset, an unknown kind only at the first reset, without the allowed kinds."""
    with pytest.raises(ValueError, match=message):
        make(env_id, **kwargs)


def test_teams_outside_gen_1_levels_are_refused():
    from envs.pokejax.jax.env import EnvParams

    for levels in ((0, 0), (50, 300), (-5, 10), (100, 50), (50.0, 100)):
        with pytest.raises(ValueError, match=r"level_range must be a tuple \(low, high\) of levels with 1 <= low"):
            EnvParams(level_range=levels)


@pytest.mark.parametrize("env_id", IDS)
def test_a_seed_past_prngkeys_range_is_refused_before_the_episode_changes(both, env_id):
    env = both[env_id]
    env.reset(seed=11)
    with pytest.raises(ValueError, match=r"seed must be in \[0, 2\*\*63\)"):
        env.reset(seed=2**63)
    with pytest.raises(RuntimeError, match="call reset\\(\\) before step"):
        gymnasium.make(env_id, disable_env_checker=True).unwrapped.step(0)


def test_a_showdown_process_killed_mid_battle_is_reported_and_reset_starts_afresh():
    """The battle lived in the Node process: the step after its death says so, the episode is over,
    and reset() plays the seed's battle again in a fresh process (it used to fail for ever, asking
    the restarted process to end a battle it never knew)."""
    import os
    import signal

    from envs.pokejax.reference.showdown import ShowdownDied

    env = gymnasium.make("envport/PokeShowdown-v0", disable_env_checker=True).unwrapped
    try:
        first, info = env.reset(seed=3)
        action = int(np.flatnonzero(info["action_mask"])[0])
        expected = env.step(action)
        env.reset(seed=3)
        os.kill(env._showdown.pid, signal.SIGKILL)
        with pytest.raises(ShowdownDied, match="battle is lost: reset\\(\\) starts a new one"):
            env.step(action)
        with pytest.raises(RuntimeError, match="episode has ended"):
            env.step(action)
        again, _ = env.reset(seed=3)
        assert np.array_equal(again, first)
        replayed = env.step(action)
        assert np.array_equal(replayed[0], expected[0]) and replayed[1:4] == expected[1:4]
    finally:
        env.close()


@POKEJAX.covers("battle")
def test_vector_env():
    # 3 envs, as every vector env of this file: the batched step compiles once per batch size
    envs = gymnasium.make_vec("envport/PokeJax-v0", num_envs=3)
    assert isinstance(envs.unwrapped, PokeJaxVectorEnv), "make_vec's default is the native vector env"
    obs, info = envs.reset(seed=0)
    assert obs.shape == (3, OBS_SIZE)
    actions = np.array([int(np.flatnonzero(m)[0]) for m in info["action_mask"]])
    obs, reward, terminated, truncated, info = envs.step(actions)
    assert obs.shape == (3, OBS_SIZE) and reward.shape == (3,)
    envs.close()


def _vector_run(mode: str, steps: int, autoreset_mode: AutoresetMode, **kwargs) -> list:
    """Everything a vector env returns over `steps` steps of random actions, now and then an
    illegal one (drawn from a fixed generator, so both modes get the same actions)."""
    if mode == "sync":
        envs = gymnasium.make_vec("envport/PokeJax-v0", num_envs=3, vectorization_mode=mode,
                                  vector_kwargs={"autoreset_mode": autoreset_mode}, **kwargs)
    else:
        envs = gymnasium.make_vec("envport/PokeJax-v0", num_envs=3, vectorization_mode=mode,
                                  autoreset_mode=autoreset_mode, **kwargs)
    assert envs.metadata["autoreset_mode"] == autoreset_mode
    rng = np.random.default_rng(5)
    obs, info = envs.reset(seed=11)
    record = [(obs, info["action_mask"], envs.render(), info)]
    for _ in range(steps):
        actions = np.array(
            [int(rng.integers(9)) if rng.random() < 0.1 or not mask.any() else int(rng.choice(np.flatnonzero(mask)))
             for mask in info["action_mask"]]
        )
        obs, reward, terminated, truncated, info = envs.step(actions)
        record.append((obs, reward, terminated, truncated, info["action_mask"], envs.render(), info))
    envs.close()
    assert all(entry[-3].dtype == bool for entry in record), f"{mode}: a bool mask (the root README's Conventions)"
    return record


@POKEJAX.covers("battle")
@pytest.mark.parametrize("autoreset_mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_native_vector_env_plays_the_single_envs_episodes(autoreset_mode):
    """The native vector env against Gymnasium's SyncVectorEnv of single envs seeded 11, 12, 13, under
    either autoreset mode: every observation, reward, end flag, legal mask, rendered text and info
    (keys, `_key` masks, SAME_STEP's final_obs and final_info) equal at every step (a finished battle
    renders as it ended until its env resets), through episodes that end by a loss for an illegal
    action, by truncation (12 decisions) and by the battle's end, and through the resets (which draw
    each env's next seed from its own generator)."""
    kwargs = {"max_decisions": 12, "illegal_action": "lose", "render_mode": "ansi"}
    native = _vector_run("vector_entry_point", 80, autoreset_mode, **kwargs)
    sync = _vector_run("sync", 80, autoreset_mode, **kwargs)
    for step, (ours, theirs) in enumerate(zip(native, sync, strict=True)):
        for field, (a, b) in enumerate(zip(ours[:-1], theirs[:-1], strict=True)):
            assert np.array_equal(a, b), f"step {step}, field {field}: {a} != {b}"
        assert_same_vector_info(ours[-1], theirs[-1], f"step {step}")
    rewards = np.stack([entry[1] for entry in native[1:]])
    ended = np.stack([entry[2] | entry[3] for entry in native[1:]])
    truncated = np.stack([entry[3] for entry in native[1:]])
    assert truncated.any() and (ended & (rewards == -1.0)).any() and ended.sum() >= 12, "episodes of each ending"
    if autoreset_mode == AutoresetMode.SAME_STEP:
        assert all(("final_obs" in entry[-1]) == (entry[2] | entry[3]).any() for entry in native[1:])
        for entry in native[1:]:
            for index in np.flatnonzero(entry[2] | entry[3]):  # the new battle's first turn, the old one's end
                assert entry[0][index][-1] == np.float32(1 / 1000) and entry[-1]["final_obs"][index][-1] > entry[0][index][-1]


@POKEJAX.covers("battle")
@pytest.mark.parametrize(
    "actions, message",
    [
        (np.array([0, 1]), r"shape \(3,\)"),
        (np.array([0.0, 1.0, 2.0]), "integer array"),
        (np.array([[0, 1, 2]]), r"shape \(3,\)"),
        (None, "integer array"),
        (np.array([0, 9, -1]), r"out of range \[0, 9\) in envs \[1, 2\]: \[9, -1\]; actions are 0-3"),
    ],
)
def test_native_vector_env_refuses_bad_actions(actions, message):
    envs = gymnasium.make_vec("envport/PokeJax-v0", num_envs=3)
    with pytest.raises(RuntimeError, match="reset"):
        envs.step(np.zeros(3, dtype=np.int64))
    envs.reset(seed=0)
    with pytest.raises(ValueError, match=message):
        envs.step(actions)
    envs.close()


def test_native_vector_env_refuses_bad_seeds_as_single_envs_do():
    envs = gymnasium.make_vec("envport/PokeJax-v0", num_envs=3)
    for bad, message in (([0, 1.5, 2], r"seed\[1\] must be an int or None, got 1.5"), ([0, 1], "expected 3 seeds"),
                         ([0, 1, -2], r"seed\[2\] must be non-negative"), (2.5, "seed must be an int, a list"),
                         ([None, 2**64, 3], r"seed\[1\] must be below 9223372036854775808 \(jax.random.PRNGKey"),
                         (2**63 - 2, r"with 3 envs it must be below 9223372036854775806")):
        with pytest.raises(ValueError, match=message):
            envs.reset(seed=bad)
    envs.close()


@POKEJAX.covers("battle")
def test_native_vector_env_refuses_an_illegal_action_before_stepping_anything():
    envs = gymnasium.make_vec("envport/PokeJax-v0", num_envs=3)
    single = gymnasium.make("envport/PokeJax-v0")
    try:
        illegal = _play_until_something_is_illegal(single, 1)
        _, info = envs.reset(seed=[1, 2, 3])
        # env 0 replays the single env's legal switches up to the same point; envs 1 and 2 switch too
        while info["action_mask"][0].all():
            actions = np.array([int(np.flatnonzero(mask)[-1]) for mask in info["action_mask"]])
            _, _, _, _, info = envs.step(actions)
        before = envs.unwrapped._states
        legal_for_others = [int(np.flatnonzero(mask)[0]) for mask in info["action_mask"][1:]]
        with pytest.raises(ValueError, match=r"illegal actions in envs \[0\]"):
            envs.step(np.array([illegal, *legal_for_others]))
        assert not info["action_mask"][0][illegal]
        assert envs.unwrapped._states is before, "nothing was stepped"
    finally:
        single.close()
        envs.close()


def test_native_vector_env_rendering_errors_and_warnings():
    with pytest.raises(ValueError, match="render_mode must be None or one of"):
        gymnasium.make_vec("envport/PokeJax-v0", num_envs=3, render_mode="rgb_array")
    with pytest.raises(RuntimeError, match="reset"):
        gymnasium.make_vec("envport/PokeJax-v0", num_envs=3, render_mode="ansi").render()
    envs = gymnasium.make_vec("envport/PokeJax-v0", num_envs=3)
    envs.reset(seed=0)
    with pytest.warns(UserWarning, match='render_mode="ansi"'):
        assert envs.render() is None
    envs.close()


@POKEJAX.covers("battle")
def test_importing_the_package_loads_none_of_its_modules():
    """Importing the package registers its ids by name only: no module of it is loaded, so importing
    it stays cheap and `python -m envs.pokejax.gen_data` runs without runpy's warning that the module was
    imported before it ran."""
    assert submodules_loaded_by_import("envs.pokejax") == []
    assert gymnasium.spec("envport/PokeJax-v0").vector_entry_point == "envs.pokejax.vector_env:PokeJaxVectorEnv"
