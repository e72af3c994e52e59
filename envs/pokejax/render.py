"""A battle as text: what render_mode="ansi" shows on both PokeJAX backends.

Each backend builds the same `BattleView`, the JAX envs from the engine's BattleState and the Showdown
env from Showdown's own state snapshot (`showdown_view`, read field by field as L3 compares them), and
one function writes it. So the two texts are equal exactly where the two battles agree on what the
text shows, and a test plays both side by side. The text shows the whole battle, as the observation
does (p2's team included): each side's team in Showdown's order (the active Pokemon first, marked
">") with level, HP and status; each active Pokemon's stat stages, volatiles (Showdown's ids) and
moves with their PP; how the battle ended; and p1's legal actions as Showdown's choices. Names are Showdown's
(`gen_data.py`). A transformed Pokemon shows the species it turned into, as Showdown's state does.

    Turn 3, decision 2 of at most 500
    p1
      > Blastoise    L65  HP 120/186  PAR
          stages: atk -1, spe +2
          volatiles: reflect, substitute
          moves: String Shot (61 PP), Vise Grip (47 PP), Waterfall (24 PP), Lovely Kiss (16 PP)
        Growlithe    L95  HP 285/285
        Slowbro      L95  fainted
    p2
      ...
    Legal actions: 0 move 1, 1 move 2, 2 move 3, 3 move 4, 4 switch to Growlithe
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Optional

import jax
import numpy as np

from . import gen_data
from .jax import battle as jb
from .jax.tables import BOOST_KEYS, STATUSES, VOLATILES, gen1_tables

# the stage columns' short names (BOOST_KEYS order; Gen 1's one Special is Showdown's spa and spd)
STAGE_NAMES = ("atk", "def", "spc", "spe", "acc", "eva")
WINNERS = {"p1": "p1 won", "p2": "p2 won", "": "a draw (both sides' last Pokemon fell together)"}


@dataclasses.dataclass(frozen=True)
class PokemonView:
    species: str  # Showdown's id (a transformed Pokemon's target's)
    level: int
    hp: int
    max_hp: int
    status: str  # an entry of tables.STATUSES ("" healthy, "fnt" fainted)


@dataclasses.dataclass(frozen=True)
class ActiveView:
    stages: tuple[int, ...]  # BOOST_KEYS order
    volatiles: tuple[str, ...]  # VOLATILES order
    moves: tuple[tuple[str, int], ...]  # (move id, PP) for each filled slot
    transformed: bool


@dataclasses.dataclass(frozen=True)
class BattleView:
    turn: int
    teams: tuple[tuple[PokemonView, ...], ...]  # [side][slot], Showdown's order, the active first
    actives: tuple[ActiveView, ...]  # [side]
    result: Optional[str]  # None while it goes on, else "p1", "p2" or "" (a draw)


@functools.cache
def _names() -> dict[str, str]:
    """Showdown's display names by id, species and moves ("mrmime" -> "Mr. Mime")."""
    data = gen_data.gen1_data()
    return {entry["id"]: entry["name"] for entry in data["species"] + data["moves"]}


def name(showdown_id: str) -> str:
    return _names().get(showdown_id, showdown_id)


def jax_view(battle: jb.BattleState) -> BattleView:
    """The view of one (unbatched) battle of the JAX engine."""
    t = gen1_tables()
    b = jax.device_get(battle)
    species = np.asarray(jb.current_species(b))
    teams = tuple(
        tuple(
            PokemonView(
                t.species_ids[int(species[side, slot])],
                int(b.level[side, slot]),
                int(b.hp[side, slot]),
                int(b.stats[side, slot, jb.HP]),
                STATUSES[int(b.status[side, slot])],
            )
            for slot in range(jb.TEAM_SIZE)
        )
        for side in range(jb.NUM_SIDES)
    )
    actives = tuple(
        ActiveView(
            tuple(int(stage) for stage in b.boosts[side]),
            tuple(v for v, on in zip(VOLATILES, b.volatiles[side], strict=True) if on),
            tuple((t.move_ids[int(m)], int(pp)) for m, pp in zip(b.moves[side, 0], b.pp[side, 0], strict=True) if m),
            bool(b.transformed_into[side]),
        )
        for side in range(jb.NUM_SIDES)
    )
    result = None
    if bool(b.ended):
        result = {jb.P1_WINS: "p1", jb.P2_WINS: "p2"}.get(int(b.winner), "")
    return BattleView(int(b.turn), teams, actives, result)


def showdown_view(snap: dict[str, Any]) -> BattleView:
    """The view of a battle from a Showdown snapshot (reference/showdown.py's start and choose)."""
    state = snap["state"]
    teams = tuple(
        tuple(PokemonView(p["species"], p["level"], p["hp"], p["maxhp"], p["status"]) for p in side["pokemon"])
        for side in state["sides"]
    )
    actives = []
    for side in state["sides"]:
        active = side["pokemon"][0]
        actives.append(
            ActiveView(
                tuple(active["boosts"][keys[0]] for keys in BOOST_KEYS),
                tuple(v for v in VOLATILES if v in active["volatiles"]),
                tuple((m["id"], m["pp"]) for m in active["moves"]),
                bool(active["transformed"]),
            )
        )
    result = None
    if snap["ended"]:
        result = snap["winner"] if snap["winner"] in ("p1", "p2") else ""
    return BattleView(state["turn"], teams, tuple(actives), result)


def _pokemon_line(pokemon: PokemonView, active: bool) -> str:
    marker = ">" if active else " "
    line = f"  {marker} {name(pokemon.species):<12} L{pokemon.level:<3}"
    if pokemon.hp == 0:
        return f"{line} fainted"
    status = f"  {pokemon.status.upper()}" if pokemon.status else ""
    return f"{line} HP {pokemon.hp}/{pokemon.max_hp}{status}"


def _active_lines(active: ActiveView) -> list[str]:
    lines = []
    stages = [f"{stage_name} {stage:+d}" for stage_name, stage in zip(STAGE_NAMES, active.stages, strict=True) if stage]
    if stages:
        lines.append("stages: " + ", ".join(stages))
    if active.volatiles or active.transformed:
        lines.append("volatiles: " + ", ".join((("transformed",) if active.transformed else ()) + active.volatiles))
    lines.append("moves: " + ", ".join(f"{name(move)} ({pp} PP)" for move, pp in active.moves))
    return [f"      {line}" for line in lines]


def battle_text(view: BattleView, legal_mask: np.ndarray, decisions: int, max_decisions: int) -> str:
    """The text of a view, with p1's legal actions (`legal_mask`, 9 entries) by name."""
    lines = [f"Turn {view.turn}, decision {decisions} of at most {max_decisions}"]
    for side, team in enumerate(view.teams):
        lines.append(f"p{side + 1}")
        for slot, pokemon in enumerate(team):
            lines.append(_pokemon_line(pokemon, slot == 0))
            if slot == 0 and pokemon.hp > 0:
                lines.extend(_active_lines(view.actives[side]))
    if view.result is not None:
        lines.append(f"Battle over: {WINNERS[view.result]}")
    legal = []
    for action in np.flatnonzero(legal_mask):
        # a move action is Showdown's "move n", not the slot's move: a sleeping, recharging or locked
        # Pokemon's only button, and Struggle, are "move 1" too
        if action < jb.NUM_MOVE_SLOTS:
            legal.append(f"{action} move {action + 1}")
        else:
            legal.append(f"{action} switch to {name(view.teams[0][action - jb.NUM_MOVE_SLOTS + 1].species)}")
    lines.append("Legal actions: " + (", ".join(legal) if legal else "none"))
    return "\n".join(lines) + "\n"
