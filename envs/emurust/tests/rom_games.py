"""The homebrew games the any-ROM env tests play, as tasks (rom_env.py's keyword arguments)."""

from envs.emurust.game2048 import HERE
from envs.emurust.rom_env import DOWN, LEFT, RIGHT, START, UP, A, counter_increase

GAMES = HERE / "data" / "roms" / "games"
MMUSZKOW_2048 = GAMES / "2048-mmuszkow" / "2048.gb"
TOBU = GAMES / "tobutobugirl" / "tobutobugirl.gb"
# mmuszkow's 2048 (data/roms/SOURCES.md): score u16 LE at 0xC2E9, shown on screen as "SCORE". START
# on its title screen begins a game; it misses presses shorter than about 8 frames (L3's run of it).
GAME_2048 = dict(actions=(UP, DOWN, LEFT, RIGHT), frames_per_action=40, press_frames=10, start_frames=120,
                 reset_inputs=[START] * 5 + [0] * 60, reward=counter_increase(0xC2E9, size=2))
# Tobu Tobu Girl: kills u8 at 0xC0B1.
TOBU_GAME = dict(actions=(0, START, A, LEFT, RIGHT, A | LEFT, A | RIGHT), frames_per_action=10,
                 reward=counter_increase(0xC0B1))
