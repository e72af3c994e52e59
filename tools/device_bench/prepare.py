"""Gathers, on this machine, what the device run needs and the device machine cannot fetch (it has no
network) into `.device/` at the repository root (git-ignored), for `run`'s `carry`:

- wheels of the Python packages our code imports that the device image lacks (gymnasium and its
  one requirement, MuJoCo, MJX and trimesh), for the device's Python 3.12;
- PufferLib's C Pong compiled here (the device cannot download the sdist it is built from; x86-64
  like the device, and built against an older glibc than the device's);
- PokeJAX's Gen 1 data generated here from the pinned Showdown (the device has no Node).

    ./pants run tools/device_bench:prepare      # then see tools/device_bench/README.md
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

CARRY_FOLDER = ".device"
# What the device image lacks of what our code imports (tools/device_bench/README.md); versions as
# 3rdparty/python/jax.lock pins them. MJX imports trimesh; MuJoCo's other requirements that the image
# lacks (glfw, pyopengl, websockets) are for its viewer, which HalfCheetah does not import.
WHEELS = ("gymnasium==1.4.0", "farama-notifications==0.0.6", "mujoco==3.17.0", "mujoco-mjx==3.17.0",
          "trimesh==5.2.0")
DEVICE_PYTHON = "3.12"  # the device image's (tools/device_bench/README.md)
# the device run's tree travels with the carried paths; the tool refuses more than this in all
TRAVEL_LIMIT_BYTES = 64 * 1024 * 1024


def _device_can_install(filename: str) -> bool:
    """Whether pip on the device (CPython 3.12, x86-64, a glibc newer than 2.34) takes this wheel,
    from the file name's tags (PEP 427: name-version[-build]-python-abi-platform.whl, each tag
    possibly several joined by dots)."""
    python_tags, abi_tags, platform_tags = filename.removesuffix(".whl").split("-")[-3:]

    def platform_ok(platform):
        if platform.startswith("manylinux_2_") and platform.endswith("_x86_64"):
            return int(platform.split("_")[2]) <= 34
        return platform in ("any", "manylinux2014_x86_64", "manylinux1_x86_64", "manylinux2010_x86_64")

    return (any(tag in ("py3", "cp312", "py312") for tag in python_tags.split("."))
            and any(tag in ("none", "abi3", "cp312") for tag in abi_tags.split("."))
            and any(platform_ok(tag) for tag in platform_tags.split(".")))


def download_wheels(destination: Path) -> None:
    """Each of WHEELS as a wheel for the device, located through the registry's simple index (pip is
    not in Pants' environments) and checked against the digest the index gives."""
    from pypi_simple import PyPISimple

    destination.mkdir(parents=True, exist_ok=True)
    with PyPISimple() as client:
        for requirement in WHEELS:
            name, version = requirement.split("==")
            page = client.get_project_page(name)
            wheels = [package for package in page.packages if package.version == version
                      and package.package_type == "wheel" and _device_can_install(package.filename)]
            if not wheels:
                raise SystemExit(f"the registry lists no wheel of {requirement} for CPython {DEVICE_PYTHON} on x86-64 Linux")
            client.download_package(wheels[0], path=destination / wheels[0].filename, verify=True)


def copy_pong_library(destination: Path) -> Path:
    from envs.pong.reference.build import build_library

    destination.mkdir(parents=True, exist_ok=True)
    target = destination / "libenvport_pong.so"
    shutil.copyfile(build_library(), target)
    return target


def copy_pokejax_data(destination: Path) -> list[Path]:
    from envs.pokejax import gen_data

    destination.mkdir(parents=True, exist_ok=True)
    copied = []
    for name, command in (("gen1-data", "gen1_data"), ("gen1-random-battle", "gen1_random_battle_data")):
        source = gen_data.showdown_data_path(name, command)
        shutil.copyfile(source, destination / source.name)
        copied.append(destination / source.name)
    return copied


def checkout() -> Path:
    """The checkout this runs in (through `./pants run` the code runs from a built environment, not
    from the working tree, but with the working directory in it)."""
    result = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"run this inside the envport checkout (git rev-parse: {result.stderr.strip()})")
    return Path(result.stdout.strip())


def tree_bytes(repo: Path) -> int:
    """Bytes of what travels besides the carry: tracked and untracked-not-ignored files."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=repo,
                            capture_output=True, check=True).stdout.split(b"\0")
    return sum((repo / name.decode()).stat().st_size for name in listed if name and (repo / name.decode()).is_file())


def main() -> int:
    repo = checkout()
    carry = repo / CARRY_FOLDER
    if carry.exists():
        shutil.rmtree(carry)
    download_wheels(carry / "wheels")
    library = copy_pong_library(carry / "pong")
    data = copy_pokejax_data(carry / "cache" / "pokejax")
    carried = sum(path.stat().st_size for path in carry.rglob("*") if path.is_file())
    tree = tree_bytes(repo)
    print(f"wrote {CARRY_FOLDER}/: {len(list((carry / 'wheels').iterdir()))} wheels, "
          f"{library.relative_to(repo)}, {len(data)} PokeJAX data files; {carried / 2**20:.1f} MiB carried "
          f"+ {tree / 2**20:.1f} MiB of working tree")
    if carried + tree > TRAVEL_LIMIT_BYTES:
        print(f"too much to travel: the device tool takes at most {TRAVEL_LIMIT_BYTES / 2**20:.0f} MiB", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
