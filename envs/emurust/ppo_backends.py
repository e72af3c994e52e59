"""EmuRust's backends for shared.ppo.breakdown: 2048 as its bench's PPO rows play it (host-loop PPO on
flattened float observations, SAME_STEP autoreset): ours as the native vector env (all envs in one Rayon
call), PyBoy as Gymnasium's synchronous vector env."""

import numpy as np


def rust_backend() -> dict:
    import gymnasium  # the package's import registered the ids

    from .vector_2048 import FlatFloatObservations

    return {"make_vector_env": lambda num_envs: FlatFloatObservations(gymnasium.make_vec(
        "envport/Game2048Rust-v0", num_envs=num_envs, vectorization_mode="vector_entry_point",
        autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP))}


def pyboy_backend() -> dict:
    import gymnasium  # the package's import registered the ids

    wrappers = [gymnasium.wrappers.FlattenObservation, lambda env: gymnasium.wrappers.DtypeObservation(env, np.float32)]
    return {"make_vector_env": lambda num_envs: gymnasium.make_vec(
        "envport/Game2048-v0", num_envs=num_envs, vectorization_mode="sync", wrappers=wrappers,
        vector_kwargs={"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP})}
