"""Pong's parameters: PufferLib 3.0.0's defaults (pufferlib/ocean/pong/pong.py), shared by both backends."""

from __future__ import annotations

import dataclasses
import math

import numpy as np


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
        # C takes any float; a zero width or a NaN speed would give NaN observations on both
        # backends, which L3 would then call equal, so such games are refused here
        for name in ("frameskip", "max_score"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise TypeError(f"PongConfig.{name} must be an int, got {value!r}")
            if value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        for field in dataclasses.fields(self):
            if field.name in ("frameskip", "max_score"):
                continue
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
                raise TypeError(f"PongConfig.{field.name} must be a number, got {value!r}")
            if not math.isfinite(value) or value < 0 or (value == 0 and field.name in _POSITIVE):
                need = "> 0" if field.name in _POSITIVE else ">= 0"
                raise ValueError(f"PongConfig.{field.name} must be a finite number {need}, got {value}")
        if self.paddle_height >= self.height or self.ball_height >= self.height or self.ball_width >= self.width:
            raise ValueError(f"the paddle ({self.paddle_height}) and the ball ({self.ball_width} x {self.ball_height}) "
                             f"must fit the court ({self.width} x {self.height})")


# sizes (a zero divides an observation by zero) and the serve's horizontal speed (zero: the ball never
# reaches a paddle); the other speeds may be 0
_POSITIVE = ("width", "height", "paddle_width", "paddle_height", "ball_width", "ball_height", "ball_initial_speed_x",
             "ball_max_speed_y")


OBSERVATION_SIZE = 8
NUM_ACTIONS = 3  # 0: stay, 1: up, 2: down (PufferLib's discrete mode; continuous mode is not ported)
INTERNAL_FIELDS = (
    "paddle_yl", "paddle_yr", "ball_x", "ball_y", "ball_vx", "ball_vy",
    "score_l", "score_r", "tick", "n_bounces", "win",
)


def observation_bounds(config: PongConfig) -> tuple[np.ndarray, np.ndarray]:
    """The float32 (low, high) every observation lies in. PufferLib declares Box(0, 1), but the ball
    leaves it by up to one frame's travel: after a left paddle hit C does not clip ball_x (which is
    then below 0), nor ball_y after a wall bounce (below 0, or its bottom edge past the court), so
    observation 2 reaches -vx / width and 3 reaches -|vy| / height (-0.02 with the defaults). The
    vertical speed's largest magnitude is the serve's, the cap or the minimum spin, whichever is
    largest; observation 5 divides it by twice the cap."""
    vy = max(config.ball_initial_speed_y, config.ball_max_speed_y, config.ball_speed_y_increment)
    low = np.zeros(OBSERVATION_SIZE)
    high = np.ones(OBSERVATION_SIZE)
    low[2] = -config.ball_initial_speed_x / config.width
    low[3] = -vy / config.height
    high[3] = max(1.0, (config.height - config.ball_height + vy) / config.height)
    low[5] = min(0.0, (config.ball_max_speed_y - vy) / (2 * config.ball_max_speed_y))
    high[5] = max(1.0, (vy + config.ball_max_speed_y) / (2 * config.ball_max_speed_y))
    # one float32 step outwards, so that the env's float32 arithmetic cannot round past a bound
    return (np.nextafter(low.astype(np.float32), np.float32(-np.inf)),
            np.nextafter(high.astype(np.float32), np.float32(np.inf)))
