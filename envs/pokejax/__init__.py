"""PokeJAX: Pokemon Showdown's Gen 1 battles (reference/, the pinned npm package run by Node) and
their bit-exact JAX translation (jax/).

Importing envs.pokejax registers the Gymnasium ids envport/PokeJax-v0 (JAX) and
envport/PokeShowdown-v0 (Showdown).
"""

from .gym_envs import register as _register

_register()
