"""Generate PokeJAX's Gen 1 data from the pinned Pokemon Showdown (never hand-copied).

    python -m envs.pokejax.gen_data              # print where the data is (generating it if needed)
    python -m envs.pokejax.gen_data --out F.json # also write a copy to F.json

The data (151 species with base stats and types, the 165 moves with every field the engine reads,
the 15 types and the type chart) is what Showdown's gen1 mod itself sees: the driver asks
`Dex.forGen(1)` for it (showdown_driver.js, `gen1_data`). It is written once per pinned package and
driver version to `cache_dir("pokejax")/gen1-data-<key>.json`, so every test process and the JAX
tables (jax/tables.py) read the same file; a file lock makes parallel processes generate it once.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from envs.pokejax.reference import showdown
from shared.cache import cache_dir, file_lock


def data_key() -> str:
    digest = hashlib.sha256(showdown.package_key().encode())
    digest.update(showdown.DRIVER.read_bytes())
    return digest.hexdigest()[:16]


def showdown_data_path(name: str, command: str) -> Path:
    """The JSON that the driver's `command` returns, generated once per pinned package and driver
    into `cache_dir("pokejax")/<name>-<key>.json` (a file lock makes parallel processes ask once)."""
    path = cache_dir("pokejax") / f"{name}-{data_key()}.json"
    if path.exists():
        return path
    with file_lock(path.with_suffix(".lock")):
        if not path.exists():
            with showdown.Showdown() as process:
                data = process.call(command)
            partial = path.with_suffix(".part")
            partial.write_text(json.dumps(data, indent=1))  # key order kept: the sets file's order is data
            partial.replace(path)
    return path


def load_showdown_data(name: str, command: str) -> dict[str, Any]:
    """showdown_data_path's JSON, refused if it was generated from another Showdown version."""
    path = showdown_data_path(name, command)
    data = json.loads(path.read_text())
    expected = showdown.pinned_version()
    if data.get("showdown") != expected:
        raise RuntimeError(f"{path} was generated from Showdown {data.get('showdown')}, not {expected}")
    return data


def data_path() -> Path:
    """The generated Gen 1 data, generated on first use."""
    return showdown_data_path("gen1-data", "gen1_data")


@functools.cache
def gen1_data() -> dict[str, Any]:
    return load_showdown_data("gen1-data", "gen1_data")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    path = data_path()
    data = gen1_data()
    if args.out:
        shutil.copyfile(path, args.out)
    print(
        f"{path}: Showdown {data['showdown']}, {len(data['species'])} species, {len(data['moves'])} moves, "
        f"{len(data['types'])} types"
    )


if __name__ == "__main__":
    main()
