"""Gymnasium envs for 2048 on both emulators, same API:

- `envport/Game2048-v0`: PyBoy 2.8.1 (the reference);
- `envport/Game2048Rust-v0`: envport's Rust emulator, by default in its PyBoy-compatible timing, so
  that the same seed and actions give the same game on both (`timing="dmg"` for hardware timing).

Both run with the sound registers off by default (`sound_emulated=False`, PyBoy's fastest
configuration: every sound register reads 0 and writes are lost, on both emulators alike);
`sound_emulated=True` emulates them on both (2048 plays the same either way).

Observation: (5, 5) uint8, log2 of each tile (0 = empty). Actions: Discrete(4) = up, down, left,
right. Reward: score increase. Terminated when no move is possible; truncated by TimeLimit after
`envs.emurust.MAX_EPISODE_STEPS` moves. render_mode "rgb_array" gives the screen in the reference's grey palette.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
from gymnasium import spaces

from shared.discrete_action import check_discrete_action
from shared.episode_seeds import refuse_bool_seed
from shared.render_mode import checked_render_mode

from . import game2048
from .emulator_env import EmulatorEnv, check_emulator_settings


def _make_game(backend: str, render: bool, timing: str, sound_emulated: bool) -> game2048.Game2048:
    """2048 on the emulator of `backend`, its settings checked (check_emulator_settings) by the caller."""
    if backend == "pyboy":
        from .reference.pyboy_ref import PyBoyGameBoy

        emulator = PyBoyGameBoy(game2048.ROM_PATH, render=render, sound_emulated=sound_emulated)
        return game2048.Game2048(emulator, game2048.PYBOY_BOOT_ROM_FRAMES + game2048.BOOT_FRAMES)
    if backend == "rust":
        from .rust_backend import RustGameBoy

        return game2048.Game2048(RustGameBoy(game2048.ROM_PATH, render=render, power_on=timing,
                                                   sound_emulated=sound_emulated))
    raise ValueError(f"unknown backend {backend!r}: 'pyboy' or 'rust'")


class Game2048Env(EmulatorEnv):
    metadata = {"render_modes": ["rgb_array"], "render_fps": 60 // game2048.FRAMES_PER_ACTION}

    def __init__(self, backend: str = "rust", render_mode: Optional[str] = None, timing: str = "pyboy",
                 sound_emulated: bool = False):
        """`timing` (Rust backend): "pyboy" = PyBoy-compatible timing, the same game as PyBoy's frame
        for frame (verified by L3); "dmg" = the hardware-accurate default of the emulator.
        `sound_emulated` (both backends): False = every sound register reads 0 and ignores writes
        (PyBoy's `sound_emulated=False`); True = emulated (as the hardware's on ours)."""
        check_emulator_settings(backend, timing, sound_emulated)
        checked_render_mode(render_mode, self.metadata["render_modes"])
        self.backend = backend
        self.render_mode = render_mode
        self.observation_space = spaces.Box(
            0, game2048.MAX_EXPONENT, shape=(game2048.BOARD_SIDE, game2048.BOARD_SIDE), dtype=np.uint8
        )
        self.action_space = spaces.Discrete(len(game2048.ACTION_BUTTONS))
        self._game = _make_game(backend, render_mode is not None, timing, bool(sound_emulated))
        self._emulator = self._game.emulator
        self._needs_reset = True

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        self._refuse_if_closed()
        refuse_bool_seed(seed)
        super().reset(seed=seed)
        delay = int(self.np_random.integers(game2048.MAX_START_DELAY))
        observation = self._game.reset(delay)
        self._needs_reset = False
        return observation, {"score": self._game.score, "start_delay": delay}

    def step(self, action):
        self._refuse_if_closed()
        if self._needs_reset:
            raise RuntimeError("call reset() before step()")
        action = check_discrete_action(action, self.action_space.n, "0 up, 1 down, 2 left, 3 right")
        observation, reward, terminated = self._game.step(action)
        if terminated:
            self._needs_reset = True
        return observation, float(reward), terminated, False, {"score": self._game.score}

