"""Between the engine's arrays and Showdown's protocol: teams as Showdown sets, a request as the
engine's 9-action legal mask, an action as a Showdown choice string. Used by the L3 harness, the
Showdown Gymnasium env and the benchmark, so all three speak to Showdown the same way."""

from __future__ import annotations

from typing import Any

import numpy as np

from envs.pokejax.jax import battle as jb
from envs.pokejax.jax.tables import STAT_NAMES, gen1_tables


def showdown_sets(species, level, moves, ivs, evs) -> list[dict[str, Any]]:
    """One side's team ([6] species and levels, [6, 4] moves, [6, 5] IVs and stat exp in STAT_NAMES
    order) as Showdown sets; Gen 1's one Special stat is given as both spa and spd."""
    t = gen1_tables()
    sets = []
    for i in range(len(species)):
        iv = dict(zip(STAT_NAMES, np.asarray(ivs[i]).tolist(), strict=True))
        ev = dict(zip(STAT_NAMES, np.asarray(evs[i]).tolist(), strict=True))
        iv["spd"], ev["spd"] = iv["spa"], ev["spa"]
        sets.append(
            {
                "species": t.species_ids[int(species[i])],
                "level": int(level[i]),
                "moves": [t.move_ids[int(m)] for m in moves[i] if m],
                "ivs": iv,
                "evs": ev,
            }
        )
    return sets


def showdown_legal(request: dict[str, Any] | None) -> np.ndarray:
    """The 9 actions a Showdown request allows (moves 1-4, switches to slots 2-6)."""
    legal = np.zeros(jb.NUM_ACTIONS, dtype=bool)
    if request is None or request.get("wait"):
        return legal
    pokemon = request["side"]["pokemon"]
    trapped = not request.get("forceSwitch") and request["active"][0].get("trapped", False)
    for i in range(1, len(pokemon)):
        legal[jb.NUM_MOVE_SLOTS + i - 1] = not trapped and not pokemon[i]["condition"].endswith(" fnt")
    if not request.get("forceSwitch"):
        # a sleeping or frozen Gen 1 Pokemon is offered "Fight" alone, one that must recharge
        # "Recharge" alone (and is trapped); neither has a PP field
        for i, move in enumerate(request["active"][0]["moves"]):
            legal[i] = not move.get("disabled") and move.get("pp", 1) > 0
    return legal


def choice_string(action: int) -> str:
    if action < jb.NUM_MOVE_SLOTS:
        return f"move {action + 1}"
    return f"switch {action - jb.NUM_MOVE_SLOTS + 2}"
