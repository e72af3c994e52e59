"""Pong's backends for shared.ppo.breakdown."""

from .params import PongConfig


def jax_backend() -> dict:
    from .jax.env import env_spec

    return {"jax_env": env_spec(PongConfig())}


def c_backend() -> dict:
    from .gym_envs import CPongVectorEnv

    return {"make_vector_env": lambda num_envs: CPongVectorEnv(num_envs)}
