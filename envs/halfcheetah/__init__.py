"""HalfCheetah: Gymnasium's HalfCheetah-v5 on MuJoCo C (reference/) and its pure-JAX translation (jax/).

Importing envs.halfcheetah registers envport/HalfCheetah-v0 (MuJoCo C) and envport/HalfCheetahJax-v0 (JAX)
by name (shared/gym_registration.py): their code is imported when an env is first made.
"""

from shared.gym_registration import register_once

register_once("envport/HalfCheetah-v0", "envs.halfcheetah.gym_envs:HalfCheetahReferenceEnv", max_episode_steps=1000)
register_once("envport/HalfCheetahJax-v0", "envs.halfcheetah.gym_envs:HalfCheetahJaxEnv",
              "envs.halfcheetah.vector_env:HalfCheetahJaxVectorEnv", max_episode_steps=1000)
