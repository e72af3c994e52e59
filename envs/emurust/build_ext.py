"""Build the Rust emulator (envs/emurust/rust) into the Python extension module `emurust_core`.

    from envs.emurust.build_ext import load_core
    core = load_core()                   # builds on first use, then imports the cached library

    python -m envs.emurust.build_ext     # build (or find) the library and print its path

The library is cached as `cache_dir("emurust")/emurust_core-<key>.so` (an abi3 extension, one file
for every CPython >= 3.9), keyed by everything that goes into it: the crate's Cargo.toml, Cargo.lock,
pyproject.toml and build.rs (those present), every file under src/, `rustc -V`, maturin's version
and the build flags. It is built with maturin from PyPI (`maturin build --release --features python`)
from a copy of those files at a fixed place in the cache (cargo writes nothing into the source tree,
and every checkout or Pants sandbox has the same path), with CARGO_TARGET_DIR in the cache, so a
rebuild after an edit is incremental; the .so is taken out of the wheel. A file lock makes parallel
test processes build it once.

Needs: cargo and rustc (rustup or Debian's `cargo`; looked for on PATH, then in $CARGO_HOME/bin
and ~/.cargo/bin, so a Pants test sandbox, which passes HOME but not PATH, finds rustup's), and the
`maturin` package (in the jax resolve).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path
from types import ModuleType

from shared.cache import cache_dir, file_lock

HERE = Path(__file__).resolve().parent
CRATE_DIR = HERE / "rust"
MODULE_NAME = "emurust_core"
BUILD_FLAGS = ["--release", "--features", "python"]
# Files of the crate, besides src/**, that go into the key (and into the Pants sandbox).
CRATE_FILES = ("Cargo.toml", "Cargo.lock", "pyproject.toml", "build.rs")
ERROR_TAIL_LINES = 60

_RUST_HELP = "install Rust: https://rustup.rs or apt-get install cargo"
_loaded: dict[Path, ModuleType] = {}


class BuildError(RuntimeError):
    """emurust_core could not be built: a tool is missing or the crate does not compile."""


# -- tools ------------------------------------------------------------------------------------------


def _cargo_bin_dirs() -> list[Path]:
    dirs = []
    if os.environ.get("CARGO_HOME"):
        dirs.append(Path(os.environ["CARGO_HOME"]) / "bin")
    dirs.append(Path(os.path.expanduser("~")) / ".cargo" / "bin")
    return dirs


def find_tool(name: str) -> str | None:
    """`name` (cargo, rustc) on PATH, else in $CARGO_HOME/bin or ~/.cargo/bin (rustup's proxies)."""
    found = shutil.which(name)
    if found:
        return found
    for directory in _cargo_bin_dirs():
        candidate = directory / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def find_maturin() -> str:
    """The maturin executable of the installed `maturin` package.

    The wheel installs a binary script, not Python code. Looked for, in order: $ENVPORT_MATURIN;
    what `python -m maturin` would run (maturin.__main__.get_maturin_path: the scripts directories of
    every sysconfig scheme); `maturin` next to sys.executable (a venv's bin/, where Pants' pytest
    venv puts it); the script listed in the installed distribution's RECORD; PATH.
    """
    override = os.environ.get("ENVPORT_MATURIN")
    if override:
        if not os.access(override, os.X_OK):
            raise BuildError(f"ENVPORT_MATURIN={override} is not an executable file")
        return override
    candidates: list[Path] = []
    try:
        from maturin.__main__ import get_maturin_path
    except ImportError:
        get_maturin_path = None
    if get_maturin_path is not None:
        found = get_maturin_path()
        if found is not None:
            candidates.append(Path(found))
    candidates.append(Path(sys.executable).parent / "maturin")
    scripts = sysconfig.get_path("scripts")
    if scripts:
        candidates.append(Path(scripts) / "maturin")
    try:
        for entry in importlib.metadata.distribution("maturin").files or ():
            if entry.name == "maturin" and "bin" in entry.parts:
                candidates.append(Path(entry.locate()))
    except importlib.metadata.PackageNotFoundError:
        pass
    on_path = shutil.which("maturin")
    if on_path:
        candidates.append(Path(on_path))
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    raise BuildError(
        "maturin not found: emurust_core is built with maturin from PyPI (maturin==1.16.0, in "
        "3rdparty/python/jax-requirements.txt). Install it (pip install maturin==1.16.0) or set "
        f"ENVPORT_MATURIN to its executable. Looked at: {[str(c) for c in candidates] or 'nothing'}"
    )


def _maturin_version() -> str:
    try:
        return importlib.metadata.version("maturin")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _interpreter() -> str:
    """The interpreter maturin is told about. The extension is abi3, so any CPython >= 3.9 gives the
    same library; resolving the venv's symlink gives the base interpreter, so that the dev venv and
    Pants' test venvs pass cargo the same PYO3_PYTHON and do not rebuild pyo3 for each other."""
    return os.path.realpath(sys.executable)


def _tool_env(cargo: str) -> dict[str, str]:
    """The environment for maturin: cargo's directory first on PATH (maturin runs `cargo`)."""
    env = dict(os.environ)
    path = env.get("PATH") or os.defpath
    env["PATH"] = os.pathsep.join([str(Path(cargo).parent), path])
    env["CARGO_TARGET_DIR"] = str(cache_dir("emurust", "target"))
    env.setdefault("CARGO_TERM_COLOR", "never")
    return env


# -- key and build ----------------------------------------------------------------------------------


def _crate_inputs(crate_dir: Path) -> list[Path]:
    if not (crate_dir / "Cargo.toml").is_file():
        raise BuildError(f"no Cargo.toml in {crate_dir}: is the emurust crate there?")
    files = [crate_dir / name for name in CRATE_FILES if (crate_dir / name).is_file()]
    files += sorted(p for p in (crate_dir / "src").rglob("*") if p.is_file())
    return files


def build_key(crate_dir: Path, rustc_version: str) -> str:
    """sha256 over the crate's inputs (relative paths and contents), rustc, maturin and the flags."""
    digest = hashlib.sha256()

    def add(label: str, data: bytes) -> None:
        digest.update(hashlib.sha256(label.encode() + b"\0" + data).digest())

    for path in _crate_inputs(crate_dir):
        add(path.relative_to(crate_dir).as_posix(), path.read_bytes())
    add("rustc", rustc_version.encode())
    add("maturin", _maturin_version().encode())
    add("flags", " ".join(BUILD_FLAGS).encode())
    return digest.hexdigest()[:16]


def _rustc_version(rustc: str, env: dict[str, str]) -> str:
    result = subprocess.run([rustc, "-V"], capture_output=True, text=True, env=env, check=False)
    if result.returncode != 0:
        raise BuildError(f"`{rustc} -V` failed ({_RUST_HELP}):\n{result.stderr.strip()}")
    return result.stdout.strip()


def _tail(text: str, lines: int = ERROR_TAIL_LINES) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def _extract_library(wheel: Path, destination: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        members = [
            name for name in archive.namelist()
            if Path(name).name.startswith(MODULE_NAME + ".") and name.endswith(".so")
        ]
        if len(members) != 1:
            raise BuildError(f"expected one {MODULE_NAME}*.so in {wheel.name}, found {members or 'none'}")
        partial = destination.with_name(destination.name + ".partial")
        with archive.open(members[0]) as source, open(partial, "wb") as target:
            shutil.copyfileobj(source, target)
        os.chmod(partial, 0o755)
        os.replace(partial, destination)


def _stage(crate_dir: Path, staging: Path) -> None:
    """Copy the crate's inputs to a fixed place: cargo then writes nothing into the source tree (not
    even a Cargo.lock), and the path it fingerprints is the same for every checkout and sandbox."""
    if staging.exists():
        shutil.rmtree(staging)
    for path in _crate_inputs(crate_dir):
        target = staging / path.relative_to(crate_dir)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)


def build(crate_dir: Path = CRATE_DIR, *, quiet: bool = False) -> Path:
    """Path to the compiled `emurust_core` library of `crate_dir`, building it on first use."""
    crate_dir = Path(crate_dir).resolve()
    cargo, rustc = find_tool("cargo"), find_tool("rustc")
    if cargo is None or rustc is None:
        missing = " and ".join(name for name, path in (("cargo", cargo), ("rustc", rustc)) if path is None)
        raise BuildError(
            f"{missing} not found (looked on PATH and in {', '.join(map(str, _cargo_bin_dirs()))}); "
            f"emurust_core is compiled from Rust on this machine: {_RUST_HELP}"
        )
    env = _tool_env(cargo)
    key = build_key(crate_dir, _rustc_version(rustc, env))
    directory = cache_dir("emurust")
    library = directory / f"{MODULE_NAME}-{key}.so"
    if library.exists():
        return library
    maturin = find_maturin()
    with file_lock(directory / ".lock"):
        if library.exists():
            return library
        staging = directory / "crate"
        _stage(crate_dir, staging)
        with tempfile.TemporaryDirectory(prefix="wheel-", dir=directory) as scratch:
            command = [
                maturin, "build", *BUILD_FLAGS,
                "--interpreter", _interpreter(),
                "--manifest-path", str(staging / "Cargo.toml"),
                "--out", scratch,
            ]
            if not quiet:
                print(f"building {MODULE_NAME} from {crate_dir} (first use of this source; "
                      "a cold release build takes a few minutes) ...", file=sys.stderr, flush=True)
            result = subprocess.run(
                command, cwd=staging, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                text=True, check=False,
            )
            log = directory / f"build-{key}.log"
            log.write_text(f"$ {' '.join(command)}\n{result.stdout}")
            if result.returncode != 0:
                raise BuildError(
                    f"building {MODULE_NAME} failed (exit {result.returncode}): {' '.join(command)}\n"
                    f"full log: {log}\nlast {ERROR_TAIL_LINES} lines:\n{_tail(result.stdout)}"
                )
            wheels = sorted(Path(scratch).glob("*.whl"))
            if len(wheels) != 1:
                raise BuildError(f"maturin wrote {len(wheels)} wheels into {scratch}; log: {log}")
            _extract_library(wheels[0], library)
    return library


def run_unit_tests(crate_dir: Path = CRATE_DIR) -> subprocess.CompletedProcess:
    """`cargo test --release --lib` on a staged copy of the crate (the Rust unit tests of every
    module); returns the finished process with its combined output. The tests that run test ROMs
    find them through `EMURUST_ROMS` and `EMURUST_SM83` (the staged copy is not beside `data/`)."""
    crate_dir = Path(crate_dir).resolve()
    cargo = find_tool("cargo")
    if cargo is None:
        raise BuildError(f"cargo not found; the emurust unit tests are Rust tests: {_RUST_HELP}")
    env = _tool_env(cargo)
    env["EMURUST_ROMS"] = str(crate_dir.parent / "data" / "roms")
    env["EMURUST_SM83"] = str(crate_dir.parent / "data" / "sm83" / "v1")
    directory = cache_dir("emurust")
    with file_lock(directory / ".test-lock"):
        staging = directory / "crate-test"
        _stage(crate_dir, staging)
        return subprocess.run(
            [cargo, "test", "--release", "--lib", "--manifest-path", str(staging / "Cargo.toml")],
            cwd=staging, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False,
        )


def load_library(library: Path) -> ModuleType:
    """Import the extension at `library` as the module `emurust_core`."""
    library = Path(library)
    if library in _loaded:
        return _loaded[library]
    loader = importlib.machinery.ExtensionFileLoader(MODULE_NAME, str(library))
    spec = importlib.util.spec_from_file_location(MODULE_NAME, library, loader=loader)
    if spec is None:
        raise BuildError(f"cannot import {library} as {MODULE_NAME}")
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    sys.modules[MODULE_NAME] = module
    _loaded[library] = module
    return module


# Per process, crate folder -> module: the build key hashes every source and asks rustc and maturin
# for their versions, which is not worth repeating for each emulator a process creates.
_cores: dict[Path, ModuleType] = {}


def load_core(crate_dir: Path = CRATE_DIR) -> ModuleType:
    """The imported `emurust_core` extension module, built on first use (once per process)."""
    crate_dir = Path(crate_dir).resolve()
    if crate_dir not in _cores:
        _cores[crate_dir] = load_library(build(crate_dir))
    return _cores[crate_dir]


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--crate-dir", type=Path, default=CRATE_DIR, help="the Rust crate (default: %(default)s)")
    args = parser.parse_args()
    try:
        print(build(args.crate_dir))
    except BuildError as error:
        sys.exit(f"error: {error}")
