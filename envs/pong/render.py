"""Pong as an RGB frame, drawn with NumPy from a game's internal state, for render_mode="rgb_array".

Both backends draw through this one function from their internal state (params.INTERNAL_FIELDS, which
L3 checks equal), so a frame is the same on both. The layout is PufferLib's raylib window (pong.h's
c_render): the court between two margins of 3 paddle widths; the left paddle (the scripted opponent)
red against the left margin, the right one (the agent's) cyan against the right; y pointing up in the
game and down in the image; the scores at the top. Two differences, since raylib is not compiled here
(its build would download it): the ball is a white square where PufferLib draws a puffer-fish
texture, and the scores use a 3x5 pixel font scaled 6 times, not raylib's. Positions are floored to
whole pixels.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from .params import PongConfig

BACKGROUND = (6, 24, 24)
LEFT_PADDLE = (255, 0, 0)
RIGHT_PADDLE = (0, 255, 255)
BALL = (255, 255, 255)
SCORE = (0, 187, 187)

# a 3x5 pixel font, one string of rows per digit
_DIGITS = {
    "0": ("###", "#.#", "#.#", "#.#", "###"), "1": (".#.", "##.", ".#.", ".#.", "###"),
    "2": ("###", "..#", "###", "#..", "###"), "3": ("###", "..#", "###", "..#", "###"),
    "4": ("#.#", "#.#", "###", "..#", "..#"), "5": ("###", "#..", "###", "..#", "###"),
    "6": ("###", "#..", "###", "#.#", "###"), "7": ("###", "..#", "..#", "..#", "..#"),
    "8": ("###", "#.#", "###", "#.#", "###"), "9": ("###", "#.#", "###", "..#", "###"),
}
_SCALE = 6
_SCORE_TOP = 10
_SCORE_OFFSET = 50  # each score's centre, left and right of the court's centre


def frame_shape(config: PongConfig) -> tuple[int, int, int]:
    x_pad = 3 * config.paddle_width
    return int(config.height), int(config.width + 2 * x_pad), 3


def _fill(frame: np.ndarray, left: float, top: float, width: float, height: float, colour) -> None:
    """The rectangle of the given size whose top-left corner is (left, top), clipped to the frame."""
    rows, columns = frame.shape[:2]
    x0, y0 = int(np.floor(left)), int(np.floor(top))
    x1, y1 = max(x0 + int(width), 0), max(y0 + int(height), 0)
    frame[max(y0, 0):min(y1, rows), max(x0, 0):min(x1, columns)] = colour


def _draw_number(frame: np.ndarray, number: int, centre_x: float) -> None:
    text = str(int(number))
    glyph_width = 3 * _SCALE
    left = int(centre_x) - (len(text) * (glyph_width + _SCALE) - _SCALE) // 2
    for digit in text:
        for row, pixels in enumerate(_DIGITS[digit]):
            for column, pixel in enumerate(pixels):
                if pixel == "#":
                    _fill(frame, left + column * _SCALE, _SCORE_TOP + row * _SCALE, _SCALE, _SCALE, SCORE)
        left += glyph_width + _SCALE


def draw_frame(fields: Mapping[str, float], config: PongConfig) -> np.ndarray:
    """uint8[height, width + 6 * paddle_width, 3]: the court of one game, from its internal fields
    paddle_yl, paddle_yr, ball_x, ball_y (the lower edges, y up, as the game keeps them), score_l, score_r."""
    frame = np.empty(frame_shape(config), np.uint8)
    frame[:] = BACKGROUND
    x_pad = 3 * config.paddle_width
    height = config.height

    def top(y: float, size: float) -> float:  # the game's lower edge y (up) as the image's top row (down)
        return height - float(y) - size

    _fill(frame, x_pad - config.paddle_width, top(fields["paddle_yl"], config.paddle_height),
          config.paddle_width, config.paddle_height, LEFT_PADDLE)
    _fill(frame, config.width + x_pad, top(fields["paddle_yr"], config.paddle_height),
          config.paddle_width, config.paddle_height, RIGHT_PADDLE)
    _fill(frame, x_pad + float(fields["ball_x"]), top(fields["ball_y"], config.ball_height),
          config.ball_width, config.ball_height, BALL)
    _draw_number(frame, fields["score_l"], config.width / 2 + x_pad - _SCORE_OFFSET)
    _draw_number(frame, fields["score_r"], config.width / 2 + x_pad + _SCORE_OFFSET)
    return frame
