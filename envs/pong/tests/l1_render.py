"""L1, the public surface: render_mode="rgb_array" on both backends, single and vector envs.

The geometry checked here comes from the game (PufferLib's pong.h: the serve puts the ball at
width / 5 and centres both paddles; its window adds margins of 3 paddle widths, y up in the game),
not from envs/pong/render.py."""

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import envs.pong  # noqa: F401  (registers envport/Pong-v0 and envport/PongJax-v0)
from envs.pong.gym_envs import CPongVectorEnv, JaxPongVectorEnv
from envs.pong.params import PongConfig

IDS = ["envport/Pong-v0", "envport/PongJax-v0"]
CONFIG = PongConfig()
RED, CYAN, WHITE = (255, 0, 0), (0, 255, 255), (255, 255, 255)
UP = 1


def _box(frame: np.ndarray, colour) -> tuple[int, int, int, int, int]:
    """(top, bottom, left, right, pixel count) of the pixels of one colour (bottom and right exclusive)."""
    rows, columns = np.nonzero((frame == colour).all(axis=-1))
    return rows.min(), rows.max() + 1, columns.min(), columns.max() + 1, rows.size


def _episode_frames(env, seed: int, steps: int) -> list[np.ndarray]:
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    frames = [env.render()]
    for _ in range(steps):
        env.step(int(rng.integers(3)))
        frames.append(env.render())
    return frames


@pytest.mark.parametrize("env_id", IDS)
def test_check_env_with_rendering(env_id):
    env = gymnasium.make(env_id, render_mode="rgb_array")
    check_env(env.unwrapped)
    assert env.metadata["render_fps"] == 60
    assert gymnasium.make(env_id, render_mode="rgb_array", frameskip=4).metadata["render_fps"] == 15
    assert gymnasium.make(env_id, render_mode="rgb_array", frameskip=100).metadata["render_fps"] == 1


@pytest.mark.parametrize("env_id", IDS)
def test_the_first_frame_shows_the_serve(env_id):
    env = gymnasium.make(env_id, render_mode="rgb_array")
    env.reset(seed=5)
    frame = env.render()
    margin = 3 * CONFIG.paddle_width
    assert frame.shape == (CONFIG.height, CONFIG.width + 2 * margin, 3) and frame.dtype == np.uint8
    for colour, left in ((RED, margin - CONFIG.paddle_width), (CYAN, margin + CONFIG.width)):
        top, bottom, x0, x1, count = _box(frame, colour)
        assert (x0, x1) == (left, left + CONFIG.paddle_width), colour
        assert count == CONFIG.paddle_width * CONFIG.paddle_height
        assert abs((top + bottom) / 2 - CONFIG.height / 2) <= 1, "the serve centres each paddle"
    top, bottom, x0, x1, count = _box(frame, WHITE)
    assert (x0, x1) == (margin + CONFIG.width / 5, margin + CONFIG.width / 5 + CONFIG.ball_width)
    assert count == CONFIG.ball_width * CONFIG.ball_height
    assert abs((top + bottom) / 2 - CONFIG.height / 2) <= 1


@pytest.mark.parametrize("env_id", IDS)
def test_the_agents_paddle_is_the_right_one_and_up_is_up(env_id):
    """The agent moves the right (cyan) paddle; the left one follows the ball by itself (pong.h)."""
    env = gymnasium.make(env_id, render_mode="rgb_array")
    env.reset(seed=5)
    before = _box(env.render(), CYAN)[0]
    for _ in range(5):
        env.step(UP)
    assert _box(env.render(), CYAN)[0] == before - 5 * CONFIG.paddle_speed


def test_both_backends_draw_the_same_frames_and_the_score():
    """300 steps from one seed and one action stream: every frame equal, and a point is scored on the
    way, so the score changes what is drawn at the top of the screen."""
    c_frames = _episode_frames(gymnasium.make(IDS[0], render_mode="rgb_array"), 21, 300)
    jax_frames = _episode_frames(gymnasium.make(IDS[1], render_mode="rgb_array"), 21, 300)
    for step, (c_frame, jax_frame) in enumerate(zip(c_frames, jax_frames, strict=True)):
        assert np.array_equal(c_frame, jax_frame), f"step {step}: the frames differ"
    score_band = slice(0, 50)
    assert not np.array_equal(c_frames[0][score_band], c_frames[-1][score_band]), "no point scored in 300 steps"
    assert len({frame.tobytes() for frame in c_frames}) > 200, "the frames move"


@pytest.mark.parametrize("vector_env", [JaxPongVectorEnv, lambda n, **kw: CPongVectorEnv(n, private_streams=True, **kw)],
                         ids=["jax", "c"])
def test_a_vector_env_draws_each_env_as_its_single_env(vector_env):
    envs = vector_env(3, render_mode="rgb_array")
    envs.reset(seed=2)  # env i is seeded i + 2 * 3
    actions = np.array([UP, 0, 2])
    for _ in range(7):
        envs.step(actions)
    frames = envs.render()
    assert len(frames) == 3
    for i, backend in ((0, IDS[0]), (2, IDS[1])):
        single = gymnasium.make(backend, render_mode="rgb_array")
        single.reset(seed=i + 6)
        for _ in range(7):
            single.step(int(actions[i]))
        assert np.array_equal(frames[i], single.render()), f"env {i}"


@pytest.mark.parametrize("env_id", IDS)
def test_rendering_errors_and_warnings(env_id):
    with pytest.raises(ValueError, match="render_mode must be None or one of"):
        gymnasium.make(env_id, render_mode="ansi")
    with pytest.raises(RuntimeError, match="reset"):
        gymnasium.make(env_id, render_mode="rgb_array").unwrapped.render()
    plain = gymnasium.make(env_id)
    plain.reset(seed=0)
    with pytest.warns(UserWarning, match='render_mode="rgb_array"'):
        assert plain.render() is None
    with pytest.raises(RuntimeError, match="reset"):
        JaxPongVectorEnv(2, render_mode="rgb_array").render()
