"""Action sources for Pong's L3 episodes: uniform random, and a noisy ball tracker so that the
agent's paddle hits the ball, adds spin and wins points (uniform random almost never does)."""

from __future__ import annotations

import numpy as np

from shared.verification.l3 import uniform_discrete

from .params import NUM_ACTIONS, PongConfig

uniform = uniform_discrete(NUM_ACTIONS)


def noisy_tracker(epsilon: float = 0.3, config: PongConfig = PongConfig()):
    """Move the right paddle toward the ball; a random action with probability epsilon."""
    paddle_low = -config.paddle_height / 2
    paddle_span = config.height - config.paddle_height

    def choose(episode: int, rng: np.random.Generator, observation: np.ndarray) -> int:
        if rng.random() < epsilon:
            return int(rng.integers(NUM_ACTIONS))
        paddle_centre = observation[1] * paddle_span + paddle_low + config.paddle_height / 2
        ball_centre = observation[3] * config.height + config.ball_height / 2
        gap = ball_centre - paddle_centre
        return 1 if gap > 8 else 2 if gap < -8 else 0

    return choose


def mixed(config: PongConfig = PongConfig()):
    """Even episodes uniform, odd episodes the tracker: both regimes in every L3 run."""
    tracker = noisy_tracker(config=config)

    def choose(episode: int, rng: np.random.Generator, observation: np.ndarray) -> int:
        return uniform(episode, rng, observation) if episode % 2 == 0 else tracker(episode, rng, observation)

    return choose
