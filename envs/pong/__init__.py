"""Pong: PufferLib 3.0.0's C Pong (reference/) and its bit-exact JAX translation (jax/).

Importing envs.pong registers the Gymnasium ids envport/Pong-v0 (C) and envport/PongJax-v0 (JAX).
"""

from .gym_envs import register as _register

_register()
