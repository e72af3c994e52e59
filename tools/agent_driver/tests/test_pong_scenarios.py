"""The driver on a copy of the real Pong env, with the scripted stand-in agent: a first translation
with a planted bug (the spin a moving paddle gives the ball has the wrong sign), the report of the
level that catches it, and the fix on the second round.

To keep the tier fast each scenario narrows the levels in its copy's translation.toml: L3 is the
real 100-episode bit-exact comparison at frameskip 8. In the L3 scenario L1 is narrowed to the
paddle tests, so that the bug gets past L1 and the L3 path (divergence report, component, pinned
regression test) is exercised as it would be for a bug that L1 has no test for.
"""

import json
import os
import subprocess
import sys

# repo_copies sits beside these tests (pytest puts this folder on sys.path); BUILD names it as :helpers
from repo_copies import (
    install_agent,  # pants: no-infer-dep
    pong_repo,  # pants: no-infer-dep
    run_driver,  # pants: no-infer-dep
    write_scenario,  # pants: no-infer-dep
)

ENV_PY = "envs/pong/jax/env.py"
CORRECT = "spun_vy = ball_vy + params.ball_speed_y_increment * paddle_dir"
PLANTED = "spun_vy = ball_vy - params.ball_speed_y_increment * paddle_dir"
L2 = ["envs/pong/tests/l2_interactions.py::test_point_then_serve_then_observation"]
L3 = ["envs/pong/tests/l3_rollouts.py::test_l3_bit_exact_100_episodes[8]"]
TRANSLATE_EXPECT = ["# Translate pong / pong from its reference into JAX", "pong.h", "void c_step(Pong* env)",
                    "- `envs/pong/jax/env.py`", "`EnvState` pytree", "- `bounce`",
                    "`reset_from_seed`", "`seed_serve_bits`"]


def _rounds(repair_expect):
    return [
        {"expect": TRANSLATE_EXPECT, "edits": [{"path": ENV_PY, "old": CORRECT, "new": PLANTED}], "cost_usd": 0.4},
        {"expect": repair_expect, "edits": [{"path": ENV_PY, "old": PLANTED, "new": CORRECT}], "cost_usd": 0.3},
    ]


def _check_converged(root, result):
    assert result.returncode == 0, result.stdout + result.stderr
    assert "success: every level passed after 2 agent call(s)" in result.stdout
    lock = json.loads((root / "envs/pong/translation.lock.json").read_text())
    assert lock["iterations"]["agent_calls"] == 2
    assert lock["reference"]["package"] == "pufferlib" and lock["reference"]["version"] == "3.0.0"
    assert list(lock["reference"]["source_files"]) == ["pufferlib/ocean/pong/pong.h"]
    assert sorted(lock["generated"]) == ["envs/pong/jax/env.py", "envs/pong/jax/glibc_random.py"]
    assert lock["cost_usd"] == 0.7
    return lock


def test_l1_catches_the_bug_and_names_the_component(tmp_path):
    root = pong_repo(tmp_path / "repo", {"l1": ["envs/pong/tests/l1_components.py"], "l2": L2, "l3": L3})
    install_agent(root)
    # bounce is named first (its tests come first); hypothesis's observation test, which steps random
    # states with a moving paddle, sometimes meets the bug too and then is named after it
    scenario = write_scenario(tmp_path, _rounds(["# Repair pong / pong: L1 fails", "[pong/bounce]",
                                                 "The failing component: **bounce"]))
    result = run_driver(root, scenario, "translate", "envs/pong")
    lock = _check_converged(root, result)
    assert "L1 failed" in result.stdout and "component: bounce" in result.stdout
    assert lock["iterations"]["l1"] == {"runs": 2, "failed": 1}
    assert lock["iterations"]["l3"] == {"runs": 1, "failed": 0}
    assert lock["regression_tests"] == []
    assert (root / ENV_PY).read_text().count(CORRECT) == 1


def test_l3_divergence_is_fed_back_and_pinned_as_a_regression_test(tmp_path):
    paddle_only = ["envs/pong/tests/l1_components.py::test_paddle_spec",
                   "envs/pong/tests/l1_components.py::test_paddle_moves_and_clamps_like_c"]
    root = pong_repo(tmp_path / "repo", {"l1": paddle_only, "l2": L2, "l3": L3})
    install_agent(root)
    scenario = write_scenario(tmp_path, _rounds([
        "# Repair pong / pong: L3 fails", "The failing component: **bounce, ball**",
        "L3 divergence in pong", "first internal field to diverge: state.ball_vy", "replay("]))
    result = run_driver(root, scenario, "translate", "envs/pong")
    lock = _check_converged(root, result)
    assert "L3 failed" in result.stdout and "component: bounce, ball" in result.stdout
    assert lock["iterations"]["l1"] == {"runs": 2, "failed": 0}
    assert lock["iterations"]["l3"] == {"runs": 2, "failed": 1}

    # the fixed divergence is now a test in the env's tests/, named for the L3 target (l3_*)
    assert len(lock["regression_tests"]) == 1
    pinned = root / lock["regression_tests"][0]
    assert pinned.parent == root / "envs/pong/tests" and pinned.name.startswith("l3_regression_seed")
    text = pinned.read_text()
    assert "envs.pong.backends:c_backend_frameskip8" in text and "Component: bounce, ball" in text

    def run_pinned():
        env = dict(os.environ, PYTHONPATH=str(root))
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(pinned)],
                              cwd=root, env=env, capture_output=True, text=True, timeout=600)

    assert run_pinned().returncode == 0
    # it fails when the bug comes back, and says so
    env_py = root / ENV_PY
    env_py.write_text(env_py.read_text().replace(CORRECT, PLANTED))
    again = run_pinned()
    assert again.returncode == 1 and "pinned L3 regression is back" in again.stdout
