"""The ./pants launcher stops with a message that says what to do when Python 3.9 is missing."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _copy_launcher(tmp_path: Path) -> Path:
    (tmp_path / "3rdparty" / "pants").mkdir(parents=True)
    shutil.copy(ROOT / "pants", tmp_path / "pants")
    shutil.copy(ROOT / "3rdparty" / "pants" / "requirements.txt", tmp_path / "3rdparty" / "pants" / "requirements.txt")
    return tmp_path / "pants"


TOOLS = ["dirname", "sha256sum", "cut", "cat", "mktemp", "rm", "mkdir", "grep", "env"]


def _run(launcher: Path, **env) -> subprocess.CompletedProcess:
    # a PATH with the launcher's shell tools and no Python at all, whatever this machine has
    bin_dir = launcher.parent / "bin"
    bin_dir.mkdir(exist_ok=True)
    for tool in TOOLS:
        (bin_dir / tool).symlink_to(shutil.which(tool))
    base = {"PATH": str(bin_dir), "HOME": str(launcher.parent / "home"), "PYENV_ROOT": str(launcher.parent / "nopyenv")}
    return subprocess.run([shutil.which("bash"), str(launcher), "--version"], capture_output=True, text=True, timeout=60,
                          env={**base, **env})


def test_missing_python39_is_explained(tmp_path):
    result = _run(_copy_launcher(tmp_path))
    assert result.returncode == 1
    assert "needs CPython 3.9, and none was found" in result.stderr
    assert "ENVPORT_PYTHON39" in result.stderr
    assert not (tmp_path / ".pants-tools" / "venv-2.17.1" / ".installed").exists()


def test_a_python_that_is_not_39_is_not_taken(tmp_path):
    result = _run(_copy_launcher(tmp_path), ENVPORT_PYTHON39=sys.executable)  # this is 3.11
    assert result.returncode == 1 and "none was found" in result.stderr


def test_launcher_is_executable():
    assert os.access(ROOT / "pants", os.X_OK)
