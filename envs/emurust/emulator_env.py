"""What the Gymnasium envs over emulators share: rendering the screen in PyBoy's grey palette, closing
the emulator (once; a closed env refuses to go on), loading a start state with a clear refusal, and
checking the emulator settings. Subclasses of `EmulatorEnv` set
`render_mode` and `_emulator` (PyBoyGameBoy or RustGameBoy)."""

from __future__ import annotations

import gymnasium
import numpy as np

from shared.render_mode import warn_no_render_mode

from .reference.pyboy_ref import GREY_PALETTE

# RGB of each DMG shade (0 white .. 3 black) as PyBoy draws it.
GREYS = np.array([[(c >> 16) & 0xFF, (c >> 8) & 0xFF, c & 0xFF] for c in GREY_PALETTE], dtype=np.uint8)


def check_emulator_settings(backend: str, timing: str, sound_emulated) -> None:
    """`timing`: "pyboy" (PyBoy-compatible) or "dmg" (the hardware's) on the Rust emulator; PyBoy has
    only its own. `sound_emulated`: a bool (a truthy string was once taken as True)."""
    if timing not in ("pyboy", "dmg"):
        raise ValueError(f"timing must be 'pyboy' or 'dmg', got {timing!r}")
    if backend == "pyboy" and timing != "pyboy":
        raise ValueError(f"timing={timing!r} is the Rust emulator's hardware timing; PyBoy runs only its own "
                         "(backend='rust' for it)")
    if not isinstance(sound_emulated, (bool, np.bool_)):
        raise ValueError(f"sound_emulated must be a bool, got {sound_emulated!r}")


class EmulatorEnv(gymnasium.Env):
    _closed = False

    def _refuse_if_closed(self) -> None:
        """After close() PyBoy has stopped (and the Rust emulator is treated alike, so that both
        backends answer the same): reset, step and render say so instead of failing inside it."""
        if self._closed:
            raise RuntimeError(f"this {type(self).__name__} is closed: make a new env")

    def render(self):
        self._refuse_if_closed()
        if self.render_mode != "rgb_array":
            warn_no_render_mode("rgb_array")  # as Gymnasium's own envs and the repo's others warn
            return None
        return GREYS[self._emulator.screen_shades()]

    def close(self):
        if not self._closed:
            self._emulator.close()
            self._closed = True


def load_start_state(emulator, state: bytes, backend: str) -> None:
    """Loads a start state into `emulator`, refusing one it cannot take with a message that says
    where a good one comes from."""
    try:
        emulator.load_state(state)
    except Exception as error:  # PyBoy's own loader raises whatever its parsing meets
        raise ValueError(f"start_state cannot be loaded into the {backend} emulator: {error}. A start state is "
                         "what save_state() of an env on the same ROM and backend returns") from error
