"""Pong's parameters: PufferLib 3.0.0's defaults (pufferlib/ocean/pong/pong.py), shared by both backends."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class PongConfig:
    width: float = 500.0
    height: float = 640.0
    paddle_width: float = 20.0
    paddle_height: float = 70.0
    ball_width: float = 32.0
    ball_height: float = 32.0
    paddle_speed: float = 8.0
    ball_initial_speed_x: float = 10.0
    ball_initial_speed_y: float = 1.0
    ball_max_speed_y: float = 13.0
    ball_speed_y_increment: float = 3.0
    max_score: int = 21
    frameskip: int = 1

    def __post_init__(self) -> None:
        if self.frameskip < 1:
            raise ValueError(f"frameskip must be at least 1, got {self.frameskip}")
        if self.max_score < 1:
            raise ValueError(f"max_score must be at least 1, got {self.max_score}")


OBSERVATION_SIZE = 8
NUM_ACTIONS = 3  # 0: stay, 1: up, 2: down (PufferLib's discrete mode; continuous mode is not ported)
INTERNAL_FIELDS = (
    "paddle_yl", "paddle_yr", "ball_x", "ball_y", "ball_vx", "ball_vy",
    "score_l", "score_r", "tick", "n_bounces", "win",
)
