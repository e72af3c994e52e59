"""L2: one whole env step (frame_skip = 5 mj_steps: forward, solve, Euler, five times) from the
same state as MuJoCo C: qacc of the last timestep, qvel and qpos after it, within 1e-10 in
float64; observation and reward as Gymnasium's HalfCheetah-v5 gives them."""

import jax
import numpy as np
from hypothesis import given, settings

from envs.halfcheetah.jax import dynamics, env, solver
from envs.halfcheetah.reference import mjx_ref
from envs.halfcheetah.reference.mujoco_ref import MujocoCheetah
from envs.halfcheetah.tests.harness import CHEETAH, PM, assert_close, cheetah_states, jitted_physics_step

EXAMPLES = settings(max_examples=40, deadline=None)
PARAMS = env.EnvParams(dtype="float64")
_env_step = jax.jit(lambda state, action: env.step_no_reset(state, action, PARAMS))


def _mujoco_env_step(qpos, qvel, ctrl):
    cheetah = MujocoCheetah()
    cheetah.set_state(qpos, qvel)
    observation, reward = cheetah.step(ctrl)
    return cheetah, observation, reward


@CHEETAH.covers("solver", "integrator")
@EXAMPLES
@given(cheetah_states())
def test_frame_skip_timesteps_equal_mj_step(state):
    qpos, qvel, ctrl = state
    cheetah, _, _ = _mujoco_env_step(qpos, qvel, ctrl)
    step = jitted_physics_step()
    q, v = qpos, qvel
    for _ in range(5):
        q, v, fwd = step(q, v, ctrl)
    try:
        assert_close(fwd.solution.qacc, cheetah.data.qacc, 1e-10, "qacc (last timestep)", rtol=1e-12)
        assert_close(v, cheetah.qvel, 1e-10, "qvel after frame_skip")
        assert_close(q, cheetah.qpos, 1e-10, "qpos after frame_skip")
    except AssertionError:
        # MuJoCo's Newton stops at its 1e-8 tolerance, sometimes short of the minimiser (README,
        # "The solver"); then MJX, the other JAX implementation, must side with ours, not with C
        mjx_qpos, mjx_qvel = mjx_ref.mjx_one_step(qpos, qvel, ctrl, "float64")
        assert_close(v, mjx_qvel, 1e-10, "qvel vs MJX where MuJoCo C differs")
        assert_close(q, mjx_qpos, 1e-10, "qpos vs MJX where MuJoCo C differs")
        c_vs_mjx = max(np.abs(mjx_qvel - cheetah.qvel).max(), np.abs(mjx_qpos - cheetah.qpos).max())
        qacc_gap = np.abs(np.asarray(fwd.solution.qacc) - cheetah.data.qacc).max()
        assert c_vs_mjx > 1e-12 or qacc_gap < 1e-8, "MJX agrees with MuJoCo C here, ours does not"


@CHEETAH.covers("env")
@EXAMPLES
@given(cheetah_states())
def test_env_step_observation_and_reward_equal_halfcheetah_v5(state):
    qpos, qvel, ctrl = state
    action = np.clip(ctrl, -1, 1)
    _, observation, reward = _mujoco_env_step(qpos, qvel, action)
    obs, next_state, ours_reward, done, info = _env_step(env.state_from_qpos_qvel(qpos, qvel, PARAMS), action)
    assert_close(obs, observation, 1e-10, "observation")
    assert_close(ours_reward, reward, 1e-8, "reward")  # dx/dt: qpos error / 0.05
    assert not bool(done) and int(next_state.step_count) == 1


@CHEETAH.covers("env")
def test_gymnasium_env_reset_matches_our_reference_adapter():
    """The adapter's reset draws Gymnasium's reset noise the way HalfCheetah-v5 does (same seed,
    same observation), so L3 episodes start where Gymnasium's would."""
    from envs.halfcheetah.reference.mujoco_ref import make_gym_env

    gym_env = make_gym_env()
    for seed in (0, 1, 12345):
        observation, _ = gym_env.reset(seed=seed)
        assert np.array_equal(observation, MujocoCheetah().reset(seed))
    gym_env.close()


@CHEETAH.covers("env")
def test_vmapped_step_runs_batch_last_and_equals_the_single_env_step():
    """Under vmap the physics runs in the batch-last layout (env.physics, jax/layout.py); it must
    give each env exactly what the single-env step gives: bit-equal in float64, for a batched
    and an unbatched action, and under a vmap of a vmap."""
    rng = np.random.default_rng(7)
    batch = 6
    qpos = np.zeros((batch, 9))
    qpos[:, :3] = rng.uniform([-1, -0.25, -0.5], [1, 0.05, 0.5], (batch, 3))  # low: contacts
    qpos[:, list(PM.limit_dofs)] = rng.uniform(PM.limit_range[:, 0] - 0.2, PM.limit_range[:, 1] + 0.2, (batch, 6))
    qvel = rng.normal(0, 2, (batch, 9))
    actions = rng.uniform(-1, 1, (batch, 6))
    states = jax.vmap(lambda q, v: env.state_from_qpos_qvel(q, v, PARAMS))(qpos, qvel)
    one = [_env_step(env.state_from_qpos_qvel(qpos[i], qvel[i], PARAMS), actions[i]) for i in range(batch)]
    expected_obs = np.stack([np.asarray(o[0]) for o in one])
    forward = jax.jit(lambda q, v, c: dynamics.forward(PM, q, v, c).solution.iterations)
    iterations = [int(forward(qpos[i], qvel[i], actions[i])) for i in range(batch)]
    assert max(iterations) >= 2 and min(iterations) <= 1, f"want a batch with easy and harder solves: {iterations}"
    batched = jax.jit(jax.vmap(lambda s, a: env.step_no_reset(s, a, PARAMS)))(states, actions)
    assert np.array_equal(np.asarray(batched[0]), expected_obs)
    assert np.array_equal(np.asarray(batched[2]), np.stack([np.asarray(o[2]) for o in one]))
    same_action = jax.jit(jax.vmap(lambda s: env.step_no_reset(s, actions[0], PARAMS)[0]))(states)
    assert np.array_equal(np.asarray(same_action[0]), expected_obs[0])
    nested = jax.jit(jax.vmap(jax.vmap(lambda s, a: env.step_no_reset(s, a, PARAMS)[0])))(
        jax.tree_util.tree_map(lambda x: x.reshape((2, 3) + x.shape[1:]), states), actions.reshape(2, 3, 6))
    assert_close(np.asarray(nested).reshape(batch, -1), expected_obs, 1e-12, "nested vmap")


@CHEETAH.covers("solver")
def test_compacted_newton_iterations_equal_the_single_env_solve():
    """In a batch of 256 the envs still iterating once at most 64 do move to a 64-lane sub-batch
    (solver.py); each env's solve must still be exactly the single-env solve: bit-equal qacc,
    constraint forces and iteration counts in float64."""
    rng = np.random.default_rng(11)
    batch = 256
    assert solver.compaction_sizes((batch,)) == (64,)
    qpos = np.zeros((batch, 9))
    qpos[:, :3] = rng.uniform([-1, -0.3, -0.6], [1, 0.0, 0.6], (batch, 3))  # low: contacts
    qpos[:, list(PM.limit_dofs)] = rng.uniform(PM.limit_range[:, 0] - 0.2, PM.limit_range[:, 1] + 0.2, (batch, 6))
    qvel = rng.normal(0, 2, (batch, 9))
    ctrl = rng.uniform(-1, 1, (batch, 6))

    def solve(q, v, c, sub_batches=None):
        fwd = dynamics.forward(PM, q, v, c)
        result = solver.newton_solve(PM, fwd.M, fwd.qfrc_smooth, fwd.qacc_smooth, fwd.rows, sub_batches=sub_batches)
        return result.qacc, result.efc_force, result.iterations

    solve_jitted = jax.jit(solve)  # traced once for the batch, once for a single env
    batched = solve_jitted(qpos.T, qvel.T, ctrl.T)
    iterations = np.asarray(batched[2])
    # both phases must have had work: more than 64 envs iterate at first, and some iteration
    # k >= 2 is needed by between 1 and 64 envs (it runs in the sub-batch)
    assert np.sum(iterations >= 1) > 64, np.bincount(iterations)
    assert any(0 < np.sum(iterations >= k) <= 64 for k in range(2, iterations.max() + 1)), np.bincount(iterations)
    for i in range(batch):
        one = solve_jitted(qpos[i], qvel[i], ctrl[i])
        for name, ours, theirs in zip(("qacc", "efc_force", "iterations"), batched, one, strict=True):
            assert np.array_equal(np.asarray(ours)[..., i], np.asarray(theirs)), f"env {i}: {name}"
    whole_batch = jax.jit(lambda q, v, c: solve(q, v, c, sub_batches=()))(qpos.T, qvel.T, ctrl.T)
    assert all(np.array_equal(a, b) for a, b in zip(batched, whole_batch, strict=True))
