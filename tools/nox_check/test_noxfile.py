"""`nox -s tests` runs every test file that `./pants test ::` runs: each file that pytest collects
(pyproject.toml's `python_files`) lies in one of the noxfile's TEST_PATHS, and each path exists.

The noxfile is read with `ast`, since nox is not in the test resolve."""

import ast
import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# folders that hold no test of ours: venvs, caches, Node and Cargo outputs
NOT_OURS = {"node_modules", "target", "__pycache__", "bench-results"}


def _noxfile_constant(name: str):
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError(f"noxfile.py defines no {name}")


def _test_file_patterns() -> list[str]:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return pyproject["tool"]["pytest"]["ini_options"]["python_files"]


def _test_files() -> list[str]:
    patterns = _test_file_patterns()
    found = []
    for path in ROOT.rglob("*.py"):
        relative = path.relative_to(ROOT)
        if any(part.startswith(".") or part in NOT_OURS for part in relative.parts[:-1]):
            continue
        if any(fnmatch.fnmatch(path.name, pattern) for pattern in patterns):
            found.append(relative.as_posix())
    return sorted(found)


def _covered(test_file: str, paths: list[str]) -> bool:
    return any(test_file == path or test_file.startswith(path.rstrip("/") + "/") for path in paths)


def test_every_test_file_is_in_a_nox_path():
    paths = _noxfile_constant("TEST_PATHS")
    test_files = _test_files()
    # the files Pants gives this test: if the glob found none of a family, the check would pass vacuously
    assert any(f.startswith("envs/pong/tests/l1_") for f in test_files)
    assert "envs/test_gym_ids.py" in test_files
    missed = [f for f in test_files if not _covered(f, paths)]
    assert not missed, f"nox -s tests would not run {missed}: add them (or their folder) to TEST_PATHS in noxfile.py"


def test_every_nox_path_exists():
    for path in _noxfile_constant("TEST_PATHS"):
        assert (ROOT / path).exists(), f"noxfile.py's TEST_PATHS names {path}, which does not exist"


def test_coverage_rule_tells_folders_apart():
    assert _covered("envs/pong/tests/l1_x.py", ["envs/pong"])
    assert not _covered("envs/pongx/tests/l1_x.py", ["envs/pong"])
    assert _covered("envs/test_gym_ids.py", ["envs/test_gym_ids.py"])
    assert not _covered("envs/test_gym_ids.py", ["envs/pong", "shared"])
