"""Running observation and reward normalisation (Gymnasium's NormalizeObservation and
NormalizeReward, as CleanRL's and PureJaxRL's continuous PPO use them), as pure functions on a
pytree so that make_train carries them through its scan and the host loop calls the same jitted
code: both loops then normalise alike, float for float. The observation statistics are part of the
trained policy (PPOTrainState.observation_stats); the reward scaler only shapes training.

The usual remedy for erratic continuous-control PPO. Measured on HalfCheetah (envs/halfcheetah
README, L4) it did not narrow the seed-to-seed spread there (32 seeds at 300K steps: 425 +- 415,
bimodal, against ~400 +- 300 without), so no env turns it on today."""

from __future__ import annotations

from typing import Optional

import jax
import jax.numpy as jnp
from flax import struct

EPSILON = 1e-8  # Gymnasium's: inside the square root
CLIP = 10.0  # CleanRL's clip of normalised observations and rewards


@struct.dataclass
class RunningMeanStd:
    """Mean and variance of everything seen so far (Chan et al.'s parallel update, as Gymnasium)."""

    mean: jax.Array
    var: jax.Array
    count: jax.Array

    @classmethod
    def create(cls, shape=()) -> RunningMeanStd:
        # count starts at Gymnasium's 1e-4: the first batch then all but replaces the prior (0, 1)
        return cls(jnp.zeros(shape, jnp.float32), jnp.ones(shape, jnp.float32), jnp.asarray(1e-4, jnp.float32))

    def update(self, batch: jax.Array) -> RunningMeanStd:
        """batch: [n, *shape]."""
        batch = batch.astype(jnp.float32)
        batch_mean, batch_var, batch_count = batch.mean(axis=0), batch.var(axis=0), jnp.float32(batch.shape[0])
        delta = batch_mean - self.mean
        total = self.count + batch_count
        mean = self.mean + delta * batch_count / total
        m2 = self.var * self.count + batch_var * batch_count + jnp.square(delta) * self.count * batch_count / total
        return RunningMeanStd(mean, m2 / total, total)


def normalize_observation(stats: Optional[RunningMeanStd], observation: jax.Array) -> jax.Array:
    """The observation as the policy sees it: standardised and clipped, or unchanged without stats."""
    if stats is None:
        return observation
    return jnp.clip((observation - stats.mean) / _std(stats), -CLIP, CLIP)


def _std(stats: RunningMeanStd) -> jax.Array:
    # The barrier keeps XLA from fusing the square root into the consumer's loop: fused inside
    # make_train's scan it rounded 1 ulp off the host loop's separately jitted call (measured on
    # rewards), and the two loops are meant to train bit for bit alike.
    return jax.lax.optimization_barrier(jnp.sqrt(stats.var + EPSILON))


def observe(stats: Optional[RunningMeanStd], observation: jax.Array) -> tuple[Optional[RunningMeanStd], jax.Array]:
    """Fold a batch of fresh observations [n, *shape] into the statistics, then normalise it."""
    if stats is None:
        return None, observation
    stats = stats.update(observation)
    return stats, normalize_observation(stats, observation)


@struct.dataclass
class RewardScaler:
    """The discounted return of each env's running episode and the statistics of those returns."""

    discounted_return: jax.Array
    stats: RunningMeanStd

    @classmethod
    def create(cls, num_envs: int) -> RewardScaler:
        return cls(jnp.zeros(num_envs, jnp.float32), RunningMeanStd.create())


def scale_rewards(scaler: Optional[RewardScaler], reward: jax.Array, done: jax.Array,
                  gamma: float) -> tuple[Optional[RewardScaler], jax.Array]:
    """Rewards divided by the running standard deviation of the discounted return (which restarts
    after an episode ends), clipped; unchanged without a scaler."""
    if scaler is None:
        return None, reward
    discounted = scaler.discounted_return * gamma + reward.astype(jnp.float32)
    stats = scaler.stats.update(discounted)
    scaled = jnp.clip(reward / _std(stats), -CLIP, CLIP)
    return RewardScaler(jnp.where(done, 0.0, discounted), stats), scaled
