"""A Gymnasium env for any DMG ROM, on either emulator, same API:

- `envport/GameBoy-v0`: PyBoy 2.8.1 (the reference);
- `envport/GameBoyRust-v0`: envport's Rust emulator, by default in its PyBoy-compatible timing, so
  that the same ROM, seed and actions give the same game on both.

    env = gymnasium.make("envport/GameBoyRust-v0", rom="game.gb", actions=(0, A, LEFT, RIGHT),
                         frames_per_action=8, reward=counter_increase(0xC0B1, size=2))

Actions: `Discrete(len(actions))`, each entry a button mask (bit i = `BUTTONS[i]`: A, B, Select,
Start, Right, Left, Up, Down), held for `press_frames` frames and then released for the rest of
`frames_per_action` (`press_frames` defaults to all of them). Observation: "wram", the 8 KiB of work
RAM (0xC000-0xDFFF) as uint8, or "screen", the last frame as DMG shades (144, 160), 0 white to 3
black. Reward: `reward(wram_before, wram_after)` over the work RAM around the step (`counter_increase`
builds the usual one: the increase of a score counter); `terminated(wram)` ends an episode. Neither
given: reward 0, no end (registered with a 1,000-step TimeLimit).

Seeding, as in 2048 (game2048.py): the emulators are deterministic, so an episode's randomness is
when it starts. The game boots once, runs `start_frames` frames and is saved; each reset loads that
state and waits 0 to `max_start_delay - 1` frames (from the env's np_random) with no buttons held,
then plays `reset_inputs` (button masks, one a frame: e.g. START held on a title screen, then
released), so that the agent starts where the game does. `start_state` (what `save_state()` returns,
or a file of it) replaces the boot: episodes start from that state, delay and reset inputs included.

Both backends start where the game's first frame starts (PyBoy runs its boot ROM's 64 frames first,
which the env adds). Every frame's whole machine state is equal on both in the PyBoy-compatible timing
(L3), so work-RAM observations and rewards are too. The screen is too once the game has drawn over the
boot logo, which PyBoy's boot ROM leaves in video RAM and ours does not draw (L3 copies it in; most
games clear video RAM before the first frame they show).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence, Union

import numpy as np
from gymnasium import spaces

from shared.discrete_action import check_discrete_action
from shared.episode_seeds import refuse_bool_seed
from shared.render_mode import checked_render_mode

from .emulator_env import EmulatorEnv, check_emulator_settings, load_start_state
from .game2048 import PYBOY_BOOT_ROM_FRAMES
from .reference.pyboy_ref import BUTTONS, SCREEN_SHAPE, WRAM

A, B, SELECT, START, RIGHT, LEFT, UP, DOWN = (1 << i for i in range(len(BUTTONS)))
# No button, each button alone, and A with each direction (jumping sideways in a platformer).
DEFAULT_ACTIONS = (0, A, B, SELECT, START, RIGHT, LEFT, UP, DOWN, A | RIGHT, A | LEFT)
OBSERVATIONS = ("wram", "screen")
WRAM_SIZE = WRAM[1] - WRAM[0]

Reward = Callable[[np.ndarray, np.ndarray], float]
Terminated = Callable[[np.ndarray], bool]
# A save state (bytes) or the path of a file holding one.
StartState = Union[bytes, str, os.PathLike, None]


def counter_increase(address: int, size: int = 1, byteorder: str = "little") -> Reward:
    """A reward: how much the unsigned counter of `size` bytes at `address` (in work RAM) grew in the
    step (negative when it fell, e.g. at a game's restart)."""
    for name, value in (("address", address), ("size", size)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"counter_increase's {name} must be an int, got {value!r}")
    if not WRAM[0] <= address <= WRAM[1] - size or size < 1:
        raise ValueError(f"a counter of {size} bytes at {address:#06x} is not in work RAM "
                         f"({WRAM[0]:#06x}-{WRAM[1] - 1:#06x})")
    if byteorder not in ("little", "big"):
        raise ValueError(f"byteorder must be 'little' or 'big', got {byteorder!r}")
    offset = address - WRAM[0]

    def reward(before: np.ndarray, after: np.ndarray) -> float:
        value = int.from_bytes(after[offset:offset + size].tobytes(), byteorder)
        return float(value - int.from_bytes(before[offset:offset + size].tobytes(), byteorder))

    return reward


def _make_emulator(backend: str, rom: Path, render: bool, timing: str, sound_emulated: bool):
    """The emulator of `backend`, its settings checked (check_emulator_settings) by the caller."""
    if backend == "pyboy":
        from .reference.pyboy_ref import PyBoyGameBoy

        return PyBoyGameBoy(rom, render=render, sound_emulated=sound_emulated)
    if backend == "rust":
        from .rust_backend import RustGameBoy

        return RustGameBoy(rom, render=render, power_on=timing, sound_emulated=sound_emulated)
    raise ValueError(f"unknown backend {backend!r}: 'pyboy' or 'rust'")


def _read_start_state(start_state: StartState) -> Optional[bytes]:
    if start_state is None or isinstance(start_state, bytes):
        return start_state
    if isinstance(start_state, (str, os.PathLike)):
        path = Path(start_state)
        if not path.is_file():
            raise FileNotFoundError(f"start_state file not found: {path}")
        return path.read_bytes()
    raise ValueError(f"start_state must be bytes, a file path or None, got {type(start_state).__name__}")


def _is_button_mask(mask) -> bool:
    return isinstance(mask, (int, np.integer)) and not isinstance(mask, (bool, np.bool_)) and 0 <= mask <= 0xFF


# The emulators count frames in 32 bits (the Rust core's u32); a frame count is also a wait of
# count / 60 s of game time, and PyBoy would run a 2**40 one for years rather than fail.
MAX_FRAMES = 2**32 - 1


def _check_count(name: str, value, least: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
            or not least <= value <= MAX_FRAMES:
        raise ValueError(f"{name} must be an int in [{least}, 2**32 - 1], got {value!r}")
    return int(value)


def _button_masks(name: str, value) -> tuple:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise ValueError(f"{name} must be a sequence of button masks 0..255, got {value!r}")
    return tuple(value)


@dataclass(frozen=True)
class RomTask:
    """A game as an RL task, checked: what the single env and the vector env (rom_vector_env.py) both
    play. `RomTask.checked` refuses bad settings with a message naming them."""

    observation: str
    actions: tuple[int, ...]
    frames_per_action: int
    press_frames: int
    reward: Optional[Reward]
    terminated: Optional[Terminated]
    start_frames: int
    max_start_delay: int
    reset_inputs: tuple[int, ...]
    start_state: Optional[bytes] = None

    @classmethod
    def checked(cls, observation: str = "wram", actions: Sequence[int] = DEFAULT_ACTIONS, frames_per_action: int = 4,
                press_frames: Optional[int] = None, reward: Optional[Reward] = None,
                terminated: Optional[Terminated] = None, start_frames: int = 1, max_start_delay: int = 64,
                reset_inputs: Sequence[int] = (), start_state: StartState = None) -> RomTask:
        if observation not in OBSERVATIONS:
            raise ValueError(f"observation must be one of {OBSERVATIONS}, got {observation!r}")
        actions = _button_masks("actions", actions)
        if not actions or not all(map(_is_button_mask, actions)):
            raise ValueError(f"actions must be a non-empty sequence of button masks 0..255, got {actions!r}")
        reset_inputs = _button_masks("reset_inputs", reset_inputs)
        if not all(map(_is_button_mask, reset_inputs)):
            raise ValueError(f"reset_inputs must be a sequence of button masks 0..255, got {reset_inputs!r}")
        frames_per_action = _check_count("frames_per_action", frames_per_action, 1)
        press_frames = frames_per_action if press_frames is None else _check_count("press_frames", press_frames, 1)
        if press_frames > frames_per_action:
            raise ValueError(f"press_frames ({press_frames}) exceeds frames_per_action ({frames_per_action})")
        for name, function in (("reward", reward), ("terminated", terminated)):
            if function is not None and not callable(function):
                raise ValueError(f"{name} must be callable or None, got {function!r}")
        start_frames = _check_count("start_frames", start_frames, 1)
        if start_state is not None and start_frames != 1:
            raise ValueError("give start_state or start_frames, not both: a start state replaces the boot")
        return cls(observation, tuple(int(a) for a in actions), frames_per_action, press_frames, reward, terminated,
                   start_frames, _check_count("max_start_delay", max_start_delay, 1),
                   tuple(int(b) for b in reset_inputs), _read_start_state(start_state))

    def observation_space(self) -> spaces.Box:
        if self.observation == "wram":
            return spaces.Box(0, 255, shape=(WRAM_SIZE,), dtype=np.uint8)
        return spaces.Box(0, 3, shape=SCREEN_SHAPE, dtype=np.uint8)

    def reset_phases(self, generator: np.random.Generator) -> tuple[list[tuple[int, int]], int]:
        """An episode's start as phases of (buttons, frames), from the state after `start_frames`:
        a delay from `generator` with no buttons, at least one frame so that the screen observed
        is one this episode drew; then `reset_inputs`, one a frame; then no buttons. And the delay."""
        delay = int(generator.integers(self.max_start_delay))
        return [(0, delay + 1)] + [(buttons, 1) for buttons in self.reset_inputs] + [(0, 0)], delay

    def step_phases(self, action: int) -> list[tuple[int, int]]:
        return [(self.actions[action], self.press_frames), (0, self.frames_per_action - self.press_frames)]

    def reward_of(self, before: np.ndarray, after: np.ndarray) -> float:
        reward = 0.0 if self.reward is None else self.reward(before, after)
        if not isinstance(reward, (int, float, np.integer, np.floating)) or not np.isfinite(reward):
            raise ValueError(f"the reward function returned {reward!r}; it must return a finite number")
        return float(reward)

    def is_terminated(self, wram: np.ndarray) -> bool:
        if self.terminated is None:
            return False
        ended = self.terminated(wram)
        if not isinstance(ended, (bool, np.bool_)):  # "no" or an array would otherwise end or fail obscurely
            raise ValueError(f"the terminated function returned {ended!r}; it must return a bool")
        return bool(ended)


class GameBoyRomEnv(EmulatorEnv):
    metadata = {"render_modes": ["rgb_array"], "render_fps": 60}

    def __init__(self, rom: Union[str, os.PathLike, None] = None, backend: str = "rust", *,
                 observation: str = "wram", actions: Sequence[int] = DEFAULT_ACTIONS, frames_per_action: int = 4,
                 press_frames: Optional[int] = None, reward: Optional[Reward] = None,
                 terminated: Optional[Terminated] = None, start_frames: int = 1, max_start_delay: int = 64,
                 reset_inputs: Sequence[int] = (), start_state: StartState = None,
                 render_mode: Optional[str] = None, timing: str = "pyboy", sound_emulated: bool = False):
        """`timing` (Rust backend): "pyboy" = PyBoy-compatible, the same game as PyBoy's frame for
        frame; "dmg" = the hardware's. `sound_emulated` (both): False = the sound registers read 0 and
        ignore writes (PyBoy's fastest configuration); True = emulated. `start_state`: a state from
        `save_state()` (bytes, or a file holding them) that every episode starts from instead of
        the boot's `start_frames`; each emulator reads only its own states."""
        check_rom_arguments(rom)
        check_emulator_settings(backend, timing, sound_emulated)
        self.task = RomTask.checked(observation, actions, frames_per_action, press_frames, reward, terminated,
                                    start_frames, max_start_delay, reset_inputs, start_state)
        checked_render_mode(render_mode, self.metadata["render_modes"])
        self.backend, self.observation, self.render_mode = backend, observation, render_mode
        self.action_space = spaces.Discrete(len(self.task.actions))
        self.observation_space = self.task.observation_space()
        self._emulator = _make_emulator(backend, Path(rom), observation == "screen" or render_mode is not None,
                                        timing, bool(sound_emulated))
        # PyBoy runs its boot ROM first; ours starts at the game's first instruction (l3_backends).
        self._boot_frames = self.task.start_frames + (PYBOY_BOOT_ROM_FRAMES if backend == "pyboy" else 0)
        self._start_state: Optional[bytes] = None
        if self.task.start_state is not None:
            load_start_state(self._emulator, self.task.start_state, backend)
            self._start_state = self.task.start_state
        self._wram = np.zeros(WRAM_SIZE, dtype=np.uint8)
        self._needs_reset = True

    def save_state(self) -> bytes:
        """The emulator's whole state now: give it as `start_state` to start episodes here (in an
        env on the same ROM and backend)."""
        self._refuse_if_closed()
        return self._emulator.save_state()

    def _read_wram(self) -> np.ndarray:
        return np.frombuffer(self._emulator.read_memory(*WRAM), dtype=np.uint8).copy()

    def _observe(self) -> np.ndarray:
        return self._wram.copy() if self.observation == "wram" else self._emulator.screen_shades()

    def _play(self, phases: Sequence[tuple[int, int]]) -> None:
        for buttons, frames in phases:
            self._emulator.set_buttons(buttons)
            if frames:
                self._emulator.run_frames(frames)

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        self._refuse_if_closed()
        refuse_bool_seed(seed)
        super().reset(seed=seed)
        if self._start_state is None:
            self._play([(0, self._boot_frames)])
            self._start_state = self._emulator.save_state()
        phases, delay = self.task.reset_phases(self.np_random)
        self._emulator.load_state(self._start_state)
        self._play(phases)
        self._wram = self._read_wram()
        self._needs_reset = False
        return self._observe(), {"start_delay": delay}

    def step(self, action):
        self._refuse_if_closed()
        if self._needs_reset:
            raise RuntimeError("call reset() before step()")
        action = check_discrete_action(action, self.action_space.n, "an index into the env's actions")
        before = self._wram
        self._play(self.task.step_phases(action))
        self._wram = self._read_wram()
        reward = self.task.reward_of(before, self._wram)
        terminated = self.task.is_terminated(self._wram)
        if terminated:
            self._needs_reset = True
        return self._observe(), reward, terminated, False, {}


def check_rom_arguments(rom) -> None:
    if rom is None:
        raise ValueError("rom: give the path of a Game Boy ROM (.gb), e.g. gymnasium.make(id, rom='game.gb')")
    if not Path(rom).is_file():
        raise FileNotFoundError(f"Game Boy ROM not found: {rom}")

