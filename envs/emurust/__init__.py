"""EmuRust: a Game Boy (DMG) emulator in Rust (rust/, PyO3 bindings) checked against PyBoy 2.8.1
(reference/).

Importing envs.emurust registers the Gymnasium ids envport/Game2048-v0 (PyBoy) and
envport/Game2048Rust-v0 (ours) for 2048, and envport/GameBoy-v0 (PyBoy) and envport/GameBoyRust-v0
(ours) for any DMG ROM. Registering builds nothing: the Rust extension is built (or found in the
cache) when an env of ours is first made, and no module of the package is imported before
(shared/gym_registration.py).
"""

from shared.gym_registration import register_once

MAX_EPISODE_STEPS = 1000  # the TimeLimit of every id: 2048's moves, a ROM env's steps

# make_vec of a Rust id builds N emulators stepped together in Rust; vectorization_mode="sync"/"async"
# still wraps N single envs
for _env_id, _entry, _backend, _vector_entry in (
    ("envport/Game2048-v0", "envs.emurust.gym_envs:Game2048Env", "pyboy", None),
    ("envport/Game2048Rust-v0", "envs.emurust.gym_envs:Game2048Env", "rust", "envs.emurust.vector_2048:Game2048RustVectorEnv"),
    ("envport/GameBoy-v0", "envs.emurust.rom_env:GameBoyRomEnv", "pyboy", None),
    ("envport/GameBoyRust-v0", "envs.emurust.rom_env:GameBoyRomEnv", "rust",
     "envs.emurust.rom_vector_env:GameBoyRomRustVectorEnv"),
):
    register_once(_env_id, _entry, _vector_entry, kwargs={"backend": _backend}, max_episode_steps=MAX_EPISODE_STEPS)
del _env_id, _entry, _backend, _vector_entry
