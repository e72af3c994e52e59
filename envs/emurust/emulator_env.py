"""What the Gymnasium envs over emulators share: rendering the screen in PyBoy's grey palette, closing
the emulator, and loading a start state with a clear refusal. Subclasses of `EmulatorEnv` set
`render_mode` and `_emulator` (PyBoyGameBoy or RustGameBoy)."""

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


def load_start_state(emulator, state: bytes, backend: str) -> None:
    """Loads a start state into `emulator`, refusing one it cannot take with a message that says
    where a good one comes from."""
    try:
        emulator.load_state(state)
    except Exception as error:  # PyBoy's own loader raises whatever its parsing meets
        raise ValueError(f"start_state cannot be loaded into the {backend} emulator: {error}. A start state is "
                         "what save_state() of an env on the same ROM and backend returns") from error
