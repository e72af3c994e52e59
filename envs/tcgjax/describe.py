"""An observation as text: what render_mode="ansi" shows on both TCG envs.

It reads only the observation vector (reference/observation.py's layout), so it shows what the agent
sees (its own hand, of the opponent only counts) and is the same on both engines, whose observations
are equal bit for bit (L3). Card names come from the card pool, by the index each card's features
carry. Energy counts above 5 show as "5+" (the observation caps them there).
"""

from __future__ import annotations

import numpy as np

from envs.tcgjax.reference import actions as A
from envs.tcgjax.reference.cards import ENERGY_TYPES, POKEMON_TYPES, load_pool
from envs.tcgjax.reference.observation import (
    BOARD_SIZE,
    GLOBAL_SIZE,
    HAND_FEATURES,
    MASK_SLICE,
    MAX_DAMAGE,
    MAX_HP,
    OBS_SIZE,
    POKEMON_FEATURES,
    ZONE_SIZE,
)

PHASES = ("setup", "main", "promote")
STATUSES = ("Poisoned", "Burned", "Asleep", "Paralyzed", "Confused")
# POKEMON_FEATURES' offsets (reference/observation.py's _pokemon)
_INDEX, _HP, _DAMAGE, _HP_LEFT, _TYPE = 1, 2, 3, 4, 5
_ENERGY = 5 + 10 + 10 + 3 + 3
_STATUS = _ENERGY + len(ENERGY_TYPES) + 1


def _count(value: float, scale: float) -> int:
    return int(round(float(value) * scale))


def _card_name(value: float) -> str:
    pool = load_pool()
    return pool[_count(value, len(pool))].name


def _one_hot_name(one_hot: np.ndarray, names) -> str:
    hot = np.flatnonzero(one_hot > 0.5)
    return names[hot[0]] if hot.size else "none"


def _pokemon_line(slot_name: str, features: np.ndarray) -> str:
    hp = _count(features[_HP], MAX_HP)
    left = _count(features[_HP_LEFT], MAX_HP)
    damage = _count(features[_DAMAGE], MAX_DAMAGE)
    kind = _one_hot_name(features[_TYPE:_TYPE + 10], POKEMON_TYPES)
    energy = [f"{ENERGY_TYPES[t]} x{count if count < 5 else '5+'}"
              for t in range(len(ENERGY_TYPES)) if (count := _count(features[_ENERGY + t], 5))]
    statuses = [name for name, flag in zip(STATUSES, features[_STATUS:_STATUS + 5], strict=True) if flag > 0.5]
    line = f"  {slot_name:<8}{_card_name(features[_INDEX])} ({kind}) HP {left}/{hp}"
    if damage and damage != hp - left:  # damage beyond the HP, capped as the observation caps it
        line += f" (damage {damage})"
    line += f"  Energy: {', '.join(energy) if energy else 'none'}"
    return line + (f"  [{', '.join(statuses)}]" if statuses else "")


def _board(board: np.ndarray) -> list[str]:
    lines = []
    for slot in range(4):
        features = board[slot * POKEMON_FEATURES:(slot + 1) * POKEMON_FEATURES]
        if features[0] > 0.5:
            lines.append(_pokemon_line("Active" if slot == 0 else f"Bench {slot}", features))
    return lines or ["  (no Pokemon in play)"]


def describe_observation(obs: np.ndarray, max_turns: int = 30) -> str:
    """The observation `obs` (float32[OBS_SIZE]) as a few lines of text, from the agent's side;
    max_turns: the rules' turn limit, to print the turn number (RuleConfig.max_turns)."""
    obs = np.asarray(obs, dtype=np.float32)
    if obs.shape != (OBS_SIZE,):
        raise ValueError(f"a TCG observation has shape ({OBS_SIZE},), got {obs.shape}")
    g = obs[:GLOBAL_SIZE]
    phase = _one_hot_name(g[2:5], PHASES)
    whose = "your turn" if g[1] > 0.5 else "the opponent's turn"
    first = "you went first" if g[19] > 0.5 else "the opponent went first"
    zone = obs[GLOBAL_SIZE:GLOBAL_SIZE + ZONE_SIZE]
    current = _one_hot_name(zone[0:9], ENERGY_TYPES + ("none",))
    board = obs[GLOBAL_SIZE + ZONE_SIZE:GLOBAL_SIZE + ZONE_SIZE + BOARD_SIZE]
    hand_start = GLOBAL_SIZE + ZONE_SIZE + BOARD_SIZE
    hand = [_card_name(obs[hand_start + h * HAND_FEATURES + 1])
            for h in range(A.HAND_SLOTS) if obs[hand_start + h * HAND_FEATURES] > 0.5]
    hand_count = _count(g[9], 10)
    legal = int((obs[MASK_SLICE[0]:MASK_SLICE[1]] > 0.5).sum())
    lines = [
        f"Turn {_count(g[0], max_turns)}, {whose} ({phase}); {first}",
        f"Points: you {_count(g[5], 3)}, opponent {_count(g[6], 3)}   "
        f"deck {_count(g[7], 20)} / {_count(g[8], 20)}   hand {hand_count} / {_count(g[10], 10)}",
        f"Energy zone: current {current}, next {_one_hot_name(zone[9:17], ENERGY_TYPES)}; "
        f"the opponent's next {_one_hot_name(zone[17:25], ENERGY_TYPES)}",
        "Your Pokemon:", *_board(board[:4 * POKEMON_FEATURES]),
        "The opponent's Pokemon:", *(["  (face down until both players have placed)"] if phase == "setup"
                                     else _board(board[4 * POKEMON_FEATURES:])),
        f"Your hand: {', '.join(hand) if hand else '(empty)'}"
        + (f" (and {hand_count - len(hand)} more)" if hand_count > len(hand) else ""),
        f"Legal actions: {legal}",
    ]
    return "\n".join(lines)
