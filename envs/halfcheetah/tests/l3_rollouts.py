"""L3: 100 episodes of 1000 steps on MuJoCo C (Gymnasium's reset noise from seeds 0-99, uniform
random actions from seeded generators), and the translation against them.

(a) One-step error, re-synchronised every step: from each of MuJoCo's 100,000 states, one env
    step of ours under the same action; every observation component within 1e-10 in float64,
    except on the states where MuJoCo's Newton stopped at its 1e-8 tolerance short of the
    minimiser (20 of 100,000): there MJX disagrees with C exactly as much, and ours must equal
    MJX. In float32 ours is compared with MJX's own float32 error on the same states (a sample
    of 2,000, MJX being slow on CPU) and must be no worse: not worse on significantly more states
    than better (paired sign test, p >= 0.01), and its worst state within 2x of MJX's worst.
(b) Free running: each backend runs the episode on its own from the same first state and actions.
    Contacts make the system chaotic, so any rounding difference grows. The error of ours must
    not grow faster than MJX's (fitted decades per step); the stricter bar - ours leaves MuJoCo's
    trajectory (error > 1e-6) no earlier than MJX, by a paired sign test - is a strict xfail with
    the measured figures. The median curves go in the report.
Figures go to $ENVPORT_L3_OUT/halfcheetah_l3.json (default: the system temp folder).
"""

import functools
import json
import os
import tempfile
from pathlib import Path

import jax
import numpy as np
import pytest
from scipy.stats import binomtest

from envs.halfcheetah.jax import env
from envs.halfcheetah.reference import mjx_ref
from envs.halfcheetah.reference.mujoco_ref import MujocoCheetah
from envs.halfcheetah.tests.harness import assert_close

EPISODES, STEPS, FREE_STEPS, MJX_SAMPLE_EVERY = 100, 1000, 300, 50
QUANTILES = (0.5, 0.9, 0.99, 0.999, 1.0)
# float32: per state, ours and MJX round differently and neither is systematically closer to C
# (ours smaller on 47-52% of the states). The worst of 2,000 states is one chaotic state: over
# builds that round differently but have the same error quantiles it moved between 2.5e-5 and
# 3.9e-5 (qpos) and 3.0e-3 and 5.0e-3 (qvel), for the same source with XLA's fusion choices alone
# (README, "float32"); hence a paired sign test plus a bound on the worst case.
MAX_RATIO_TO_MJX = 2.0
F64, F32 = env.EnvParams(dtype="float64"), env.EnvParams(dtype="float32")


def _actions(seed: int, steps: int) -> np.ndarray:
    return np.random.default_rng(10_000 + seed).uniform(-1.0, 1.0, (steps, 6))


@pytest.fixture(scope="module")
def reference():
    """MuJoCo C episodes: state before each step, action, observation and reward after it."""
    qpos = np.zeros((EPISODES, STEPS, 9))
    qvel = np.zeros((EPISODES, STEPS, 9))
    obs = np.zeros((EPISODES, STEPS, 17))
    rewards = np.zeros((EPISODES, STEPS))
    actions = np.stack([_actions(seed, STEPS) for seed in range(EPISODES)])
    cheetah = MujocoCheetah()
    for episode in range(EPISODES):
        cheetah.reset(episode)
        for t in range(STEPS):
            qpos[episode, t], qvel[episode, t] = cheetah.qpos, cheetah.qvel
            obs[episode, t], rewards[episode, t] = cheetah.step(actions[episode, t])
    return {"qpos": qpos, "qvel": qvel, "actions": actions, "obs": obs, "rewards": rewards}


# One compiled program per dtype serves every test here: a batch of CHUNK states stepped once.
# The one-step tests feed it MuJoCo's states CHUNK at a time; the free-running test feeds it its own
# qpos and qvel back (the state's step count does not enter the physics). At batch 100 XLA compiles
# it in about half the time it takes at batch 10,000 (13 against 27 s on 2 cores), and the 1,000
# calls over 100,000 states cost under 10 s.
CHUNK = EPISODES


@functools.cache
def _ours_step(params):
    def one(qpos, qvel, action):
        obs, state, reward, _, _ = env.step_no_reset(env.state_from_qpos_qvel(qpos, qvel, params), action, params)
        return obs, reward, state.qpos, state.qvel

    return jax.jit(jax.vmap(one))


def _ours_one_step(params, qpos, qvel, actions):
    step = _ours_step(params)
    out_obs, out_rew = [], []
    for start in range(0, len(qpos), CHUNK):
        sl = slice(start, start + CHUNK)
        o, r, _, _ = step(qpos[sl], qvel[sl], actions[sl])
        out_obs.append(np.asarray(o, np.float64))
        out_rew.append(np.asarray(r, np.float64))
    return np.concatenate(out_obs), np.concatenate(out_rew)


def _report(name, payload):
    folder = Path(os.environ.get("ENVPORT_L3_OUT", tempfile.gettempdir()))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "halfcheetah_l3.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data[name] = payload
    path.write_text(json.dumps(data, indent=1))
    print(f"{name}: {json.dumps(payload)[:400]}")


def test_l3a_one_step_float64_within_1e10_of_mujoco_or_equal_to_mjx_where_mujoco_stops_early(reference):
    """Every state: within 1e-10 of MuJoCo C. Where not (20 of 100,000 states, measured), MuJoCo's
    Newton stopped at its tolerance short of the minimiser; MJX, the other JAX implementation of
    the same algorithm, then disagrees with C by as much, and ours must equal MJX within 1e-10."""
    flat = {k: reference[k].reshape(EPISODES * STEPS, -1) for k in ("qpos", "qvel", "actions", "obs")}
    ours, rewards = _ours_one_step(F64, flat["qpos"], flat["qvel"], flat["actions"])
    per_state = np.abs(ours - flat["obs"]).max(axis=1)
    error = np.abs(ours - flat["obs"]).max(axis=0)
    off = np.nonzero(per_state > 1e-10)[0]
    figures = {"states": EPISODES * STEPS, "max_error_qpos": float(error[:8].max()),
               "max_error_qvel": float(error[8:].max()), "per_component": error.tolist(),
               "fraction_within_1e-10": float(np.mean(per_state <= 1e-10)),
               "quantiles": {q: float(np.quantile(per_state, q)) for q in (0.5, 0.99, 0.999, 1.0)},
               "off_states": off.tolist(), "off_states_ours_error": per_state[off].tolist()}
    assert len(off) <= EPISODES * STEPS // 1000, f"{len(off)} states off by more than 1e-10"
    if len(off):
        # padded to EPISODES states (repeating them): the shape the free-running test steps MJX at, so
        # that one compiled program serves both (the persistent compilation cache finds it)
        padded = np.resize(off, EPISODES)
        data = mjx_ref.make_batched_step("float64")(
            mjx_ref.initial_data(flat["qpos"][padded], flat["qvel"][padded], "float64"), flat["actions"][padded])
        mjx_obs = np.concatenate([np.asarray(data.qpos)[:, 1:], np.asarray(data.qvel)], axis=1)[:len(off)]
        mjx_error = np.abs(mjx_obs - flat["obs"][off]).max(axis=1)
        figures["off_states_mjx_error"] = mjx_error.tolist()
        figures["off_states_ours_minus_mjx"] = np.abs(ours[off] - mjx_obs).max(axis=1).tolist()
    _report("one_step_float64", figures)
    if len(off):
        assert np.all(mjx_error > 1e-10), "a state where MJX agrees with MuJoCo but ours does not"
        assert_close(ours[off], mjx_obs, 1e-10, "ours vs MJX where MuJoCo stopped early")
    on = per_state <= 1e-10
    assert_close(rewards[on], reference["rewards"].reshape(-1)[on], 1e-8, "reward (dx/dt amplifies qpos errors 20x)")


def test_l3a_one_step_error_float32_no_worse_than_mjx(reference):
    flat = {k: reference[k].reshape(EPISODES * STEPS, -1) for k in ("qpos", "qvel", "actions", "obs")}
    obs, _ = _ours_one_step(F32, flat["qpos"], flat["qvel"], flat["actions"])
    ours_error = np.abs(obs - flat["obs"])
    sample = np.arange(0, EPISODES * STEPS, MJX_SAMPLE_EVERY)
    step = mjx_ref.make_batched_step("float32")
    data = step(mjx_ref.initial_data(flat["qpos"][sample], flat["qvel"][sample], "float32"),
                np.asarray(flat["actions"][sample], np.float32))
    mjx_obs = np.concatenate([np.asarray(data.qpos, np.float64)[:, 1:], np.asarray(data.qvel, np.float64)], axis=1)
    mjx_error = np.abs(mjx_obs - flat["obs"][sample])
    figures = {
        "ours_all_states": {"qpos": float(ours_error[:, :8].max()), "qvel": float(ours_error[:, 8:].max())},
        "ours_on_sample": {"qpos": float(ours_error[sample, :8].max()), "qvel": float(ours_error[sample, 8:].max())},
        "mjx_on_sample": {"qpos": float(mjx_error[:, :8].max()), "qvel": float(mjx_error[:, 8:].max())},
        "sample_size": int(len(sample)), "paper_epsilon": 1e-3,
    }
    for name, part in (("qpos", slice(0, 8)), ("qvel", slice(8, 17))):
        ours, mjx = ours_error[sample, part].max(axis=1), mjx_error[:, part].max(axis=1)
        worse, better = int(np.sum(ours > mjx)), int(np.sum(ours < mjx))
        figures[f"paired_{name}"] = {
            "ours_worse": worse, "ours_better": better,
            "sign_test_p": float(binomtest(worse, worse + better, 0.5, alternative="greater").pvalue),
            "quantiles_ours": np.quantile(ours, QUANTILES).tolist(), "quantiles_mjx": np.quantile(mjx, QUANTILES).tolist()}
    _report("one_step_float32", figures)
    for name in ("qpos", "qvel"):
        paired = figures[f"paired_{name}"]
        assert paired["sign_test_p"] >= 0.01, (name, paired)
        assert figures["ours_on_sample"][name] <= MAX_RATIO_TO_MJX * figures["mjx_on_sample"][name], (name, figures)


def _first_crossing(curve, level):
    above = np.nonzero(curve > level)[0]
    return int(above[0]) if len(above) else len(curve)


def test_l3b_free_running_divergence_no_faster_than_mjx(reference):
    qpos0, qvel0 = reference["qpos"][:, 0], reference["qvel"][:, 0]
    actions = reference["actions"][:, :FREE_STEPS]
    target = reference["obs"][:, :FREE_STEPS]

    ours_step, qpos, qvel = _ours_step(F64), qpos0, qvel0
    ours = np.zeros_like(target)
    for t in range(FREE_STEPS):
        obs, _, qpos, qvel = ours_step(qpos, qvel, actions[:, t])
        ours[:, t] = np.asarray(obs)

    mjx_step = mjx_ref.make_batched_step("float64")
    data = mjx_ref.initial_data(qpos0, qvel0, "float64")
    mjx = np.zeros_like(target)
    for t in range(FREE_STEPS):
        data = mjx_step(data, actions[:, t])
        mjx[:, t] = np.concatenate([np.asarray(data.qpos)[:, 1:], np.asarray(data.qvel)], axis=1)

    ours_error, mjx_error = np.abs(ours - target).max(axis=2), np.abs(mjx - target).max(axis=2)  # (episodes, steps)
    ours_curve, mjx_curve = np.median(ours_error, axis=0), np.median(mjx_error, axis=0)
    crossings = {level: (_first_crossing(ours_curve, level), _first_crossing(mjx_curve, level))
                 for level in (1e-9, 1e-6, 1e-3, 1.0)}
    # Paired per episode: the step where each backend's error first passes 1e-6. Chaos makes the
    # difference random; "ours diverges faster" means ours is earlier in significantly more
    # episodes than later (one-sided sign test, p < 0.01).
    ours_at = np.array([_first_crossing(e, 1e-6) for e in ours_error])
    mjx_at = np.array([_first_crossing(e, 1e-6) for e in mjx_error])
    earlier, later = int(np.sum(ours_at < mjx_at)), int(np.sum(ours_at > mjx_at))
    p_value = binomtest(earlier, earlier + later, 0.5, alternative="greater").pvalue if earlier + later else 1.0
    _report("free_running_float64", {
        "steps": FREE_STEPS, "episodes": EPISODES,
        "first_step_median_error_above": {f"{k:g}": {"ours": v[0], "mjx": v[1]} for k, v in crossings.items()},
        "per_episode_1e-6": {"ours_earlier": earlier, "ours_later": later, "tied": EPISODES - earlier - later,
                             "mean_step_ours": float(ours_at.mean()), "mean_step_mjx": float(mjx_at.mean()),
                             "sign_test_p": float(p_value)},
        "median_error_curve_ours": ours_curve.tolist(), "median_error_curve_mjx": mjx_curve.tolist(),
    })
    _FREE_RUNNING.update(earlier=earlier, later=later, p_value=p_value)
    # The growth rate of the error (decades per step, fitted where the median error is between
    # 1e-12 and 1e-4) is the chaos of the dynamics itself: a translation that got the dynamics
    # wrong would change it. Measured: ours 0.113, MJX 0.110.
    ours_rate, mjx_rate = _growth_rate(ours_curve), _growth_rate(mjx_curve)
    _report("free_running_growth_rate", {"ours": ours_rate, "mjx": mjx_rate})
    assert ours_rate <= 1.15 * mjx_rate, f"error grows {ours_rate:.3f} decades/step for ours, {mjx_rate:.3f} for MJX"


def _growth_rate(curve):
    steps = np.arange(len(curve))
    window = (curve > 1e-12) & (curve < 1e-4)
    return float(np.polyfit(steps[window], np.log10(curve[window]), 1)[0])


_FREE_RUNNING: dict = {}


# Not strict: the outcome depends on the CPU the VM lands on. Measured: ours leaves MuJoCo's
# trajectory earlier than MJX in 42 episodes, later in 13 (p=6e-5), and on 2026-11-30's VM (AMD EPYC,
# faster) in 30, later in 15, tied 55 (p=0.018, so the assertion held and a strict xfail broke CI).
@pytest.mark.xfail(strict=False, raises=AssertionError, reason=(
    "measured: ours leaves MuJoCo's trajectory earlier than MJX more often than later (42 vs 13 episodes, "
    "p=6e-5; 30 vs 15, p=0.018 on another CPU): the same growth rate from a ~2x larger per-step rounding "
    "error (ours 1e-14 median); MJX's operation order is C's"))
def test_l3b_free_running_leaves_mujoco_no_earlier_than_mjx():
    if not _FREE_RUNNING:
        raise RuntimeError("run with test_l3b_free_running_divergence_no_faster_than_mjx (same module) first")
    earlier, later, p_value = _FREE_RUNNING["earlier"], _FREE_RUNNING["later"], _FREE_RUNNING["p_value"]
    assert p_value >= 0.01, f"ours leaves MuJoCo earlier than MJX in {earlier} episodes, later in {later} (p={p_value:.2g})"
