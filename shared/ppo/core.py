"""PPO's pieces that both training loops share: config, GAE, loss, and the epochs-of-minibatches update."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, NamedTuple, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax.training.train_state import TrainState

from .networks import ACTIVATIONS, ActorCritic, GaussianActorCritic, hidden_sizes, policy_functions
from .normalization import RunningMeanStd
from .shuffle import permutation as shuffled_positions


@dataclasses.dataclass(frozen=True)
class PPOConfig:
    total_timesteps: int = 1_000_000
    num_envs: int = 64
    num_steps: int = 128
    learning_rate: float = 2.5e-4
    anneal_lr: bool = True
    update_epochs: int = 4
    num_minibatches: int = 4
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_eps: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    network: str | Sequence[int] = "small"
    activation: str = "tanh"
    seed: int = 0
    # continuous actions: a diagonal Gaussian over num_actions dimensions instead of a categorical
    continuous: bool = False
    # [start, stop) of the observation holding a legal-action mask (1 legal, 0 illegal): the policy
    # then never samples an illegal action (discrete actions only; stop - start = num_actions)
    action_mask: tuple[int, int] | None = None
    # running standardisation of observations (the statistics travel with the trained policy:
    # PPOTrainState.observation_stats) and division of rewards by the running std of the discounted
    # return (shared/ppo/normalization.py); both off by default
    normalize_observations: bool = False
    normalize_rewards: bool = False

    @property
    def batch_size(self) -> int:
        return self.num_envs * self.num_steps

    @property
    def num_updates(self) -> int:
        return max(1, self.total_timesteps // self.batch_size)

    @property
    def minibatch_size(self) -> int:
        return self.batch_size // self.num_minibatches

    def __post_init__(self) -> None:
        # checked here, where the mistake is made, rather than surfacing as a division by zero, a NaN
        # loss or a shape error from inside a jitted scan
        for name in ("total_timesteps", "num_envs", "num_steps", "update_epochs", "num_minibatches", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise TypeError(f"PPOConfig.{name} must be an int, got {value!r}")
            if value < (0 if name == "seed" else 1):
                raise ValueError(f"PPOConfig.{name} must be {'>= 0' if name == 'seed' else '>= 1'}, got {value}")
        for name, low, high, low_open in (("learning_rate", 0.0, math.inf, True), ("gamma", 0.0, 1.0, False),
                                          ("gae_lambda", 0.0, 1.0, False), ("clip_eps", 0.0, math.inf, True),
                                          ("ent_coef", 0.0, math.inf, False), ("vf_coef", 0.0, math.inf, False),
                                          ("max_grad_norm", 0.0, math.inf, True)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
                raise TypeError(f"PPOConfig.{name} must be a number, got {value!r}")
            if not (math.isfinite(value) and (low < value if low_open else low <= value) and value <= high):
                bounds = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high == math.inf else ']'}"
                raise ValueError(f"PPOConfig.{name} must be in {bounds}, got {value}")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"PPOConfig.activation must be one of {sorted(ACTIVATIONS)}, got {self.activation!r}")
        hidden_sizes(self.network)  # an unknown preset or a bad width fails now, not at make_network
        if self.total_timesteps < self.batch_size:
            raise ValueError(f"total_timesteps ({self.total_timesteps:,}) is less than one rollout "
                             f"(num_envs * num_steps = {self.batch_size:,}): PPO would train on more steps than "
                             f"asked; raise total_timesteps or lower num_envs or num_steps")
        if self.batch_size % self.num_minibatches:
            raise ValueError(f"num_envs * num_steps ({self.batch_size}) must divide into "
                             f"{self.num_minibatches} minibatches")
        if self.action_mask is not None:
            if self.continuous:
                raise ValueError("action_mask is for discrete actions; continuous=True has none")
            start, stop = self.action_mask
            if not 0 <= start < stop:
                raise ValueError(f"action_mask must be a slice [start, stop) with 0 <= start < stop, got {self.action_mask}")


class PPOTrainState(TrainState):
    """flax's TrainState plus the observation statistics the policy was trained with (None when
    PPOConfig.normalize_observations is off): act with
    `apply_fn(params, normalize_observation(observation_stats, obs))`."""

    observation_stats: Optional[RunningMeanStd] = None


class Transition(NamedTuple):
    done: jax.Array
    action: jax.Array
    value: jax.Array
    reward: jax.Array
    log_prob: jax.Array
    obs: jax.Array


def make_network(config: PPOConfig, num_actions: int) -> ActorCritic | GaussianActorCritic:
    """num_actions: the number of discrete actions, or the action dimension when config.continuous."""
    if config.continuous:
        return GaussianActorCritic(action_dim=num_actions, hidden=hidden_sizes(config.network),
                                   activation=config.activation)
    if config.action_mask is not None and config.action_mask[1] - config.action_mask[0] != num_actions:
        raise ValueError(f"action_mask {config.action_mask} covers {config.action_mask[1] - config.action_mask[0]} "
                         f"observation entries but the env has {num_actions} actions")
    return ActorCritic(num_actions=num_actions, hidden=hidden_sizes(config.network), activation=config.activation,
                       mask_slice=None if config.action_mask is None else tuple(config.action_mask))


def make_train_state(config: PPOConfig, network: ActorCritic, key: jax.Array, observation_shape) -> PPOTrainState:
    if config.action_mask is not None and config.action_mask[1] > observation_shape[-1]:
        raise ValueError(f"action_mask {config.action_mask} reaches past the observation (size {observation_shape[-1]})")
    params = network.init(key, jnp.zeros(observation_shape, jnp.float32))

    def schedule(count):
        fraction = 1.0 - (count // (config.num_minibatches * config.update_epochs)) / config.num_updates
        return config.learning_rate * fraction

    lr = schedule if config.anneal_lr else config.learning_rate
    tx = optax.chain(optax.clip_by_global_norm(config.max_grad_norm), optax.adam(lr, eps=1e-5))
    return PPOTrainState.create(apply_fn=network.apply, params=params, tx=tx,
                                observation_stats=RunningMeanStd.create(tuple(observation_shape))
                                if config.normalize_observations else None)


def compute_gae(transitions: Transition, last_value: jax.Array, config: PPOConfig) -> tuple[jax.Array, jax.Array]:
    """Advantages and returns over [T, N] transitions, cutting at done (auto-reset envs)."""

    def backwards(carry, transition):
        gae, next_value = carry
        not_done = 1.0 - transition.done.astype(jnp.float32)
        delta = transition.reward + config.gamma * next_value * not_done - transition.value
        gae = delta + config.gamma * config.gae_lambda * not_done * gae
        return (gae, transition.value), gae

    _, advantages = jax.lax.scan(backwards, (jnp.zeros_like(last_value), last_value), transitions, reverse=True)
    return advantages, advantages + transitions.value


def ppo_loss(params, apply_fn, batch: Transition, advantages, targets, config: PPOConfig):
    _, log_prob, entropy = policy_functions(config.continuous)
    logits, value = apply_fn(params, batch.obs)
    new_log_prob = log_prob(logits, batch.action)
    value_clipped = batch.value + (value - batch.value).clip(-config.clip_eps, config.clip_eps)
    value_loss = 0.5 * jnp.maximum(jnp.square(value - targets), jnp.square(value_clipped - targets)).mean()
    ratio = jnp.exp(new_log_prob - batch.log_prob)
    normalised = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    actor_loss = -jnp.minimum(ratio * normalised,
                              jnp.clip(ratio, 1.0 - config.clip_eps, 1.0 + config.clip_eps) * normalised).mean()
    entropy_bonus = entropy(logits).mean()
    total = actor_loss + config.vf_coef * value_loss - config.ent_coef * entropy_bonus
    return total, (value_loss, actor_loss, entropy_bonus)


def update(train_state: TrainState, transitions: Transition, last_obs: jax.Array, key: jax.Array,
           config: PPOConfig) -> tuple[TrainState, dict[str, Any]]:
    """GAE, then `update_epochs` passes over shuffled minibatches: one PPO update."""
    _, last_value = train_state.apply_fn(train_state.params, last_obs)
    advantages, targets = compute_gae(transitions, last_value, config)

    def epoch(carry, _):
        train_state, key = carry
        key, permute_key = jax.random.split(key)
        flat = jax.tree.map(lambda x: x.reshape((config.batch_size,) + x.shape[2:]), (transitions, advantages, targets))
        # jax.random.permutation's values, three times faster on XLA's CPU backend (shuffle.py)
        permutation = shuffled_positions(permute_key, config.batch_size)
        shuffled = jax.tree.map(lambda x: jnp.take(x, permutation, axis=0), flat)
        minibatches = jax.tree.map(
            lambda x: x.reshape((config.num_minibatches, config.minibatch_size) + x.shape[1:]), shuffled)

        def minibatch_step(train_state, minibatch):
            batch, adv, tgt = minibatch
            grad_fn = jax.value_and_grad(ppo_loss, has_aux=True)
            (loss, aux), grads = grad_fn(train_state.params, train_state.apply_fn, batch, adv, tgt, config)
            return train_state.apply_gradients(grads=grads), (loss, *aux)

        train_state, losses = jax.lax.scan(minibatch_step, train_state, minibatches)
        return (train_state, key), losses

    (train_state, _), losses = jax.lax.scan(epoch, (train_state, key), None, length=config.update_epochs)
    total, value_loss, actor_loss, entropy_bonus = (x.mean() for x in losses)
    return train_state, {"loss": total, "value_loss": value_loss, "actor_loss": actor_loss, "entropy": entropy_bonus}
