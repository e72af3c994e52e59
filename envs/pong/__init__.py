"""Pong: PufferLib 3.0.0's C Pong (reference/) and its bit-exact JAX translation (jax/).

Importing envs.pong registers the Gymnasium ids envport/Pong-v0 (C) and envport/PongJax-v0 (JAX) by
name (shared/gym_registration.py): their code is imported when an env is first made.
"""

from shared.gym_registration import register_once

register_once("envport/Pong-v0", "envs.pong.gym_envs:CPongEnv", "envs.pong.gym_envs:CPongVectorEnv")
register_once("envport/PongJax-v0", "envs.pong.gym_envs:JaxPongEnv", "envs.pong.gym_envs:JaxPongVectorEnv")
