"""HalfCheetah: Gymnasium's HalfCheetah-v5 on MuJoCo C (reference/) and its pure-JAX translation (jax/).

Importing envs.halfcheetah registers envport/HalfCheetah-v0 (MuJoCo C) and envport/HalfCheetahJax-v0 (JAX).
"""

from .gym_envs import register as _register

_register()
