"""Any ROM on N Rust emulators at once: the native vector env of `envport/GameBoyRust-v0`.

    envs = gymnasium.make_vec("envport/GameBoyRust-v0", num_envs=64, rom="game.gb",
                              actions=(0, A, LEFT, RIGHT), reward=counter_increase(0xC0B1))

The same task as N `GameBoyRomEnv(backend="rust")` (rom_env.py, the same keyword arguments) in a
`SyncVectorEnv` with their `TimeLimit`, and the same seeds give the same observations, rewards,
terminations, truncations and infos (tests/l2_rom_vector_env_test.py compares the two step by step,
autoresets included). What differs is the work per step: every env's frames run in one call, in
parallel on Rayon's threads with the GIL released; work RAM is read for the whole batch in one call,
and `reward` and `terminated` are then called once per env, as the single env calls them.
Seeding, autoreset and time limit: phased_vector_env.py.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Sequence, Union

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from .phased_vector_env import PhasedVectorEnv
from .reference.pyboy_ref import WRAM
from .rom_env import DEFAULT_ACTIONS, Reward, RomTask, StartState, Terminated, check_rom_arguments


class GameBoyRomRustVectorEnv(PhasedVectorEnv):
    """`num_envs` consoles playing one ROM as one task (see the module docstring)."""

    def __init__(self, num_envs: int, rom: Union[str, os.PathLike, None] = None, *, observation: str = "wram",
                 actions: Sequence[int] = DEFAULT_ACTIONS, frames_per_action: int = 4,
                 press_frames: Optional[int] = None, reward: Optional[Reward] = None,
                 terminated: Optional[Terminated] = None, start_frames: int = 1, max_start_delay: int = 64,
                 reset_inputs: Sequence[int] = (), start_state: StartState = None,
                 max_episode_steps: Optional[int] = None,
                 autoreset_mode: Union[AutoresetMode, str] = AutoresetMode.NEXT_STEP, timing: str = "pyboy",
                 threads: int = 0, backend: str = "rust", render_mode: Optional[str] = None,
                 sound_emulated: bool = False):
        """The task's arguments as for `GameBoyRomEnv`. `threads`: Rayon threads (0 = one per
        core). `max_episode_steps`: truncation, as Gymnasium's `TimeLimit` (None = never)."""
        check_rom_arguments(rom)
        self.task = RomTask.checked(observation, actions, frames_per_action, press_frames, reward, terminated,
                                    start_frames, max_start_delay, reset_inputs, start_state)
        rom_bytes = Path(rom).read_bytes()
        super().__init__(num_envs, rom_bytes, boot_frames=self.task.start_frames, render=observation == "screen",
                         max_episode_steps=max_episode_steps, autoreset_mode=autoreset_mode, timing=timing,
                         threads=threads, backend=backend, render_mode=render_mode, sound_emulated=sound_emulated,
                         start_state=self.task.start_state)
        self.single_observation_space = self.task.observation_space()
        self.single_action_space = spaces.Discrete(len(self.task.actions))
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

    def _reset_phases(self, generator: np.random.Generator):
        phases, delay = self.task.reset_phases(generator)
        return phases, {"start_delay": delay}

    def _step_phases(self, actions: np.ndarray):
        return [self.task.step_phases(int(action)) for action in actions]

    def _read(self):
        wram = self._vec.read_range(*WRAM)
        observations = wram.copy() if self.task.observation == "wram" else self._vec.screens()
        return observations, wram

    def _judge(self, before: np.ndarray, after: np.ndarray, stepping: np.ndarray):
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminated = np.zeros(self.num_envs, dtype=bool)
        for i in np.flatnonzero(stepping):
            rewards[i] = self.task.reward_of(before[i], after[i])
            terminated[i] = self.task.is_terminated(after[i])
        return rewards, terminated
