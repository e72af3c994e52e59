"""The ./pants launcher stops with a message that says what to do when Python 3.9 is missing, when pip
fails, when a downloaded file's hash differs from the pins, or when its own install is unusable.

The pip tests run the real pip of a real CPython 3.9 venv (the launcher's own steps); the hash tests
download six (11 kB) from the package registry. Without a CPython 3.9 they fail rather than skip:
./pants cannot run at all without one, so a machine that runs these tests through it has one.
"""

import glob
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(".pants-tools") / "venv-2.17.1"


def _copy_launcher(tmp_path: Path, requirements: str | None = None) -> Path:
    (tmp_path / "3rdparty" / "pants").mkdir(parents=True)
    shutil.copy(ROOT / "pants", tmp_path / "pants")
    target = tmp_path / "3rdparty" / "pants" / "requirements.txt"
    if requirements is None:
        shutil.copy(ROOT / "3rdparty" / "pants" / "requirements.txt", target)
    else:
        target.write_text(requirements)
    return tmp_path / "pants"


TOOLS = ["dirname", "sha256sum", "cut", "cat", "mktemp", "rm", "mkdir", "grep", "env", "sleep", "uname"]
# what pip needs to reach the registry from this machine (an HTTPS proxy's CA, a mirror)
NETWORK_ENV = ["PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "HTTPS_PROXY", "https_proxy", "PIP_INDEX_URL"]


def _command(launcher: Path, *args: str, **env) -> dict:
    """subprocess arguments that run the launcher with a PATH of its shell tools and no Python at all,
    whatever this machine has."""
    bin_dir = launcher.parent / "bin"
    bin_dir.mkdir(exist_ok=True)
    for tool in TOOLS:
        if not (bin_dir / tool).exists():
            (bin_dir / tool).symlink_to(shutil.which(tool))
    base = {"PATH": str(bin_dir), "HOME": str(launcher.parent / "home"), "PYENV_ROOT": str(launcher.parent / "nopyenv")}
    return {"args": [shutil.which("bash"), str(launcher), *(args or ("--version",))], "env": {**base, **env},
            "text": True}


def _run(launcher: Path, *args: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run(**_command(launcher, *args, **env), capture_output=True, timeout=120)


def _real_python39() -> str:
    """The path of a real CPython 3.9 on this machine (the launcher's own search order), or the test fails."""
    home = os.environ.get("HOME", str(Path.home()))
    pyenv = os.environ.get("PYENV_ROOT", os.path.join(home, ".pyenv"))
    candidates = [os.environ.get("ENVPORT_PYTHON39"), shutil.which("python3.9"),
                  *sorted(glob.glob(os.path.join(pyenv, "versions", "3.9*", "bin", "python3.9"))),
                  "/usr/bin/python3.9", "/usr/local/bin/python3.9"]
    for candidate in filter(None, candidates):
        try:  # (a pyenv shim answers with the interpreter it runs, which works without pyenv's environment)
            out = subprocess.run([candidate, "-c", "import sys; print(sys.version_info[:2] == (3, 9), sys.executable)"],
                                 capture_output=True, text=True, timeout=30)
        except OSError:
            continue
        if out.returncode == 0 and out.stdout.startswith("True "):
            return out.stdout.split(" ", 1)[1].strip()
    pytest.fail("these tests run the launcher's real pip steps, which need a CPython 3.9 (./pants needs one too): "
                "none at $ENVPORT_PYTHON39, python3.9 on PATH, $PYENV_ROOT/versions/3.9*, /usr/bin or /usr/local/bin. "
                "Install one (pyenv install 3.9) or set ENVPORT_PYTHON39.")


@pytest.fixture(scope="module")
def python39() -> str:
    return _real_python39()


def _network_env() -> dict:
    return {name: os.environ[name] for name in NETWORK_ENV if name in os.environ}


def _pinned_line(name: str) -> str:
    lines = (ROOT / "3rdparty" / "pants" / "requirements.txt").read_text().splitlines()
    return next(line for line in lines if line.startswith(name + "=="))


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _fake_python39(tmp_path: Path) -> Path:
    """A python3.9 that passes the launcher's version check and, like Debian's without python3.9-venv, has
    no ensurepip and fails `-m venv`, leaving a venv folder without pip behind."""
    fake_bin = tmp_path / "fakebin"
    fake_bin.mkdir()
    script = fake_bin / "python3.9"
    script.write_text('#!/bin/sh\ncase "$2" in *ensurepip*) exit 1 ;; esac\n'
                      'if [ "$1" = -m ] && [ "$2" = venv ]; then\n'
                      '  echo "The virtual environment was not created successfully because ensurepip is not available." >&2\n'
                      '  mkdir -p "$3/bin"; exit 1\nfi\nexit 0\n')
    script.chmod(0o755)
    return fake_bin


def test_missing_python39_is_explained(tmp_path):
    result = _run(_copy_launcher(tmp_path))
    assert result.returncode == 1
    assert "needs CPython 3.9, and none was found" in result.stderr
    assert "ENVPORT_PYTHON39" in result.stderr
    assert not (tmp_path / VENV / ".installed").exists()


def test_a_python_that_is_not_39_is_not_taken(tmp_path):
    result = _run(_copy_launcher(tmp_path), ENVPORT_PYTHON39=sys.executable)  # this is 3.11
    assert result.returncode == 1 and "none was found" in result.stderr


def test_failed_install_is_explained_and_leaves_no_venv(tmp_path, python39):
    # the real pins, and a registry that refuses connections: pip (real, in the launcher's venv) installs nothing
    launcher = _copy_launcher(tmp_path)
    result = _run(launcher, ENVPORT_PYTHON39=python39, PIP_INDEX_URL=f"http://127.0.0.1:{_closed_port()}/simple/",
                  PIP_RETRIES="0")
    assert result.returncode == 1, result.stderr
    assert "pip could not install Pants 2.17.1" in result.stderr, result.stderr
    assert "also in .pants-tools/pip-install.log" in result.stderr
    assert "Check that the package registry is reachable" in result.stderr and "re-run ./pants" in result.stderr
    assert "sha256 differs" not in result.stderr
    log = (tmp_path / ".pants-tools" / "pip-install.log").read_text()
    assert "No matching distribution found for ansicolors==1.1.8" in log, log
    assert not (tmp_path / VENV).exists()  # no half-installed venv, hence no stamp


def test_a_platform_without_pants_wheels_is_named_instead_of_the_registry(tmp_path, python39):
    # pip's "No matching distribution found" reads the same for an unreachable registry and for a platform
    # PyPI has no Pants wheel for; on such a platform (a uname that says riscv64) the launcher names it.
    launcher = _copy_launcher(tmp_path, _pinned_line("pantsbuild.pants") + "\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "uname").write_text('#!/bin/sh\ncase "$1" in -s) echo Linux ;; -m) echo riscv64 ;; -sm) echo "Linux riscv64" ;; esac\n')
    (bin_dir / "uname").chmod(0o755)
    result = _run(launcher, ENVPORT_PYTHON39=python39, PIP_INDEX_URL=f"http://127.0.0.1:{_closed_port()}/simple/",
                  PIP_RETRIES="0")
    assert result.returncode == 1
    assert "PyPI has no Pants 2.17.1 wheel for this platform (Linux riscv64)" in result.stderr, result.stderr
    assert "Linux x86_64 and aarch64 (glibc) and on macOS x86_64 and arm64" in result.stderr
    assert "pip could not install" not in result.stderr
    assert not (tmp_path / VENV).exists()
    # the same failure on this machine's own platform (one with wheels) gives the registry advice
    (bin_dir / "uname").unlink()  # _command links the real one
    result = _run(launcher, ENVPORT_PYTHON39=python39, PIP_INDEX_URL=f"http://127.0.0.1:{_closed_port()}/simple/",
                  PIP_RETRIES="0")
    assert "No matching distribution found for pantsbuild.pants==2.17.1" in result.stderr, result.stderr
    assert "pip could not install Pants 2.17.1" in result.stderr and "no Pants" not in result.stderr


def test_hash_mismatch_is_explained_and_nothing_is_stamped(tmp_path, python39):
    # six's real files from the registry, pinned to a hash that none of them has: real pip refuses them
    wrong = hashlib.sha256(b"not six-1.17.0").hexdigest()
    launcher = _copy_launcher(tmp_path, f"six==1.17.0 --hash=sha256:{wrong}\n")
    result = _run(launcher, ENVPORT_PYTHON39=python39, **_network_env())
    assert result.returncode == 1, result.stderr
    assert "THESE PACKAGES DO NOT MATCH THE HASHES" in result.stderr, result.stderr  # pip's text, which the launcher greps
    assert f"Expected sha256 {wrong}" in result.stderr
    assert "a downloaded file's sha256 differs from 3rdparty/pants/requirements.txt" in result.stderr
    assert "Do not edit the hash by hand" in result.stderr
    assert "pip could not install" not in result.stderr
    assert not (tmp_path / VENV).exists()


def test_interrupted_install_is_redone_stamped_once_and_a_pex_failure_is_explained(tmp_path, python39):
    # six with its real pins installs; the venv then has no pex, so building pex.pex fails
    requirements = _pinned_line("six") + "\n"
    launcher = _copy_launcher(tmp_path, requirements)
    leftover = tmp_path / VENV / "lib" / "half-installed"  # what a Ctrl-C during pip leaves: a venv without a stamp
    leftover.parent.mkdir(parents=True)
    leftover.write_text("")
    first = _run(launcher, ENVPORT_PYTHON39=python39, **_network_env())
    assert first.returncode == 1, first.stderr
    assert "first use: installing Pants" in first.stderr
    assert "building pex.pex failed" in first.stderr and "re-run ./pants" in first.stderr, first.stderr
    assert not leftover.exists()
    assert (tmp_path / VENV / ".installed").read_text() == hashlib.sha256(requirements.encode()).hexdigest()
    assert not list((tmp_path / ".pants-tools").glob("*.pex"))
    # the stamp holds: the second run goes straight to pex.pex
    second = _run(launcher, ENVPORT_PYTHON39=python39, **_network_env())
    assert second.returncode == 1 and "building pex.pex failed" in second.stderr, second.stderr
    assert "first use" not in second.stderr


def test_pex_is_built_with_its_pinned_hash_when_the_ca_comes_as_pip_cert(tmp_path, python39):
    # pex (real, with its real pins) builds pex.pex with its own pip, run with --isolated, which ignores
    # PIP_CERT: behind an HTTPS proxy with its own CA, the launcher hands that CA on to pex
    launcher = _copy_launcher(tmp_path, _pinned_line("pex") + "\n")
    env = {k: v for k, v in _network_env().items() if k not in ("REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "PIP_CERT")}
    ca = os.environ.get("PIP_CERT") or os.environ.get("REQUESTS_CA_BUNDLE")
    if ca:
        env["PIP_CERT"] = ca
    result = _run(launcher, ENVPORT_PYTHON39=python39, **env)
    pex = tmp_path / ".pants-tools" / "pex-v2.1.137.pex"
    assert pex.exists(), result.stderr
    assert hashlib.sha256(pex.read_bytes()).hexdigest() == "4d9441e1672e636527ea430e8c59b0884d823dd8ce61ba3f8ecaa443a215087f"
    # (then it runs the venv's pants, which this venv has not)
    assert result.returncode == 127 and "venv-2.17.1/bin/pants" in result.stderr, result.stderr


def test_a_venv_whose_python_was_removed_is_bootstrapped_again(tmp_path):
    # a stamped venv made by a Python 3.9 that is gone since (pyenv uninstall): the launcher looks for
    # a Python 3.9 again, instead of failing later on a "bad interpreter"
    launcher = _copy_launcher(tmp_path)
    venv_bin = tmp_path / VENV / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").symlink_to(tmp_path / "removed" / "python3.9")
    stamp = hashlib.sha256((tmp_path / "3rdparty" / "pants" / "requirements.txt").read_bytes()).hexdigest()
    (tmp_path / VENV / ".installed").write_text(stamp)
    result = _run(launcher)
    assert result.returncode == 1
    assert "needs CPython 3.9, and none was found" in result.stderr, result.stderr


def test_a_python39_without_venv_module_is_explained(tmp_path):
    launcher = _copy_launcher(tmp_path)
    result = _run(launcher, ENVPORT_PYTHON39=str(_fake_python39(tmp_path) / "python3.9"))
    assert result.returncode == 1
    assert "could not create a venv with" in result.stderr and "apt-get install python3.9-venv" in result.stderr
    assert not (tmp_path / VENV / ".installed").exists()


def test_a_tools_dir_that_cannot_be_written_is_explained(tmp_path):
    launcher = _copy_launcher(tmp_path)
    (tmp_path / ".pants-tools").write_text("")  # not a directory (root could write to a read-only one)
    result = _run(launcher, ENVPORT_PYTHON39=str(_fake_python39(tmp_path) / "python3.9"))
    assert result.returncode == 1
    assert "cannot write to" in result.stderr and "re-run ./pants" in result.stderr, result.stderr


def test_launcher_is_executable():
    assert os.access(ROOT / "pants", os.X_OK)


def test_a_missing_requirements_file_is_explained(tmp_path):
    launcher = _copy_launcher(tmp_path)
    (tmp_path / "3rdparty" / "pants" / "requirements.txt").unlink()
    result = _run(launcher)
    assert result.returncode == 1
    assert "requirements.txt is missing" in result.stderr and "git checkout" in result.stderr


def test_a_python39_that_cannot_make_a_venv_is_passed_over_for_one_that_can(tmp_path, python39):
    # python3.9 on PATH without its venv module (Debian without python3.9-venv), pyenv's real one further on
    launcher = _copy_launcher(tmp_path)
    fake_bin = _fake_python39(tmp_path)
    pyenv_python = tmp_path / "pyenv" / "versions" / "3.9.99" / "bin" / "python3.9"
    pyenv_python.parent.mkdir(parents=True)
    pyenv_python.symlink_to(python39)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3.9").symlink_to(fake_bin / "python3.9")
    result = _run(launcher, PYENV_ROOT=str(tmp_path / "pyenv"), PIP_INDEX_URL=f"http://127.0.0.1:{_closed_port()}/simple/",
                  PIP_RETRIES="0")
    assert f"installing Pants 2.17.1 into {tmp_path / VENV} with {pyenv_python} ..." in result.stderr, result.stderr
    assert "pip could not install" in result.stderr  # it got as far as pip: the venv was made
    # with only the one that cannot, that one is taken, and making the venv says what to install
    shutil.rmtree(tmp_path / "pyenv")
    result = _run(launcher, PYENV_ROOT=str(tmp_path / "pyenv"))
    assert "apt-get install python3.9-venv" in result.stderr, result.stderr


def test_tags_asked_for_replace_the_default_and_exclusions_keep_it(tmp_path, python39):
    # a real pex.pex (as the pex test builds it), then a stand-in for the venv's pants that shows its PANTS_TAG
    launcher = _copy_launcher(tmp_path, _pinned_line("pex") + "\n")
    _run(launcher, ENVPORT_PYTHON39=python39, **_network_env())
    assert (tmp_path / ".pants-tools" / "pex-v2.1.137.pex").exists()
    stand_in = tmp_path / VENV / "bin" / "pants"
    stand_in.write_text('#!/bin/sh\necho "PANTS_TAG=${PANTS_TAG-unset}"\n')
    stand_in.chmod(0o755)

    def pants_tag(*args: str) -> str:
        result = _run(launcher, *args, ENVPORT_PYTHON39=python39)
        assert result.returncode == 0, result.stderr
        return result.stdout.strip()

    assert pants_tag("test", "::") == "PANTS_TAG=unset"
    assert pants_tag("--tag=slow", "test", "::") == "PANTS_TAG=[]"
    assert pants_tag("--tag", "slow", "test", "::") == "PANTS_TAG=[]"
    assert pants_tag("--tag=['slow', '-gpu']", "test", "::") == "PANTS_TAG=[]"
    assert pants_tag("--tag=-flaky", "test", "::") == "PANTS_TAG=unset"  # added to ["-slow"]: slow stays out
    assert pants_tag("--tag", "-flaky", "test", "::") == "PANTS_TAG=unset"
    assert pants_tag("test", "::", "--", "--tag=slow") == "PANTS_TAG=unset"  # pytest's, not Pants'


def test_two_first_uses_at_once_take_turns(tmp_path, python39):
    # two ./pants started together on a fresh clone: one installs, the other waits and then finds it done
    # (without the lock each deleted and reinstalled the other's venv)
    launcher = _copy_launcher(tmp_path, _pinned_line("pex") + "\n")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    command = _command(launcher, ENVPORT_PYTHON39=python39, TMPDIR=str(scratch), **_network_env())
    both = [subprocess.Popen(**command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    outcomes = [(p.wait(timeout=300), p.stderr.read()) for p in both]
    for process in both:
        process.stdout.close()
        process.stderr.close()
    installers = [err for _, err in outcomes if "first use: installing Pants" in err]
    waiters = [err for _, err in outcomes if "is installing Pants into" in err and "waiting for it" in err]
    assert len(installers) == 1 and len(waiters) == 1, outcomes
    assert "first use" not in waiters[0] and "building" not in waiters[0], waiters[0]
    pex = tmp_path / ".pants-tools" / "pex-v2.1.137.pex"
    assert hashlib.sha256(pex.read_bytes()).hexdigest() == "4d9441e1672e636527ea430e8c59b0884d823dd8ce61ba3f8ecaa443a215087f"
    # both went on to the venv's pants (which this venv has not), and the lock is gone
    assert [code for code, _ in outcomes] == [127, 127], outcomes
    assert not (tmp_path / ".pants-tools" / "bootstrap.lock").exists()
    # nothing left in TMPDIR (ensurepip's pip leaves its CA bundle there: the launcher's scratch folder takes it)
    assert list(scratch.iterdir()) == []


def _finished_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def test_a_lock_left_by_a_launcher_that_died_is_taken_over(tmp_path):
    launcher = _copy_launcher(tmp_path)
    lock = tmp_path / ".pants-tools" / "bootstrap.lock"
    lock.mkdir(parents=True)
    dead = _finished_pid()
    (lock / "pid").write_text(f"{dead}\n")
    result = _run(launcher)  # goes on to look for a Python 3.9, finds none
    assert f"taking over {lock}, left by a ./pants (pid {dead}) that is no longer running" in result.stderr, result.stderr
    assert "needs CPython 3.9, and none was found" in result.stderr
    assert not lock.exists()  # its own lock, released as it stopped


def test_a_lock_held_by_a_running_launcher_is_waited_for_then_explained(tmp_path):
    launcher = _copy_launcher(tmp_path)
    lock = tmp_path / ".pants-tools" / "bootstrap.lock"
    lock.mkdir(parents=True)
    (lock / "pid").write_text(f"{os.getpid()}\n")  # this test's process: running
    result = _run(launcher, ENVPORT_PANTS_LOCK_WAIT_S="2")
    assert result.returncode == 1
    assert f"another ./pants (pid {os.getpid()}) is installing Pants" in result.stderr, result.stderr
    assert f"waited 2 s for the ./pants (pid {os.getpid()}) that holds {lock}" in result.stderr
    assert f"remove {lock} and re-run ./pants" in result.stderr
    assert "none was found" not in result.stderr  # it did not go on
    assert (lock / "pid").read_text().strip() == str(os.getpid())  # not its lock: left alone


def test_ctrl_c_while_pex_builds_leaves_no_temporary_folder_lock_or_pex(tmp_path, python39):
    launcher = _copy_launcher(tmp_path, _pinned_line("pex") + "\n")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    command = _command(launcher, ENVPORT_PYTHON39=python39, TMPDIR=str(scratch), **_network_env())
    # its own process group, signalled as a terminal's Ctrl-C signals the foreground group
    process = subprocess.Popen(**command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    build_log = tmp_path / ".pants-tools" / "pex-build.log"
    deadline = time.monotonic() + 240
    while not build_log.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert build_log.exists(), "pex.pex's build never started"
    assert list(scratch.iterdir()), "no PEX_ROOT made in TMPDIR: the test would not test its removal"
    os.killpg(process.pid, signal.SIGINT)
    code = process.wait(timeout=60)
    stderr = process.stderr.read()
    process.stderr.close()
    assert code == 130, stderr
    assert list(scratch.iterdir()) == []
    assert not (tmp_path / ".pants-tools" / "bootstrap.lock").exists()
    assert not (tmp_path / ".pants-tools" / "pex-v2.1.137.pex").exists()
