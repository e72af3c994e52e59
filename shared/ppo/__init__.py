"""PPO for envport: PureJaxRL-style `make_train` for JAX envs, and a host loop with the same network
and losses for Gymnasium VectorEnvs (C, Rust, Python references)."""

from .core import PPOConfig, Transition, compute_gae, ppo_loss, update
from .host_loop import PhaseTimes, train_host
from .jax_loop import JaxEnvSpec, make_train, train_with_progress
from .networks import PRESETS, ActorCritic, hidden_sizes, parameter_count

__all__ = [
    "PPOConfig", "Transition", "compute_gae", "ppo_loss", "update", "PhaseTimes", "train_host", "JaxEnvSpec",
    "make_train", "train_with_progress", "PRESETS", "ActorCritic", "hidden_sizes", "parameter_count",
]
