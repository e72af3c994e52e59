"""The env compiled with whole while loops as one function (shared/xla_cpu.py, the XLA setting the
benchmark also measures) is the same physics: in a fresh process with that setting, one env step
from each of MuJoCo C's states, inside a `lax.scan` (so that the loop is hoisted, as in the
benchmark's rollouts), lands within L3's 1e-10 of MuJoCo in float64. The setting only changes how
XLA emits the code, so the only expected difference from the default build is rounding (3e-17
after one step, measured)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np

from envs.halfcheetah.jax import env as _child_imports_env  # noqa: F401 - for Pants: the child imports it
from envs.halfcheetah.reference.mujoco_ref import MujocoCheetah
from envs.halfcheetah.tests.harness import assert_close
from shared.xla_cpu import environ_with_whole_loops

REPO = Path(__file__).resolve().parents[3]
EPISODES, STEPS = 2, 150

CHILD = textwrap.dedent("""
    import json, sys
    import jax
    jax.config.update("jax_enable_x64", True)
    import numpy as np
    from envs.halfcheetah.jax import env
    params = env.EnvParams(dtype="float64")
    data = np.load(sys.argv[1])

    def one(q, v, a):
        obs, _, _, _, _ = env.step_no_reset(env.state_from_qpos_qvel(q, v, params), a, params)
        return obs

    batched = jax.vmap(one)  # a batch of one, as the benchmark's batch-1 rollout

    def resynced(qpos, qvel, actions):
        return jax.lax.scan(lambda c, x: (c, batched(*x)), 0, (qpos, qvel, actions))[1]

    args = [data[k][:, None] for k in ("qpos", "qvel", "actions")]
    compiled = jax.jit(resynced).lower(*args).compile()
    obs = np.asarray(compiled(*args))[:, 0]
    np.save(sys.argv[2], obs)
    print(json.dumps({"small_calls": compiled.as_text().count("xla_cpu_small_call")}))
""")


def _mujoco_states():
    cheetah = MujocoCheetah()
    qpos, qvel, actions, obs = [], [], [], []
    for episode in range(EPISODES):
        cheetah.reset(100 + episode)
        rng = np.random.default_rng(100 + episode)
        for _ in range(STEPS):
            action = rng.uniform(-1.0, 1.0, 6)
            qpos.append(np.array(cheetah.qpos))
            qvel.append(np.array(cheetah.qvel))
            actions.append(action)
            obs.append(cheetah.step(action)[0])
    return {"qpos": np.array(qpos), "qvel": np.array(qvel), "actions": np.array(actions)}, np.array(obs)


def test_whole_loop_build_steps_within_1e10_of_mujoco():
    inputs, expected = _mujoco_states()
    with tempfile.TemporaryDirectory() as folder:
        inputs_path, out_path = Path(folder) / "in.npz", Path(folder) / "out.npy"
        np.savez(inputs_path, **inputs)
        environ = environ_with_whole_loops()
        environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), environ.get("PYTHONPATH")]))
        done = subprocess.run([sys.executable, "-c", CHILD, str(inputs_path), str(out_path)], env=environ,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        report = json.loads(done.stdout.strip().splitlines()[-1])
        ours = np.load(out_path)
    assert report["small_calls"] >= 1, "the setting did not compile any loop as one function: nothing was tested"
    assert_close(ours, expected, 1e-10, "whole-loop build vs MuJoCo C, one step from each state")
