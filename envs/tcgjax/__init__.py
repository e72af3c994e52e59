"""TCGJax: Pokemon TCG Pocket battles on our Python reference engine (reference/, written from
data/RULES.md) and their bit-exact JAX translation (jax/).

Importing envs.tcgjax registers the Gymnasium ids envport/TcgPocketReference-v0 (the reference) and
envport/TcgPocketJax-v0 (JAX; `make_vec` gives its native vector env).
"""

from . import gym_envs as _gym_envs  # noqa: F401  (registers the ids)
