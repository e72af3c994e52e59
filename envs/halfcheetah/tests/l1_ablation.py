"""The paper's ablation as a test: a planted Coriolis sign error (the velocity-product term of
RNE flipped) is caught by L1 with the component named, while an L3-style comparison of whole
steps only says which step and which observation entry went wrong."""

import jax
import numpy as np
import pytest

from envs.halfcheetah.jax import bias, dynamics, env, spatial
from envs.halfcheetah.reference.mujoco_ref import MujocoCheetah
from envs.halfcheetah.tests.harness import CHEETAH, PM, assert_close, mujoco_forward
from shared.verification.components import ComponentFailure

STATE = (np.r_[0.2, -0.1, 0.3, 0.4, -0.3, 0.2, -0.5, 0.6, -0.2], np.r_[1.0, -0.5, 2.0, 3.0, -4.0, 2.5, -3.0, 4.0, -1.5])


@pytest.fixture
def coriolis_sign_error(monkeypatch):
    monkeypatch.setattr(bias, "cross_motion", lambda a, b: -spatial.cross_motion(a, b))


def test_l1_names_the_bias_module(coriolis_sign_error):
    @CHEETAH.covers("bias")
    def l1_bias_check():
        qpos, qvel = STATE
        m, d = mujoco_forward(qpos, qvel, np.zeros(6))
        ours = jax.jit(lambda q, v: dynamics.forward(PM, q, v, np.zeros(6)).qfrc_bias)(qpos, qvel)
        assert_close(ours, d.qfrc_bias, 1e-9, "qfrc_bias")

    with pytest.raises(ComponentFailure) as failure:
        l1_bias_check()
    assert failure.value.component == "bias" and "[halfcheetah/bias]" in str(failure.value)


def test_l3_alone_only_says_which_step_diverged(coriolis_sign_error):
    params = env.EnvParams(dtype="float64")
    step = jax.jit(lambda s, a: env.step_no_reset(s, a, params)[:2])
    cheetah = MujocoCheetah()
    cheetah.reset(0)
    state = env.state_from_qpos_qvel(cheetah.qpos, cheetah.qvel, params)
    actions = np.random.default_rng(0).uniform(-1, 1, (50, 6))
    for t, action in enumerate(actions):  # noqa: B007 - t is read after the break
        reference, _ = cheetah.step(action)
        obs, state = step(state, action)
        if np.max(np.abs(np.asarray(obs) - reference)) > 1e-10:
            entry = int(np.argmax(np.abs(np.asarray(obs) - reference)))
            break
    else:
        pytest.fail("the planted bug went unnoticed by the rollout comparison")
    # all an L3 report can say: the step and the observation entry; no module of the physics
    assert t < 5 and 0 <= entry < 17
