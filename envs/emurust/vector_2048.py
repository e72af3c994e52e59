"""2048 on N Rust emulators at once: a Gymnasium `VectorEnv` over `emurust_core.GameBoyVec`.

`gymnasium.make_vec("envport/Game2048Rust-v0", num_envs=N)` builds it (the id's vector entry
point; `vectorization_mode="sync"` or `"async"` still gives Gymnasium's wrappers around N single
envs). It is the same task as N `Game2048Env(backend="rust")` in a `SyncVectorEnv` with their
`TimeLimit`: the same seeds give the same observations, rewards, terminations, truncations and
scores (tests/l2_api_test.py compares the two step by step, autoresets included). What differs is
the work per step: every env's 24 frames run in one call, in parallel on Rayon's threads with the
GIL released, and the boards are read and decoded for the whole batch with NumPy.

Seeding follows `SyncVectorEnv`: `reset(seed=s)` seeds env i with s + i (`reset(seed=[...])`
gives each its own); the start delay of each episode comes from that env's own generator.
Autoreset: `autoreset_mode` NEXT_STEP (Gymnasium's default) or SAME_STEP, with the same
semantics as `SyncVectorEnv`; SAME_STEP puts the last observation of a finished episode in
`info["final_obs"]` and its score in `info["final_info"]["score"]`.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from shared.vector_actions import check_discrete_actions

from . import game2048
from .build_ext import load_core

BOARD_CELLS = game2048.BOARD_SIDE * game2048.BOARD_SIDE
# One read covers the board (25 x u16) and the score (u16) a few bytes after it.
RAM_START = game2048.BOARD_ADDRESS
RAM_STOP = game2048.SCORE_ADDRESS + 2
SCORE_OFFSET = game2048.SCORE_ADDRESS - RAM_START
# A step and a reset as phases of (buttons, frames); a step pads to the reset's three phases.
STEP_FRAMES = (game2048.PRESS_FRAMES, game2048.FRAMES_PER_ACTION - game2048.PRESS_FRAMES, 0)
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


class Game2048RustVectorEnv(gymnasium.vector.VectorEnv):
    """`num_envs` games of 2048 on the Rust emulator, stepped together (see the module docstring)."""

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}

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
        if backend != "rust":
            raise ValueError(f"the vector env runs the Rust emulator only, got backend={backend!r}")
        if render_mode is not None:
            raise ValueError("the vector env does not render; use vectorization_mode='sync' with render_mode='rgb_array'")
        if timing not in ("pyboy", "dmg"):
            raise ValueError(f"timing must be 'pyboy' or 'dmg', got {timing!r}")
        if not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        if max_episode_steps is not None and max_episode_steps < 1:
            raise ValueError(f"max_episode_steps must be positive or None, got {max_episode_steps}")
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        if self.autoreset_mode == AutoresetMode.DISABLED:
            raise ValueError("autoreset_mode DISABLED is not supported: use NEXT_STEP or SAME_STEP")
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self.num_envs = int(num_envs)
        self.max_episode_steps = max_episode_steps
        self.render_mode = None
        self.single_observation_space = spaces.Box(
            0, game2048.MAX_EXPONENT, shape=(game2048.BOARD_SIDE, game2048.BOARD_SIDE), dtype=np.uint8
        )
        self.single_action_space = spaces.Discrete(len(game2048.ACTION_BUTTONS))
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

        self._vec = load_core().GameBoyVec(
            game2048.ROM_PATH.read_bytes(), self.num_envs, threads=threads, render=False, power_on=timing,
            sound_emulated=bool(sound_emulated),
        )
        self._title_state: Optional[bytes] = None
        self._generators: list[np.random.Generator] = [seeding.np_random(None)[0] for _ in range(self.num_envs)]
        self._scores = np.zeros(self.num_envs, dtype=np.int64)
        self._elapsed = np.zeros(self.num_envs, dtype=np.int64)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        self._needs_reset = True

    # -- emulation --------------------------------------------------------------------------------

    def _title(self) -> bytes:
        """The title-screen state every episode starts from (booted once, in console 0)."""
        if self._title_state is None:
            frames = np.zeros((self.num_envs, 1), dtype=np.int64)
            frames[0, 0] = game2048.BOOT_FRAMES
            self._vec.run_phases(np.zeros((self.num_envs, 1), dtype=np.uint8), frames)
            self._title_state = self._vec.save_state(0)
        return self._title_state

    def _reset_phases(self, which: np.ndarray, buttons: np.ndarray, frames: np.ndarray) -> None:
        """Loads the title screen into the consoles `which` and writes their reset phases: wait
        a delay from their own generator, press START, let the first tiles settle."""
        title = self._title()
        for i in np.flatnonzero(which):
            delay = int(self._generators[i].integers(game2048.MAX_START_DELAY))
            self._vec.load_state(int(i), title)
            buttons[i] = (0, game2048.START, 0)
            frames[i] = (delay + 1, game2048.PRESS_FRAMES, game2048.START_SETTLE_FRAMES)

    def _run(self, buttons: np.ndarray, frames: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        self._vec.run_phases(buttons, frames)
        return decode(self._vec.read_range(RAM_START, RAM_STOP))

    def _reset_only(self, which: np.ndarray):
        buttons = np.zeros((self.num_envs, 3), dtype=np.uint8)
        frames = np.zeros((self.num_envs, 3), dtype=np.int64)
        self._reset_phases(which, buttons, frames)
        observations, scores, _ = self._run(buttons, frames)
        self._scores[which] = scores[which]
        self._elapsed[which] = 0
        return observations, scores

    # -- Gymnasium API ------------------------------------------------------------------------------

    def reset(self, *, seed: Optional[Union[int, Sequence[Optional[int]]]] = None, options: Optional[dict] = None):
        super().reset(seed=None)
        if seed is None:
            seeds: list[Optional[int]] = [None] * self.num_envs
        elif isinstance(seed, (int, np.integer)):
            seeds = [int(seed) + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"seed has {len(seeds)} entries, expected num_envs={self.num_envs}")
        for i, env_seed in enumerate(seeds):
            if env_seed is not None:
                self._generators[i] = seeding.np_random(env_seed)[0]
        everyone = np.ones(self.num_envs, dtype=bool)
        observations, scores = self._reset_only(everyone)
        self._autoreset[:] = False
        self._needs_reset = False
        return observations, {"score": scores.copy(), "_score": everyone}

    def step(self, actions):
        if self._needs_reset:
            raise RuntimeError("call reset() before step()")
        actions = check_discrete_actions(actions, self.num_envs, self.single_action_space.n)
        resetting = self._autoreset.copy() if self.autoreset_mode == AutoresetMode.NEXT_STEP else np.zeros(
            self.num_envs, dtype=bool)
        stepping = ~resetting
        buttons = np.zeros((self.num_envs, 3), dtype=np.uint8)
        frames = np.zeros((self.num_envs, 3), dtype=np.int64)
        buttons[stepping, 0] = ACTION_MASKS[actions[stepping]]
        frames[stepping] = STEP_FRAMES
        self._reset_phases(resetting, buttons, frames)
        observations, scores, terminated = self._run(buttons, frames)

        rewards = np.where(stepping, scores - self._scores, 0).astype(np.float64)
        self._scores = scores
        self._elapsed = np.where(stepping, self._elapsed + 1, 0)
        terminated &= stepping
        if self.max_episode_steps is None:
            truncated = np.zeros(self.num_envs, dtype=bool)
        else:
            truncated = stepping & (self._elapsed >= self.max_episode_steps)
        finished = terminated | truncated
        info: dict[str, Any] = {"score": scores.copy(), "_score": np.ones(self.num_envs, dtype=bool)}

        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            self._autoreset = finished
        elif finished.any():  # SAME_STEP: the finished envs start again now
            final_obs = np.empty(self.num_envs, dtype=object)
            final_scores = np.zeros(self.num_envs, dtype=np.int64)
            for i in np.flatnonzero(finished):
                final_obs[i] = observations[i].copy()
                final_scores[i] = scores[i]
            new_observations, new_scores = self._reset_only(finished)
            observations[finished] = new_observations[finished]
            info["score"][finished] = new_scores[finished]
            info["final_obs"], info["_final_obs"] = final_obs, finished.copy()
            info["final_info"] = {"score": final_scores, "_score": finished.copy()}
            info["_final_info"] = finished.copy()
        return observations, rewards, terminated, truncated, info

    def close_extras(self, **kwargs: Any) -> None:
        self._vec = None


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
