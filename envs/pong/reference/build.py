"""Compile PufferLib's pong.h (from the verified sdist) with envport's driver into a shared library.

The library is cached under the envport cache, keyed by everything that goes into it: the sdist's
pinned hash, the driver and stub sources, the compiler's version and the flags. Flags are
PufferLib 3.0.0's own release flags (setup.py: -O2, -fwrapv; -flto is irrelevant to one file).

    python -m envs.pong.reference.build      # build (or find) the library and print its path
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
from pathlib import Path

from shared.cache import cache_dir, file_lock

from .sdist import PUFFERLIB_SHA256, ReferenceUnavailable, pong_header_source

HERE = Path(__file__).resolve().parent
DRIVER_SOURCE = HERE / "pong_vec.c"
RAYLIB_STUB = HERE / "raylib_stub" / "raylib.h"
CFLAGS = ["-O2", "-fwrapv", "-DPLATFORM_DESKTOP", "-shared", "-fPIC", "-std=gnu11"]


def _compiler() -> str:
    for name in ("cc", "gcc", "clang"):
        path = shutil.which(name)
        if path:
            return path
    raise ReferenceUnavailable(
        "no C compiler found (looked for cc, gcc, clang on PATH); the Pong reference is PufferLib's C "
        "code compiled on this machine. Install one, e.g. 'apt-get install gcc'."
    )


def _build_key(compiler: str) -> str:
    version = subprocess.run([compiler, "--version"], capture_output=True, text=True, check=False).stdout
    digest = hashlib.sha256()
    for part in (PUFFERLIB_SHA256.encode(), DRIVER_SOURCE.read_bytes(), RAYLIB_STUB.read_bytes(),
                 version.encode(), " ".join(CFLAGS).encode()):
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()[:16]


def build_library() -> Path:
    """Path to the compiled reference library, building it on first use."""
    compiler = _compiler()
    directory = cache_dir("pong")
    library = directory / f"libenvport_pong-{_build_key(compiler)}.so"
    if library.exists():
        return library
    with file_lock(directory / ".lock"):
        if library.exists():
            return library
        with tempfile.TemporaryDirectory() as scratch:
            scratch_path = Path(scratch)
            (scratch_path / "pong.h").write_bytes(pong_header_source())
            (scratch_path / "raylib.h").write_bytes(RAYLIB_STUB.read_bytes())
            (scratch_path / "pong_vec.c").write_bytes(DRIVER_SOURCE.read_bytes())
            output = scratch_path / library.name
            command = [compiler, *CFLAGS, "-I", scratch, str(scratch_path / "pong_vec.c"), "-o", str(output), "-lm"]
            result = subprocess.run(command, capture_output=True, text=True, check=False)
            if result.returncode != 0:
                raise ReferenceUnavailable(
                    f"compiling PufferLib's pong.h failed ({' '.join(command)}):\n{result.stderr}"
                )
            shutil.move(str(output), library)
    return library


if __name__ == "__main__":
    print(build_library())
