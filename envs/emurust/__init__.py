"""EmuRust: a Game Boy (DMG) emulator in Rust (rust/, PyO3 bindings) checked against PyBoy 2.8.1
(reference/).

Importing envs.emurust registers the Gymnasium ids envport/Game2048-v0 (PyBoy) and
envport/Game2048Rust-v0 (ours) for 2048, and envport/GameBoy-v0 (PyBoy) and envport/GameBoyRust-v0
(ours) for any DMG ROM. Registering builds nothing: the Rust extension is built (or found in the
cache) when an env of ours is first made.
"""

from . import gym_envs as _gym_envs  # noqa: F401  (registers the 2048 ids)
from . import rom_env as _rom_env  # noqa: F401  (registers the ROM ids)
