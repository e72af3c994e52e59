"""2048 on N Rust emulators at once: a Gymnasium `VectorEnv` over `emurust_core.GameBoyVec`.

`gymnasium.make_vec("envport/Game2048Rust-v0", num_envs=N)` builds it (the id's vector entry
point; `vectorization_mode="sync"` or `"async"` still gives Gymnasium's wrappers around N single
envs). It is the same task as N `Game2048Env(backend="rust")` in a `SyncVectorEnv` with their
`TimeLimit`: the same seeds give the same observations, rewards, terminations, truncations and
scores (tests/l2_vector_env_test.py compares the two step by step, autoresets and infos included). What differs is
the work per step: every env's 24 frames run in one call, in parallel on Rayon's threads with the
GIL released, and the boards are read and decoded for the whole batch with NumPy.

Seeding, autoreset (NEXT_STEP or SAME_STEP, the latter with the finished episode's score in
`info["final_info"]["score"]`), time limit and infos are those of `SyncVectorEnv`
(phased_vector_env.py, shared with the any-ROM vector env).
"""

from __future__ import annotations

from typing import Optional, Union

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from . import game2048
from .phased_vector_env import PhasedVectorEnv

BOARD_CELLS = game2048.BOARD_SIDE * game2048.BOARD_SIDE
# One read covers the board (25 x u16) and the score (u16) a few bytes after it.
RAM_START = game2048.BOARD_ADDRESS
RAM_STOP = game2048.SCORE_ADDRESS + 2
SCORE_OFFSET = game2048.SCORE_ADDRESS - RAM_START
# A step's two phases' frames: the move's button held, then released.
STEP_FRAMES = (game2048.PRESS_FRAMES, game2048.FRAMES_PER_ACTION - game2048.PRESS_FRAMES)
ACTION_MASKS = np.array(game2048.ACTION_BUTTONS, dtype=np.uint8)


def decode(ram: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(observations (N, 5, 5) uint8, scores (N,) int64, terminated (N,) bool) from the RAM rows
    [RAM_START, RAM_STOP) of N consoles: `game2048.board_exponents`, `read_score` and
    `not can_move` for a batch."""
    board = ram[:, : 2 * BOARD_CELLS].copy().view("<u2").astype(np.uint32)
    board = board.reshape(-1, game2048.BOARD_SIDE, game2048.BOARD_SIDE)
    observations = np.zeros(board.shape, dtype=np.uint8)
    filled = board > 0
    observations[filled] = np.log2(board[filled]).round().astype(np.uint8)
    scores = ram[:, SCORE_OFFSET].astype(np.int64) | (ram[:, SCORE_OFFSET + 1].astype(np.int64) << 8)
    movable = (
        (board == 0).any(axis=(1, 2))
        | (board[:, :, 1:] == board[:, :, :-1]).any(axis=(1, 2))
        | (board[:, 1:, :] == board[:, :-1, :]).any(axis=(1, 2))
    )
    return observations, scores, ~movable


class Game2048RustVectorEnv(PhasedVectorEnv):
    """`num_envs` games of 2048 on the Rust emulator, stepped together (see the module docstring)."""

    def __init__(
        self,
        num_envs: int,
        *,
        max_episode_steps: Optional[int] = None,
        autoreset_mode: Union[AutoresetMode, str] = AutoresetMode.NEXT_STEP,
        timing: str = "pyboy",
        threads: int = 0,
        backend: str = "rust",
        render_mode: Optional[str] = None,
        sound_emulated: bool = False,
    ):
        """`timing` and `sound_emulated` as for `Game2048Env` ("pyboy": PyBoy-compatible, the
        default; "dmg"; sound registers off by default). `threads`: Rayon threads (0 = one per
        core). `max_episode_steps`: truncation, as Gymnasium's `TimeLimit` (None = never)."""
        super().__init__(num_envs, game2048.ROM_PATH.read_bytes(), boot_frames=game2048.BOOT_FRAMES, render=False,
                         max_episode_steps=max_episode_steps, autoreset_mode=autoreset_mode, timing=timing,
                         threads=threads, backend=backend, render_mode=render_mode, sound_emulated=sound_emulated)
        self.single_observation_space = spaces.Box(
            0, game2048.MAX_EXPONENT, shape=(game2048.BOARD_SIDE, game2048.BOARD_SIDE), dtype=np.uint8
        )
        self.single_action_space = spaces.Discrete(len(game2048.ACTION_BUTTONS))
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

    def _reset_phases(self, generator: np.random.Generator):
        """Wait a delay from the env's own generator on the title screen, press START, let the
        first tiles settle."""
        delay = int(generator.integers(game2048.MAX_START_DELAY))
        phases = [(0, delay + 1), (game2048.START, game2048.PRESS_FRAMES), (0, game2048.START_SETTLE_FRAMES)]
        return phases, {"start_delay": delay}

    def _step_phases(self, actions: np.ndarray):
        return [[(int(ACTION_MASKS[action]), STEP_FRAMES[0]), (0, STEP_FRAMES[1])] for action in actions]

    def _read(self):
        observations, scores, terminated = decode(self._vec.read_range(RAM_START, RAM_STOP))
        return observations, np.stack([scores, terminated.astype(np.int64)], axis=1)

    def _judge(self, before: np.ndarray, after: np.ndarray, stepping: np.ndarray):
        return after[:, 0] - before[:, 0], after[:, 1].astype(bool)

    def _reading_info(self, reading: np.ndarray):
        return {"score": reading[:, 0].copy()}


class FlatFloatObservations(gymnasium.vector.VectorWrapper):
    """Observations flattened and cast to float32 (what shared/ppo's MLP takes), including the
    `final_obs` of SAME_STEP autoresets, which Gymnasium's own vector observation wrappers refuse."""

    def __init__(self, env: gymnasium.vector.VectorEnv):
        super().__init__(env)
        single = spaces.flatten_space(env.single_observation_space)
        self.single_observation_space = spaces.Box(single.low, single.high, single.shape, np.float32)
        self.observation_space = batch_space(self.single_observation_space, env.num_envs)

    def _flat(self, observations: np.ndarray) -> np.ndarray:
        return np.asarray(observations).reshape(len(observations), -1).astype(np.float32)

    def reset(self, **kwargs):
        observations, info = self.env.reset(**kwargs)
        return self._flat(observations), info

    def step(self, actions):
        observations, rewards, terminated, truncated, info = self.env.step(actions)
        if "final_obs" in info:
            final = np.empty(len(info["final_obs"]), dtype=object)
            for i in np.flatnonzero(info["_final_obs"]):
                final[i] = np.asarray(info["final_obs"][i]).reshape(-1).astype(np.float32)
            info = {**info, "final_obs": final}
        return self._flat(observations), rewards, terminated, truncated, info
