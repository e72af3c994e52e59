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


# The hidden layers' nonlinearity, by PPOConfig.activation's name.
ACTIVATIONS = {"tanh": nn.tanh, "relu": nn.relu}


def hidden_sizes(preset_or_sizes: str | Sequence[int]) -> tuple[int, ...]:
    """A preset's widths, or the given widths checked: whole numbers >= 1, at least one layer."""
    if isinstance(preset_or_sizes, str):
        if preset_or_sizes not in PRESETS:
            raise ValueError(f"unknown network preset {preset_or_sizes!r}; choose from {sorted(PRESETS)} "
                             f"or give the hidden widths, e.g. (64, 64)")
        return PRESETS[preset_or_sizes]
    try:
        widths = tuple(preset_or_sizes)
    except TypeError:
        raise TypeError(f"network must be a preset name {sorted(PRESETS)} or a sequence of hidden widths, "
                        f"got {preset_or_sizes!r}") from None
    if not widths or any(isinstance(w, bool) or not isinstance(w, (int, np.integer)) or w < 1 for w in widths):
        raise ValueError(f"network widths must be one or more whole numbers >= 1, got {preset_or_sizes!r}")
    return tuple(int(w) for w in widths)


def _mlp(observation: jax.Array, hidden: Sequence[int], activation: str) -> jax.Array:
    """Hidden layers of an actor or a critic; called inside a module's compact __call__, so the
    layers belong to (and are named in order by) that module."""
    act = ACTIVATIONS[activation]
    x = observation.astype(jnp.float32)
    for width in hidden:
        x = act(nn.Dense(width, kernel_init=orthogonal(np.sqrt(2)), bias_init=constant(0.0))(x))
    return x


# The logit of an action the observation's mask rules out: its probability underflows to exactly 0
# (so does its term of the entropy), and unlike -inf it keeps softmax finite when nothing is legal.
MASKED_LOGIT = -1e9


def apply_action_mask(logits: jax.Array, observation: jax.Array, mask_slice: tuple[int, int] | None) -> jax.Array:
    """Logits with the actions that observation[..., start:stop] marks 0 (illegal) pushed to
    MASKED_LOGIT; unchanged when mask_slice is None."""
    if mask_slice is None:
        return logits
    start, stop = mask_slice
    legal = observation[..., start:stop] > 0.5
    return jnp.where(legal, logits, MASKED_LOGIT)


class ActorCritic(nn.Module):
    num_actions: int
    hidden: Sequence[int] = PRESETS["small"]
    activation: str = "tanh"
    # [start, stop) of the observation that holds the legal-action mask (1 legal, 0 illegal), for
    # envs that put one there (PokeJAX); illegal actions then get probability 0
    mask_slice: tuple[int, int] | None = None

    @nn.compact
    def __call__(self, observation: jax.Array) -> tuple[jax.Array, jax.Array]:
        x = _mlp(observation, self.hidden, self.activation)
        logits = nn.Dense(self.num_actions, kernel_init=orthogonal(0.01), bias_init=constant(0.0))(x)
        logits = apply_action_mask(logits, observation, self.mask_slice)
        critic = _mlp(observation, self.hidden, self.activation)  # before the value head: same layer names as ever
        value = nn.Dense(1, kernel_init=orthogonal(1.0), bias_init=constant(0.0))(critic)
        return logits, jnp.squeeze(value, axis=-1)


class GaussianActorCritic(nn.Module):
    """For continuous actions: a diagonal Gaussian with a state-independent log std (PureJaxRL's
    continuous PPO). Its first output packs [mean, log_std] along the last axis."""

    action_dim: int
    hidden: Sequence[int] = PRESETS["small"]
    activation: str = "tanh"

    @nn.compact
    def __call__(self, observation: jax.Array) -> tuple[jax.Array, jax.Array]:
        x = _mlp(observation, self.hidden, self.activation)
        mean = nn.Dense(self.action_dim, kernel_init=orthogonal(0.01), bias_init=constant(0.0))(x)
        log_std = self.param("log_std", nn.initializers.zeros, (self.action_dim,))
        critic = _mlp(observation, self.hidden, self.activation)  # before the value head: same layer names as ever
        value = nn.Dense(1, kernel_init=orthogonal(1.0), bias_init=constant(0.0))(critic)
        return jnp.concatenate([mean, jnp.broadcast_to(log_std, mean.shape)], axis=-1), jnp.squeeze(value, axis=-1)


def _split(dist: jax.Array) -> tuple[jax.Array, jax.Array]:
    half = dist.shape[-1] // 2
    return dist[..., :half], dist[..., half:]


def gaussian_log_prob(dist: jax.Array, action: jax.Array) -> jax.Array:
    mean, log_std = _split(dist)
    z = (action - mean) * jnp.exp(-log_std)
    return jnp.sum(-0.5 * z * z - log_std - 0.5 * jnp.log(2 * jnp.pi), axis=-1)


def gaussian_sample(key: jax.Array, dist: jax.Array) -> tuple[jax.Array, jax.Array]:
    mean, log_std = _split(dist)
    action = mean + jnp.exp(log_std) * jax.random.normal(key, mean.shape)
    return action, gaussian_log_prob(dist, action)


def gaussian_entropy(dist: jax.Array) -> jax.Array:
    _, log_std = _split(dist)
    return jnp.sum(log_std + 0.5 * (1.0 + jnp.log(2 * jnp.pi)), axis=-1)


def gaussian_mode(dist: jax.Array) -> jax.Array:
    return _split(dist)[0]


def policy_functions(continuous: bool):
    """(sample, log_prob, entropy) for the policy head: categorical logits or a packed Gaussian."""
    if continuous:
        return gaussian_sample, gaussian_log_prob, gaussian_entropy
    return sample_action, log_prob, entropy


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
