"""L3: episodes 50-99 of the 100 2048 episodes against PyBoy, frame by frame (l3_pyboy_test.py runs
0-49 and explains the PyBoy-compatible timing; `episodes_2048.py` the episodes). A file of its own so
that Pants runs the two halves side by side."""

from envs.emurust.tests.episodes_2048 import compare_2048_episodes


def test_2048_frame_by_frame_episodes_50_to_99():
    result = compare_2048_episodes(first_episode=50, episodes=50)
    assert result.episodes == 50
    assert result.steps > 50 * 50 * 24  # every episode played its 50 moves of 24 frames
