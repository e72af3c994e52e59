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

for _env_id, _backend in (("envport/Game2048-v0", "pyboy"), ("envport/Game2048Rust-v0", "rust")):
    # make_vec of the Rust id builds N emulators stepped together in Rust (vector_2048.py);
    # vectorization_mode="sync"/"async" still wraps N single envs
    register_once(_env_id, "envs.emurust.gym_envs:Game2048Env", kwargs={"backend": _backend},
                  vector_entry_point="envs.emurust.vector_2048:Game2048RustVectorEnv" if _backend == "rust" else None,
                  max_episode_steps=MAX_EPISODE_STEPS)
for _env_id, _backend in (("envport/GameBoy-v0", "pyboy"), ("envport/GameBoyRust-v0", "rust")):
    register_once(_env_id, "envs.emurust.rom_env:GameBoyRomEnv", kwargs={"backend": _backend},
                  vector_entry_point="envs.emurust.rom_vector_env:GameBoyRomRustVectorEnv" if _backend == "rust" else None,
                  max_episode_steps=MAX_EPISODE_STEPS)
