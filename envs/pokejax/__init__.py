"""PokeJAX: Pokemon Showdown's Gen 1 battles (reference/, the pinned npm package run by Node) and
their bit-exact JAX translation (jax/).

Importing envs.pokejax registers the Gymnasium ids envport/PokeJax-v0 (JAX; `make_vec` gives its
native vector env, one vmapped call for all envs) and envport/PokeShowdown-v0 (Showdown), by name
(shared/gym_registration.py): their code is imported when an env is first made.
"""

from shared.gym_registration import register_once

register_once("envport/PokeJax-v0", "envs.pokejax.gym_envs:PokeJaxGymEnv", "envs.pokejax.vector_env:PokeJaxVectorEnv")
register_once("envport/PokeShowdown-v0", "envs.pokejax.gym_envs:PokeShowdownGymEnv")
