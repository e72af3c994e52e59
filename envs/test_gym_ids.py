"""The Gymnasium ids: `import envs.<env>` registers each env's ids and no other's without starting
JAX, every entry point
resolves, every spec survives `to_json`/`from_json`, and the root README's table of ids ("Gymnasium ids") lists exactly what is registered,
with the right "native make_vec" and autoreset columns.

Each import runs in a fresh interpreter, so that no env's registration is seen through another's."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENVS = ("pong", "halfcheetah", "emurust", "pokejax", "tcgjax")

_REGISTERED = """
import json, sys
import gymnasium
from gymnasium.envs.registration import EnvSpec, load_env_creator
from jax._src import xla_bridge
import envs.{env}
# registering starts nothing: JAX's backends are not up, so a process forked now may still run JAX
assert not xla_bridge.backends_are_initialized(), "import envs.{env} started JAX"
ids = {{}}
for env_id, spec in gymnasium.registry.items():
    if env_id.startswith("envport/"):
        # the spec as JSON and back (Minari stores datasets' env specs so): entry points must be strings
        assert EnvSpec.from_json(spec.to_json()) == spec, env_id
        for entry in (spec.entry_point, spec.vector_entry_point):
            if isinstance(entry, str):
                load_env_creator(entry)  # imports the module and finds the callable, builds nothing
        vector = spec.vector_entry_point
        if isinstance(vector, str):
            vector = load_env_creator(vector)
        # a native vector env: the autoreset mode its class declares (what it does unless told otherwise)
        ids[env_id] = None if vector is None else vector.metadata["autoreset_mode"].name
print(json.dumps(ids))
"""


def _registered_by(env: str) -> dict[str, bool]:
    done = subprocess.run([sys.executable, "-c", _REGISTERED.format(env=env)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, f"import envs.{env} failed:\n{done.stderr[-3000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def readme_table() -> dict[str, tuple[str, str | None]]:
    """{id: (env, the native vector env's autoreset mode or None)} from the root README's "Gymnasium
    ids" table, after checking that a row has an autoreset mode exactly when its make_vec is native."""
    text = (ROOT / "README.md").read_text()
    section = text.split("### Gymnasium ids", 1)[1].split("\n## ", 1)[0]
    rows = {}
    pattern = r"^\| `(envport/[^`]+)` \| (\w+) \| [^|]+ \| (yes|no)\b[^|]* \|(?: (NEXT_STEP|SAME_STEP)\b[^|]*)? \|$"
    for match in re.finditer(pattern, section, re.MULTILINE):
        env_id, env, native, autoreset = match.groups()
        assert env_id not in rows, f"{env_id} is listed twice"
        assert (native == "yes") == (autoreset is not None), f"{env_id}: an autoreset mode goes with a native make_vec"
        rows[env_id] = (env, autoreset)
    return rows


def test_the_readme_table_is_read():
    rows = readme_table()
    assert len(rows) >= 2 * len(ENVS)
    assert {env for env, _ in rows.values()} == set(ENVS)


@pytest.mark.parametrize("env", ENVS)
def test_importing_an_env_registers_its_ids_as_the_readme_lists_them(env):
    listed = {env_id: autoreset for env_id, (owner, autoreset) in readme_table().items() if owner == env}
    assert _registered_by(env) == listed


_MADE_WITHOUT_JAX = """
import gymnasium
from jax._src import xla_bridge
import envs.pong, envs.halfcheetah, envs.pokejax, envs.tcgjax
for env_id in ("envport/PongJax-v0", "envport/HalfCheetahJax-v0", "envport/PokeJax-v0", "envport/PokeShowdown-v0",
               "envport/TcgPocketJax-v0"):
    env = gymnasium.make(env_id)
    assert not xla_bridge.backends_are_initialized(), f"making {env_id} started JAX"
    env.close()
print("none started JAX")
"""


def test_making_an_env_that_runs_jax_starts_no_jax_before_its_first_reset():
    """Gymnasium's AsyncVectorEnv makes one env in the parent to read its spaces and then forks its
    workers: if that env had started JAX, no worker could run it (shared/jax_fork_guard.py refuses)."""
    done = subprocess.run([sys.executable, "-c", _MADE_WITHOUT_JAX], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and "none started JAX" in done.stdout, done.stderr[-3000:]


def test_an_id_that_names_its_module_needs_no_import():
    # the reference TCG env: pure Python, cheap to make and step
    script = """
import gymnasium
import numpy as np
env = gymnasium.make("envs.tcgjax:envport/TcgPocketReference-v0")
obs, info = env.reset(seed=3)
action = int(np.flatnonzero(info["action_mask"])[0])
obs, reward, terminated, truncated, info = env.step(action)
print(obs.shape, env.action_space)
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("(715,) Discrete(111)")


_MASK_PROTOCOL = """
import gymnasium
import numpy as np
import envs.{env}
env = gymnasium.make("{env_id}")
env.action_space.seed(5)
obs, info = env.reset(seed=5)
for step in range(5000):
    mask = info["action_mask"]
    assert mask.dtype == bool and mask.shape == (env.action_space.n,), (mask.dtype, mask.shape)
    # Gymnasium's Discrete.sample wants an int8 mask, as the README's Conventions say
    action = env.action_space.sample(mask=mask.astype(np.int8))
    assert mask[action], (action, mask)
    obs, reward, terminated, truncated, info = env.step(action)
    if terminated:
        break
assert terminated, "no episode end in 5,000 steps"
assert not info["action_mask"].any(), "a finished game has no legal action"
env.close()
print("ok", step)
"""


@pytest.mark.parametrize("env, env_id", [("tcgjax", "envport/TcgPocketReference-v0"),
                                         ("pokejax", "envport/PokeShowdown-v0")])
def test_a_masked_envs_masks_are_bool_sample_through_int8_and_end_all_false(env, env_id):
    """A whole episode of the reference backends (the README's Conventions); each JAX backend's L2
    tests require its masks to be the reference's, dtype included."""
    script = _MASK_PROTOCOL.format(env=env, env_id=env_id)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1].startswith("ok ")
