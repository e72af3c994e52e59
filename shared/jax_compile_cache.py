"""JAX's persistent compilation cache for the test tiers.

Most of the default test tier's time is XLA compiling the engines' step functions, and several
test processes (one per Pants target) compile the same programs. With the cache, the first process
to compile a program stores it and the others load it: in the same run, and in later runs after a
change elsewhere.

Why it cannot change a result: JAX keys an entry on the whole compiled program (HLO), the compile
options, XLA_FLAGS and the jax/jaxlib versions, so a hit is the program the test would have
compiled. Entries are compressed; one that cannot be read (caught half written by a parallel
process, say) is a warning and a fresh compile. The benches never use it: their compile-time
columns must be compile times.

The cache lives in `shared.cache.cache_dir("jax-compile")` and is trimmed to `MAX_BYTES` (oldest
first) when a test session starts. `ENVPORT_JAX_CACHE=0` turns it off.
"""

from __future__ import annotations

from pathlib import Path
from typing import MutableMapping

from shared.cache import cache_dir, file_lock

MAX_BYTES = 2 << 30
# JAX caches only programs that took at least this long to compile (its default is 1 s); the
# small ones load no faster than they compile.
MIN_COMPILE_SECONDS = "0.5"
OFF = "ENVPORT_JAX_CACHE"


def enable_for_tests(environ: MutableMapping[str, str]) -> Path | None:
    """Points JAX (this process and its children, through the environment) at the cache, unless
    turned off or already pointed elsewhere. Must run before jax is imported: JAX reads these
    variables when it starts. Returns the folder, or None when off."""
    if environ.get(OFF, "1") == "0":
        return None
    if environ.get("JAX_COMPILATION_CACHE_DIR"):
        return Path(environ["JAX_COMPILATION_CACHE_DIR"])
    folder = cache_dir("jax-compile", environ=environ)
    trim(folder, MAX_BYTES)
    environ["JAX_COMPILATION_CACHE_DIR"] = str(folder)
    environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", MIN_COMPILE_SECONDS)
    return folder


def trim(folder: Path, max_bytes: int) -> int:
    """Deletes the least recently written entries until the folder holds at most `max_bytes`;
    returns how many it deleted. Under a lock, so parallel sessions do not both trim."""
    with file_lock(folder.parent / "jax-compile.lock"):
        entries = []
        for path in folder.iterdir():
            try:
                stat = path.stat()
            except FileNotFoundError:
                continue
            if path.is_file():
                entries.append((stat.st_mtime, stat.st_size, path))
        total = sum(size for _, size, _ in entries)
        deleted = 0
        for _, size, path in sorted(entries):
            if total <= max_bytes:
                break
            path.unlink(missing_ok=True)
            total -= size
            deleted += 1
        return deleted
