"""TCGJax: Pokemon TCG Pocket battles on our Python reference engine (reference/, written from
data/RULES.md) and their bit-exact JAX translation (jax/).

Importing envs.tcgjax registers the Gymnasium ids envport/TcgPocketReference-v0 (the reference) and
envport/TcgPocketJax-v0 (JAX; `make_vec` gives its native vector env), by name
(shared/gym_registration.py): their code is imported when an env is first made.
"""

from shared.gym_registration import register_once

register_once("envport/TcgPocketReference-v0", "envs.tcgjax.gym_envs:TcgReferenceEnv")
register_once("envport/TcgPocketJax-v0", "envs.tcgjax.jax.gym_env:TcgJaxGymEnv",
              "envs.tcgjax.jax.vector_env:TcgJaxVectorEnv")
