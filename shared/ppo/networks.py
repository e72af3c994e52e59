"""The actor-critic MLP every PPO run uses, and its size presets."""

from __future__ import annotations

from typing import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
from flax.linen.initializers import constant, orthogonal

# Hidden widths of the actor and of the critic (each has its own MLP, as in PureJaxRL).
# The large presets are sized so that actor + critic hold about 2M, 20M and 200M parameters
# (3 hidden layers each: 2 * 2 * width^2 dominates).
PRESETS: dict[str, tuple[int, ...]] = {
    "small": (64, 64),
    "2M": (707, 707, 707),
    "20M": (2236, 2236, 2236),
    "200M": (7071, 7071, 7071),
}


def hidden_sizes(preset_or_sizes: str | Sequence[int]) -> tuple[int, ...]:
    if isinstance(preset_or_sizes, str):
        if preset_or_sizes not in PRESETS:
            raise ValueError(f"unknown network preset {preset_or_sizes!r}; choose from {sorted(PRESETS)}")
        return PRESETS[preset_or_sizes]
    return tuple(int(s) for s in preset_or_sizes)


class ActorCritic(nn.Module):
    num_actions: int
    hidden: Sequence[int] = PRESETS["small"]
    activation: str = "tanh"

    @nn.compact
    def __call__(self, observation: jax.Array) -> tuple[jax.Array, jax.Array]:
        act = nn.relu if self.activation == "relu" else nn.tanh
        x = observation.astype(jnp.float32)
        for width in self.hidden:
            x = act(nn.Dense(width, kernel_init=orthogonal(np.sqrt(2)), bias_init=constant(0.0))(x))
        logits = nn.Dense(self.num_actions, kernel_init=orthogonal(0.01), bias_init=constant(0.0))(x)
        v = observation.astype(jnp.float32)
        for width in self.hidden:
            v = act(nn.Dense(width, kernel_init=orthogonal(np.sqrt(2)), bias_init=constant(0.0))(v))
        value = nn.Dense(1, kernel_init=orthogonal(1.0), bias_init=constant(0.0))(v)
        return logits, jnp.squeeze(value, axis=-1)


def parameter_count(params) -> int:
    return int(sum(np.prod(leaf.shape) for leaf in jax.tree.leaves(params)))


def sample_action(key: jax.Array, logits: jax.Array) -> tuple[jax.Array, jax.Array]:
    action = jax.random.categorical(key, logits)
    return action, log_prob(logits, action)


def log_prob(logits: jax.Array, action: jax.Array) -> jax.Array:
    log_probs = jax.nn.log_softmax(logits)
    return jnp.take_along_axis(log_probs, action[..., None].astype(jnp.int32), axis=-1)[..., 0]


def entropy(logits: jax.Array) -> jax.Array:
    log_probs = jax.nn.log_softmax(logits)
    return -jnp.sum(jnp.exp(log_probs) * log_probs, axis=-1)
