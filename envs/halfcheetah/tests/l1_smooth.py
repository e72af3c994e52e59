"""L1, smooth dynamics: kinematics, the mass matrix (CRB), bias forces (RNE) and passive forces,
each against MuJoCo C from the same random state, plus properties MuJoCo's numbers must have."""

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings

from envs.halfcheetah.jax import bias, inertia, kinematics
from envs.halfcheetah.jax.model import MJ_MAXIMP, MJ_MINIMP, MJ_MINVAL
from envs.halfcheetah.tests.harness import (
    CHEETAH,
    PM,
    assert_close,
    cheetah_states,
    mujoco_forward,
    mujoco_full_mass,
    ours_forward,
)

EXAMPLES = settings(max_examples=40, deadline=None)


@jax.jit
def _kinematics(qpos):
    kin = kinematics.forward_kinematics(PM, qpos)
    return {
        "xpos": kinematics.to_3d(kin.body_xz), "xmat": kinematics.rotation_matrix(kin.body_angle),
        "xipos": kinematics.to_3d(kin.com_xz),
        "geom_xpos": kinematics.to_3d(kin.capsule_xz), "geom_xmat": kinematics.rotation_matrix(kin.capsule_angle),
    }


def test_model_constants_match_mujocos_clamps():
    import mujoco

    assert (MJ_MINVAL, MJ_MINIMP, MJ_MAXIMP) == (mujoco.mjMINVAL, mujoco.mjMINIMP, mujoco.mjMAXIMP)


@CHEETAH.covers("kinematics")
@EXAMPLES
@given(cheetah_states())
def test_body_and_geom_frames_equal_mujoco(state):
    qpos, qvel, ctrl = state
    m, d = mujoco_forward(qpos, qvel, ctrl)
    ours = _kinematics(qpos)
    capsules = list(PM.capsule_geom)
    assert_close(ours["xpos"], d.xpos, 1e-12, "body xpos")
    assert_close(ours["xmat"].reshape(-1, 9), d.xmat, 1e-12, "body xmat")
    assert_close(ours["xipos"], d.xipos, 1e-12, "body com (xipos)")
    assert_close(ours["geom_xpos"], d.geom_xpos[capsules], 1e-12, "geom xpos")
    assert_close(ours["geom_xmat"].reshape(-1, 9), d.geom_xmat[capsules], 1e-12, "geom xmat")


@CHEETAH.covers("inertia")
@EXAMPLES
@given(cheetah_states())
def test_mass_matrix_is_spd_and_equals_mj_fullM(state):
    qpos, qvel, ctrl = state
    m, d = mujoco_forward(qpos, qvel, ctrl)
    ours = np.asarray(ours_forward(qpos, qvel, ctrl).M)
    assert np.array_equal(ours, ours.T), "M must be exactly symmetric"
    assert np.linalg.eigvalsh(ours).min() > 0, "M must be positive definite"
    assert_close(ours, mujoco_full_mass(m, d), 1e-9, "M")


@CHEETAH.covers("inertia")
def test_mass_matrix_of_a_free_torso_is_the_total_mass_on_the_slides():
    # Worked out by hand: the two slides move every body, so M[0,0] = M[1,1] = total mass, M[0,1] = 0.
    M = np.asarray(ours_forward(np.zeros(9), np.zeros(9), np.zeros(6)).M)
    total = PM.body_mass.sum()
    assert abs(M[0, 0] - total) < 1e-12 and abs(M[1, 1] - total) < 1e-12 and M[0, 1] == 0.0
    assert abs(total - 14.0) < 1e-9  # the xml's settotalmass


@CHEETAH.covers("bias")
@EXAMPLES
@given(cheetah_states())
def test_bias_forces_equal_qfrc_bias(state):
    qpos, qvel, ctrl = state
    m, d = mujoco_forward(qpos, qvel, ctrl)
    assert_close(ours_forward(qpos, qvel, ctrl).qfrc_bias, d.qfrc_bias, 1e-9, "qfrc_bias")


@CHEETAH.covers("bias")
@EXAMPLES
@given(cheetah_states())
def test_bias_force_bounds_and_quadratic_velocity_dependence(state):
    """At rest the bias is gravity alone: on the vertical slide exactly m_total g, and on each
    hinge at most (mass it carries) g (lever arm); the velocity part is quadratic in qvel."""
    qpos, qvel, ctrl = state
    at_rest = np.asarray(ours_forward(qpos, np.zeros(9), ctrl).qfrc_bias)
    assert abs(at_rest[1] - PM.body_mass.sum() * PM.gravity) < 1e-9 and abs(at_rest[0]) < 1e-9
    kin = jax.jit(lambda q: kinematics.forward_kinematics(PM, q))(qpos)
    for dof in range(2, 9):
        body = PM.dof_body[dof]
        carried = [b for b in range(1, PM.nbody) if body in _ancestors_and_self(b)]
        lever = max(np.linalg.norm(np.asarray(kin.com_xz[b] - kin.body_xz[body])) for b in carried)
        assert abs(at_rest[dof]) <= PM.body_mass[carried].sum() * PM.gravity * lever + 1e-9
    full = np.asarray(ours_forward(qpos, qvel, ctrl).qfrc_bias) - at_rest
    doubled = np.asarray(ours_forward(qpos, 2 * qvel, ctrl).qfrc_bias) - at_rest
    assert np.allclose(doubled, 4 * full, rtol=1e-9, atol=1e-9)


def _ancestors_and_self(body):
    chain = []
    while body > 0:
        chain.append(body)
        body = PM.body_parent[body]
    return chain


@CHEETAH.covers("passive")
@EXAMPLES
@given(cheetah_states())
def test_passive_forces_equal_qfrc_passive(state):
    qpos, qvel, ctrl = state
    m, d = mujoco_forward(qpos, qvel, ctrl)
    assert_close(ours_forward(qpos, qvel, ctrl).qfrc_passive, d.qfrc_passive, 1e-12, "qfrc_passive")


@CHEETAH.covers("inertia")
def test_cholesky_solve_inverts_the_mass_matrix():
    from envs.halfcheetah.jax.linalg import cholesky_solve

    M = np.asarray(ours_forward(np.r_[0, 0, 0.4, 0.3, -0.2, 0.1, 0.5, -0.6, 0.2], np.zeros(9), np.zeros(6)).M)
    b = np.arange(1.0, 10.0)
    assert_close(jax.jit(cholesky_solve)(jnp.asarray(M), jnp.asarray(b)), np.linalg.solve(M, b), 1e-11, "M^-1 b")


_ = (bias, inertia)  # the modules under test, reached through dynamics.forward
