"""L3's 100 2048 episodes against PyBoy, shared by l3_pyboy_test.py (episodes 0-49) and
l3_2048_later_test.py (50-99): two files, so that Pants runs the halves on both cores. Together they
play exactly the episodes of one 100-episode run (`compare_rollouts`' `first_episode`)."""

from __future__ import annotations

from envs.emurust import game2048
from envs.emurust.l3_backends import Scripted2048Inputs, pyboy_backend, rust_backend
from shared.verification.l3 import L3Result, compare_rollouts

EPISODES = 100
MOVES_PER_EPISODE = 50


def compare_2048_episodes(first_episode: int, episodes: int) -> L3Result:
    """Episodes `first_episode`.. of the 100: a random start delay, START, then MOVES_PER_EPISODE
    random moves; every frame's screen and whole state equal on both emulators."""
    if not 0 <= first_episode <= first_episode + episodes <= EPISODES:
        raise ValueError(f"episodes {first_episode}..{first_episode + episodes - 1} are not among the {EPISODES}")
    inputs = Scripted2048Inputs(moves=MOVES_PER_EPISODE)
    max_frames = (game2048.BOOT_FRAMES + game2048.MAX_START_DELAY + game2048.PRESS_FRAMES
                  + game2048.START_SETTLE_FRAMES + MOVES_PER_EPISODE * game2048.FRAMES_PER_ACTION)
    pyboy = pyboy_backend()
    try:
        return compare_rollouts(
            pyboy,
            rust_backend(),
            env_name="emurust-2048",
            episodes=episodes,
            first_episode=first_episode,
            action_source=inputs,
            max_steps=max_frames,
            reference_factory="envs.emurust.l3_backends:pyboy_backend",
            translation_factory="envs.emurust.l3_backends:rust_backend",
        )
    finally:
        pyboy._emulator.close()
