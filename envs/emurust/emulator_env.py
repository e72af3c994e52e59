"""What the Gymnasium envs over one emulator share: rendering the screen in PyBoy's grey palette, and
closing the emulator. Subclasses set `render_mode` and `_emulator` (PyBoyGameBoy or RustGameBoy)."""

from __future__ import annotations

import gymnasium
import numpy as np

from .reference.pyboy_ref import GREY_PALETTE

# RGB of each DMG shade (0 white .. 3 black) as PyBoy draws it.
GREYS = np.array([[(c >> 16) & 0xFF, (c >> 8) & 0xFF, c & 0xFF] for c in GREY_PALETTE], dtype=np.uint8)


class EmulatorEnv(gymnasium.Env):
    def render(self):
        if self.render_mode != "rgb_array":
            return None
        return GREYS[self._emulator.screen_shades()]

    def close(self):
        self._emulator.close()
