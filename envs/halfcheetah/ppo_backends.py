"""HalfCheetah's backends for shared.ppo.breakdown: continuous-action PPO (a diagonal Gaussian policy) on
the JAX env and on MuJoCo's C HalfCheetah-v5 through Gymnasium's synchronous vector env."""

PPO_CONFIG = {"continuous": True}


def jax_backend() -> dict:
    from .policy_transfer import jax_env_spec

    return {"jax_env": jax_env_spec(), "ppo_config": PPO_CONFIG}


def mujoco_backend() -> dict:
    import gymnasium  # the package's import registered the ids
    return {"make_vector_env": lambda num_envs: gymnasium.make_vec(
        "envport/HalfCheetah-v0", num_envs=num_envs, vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP}), "ppo_config": PPO_CONFIG}
