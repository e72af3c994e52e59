"""Gathers, on this machine, what the device run needs and the device machine cannot fetch (it has no
network) into `.device/` at the repository root (git-ignored), for `run`'s `carry`:

- wheels of the Python packages our code imports that the device image lacks (gymnasium and its
  one requirement, MuJoCo, MJX and trimesh), for the device's Python 3.12;
- PufferLib's C Pong compiled here (the device cannot download the sdist it is built from; x86-64
  like the device, and built against an older glibc than the device's);
- PokeJAX's Gen 1 data generated here from the pinned Showdown (the device has no Node).

    python -m tools.device_bench.prepare      # then see tools/device_bench/README.md
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

CARRY = REPO / ".device"
# What the device image lacks of what our code imports (tools/device_bench/README.md); versions as
# 3rdparty/python/jax.lock pins them. MJX imports trimesh; MuJoCo's other requirements that the image
# lacks (glfw, pyopengl, websockets) are for its viewer, which HalfCheetah does not import.
WHEELS = ("gymnasium==1.4.0", "farama-notifications==0.0.6", "mujoco==3.17.0", "mujoco-mjx==3.17.0",
          "trimesh==5.2.0")
DEVICE_PYTHON = "3.12"
# the device run's tree travels with the carried paths; the tool refuses more than this in all
TRAVEL_LIMIT_BYTES = 64 * 1024 * 1024


def download_wheels(destination: Path) -> None:
    destination.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
               "--python-version", DEVICE_PYTHON, "--implementation", "cp", "--platform", "any",
               "--platform", "manylinux2014_x86_64", "--platform", "manylinux_2_28_x86_64", "-d", str(destination), *WHEELS]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"pip download failed ({' '.join(command)}):\n{result.stderr}")


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


def tree_bytes() -> int:
    """Bytes of what travels besides the carry: tracked and untracked-not-ignored files."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout.split(b"\0")
    return sum((REPO / name.decode()).stat().st_size for name in listed if name and (REPO / name.decode()).is_file())


def main() -> int:
    if CARRY.exists():
        shutil.rmtree(CARRY)
    download_wheels(CARRY / "wheels")
    library = copy_pong_library(CARRY / "pong")
    data = copy_pokejax_data(CARRY / "cache" / "pokejax")
    carried = sum(path.stat().st_size for path in CARRY.rglob("*") if path.is_file())
    tree = tree_bytes()
    print(f"wrote {CARRY.relative_to(REPO)}/: {len(list((CARRY / 'wheels').iterdir()))} wheels, "
          f"{library.relative_to(REPO)}, {len(data)} PokeJAX data files; {carried / 2**20:.1f} MiB carried "
          f"+ {tree / 2**20:.1f} MiB of working tree")
    if carried + tree > TRAVEL_LIMIT_BYTES:
        print(f"too much to travel: the device tool takes at most {TRAVEL_LIMIT_BYTES / 2**20:.0f} MiB", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
