"""What the native vector envs over `emurust_core.GameBoyVec` share: N consoles of one ROM, each
step's and reset's inputs run as phases of (buttons, frames) for every console in one call (in
parallel on Rayon's threads, the GIL released), with seeding, autoreset, time limit and infos as
Gymnasium's `SyncVectorEnv` gives them over N single envs.

A subclass says what a reset and a step play and what they read:
- `_reset_phases(generator)`: the phases that start an episode in a console just loaded with the
  boot state, drawn from that env's generator, and the single env's extra reset info;
- `_step_phases(actions)`: every env's step phases;
- `_read()`: the observations and a per-env reading (one row per env) after a run;
- `_judge(before, after, stepping)`: rewards and terminations of the stepping envs from their
  readings before and after the step;
- `_reading_info(reading)`: info every step and reset reports for every env (e.g. the score).

Seeding follows `SyncVectorEnv`: `reset(seed=s)` seeds env i with s + i (`reset(seed=[...])` gives
each its own); each episode's start delay comes from that env's own generator. Autoreset:
`autoreset_mode` NEXT_STEP (Gymnasium's default) or SAME_STEP, as `SyncVectorEnv` does them; SAME_STEP
puts the last observation of a finished episode in `info["final_obs"]` and its step info in
`info["final_info"]`. `render_mode="rgb_array"`: `render()` gives each env's screen, as
`SyncVectorEnv.render` gives the single envs' frames.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import gymnasium
import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode

from shared.episode_seeds import EpisodeSeeds
from shared.render_mode import checked_render_mode, warn_no_render_mode
from shared.vector_actions import check_discrete_actions
from shared.vector_settings import checked_autoreset_mode, checked_max_episode_steps, checked_num_envs

from .build_ext import load_core
from .emulator_env import GREYS, check_emulator_settings, load_start_state

Phases = Sequence[tuple[int, int]]


class _Console:
    """Console `index` of a GameBoyVec, as one emulator for `load_start_state`."""

    def __init__(self, vec, index: int):
        self._vec, self._index = vec, index

    def load_state(self, state: bytes) -> None:
        self._vec.load_state(self._index, state)


class PhasedVectorEnv(gymnasium.vector.VectorEnv):
    metadata = {"render_modes": ["rgb_array"], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int, rom: bytes, *, boot_frames: int, render: bool,
                 max_episode_steps: Optional[int], autoreset_mode: Union[AutoresetMode, str], timing: str,
                 threads: int, backend: str, render_mode: Optional[str], sound_emulated: bool,
                 start_state: Optional[bytes] = None):
        """`boot_frames`: frames from power-on (no buttons) to the state every episode starts
        from, unless `start_state` (a Rust `save_state()`) gives that state itself. `render`: whether
        the task's observation needs the consoles' screens drawn (they are also drawn with
        `render_mode="rgb_array"`). The rest as the subclasses document them."""
        if backend != "rust":
            raise ValueError(f"the vector env runs the Rust emulator only, got backend={backend!r}")
        checked_render_mode(render_mode, self.metadata["render_modes"])
        check_emulator_settings(backend, timing, sound_emulated)
        if isinstance(threads, (bool, np.bool_)) or not isinstance(threads, (int, np.integer)):
            raise ValueError(f"threads must be an int (0: one per core), got {threads!r}")  # its range: the core's
        self.num_envs = checked_num_envs(num_envs)
        self.max_episode_steps = checked_max_episode_steps(max_episode_steps)
        self.autoreset_mode = checked_autoreset_mode(autoreset_mode)
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self.render_mode = render_mode
        render = render or render_mode is not None
        self._vec = load_core().GameBoyVec(rom, self.num_envs, threads=threads, render=render, power_on=timing,
                                           sound_emulated=bool(sound_emulated))
        self._boot_frames = boot_frames
        self._boot_state: Optional[bytes] = None
        if start_state is not None:
            load_start_state(_Console(self._vec, 0), start_state, backend)
            self._boot_state = start_state
        self._generators: list[np.random.Generator] = [seeding.np_random(None)[0] for _ in range(self.num_envs)]
        self._reading: Optional[np.ndarray] = None
        self._elapsed = np.zeros(self.num_envs, dtype=np.int64)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        self._needs_reset = True

    # -- what a subclass defines ---------------------------------------------------------------------

    def _reset_phases(self, generator: np.random.Generator) -> tuple[Phases, dict]:
        raise NotImplementedError

    def _step_phases(self, actions: np.ndarray) -> list[Phases]:
        raise NotImplementedError

    def _read(self) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def _judge(self, before: np.ndarray, after: np.ndarray, stepping: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def _reading_info(self, reading: np.ndarray) -> dict[str, np.ndarray]:
        return {}

    # -- emulation -------------------------------------------------------------------------------------

    def _boot(self) -> bytes:
        """The state every episode starts from (booted once, in console 0)."""
        if self._boot_state is None:
            self._run([[(0, self._boot_frames)]] + [[]] * (self.num_envs - 1))
            self._boot_state = self._vec.save_state(0)
        return self._boot_state

    def _run(self, phases: list[Phases]) -> None:
        """Runs console i's `phases[i]`; shorter lists are padded with (no buttons, 0 frames),
        which still sets the buttons, as every list ends with none held."""
        width = max(len(own) for own in phases)
        buttons = np.zeros((self.num_envs, width), dtype=np.uint8)
        frames = np.zeros((self.num_envs, width), dtype=np.int64)
        for i, own in enumerate(phases):
            for p, (mask, count) in enumerate(own):
                buttons[i, p], frames[i, p] = mask, count
        self._vec.run_phases(buttons, frames)

    def _start_episodes(self, which: np.ndarray, phases: list[Phases], infos: dict) -> None:
        """Loads the boot state into the consoles `which`, sets their reset phases and adds their
        reset infos."""
        boot = self._boot()
        for i in np.flatnonzero(which):
            self._vec.load_state(int(i), boot)
            phases[i], extra = self._reset_phases(self._generators[i])
            self._add_info(infos, extra, int(i))

    def _with_reading_info(self, infos: dict, reading: np.ndarray, which: np.ndarray) -> dict:
        for key, values in self._reading_info(reading).items():
            if key in infos:
                infos[key][which] = values[which]
            else:
                infos[key], infos[f"_{key}"] = values.copy(), np.ones(self.num_envs, dtype=bool)
        return infos

    # -- Gymnasium API ------------------------------------------------------------------------------

    def reset(self, *, seed: Optional[Union[int, Sequence[Optional[int]]]] = None, options: Optional[dict] = None):
        self._refuse_if_closed()
        super().reset(seed=None)
        # None, an int (env i seeded seed + i) or one int or None per env, each checked as Gymnasium's
        # seeding checks a single env's (and bools refused)
        seeds = EpisodeSeeds(self.num_envs).per_env(seed)
        for i, env_seed in enumerate(seeds):
            if env_seed is not None:
                self._generators[i] = seeding.np_random(env_seed)[0]
        everyone = np.ones(self.num_envs, dtype=bool)
        phases: list[Phases] = [[] for _ in range(self.num_envs)]
        infos: dict[str, Any] = {}
        self._start_episodes(everyone, phases, infos)
        self._run(phases)
        observations, self._reading = self._read()
        self._elapsed[:] = 0
        self._autoreset[:] = False
        self._needs_reset = False
        return observations, self._with_reading_info(infos, self._reading, everyone)

    def step(self, actions):
        self._refuse_if_closed()
        if self._needs_reset:
            raise RuntimeError("call reset() before step()")
        actions = check_discrete_actions(actions, self.num_envs, self.single_action_space.n)
        resetting = self._autoreset.copy() if self.autoreset_mode == AutoresetMode.NEXT_STEP else np.zeros(
            self.num_envs, dtype=bool)
        stepping = ~resetting
        phases = self._step_phases(actions)
        infos: dict[str, Any] = {}
        self._start_episodes(resetting, phases, infos)
        self._run(phases)
        observations, reading = self._read()
        rewards, terminated = self._judge(self._reading, reading, stepping)
        rewards = np.where(stepping, rewards, 0.0).astype(np.float64)
        terminated = np.asarray(terminated, dtype=bool) & stepping
        self._reading = reading
        self._elapsed = np.where(stepping, self._elapsed + 1, 0)
        if self.max_episode_steps is None:
            truncated = np.zeros(self.num_envs, dtype=bool)
        else:
            truncated = stepping & (self._elapsed >= self.max_episode_steps)
        finished = terminated | truncated
        self._with_reading_info(infos, reading, np.ones(self.num_envs, dtype=bool))

        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            self._autoreset = finished
        elif finished.any():  # SAME_STEP: the finished envs start again now
            step_info = self._reading_info(reading)
            phases = [[] for _ in range(self.num_envs)]
            for i in np.flatnonzero(finished):
                final_info = {key: values[i] for key, values in step_info.items()}
                self._add_info(infos, {"final_obs": observations[i].copy(), "final_info": final_info}, int(i))
            self._start_episodes(finished, phases, infos)
            self._run(phases)
            new_observations, new_reading = self._read()
            observations[finished] = new_observations[finished]
            self._reading[finished] = new_reading[finished]
            self._elapsed[finished] = 0
            self._with_reading_info(infos, new_reading, finished)
        return observations, rewards, terminated, truncated, infos

    def render(self) -> Optional[tuple[np.ndarray, ...]]:
        """With render_mode "rgb_array", each env's screen as RGB (144, 160, 3) in PyBoy's grey
        palette, as `SyncVectorEnv.render` gives the single envs' frames; None otherwise."""
        self._refuse_if_closed()
        if self.render_mode != "rgb_array":
            warn_no_render_mode("rgb_array")
            return None
        return tuple(GREYS[self._vec.screens()])

    def close_extras(self, **kwargs: Any) -> None:
        self._vec = None

    def _refuse_if_closed(self) -> None:
        if self._vec is None:
            raise RuntimeError(f"this {type(self).__name__} is closed: make a new vector env")
