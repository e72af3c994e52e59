"""Fetch PufferLib 3.0.0's sdist from the package registry by name, and check it against a pinned hash.

`pip download pufferlib==3.0.0` cannot be used: preparing the sdist's metadata runs its setup.py,
which downloads raylib from GitHub. The file is located instead through the registry's simple
index (PEP 503/691) with the pypi-simple client, downloaded, and verified against PUFFERLIB_SHA256.
Nothing from the sdist is committed to this repository; only pong.h is extracted, into the cache.
"""

from __future__ import annotations

import hashlib
import os
import tarfile
from pathlib import Path

from shared.cache import cache_dir, file_lock

PUFFERLIB_VERSION = "3.0.0"
PUFFERLIB_SDIST = f"pufferlib-{PUFFERLIB_VERSION}.tar.gz"
PUFFERLIB_SHA256 = "7df3a3e3f5f894d78d2a1f5374097890aec01473183e748abefe4f3faa10eaa9"
PONG_HEADER_MEMBER = f"pufferlib-{PUFFERLIB_VERSION}/pufferlib/ocean/pong/pong.h"


class ReferenceUnavailable(RuntimeError):
    """The real reference could not be obtained; the message says why and what to do."""


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _download(destination: Path) -> None:
    try:
        from pypi_simple import PyPISimple
    except ImportError as error:  # pragma: no cover - the resolve always has it
        raise ReferenceUnavailable("pypi-simple is not installed; it is in 3rdparty/python/jax-requirements.txt") from error
    partial = destination.with_suffix(".part")
    try:
        with PyPISimple() as client:
            page = client.get_project_page("pufferlib")
            matches = [p for p in page.packages if p.filename == PUFFERLIB_SDIST]
            if not matches:
                raise ReferenceUnavailable(f"the registry's index for pufferlib lists no {PUFFERLIB_SDIST}")
            client.download_package(matches[0], path=partial, verify=True)
    except ReferenceUnavailable:
        raise
    except Exception as error:
        partial.unlink(missing_ok=True)
        raise ReferenceUnavailable(
            f"could not download {PUFFERLIB_SDIST} from the package registry ({type(error).__name__}: {error}). "
            "If this machine is offline, download the file elsewhere and set ENVPORT_PUFFERLIB_SDIST=/path/to/it; "
            "behind a TLS-intercepting proxy set REQUESTS_CA_BUNDLE to its CA bundle."
        ) from error
    partial.replace(destination)


def pufferlib_sdist() -> Path:
    """Path of the verified sdist: $ENVPORT_PUFFERLIB_SDIST if set, else a cached download."""
    override = os.environ.get("ENVPORT_PUFFERLIB_SDIST")
    if override:
        path = Path(override)
        if not path.is_file():
            raise ReferenceUnavailable(f"ENVPORT_PUFFERLIB_SDIST={override} is not a file")
        _verify(path)
        return path
    directory = cache_dir("pufferlib")
    path = directory / PUFFERLIB_SDIST
    with file_lock(directory / ".lock"):
        if not path.exists():
            _download(path)
        try:
            _verify(path)
        except ReferenceUnavailable:
            path.unlink(missing_ok=True)  # a corrupt cached copy is fetched again next time
            raise
    return path


def _verify(path: Path) -> None:
    actual = sha256_file(path)
    if actual != PUFFERLIB_SHA256:
        raise ReferenceUnavailable(
            f"{path} has sha256 {actual}, but pufferlib {PUFFERLIB_VERSION}'s sdist is pinned to {PUFFERLIB_SHA256}. "
            "The file is corrupt or not the published release; delete it and try again."
        )


def pong_header_source() -> bytes:
    """The bytes of pufferlib/ocean/pong/pong.h from the verified sdist."""
    with tarfile.open(pufferlib_sdist(), "r:gz") as archive:
        member = archive.extractfile(PONG_HEADER_MEMBER)
        if member is None:
            raise ReferenceUnavailable(f"{PONG_HEADER_MEMBER} is missing from {PUFFERLIB_SDIST}")
        return member.read()


def read_source(path: str) -> str:
    """A file of the verified sdist by its path inside the package (e.g. "pufferlib/ocean/pong/pong.h"):
    the agent driver puts it in the translation prompt (translation.toml's source_loader)."""
    member_name = f"pufferlib-{PUFFERLIB_VERSION}/{path}"
    with tarfile.open(pufferlib_sdist(), "r:gz") as archive:
        try:
            member = archive.extractfile(member_name)
        except KeyError:
            member = None
        if member is None:
            raise ReferenceUnavailable(f"{member_name} is not in {PUFFERLIB_SDIST}")
        return member.read().decode("utf-8")
