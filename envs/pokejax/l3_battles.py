"""L3 for PokeJAX: battles played on Showdown and on the JAX engine from the same seed and the same
random legal choices, compared after every decision: the PRNG state, the turn, every Pokemon's
species (in Showdown's current team order), HP, PP, status (and sleep counter), stored, modified
and cached stats, stages, volatiles and their counters, types, each side's last selected move and
slot, the battle's lastDamage, the legal actions, the end and the winner.

Battles are within jax/battle.py's scope: two teams of six random species with random levels
(50-100), DVs and stat experience, each knowing four random SUPPORTED_MOVES (damage-only moves and
the status moves); every third battle is a
mirror match (both sides the same team), where every speed ties and every tie-breaking draw is
exercised. Battle i uses Showdown seed `battle_seed(i)` (sodium for even i, gen5 for odd) and
NumPy's default_rng(i) for its teams and choices, so one number reproduces it:

    python -m envs.pokejax.l3_battles --battles 100          # compare, stop at the first divergence
    python -m envs.pokejax.l3_battles --first 17 --battles 1 # replay battle 17
    python -m envs.pokejax.l3_battles --format gen1randombattle --battles 100  # Showdown's random battles
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import functools
import re
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envs.pokejax.jax import battle as jb
from envs.pokejax.jax import prng
from envs.pokejax.jax import teams as jax_teams
from envs.pokejax.jax.tables import BOOST_KEYS, STAT_NAMES, STATUSES, VOLATILES, gen1_tables
from envs.pokejax.reference.showdown import Showdown
from envs.pokejax.showdown_io import choice_string, showdown_legal, showdown_sets

FORMAT = "gen1customgame"
RANDOM_FORMAT = "gen1randombattle"
# gen1randombattle battle i takes its team seeds from battle_seed(RANDOM_TEAM_SEEDS + 2 i + side)
RANDOM_TEAM_SEEDS = 1_000_000
# A volatile's counter in Showdown's effect state, and the BattleState field that holds it
VOLATILE_COUNTERS = (
    ("confusion", "time", "confusion_turns"),
    ("residualdmg", "counter", "toxic_counter"),
    ("substitute", "hp", "substitute_hp"),
    ("disable", "time", "disable_turns"),
    ("disable", "slotIndex", "disable_slot"),
    ("lockedmove", "time", "locked_turns"),
    ("lockedmove", "accuracy", "locked_accuracy"),
    ("rage", "accuracy", "locked_accuracy"),
    ("partialtrappinglock", "duration", "trap_turns"),
    ("partialtrappinglock", "totalDuration", "trap_total"),
    ("partialtrappinglock", "damage", "trap_damage"),
    ("partiallytrapped", "duration", "trapped_turns"),
    ("partiallytrapped", "maybeLocked", "trapped_maybe_locked"),  # absent in Showdown until set
    ("fakepartiallytrapped", "duration", "fake_trapped_turns"),
    ("bide", "time", "bide_turns"),
    ("bide", "damage", "bide_damage"),
)
# Showdown's modifiedStats keys and the JAX column each is compared with (spa and spd: Special)
MODIFIED_COLUMNS = {"atk": jb.ATK, "def": jb.DEF, "spa": jb.SPC, "spd": jb.SPC, "spe": jb.SPE}


@dataclasses.dataclass
class Team:
    species: np.ndarray  # [6]
    level: np.ndarray  # [6]
    moves: np.ndarray  # [6, 4]
    ivs: np.ndarray  # [6, 5]
    evs: np.ndarray  # [6, 5]

    def showdown_sets(self) -> list[dict[str, Any]]:
        return showdown_sets(self.species, self.level, self.moves, self.ivs, self.evs)


def supported_team(rng: np.random.Generator) -> Team:
    """Six distinct species with four distinct supported moves each, random levels, DVs and stat exp."""
    t = gen1_tables()
    supported = np.array([t.move_index(m) for m in jb.SUPPORTED_MOVES])
    return Team(
        species=rng.choice(np.arange(1, 152), size=6, replace=False),
        level=rng.integers(50, 101, size=6),
        moves=np.stack([rng.choice(supported, size=4, replace=False) for _ in range(6)]),
        ivs=rng.integers(0, 16, size=(6, 5)) * 2,
        evs=rng.integers(0, 256, size=(6, 5)),
    )


def compare(snap: dict[str, Any], state: jb.BattleState, kind: str) -> list[str]:
    """Field-by-field differences between Showdown's snapshot and the JAX state (empty when equal)."""
    t = gen1_tables()
    diffs = []
    s = snap["state"]
    ours_seed = prng.format_seed(kind, np.asarray(state.rng))
    if s["prng"] != ours_seed:
        diffs.append(f"prng: showdown {s['prng']} jax {ours_seed}")
    if s["turn"] != int(state.turn):
        diffs.append(f"turn: showdown {s['turn']} jax {int(state.turn)}")
    if s["lastDamage"] != int(state.last_damage):
        diffs.append(f"lastDamage: showdown {s['lastDamage']} jax {int(state.last_damage)}")
    species = np.asarray(_current_species(state))
    stored = np.asarray(_stored_stats(state))
    for side in range(2):
        side_state = s["sides"][side]
        last = int(state.last_move[side])
        ours_last = "cannotmove" if bool(state.cannot_move[side]) else t.move_ids[last] if last else "nomove"
        if side_state["lastSelectedMove"] != ours_last:
            diffs.append(f"p{side + 1} lastSelectedMove: showdown {side_state['lastSelectedMove']} jax {ours_last}")
        seen = int(state.enemy_selected[side])
        ours_seen = "cannotmove" if seen == jb.CANNOT_MOVE else t.move_ids[seen] if seen else "nomove"
        if side_state["lastEnemySelectedMove"] != ours_seen:
            diffs.append(
                f"p{side + 1} lastEnemySelectedMove: showdown {side_state['lastEnemySelectedMove']} jax {ours_seen}"
            )
        used = int(state.last_used[side])
        ours_used = "fissure" if used == jb.NOMOVE_USED else t.move_ids[used] if used else None
        if side_state["lastEnemyMove"] != ours_used:
            diffs.append(f"p{side + 1} lastEnemyMove: showdown {side_state['lastEnemyMove']} jax {ours_used}")
        if side_state["lastSelectedMoveSlot"] != int(state.last_slot[side]):
            diffs.append(
                f"p{side + 1} lastSelectedMoveSlot: showdown {side_state['lastSelectedMoveSlot']} "
                f"jax {int(state.last_slot[side])}"
            )
        for slot, p in enumerate(side_state["pokemon"]):
            where = f"p{side + 1} slot {slot + 1}"
            ours_species = t.species_ids[int(species[side, slot])]
            if p["species"] != ours_species:
                diffs.append(f"{where} species: showdown {p['species']} jax {ours_species}")
                continue
            if p["hp"] != int(state.hp[side, slot]):
                diffs.append(f"{where} ({ours_species}) hp: showdown {p['hp']} jax {int(state.hp[side, slot])}")
            status = STATUSES[int(state.status[side, slot])]
            if p["status"] != status:
                diffs.append(f"{where} ({ours_species}) status: showdown {p['status']!r} jax {status!r}")
            if p["status"] == "slp" and p["statusState"].get("time") != int(state.sleep_turns[side, slot]):
                diffs.append(
                    f"{where} ({ours_species}) sleep turns: showdown {p['statusState'].get('time')} "
                    f"jax {int(state.sleep_turns[side, slot])}"
                )
            if p["speed"] != int(state.speed[side, slot]):
                diffs.append(
                    f"{where} ({ours_species}) cached speed: showdown {p['speed']} jax {int(state.speed[side, slot])}"
                )
            transformed = slot == 0 and bool(state.transformed_into[side])
            if p["transformed"] != transformed:
                diffs.append(f"{where} ({ours_species}) transformed: showdown {p['transformed']} jax {transformed}")
            ours_stored = stored[side] if slot == 0 else np.asarray(state.stats[side, slot])
            for key, column in MODIFIED_COLUMNS.items():
                if p["storedStats"][key] != int(ours_stored[column]):
                    diffs.append(
                        f"{where} ({ours_species}) stored {key}: showdown {p['storedStats'][key]} "
                        f"jax {int(ours_stored[column])}"
                    )
            for key, column in MODIFIED_COLUMNS.items():
                ours = int(state.modified[side, slot, column])
                if p["modifiedStats"][key] != ours:
                    diffs.append(
                        f"{where} ({ours_species}) modified {key}: showdown {p['modifiedStats'][key]} jax {ours}"
                    )
            ours_volatiles = {
                v for v, on in zip(VOLATILES, np.asarray(state.volatiles[side]), strict=True) if on and slot == 0
            }
            if set(p["volatiles"]) != ours_volatiles:
                diffs.append(
                    f"{where} ({ours_species}) volatiles: showdown {sorted(p['volatiles'])} jax {sorted(ours_volatiles)}"
                )
            for volatile, key, field in VOLATILE_COUNTERS:
                if slot == 0 and volatile in p["volatiles"]:
                    theirs, ours = p["volatiles"][volatile].get(key), int(getattr(state, field)[side])
                    if key == "maybeLocked":
                        theirs, ours = bool(theirs), bool(ours)
                    if theirs != ours:
                        diffs.append(f"{where} ({ours_species}) {volatile} {key}: showdown {theirs} jax {ours}")
            ours_types = [t.types[int(i)] for i in np.asarray(state.types[side, slot])]
            if p["types"] != list(dict.fromkeys(ours_types)):
                diffs.append(f"{where} ({ours_species}) types: showdown {p['types']} jax {ours_types}")
            ours_boosts = np.asarray(state.boosts[side]) if slot == 0 else np.zeros(len(BOOST_KEYS), dtype=int)
            for column, keys in enumerate(BOOST_KEYS):
                for key in keys:
                    if p["boosts"][key] != int(ours_boosts[column]):
                        diffs.append(
                            f"{where} ({ours_species}) boost {key}: showdown {p['boosts'][key]} jax {int(ours_boosts[column])}"
                        )
            used = int(state.used_move[side]) if slot == 0 else 0
            ours_used = t.move_ids[used] if used else None
            if p["lastMove"] != ours_used:
                diffs.append(f"{where} ({ours_species}) lastMove: showdown {p['lastMove']} jax {ours_used}")
            move_ids = [m["id"] for m in p["moves"]]
            ours_moves = [t.move_ids[int(i)] for i in np.asarray(state.moves[side, slot]) if i]
            if move_ids != ours_moves:
                diffs.append(f"{where} ({ours_species}) moves: showdown {move_ids} jax {ours_moves}")
            pp = [m["pp"] for m in p["moves"]]
            ours_pp = np.asarray(state.pp[side, slot])[: len(pp)].tolist()
            if pp != ours_pp:
                diffs.append(f"{where} ({ours_species}) pp: showdown {pp} jax {ours_pp}")
            # baseMoveSlots: what comes back when the Pokemon leaves (Mimic's slot, Transform)
            if slot == 0:
                base = [(m["id"], m["pp"]) for m in p["baseMoves"]]
                base_moves = np.asarray(jb.base_moves(state, side))
                base_pp = np.asarray(state.base_pp[side] if transformed else state.pp[side, 0])
                ours_base = [(t.move_ids[int(m)], int(q)) for m, q in zip(base_moves, base_pp, strict=True) if m]
                if base != ours_base:
                    diffs.append(f"{where} ({ours_species}) baseMoveSlots: showdown {base} jax {ours_base}")
    ended = bool(snap["ended"])
    if ended != bool(state.ended):
        diffs.append(f"ended: showdown {ended} jax {bool(state.ended)}")
    elif ended:
        winner = {"p1": jb.P1_WINS, "p2": jb.P2_WINS}.get(snap["winner"], jb.NO_WINNER)
        if winner != int(state.winner):
            diffs.append(f"winner: showdown {snap['winner']!r} jax {int(state.winner)}")
    return diffs


# What happened in a battle, counted from Showdown's log: (name, pattern of a log line)
EVENTS = (
    ("crit", r"^\|-crit\|"),
    ("miss", r"^\|-miss\|"),
    ("stat stage change", r"^\|-(un)?boost\|"),
    ("multi-hit move", r"^\|-hitcount\|"),
    ("recoil", r"\[from\] Recoil"),
    ("drain", r"\[from\] drain"),
    ("one-hit KO", r"^\|-ohko"),
    ("heal (Recover, Soft-Boiled)", r"^\|-heal\|[^|]*\|[^|]*$"),
    ("Rest", r"^\|-status\|.*\[from\] move: Rest"),
    ("Reflect / Light Screen", r"^\|-start\|[^|]*\|(Reflect|Light Screen)"),
    ("Mist blocking a drop", r"^\|-activate\|[^|]*\|move: Mist"),
    ("confusion started", r"^\|-start\|[^|]*\|confusion"),
    ("hurt itself in confusion", r"\[from\] confusion"),
    ("flinch", r"^\|cant\|[^|]*\|flinch"),
    ("paralysis", r"^\|-status\|[^|]*\|par"),
    ("full paralysis", r"^\|cant\|[^|]*\|par"),
    ("burn", r"^\|-status\|[^|]*\|brn"),
    ("poison", r"^\|-status\|[^|]*\|psn"),
    ("toxic", r"^\|-status\|[^|]*\|tox"),
    ("leech seed", r"\[from\] Leech Seed"),
    ("sleep", r"^\|-status\|[^|]*\|slp"),
    ("freeze", r"^\|-status\|[^|]*\|frz"),
    ("Hyper Beam recharge", r"^\|cant\|[^|]*\|recharge"),
    ("two-turn charge", r"^\|-prepare\|"),
    ("Struggle", r"^\|move\|[^|]*\|Struggle"),
    ("substitute made", r"^\|-start\|[^|]*\|Substitute"),
    ("substitute hit", r"^\|-activate\|[^|]*\|(move: )?Substitute\|\[damage\]"),
    ("substitute broken", r"^\|-end\|[^|]*\|Substitute"),
    ("faint", r"^\|faint\|"),
    ("tie", r"^\|tie$"),
    ("type change (Conversion)", r"^\|-start\|[^|]*\|typechange"),
    ("Haze", r"^\|-activate\|[^|]*\|move: Haze"),
    ("Disable started", r"^\|-start\|[^|]*\|Disable"),
    ("a disabled move stopped", r"^\|cant\|[^|]*\|Disable"),
    ("Thrash / Petal Dance lock ended in confusion", r"^\|-start\|[^|]*\|confusion\|\[silent\]"),
    ("held by partial trapping", r"^\|cant\|[^|]*\|partiallytrapped"),
    ("Bide started", r"^\|-start\|[^|]*\|Bide"),
    ("Bide released", r"^\|-end\|[^|]*\|(move: )?Bide$"),
    ("Mimic", r"^\|-start\|[^|]*\|Mimic"),
    ("Mirror Move calling a move", r"^\|move\|[^|]*\|[^|]*\|[^|]*\|\[from\][^|]*Mirror Move"),
    ("Metronome calling a move", r"^\|move\|[^|]*\|[^|]*\|[^|]*\|\[from\][^|]*Metronome"),
    ("Transform", r"^\|-transform\|"),
    ("Counter called by Mirror Move or Metronome", r"^\|move\|[^|]*\|Counter\|[^|]*\|\[from\]"),
    ("Metronome called by Mirror Move", r"^\|move\|[^|]*\|Metronome\|[^|]*\|\[from\][^|]*Mirror Move"),
    ("Sleep Clause Mod stopping a sleep", r"Sleep Clause Mod activated"),
    ("Freeze Clause Mod stopping a freeze", r"Freeze Clause activated"),
)
# a Counter that hit (the line after its |move| is neither a failure nor a miss)
COUNTER_EVENT = "Counter hit"
RAGE_EVENT = "Rage boost"


def _rage_boosts(before: dict[str, Any], after: dict[str, Any]) -> int:
    """Attack stages a raging Pokemon gained between two snapshots (the same Pokemon raging in both)."""
    gained = 0
    for old_side, new_side in zip(before["state"]["sides"], after["state"]["sides"], strict=True):
        old, new = old_side["pokemon"][0], new_side["pokemon"][0]
        if old["species"] == new["species"] and "rage" in old["volatiles"] and "rage" in new["volatiles"]:
            gained += max(new["boosts"]["atk"] - old["boosts"]["atk"], 0)
    return gained


# counted from the state after each decision: a side whose last selected move is "cannotmove"
CANNOT_MOVE_EVENT = "cannotmove (a partially trapped Pokemon's Fight, or Haze curing a sleeping or frozen foe)"
# counted by comparing the states before and after each decision
TRAP_STARTED_EVENT = "partial trapping lock started"
TRAP_TARGET_SWITCHED_EVENT = "a trapper's target switched out"
TRAPPER_SWITCHED_EVENT = "a trapper switched out while locked"
TRAP_DISABLED_EVENT = "a trapping lock held under Disable"
# a move's PP below 0 (a trapper's move rerun at 0 PP: -1 in the custom game) or above its max
# (63: the standard format's 6-bit wrap), seen after a decision
PP_UNDERFLOW_EVENT = "decisions after which a PP had gone below 0"
# Haze turned its badly poisoned user's toxic into poison
HAZE_TOXIC_EVENT = "Haze from a badly poisoned user"
# Gen 1's runSwitch gave a trapper whose lock Metronome called "metronome" back (its target left)
METRONOME_TRAP_EVENT = "Metronome back for a trapper whose target switched in"


def _trap_events(before: dict[str, Any], after: dict[str, Any]) -> collections.Counter:
    """Partial trapping locks seen in their first turn (at most one Residual run), and locks whose
    target or whose holder switched out, between two snapshots."""
    counts: collections.Counter = collections.Counter()
    sides = [
        (b["pokemon"][0], a["pokemon"][0])
        for b, a in zip(before["state"]["sides"], after["state"]["sides"], strict=True)
    ]
    for side, (old, new) in enumerate(sides):
        old_foe, new_foe = sides[1 - side]
        lock, old_lock = new["volatiles"].get("partialtrappinglock"), old["volatiles"].get("partialtrappinglock")
        if lock and lock["totalDuration"] - lock["duration"] <= 1 and lock != old_lock:
            counts[TRAP_STARTED_EVENT] += 1
        counts[TRAP_DISABLED_EVENT] += bool(lock) and "disable" in new["volatiles"]
        slot = before["state"]["sides"][side]["lastSelectedMoveSlot"]
        metronome_lock = bool(old_lock) and slot < len(old["moves"]) and old["moves"][slot]["id"] == "metronome"
        counts[METRONOME_TRAP_EVENT] += metronome_lock and old_foe["species"] != new_foe["species"]
        fainted = {line.split("|")[2][:2] for line in after["log"] if line.startswith("|faint|")}
        foe_name, name = f"p{2 - side}", f"p{side + 1}"
        if old_lock and old["species"] == new["species"] and old_foe["species"] != new_foe["species"]:
            counts[TRAP_TARGET_SWITCHED_EVENT] += foe_name not in fainted
        if old_lock and old["species"] != new["species"]:
            counts[TRAPPER_SWITCHED_EVENT] += name not in fainted
    return counts


def _haze_toxic(before: dict[str, Any], after: dict[str, Any]) -> int:
    """Hazes (in `after`'s log) used by an active Pokemon that was badly poisoned before and is
    poisoned after."""
    hazes = 0
    for side, (old_side, new_side) in enumerate(zip(before["state"]["sides"], after["state"]["sides"], strict=True)):
        old, new = old_side["pokemon"][0], new_side["pokemon"][0]
        used_haze = any(re.match(rf"^\|move\|p{side + 1}a: [^|]*\|Haze\|", line) for line in after["log"])
        hazes += used_haze and old["species"] == new["species"] and old["status"] == "tox" and new["status"] == "psn"
    return hazes


def tally(log: list[str], counts: collections.Counter) -> None:
    """Add one turn's log to `counts`: EVENTS, and "move:<id>" for every move used. A `split`
    line is followed by a private and a public copy of the same message; only the first counts."""
    skip = False
    previous = ""
    for line in log:
        if skip:
            skip = False
            continue
        if line.startswith("|split|"):
            skip = False
            continue
        for name, pattern in EVENTS:
            if re.search(pattern, line):
                counts[name] += 1
        if line.startswith("|move|"):
            counts["move:" + re.sub(r"[^a-z0-9]", "", line.split("|")[3].lower())] += 1
        if re.match(r"^\|move\|[^|]*\|Counter\|", previous) and not re.match(r"^\|-(fail|miss)\|", line):
            counts[COUNTER_EVENT] += 1
        previous = line
        skip = line.startswith("|-damage|") or line.startswith("|switch|") or line.startswith("|-heal|")


def battle_seed(index: int) -> str:
    mixed = index * 0x9E3779B97F4A7C15
    return f"gen5,{mixed % 2**64:016x}" if index % 2 else f"sodium,{mixed % 2**128:032x}"


class L3Divergence(AssertionError):
    """The first decision after which Showdown and PokeJAX differ, with what reproduces it."""

    def __init__(self, result: dict[str, Any]):
        self.result = result
        lines = [
            f"battle {result['battle']} (seed {result['seed']}) diverged at turn {result['turn']}, "
            f"decision {result['decision']}:",
            *(f"  {d}" for d in result["diffs"]),
            f"  choices so far (p1, p2): {result['history']}",
            "  Showdown's log of that turn:",
            *(f"    {line}" for line in result["log"]),
            "  Showdown's PRNG draws in that turn, by caller:",
            *(f"    {c['by']}" for c in result["prng_calls"]),
            f"  reproduce: python -m envs.pokejax.l3_battles --first {result['battle']} --battles 1"
            + (f" --format {result['format']}" if result.get("format", FORMAT) != FORMAT else ""),
        ]
        super().__init__("\n".join(lines))


def play(
    showdown: Showdown, battle_index: int, max_decisions: int = 400, counts: collections.Counter | None = None
) -> dict[str, Any]:
    """One battle on both engines; returns its outcome, or raises L3Divergence. `counts`, if given,
    gathers what happened (tally)."""
    rng = np.random.default_rng(battle_index)
    teams = [supported_team(rng), supported_team(rng)]
    if battle_index % 3 == 0:
        # mirror matches: every speed ties, so every tie-breaking draw is exercised
        teams[1] = teams[0]
    return play_teams(showdown, battle_index, battle_seed(battle_index), teams, rng, max_decisions, counts)


def play_random_battle(
    showdown: Showdown, battle_index: int, max_decisions: int = 400, counts: collections.Counter | None = None
) -> dict[str, Any]:
    """One gen1randombattle on both engines: Showdown generates both teams from their team seeds
    (and plays with its Sleep and Freeze Clauses), the JAX engine from its own generator
    (jax/teams.py) from the same seeds; the first comparison checks that the teams are the same."""
    seed = battle_seed(battle_index)
    team_seeds = [battle_seed(RANDOM_TEAM_SEEDS + 2 * battle_index + side) for side in range(2)]
    first, battle_has_ditto = _generated_team(team_seeds[0], False)
    second, _ = _generated_team(team_seeds[1], battle_has_ditto)
    return play_teams(
        showdown,
        battle_index,
        seed,
        [first, second],
        np.random.default_rng(battle_index),
        max_decisions,
        counts,
        format=RANDOM_FORMAT,
        sides=[{"seed": team_seed} for team_seed in team_seeds],
    )


def _generated_team(team_seed: str, battle_has_ditto: bool) -> tuple[Team, bool]:
    kind, state = prng.parse_seed(team_seed)
    if kind not in _GENERATORS:
        _GENERATORS[kind] = jax.jit(functools.partial(jax_teams.generate_team, kind))
    team, _ = jax.device_get(_GENERATORS[kind](jnp.asarray(state), jnp.bool_(battle_has_ditto)))
    columns = [jax_teams.SET_STATS.index(name) for name in STAT_NAMES]
    return (
        Team(
            species=np.asarray(team.species),
            level=np.asarray(team.level),
            moves=np.asarray(team.moves),
            ivs=np.asarray(team.ivs)[:, columns],
            evs=np.asarray(team.evs)[:, columns],
        ),
        bool(team.has_ditto),
    )


def play_teams(
    showdown: Showdown,
    battle_index: int,
    seed: str,
    teams: list[Team],
    rng: np.random.Generator,
    max_decisions: int = 400,
    counts: collections.Counter | None = None,
    preferred: list[list[int]] | None = None,
    format: str = FORMAT,
    sides: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A battle of the given teams from `seed` on both engines, compared after every decision.
    Each side takes its next `preferred` action when it is legal (a scripted scenario), otherwise
    a random legal one drawn from `rng`. `format`: Showdown's (gen1randombattle brings the Sleep
    and Freeze Clauses); `sides`: what Showdown is given for each side (default: the teams' sets)."""
    kind, rng_state = prng.parse_seed(seed)
    tables = _tables()
    state = _jitted_new_battle(kind)(
        jnp.asarray(rng_state),
        jnp.asarray(np.stack([t.species for t in teams]), dtype=jnp.int32),
        jnp.asarray(np.stack([t.level for t in teams]), dtype=jnp.int32),
        jnp.asarray(np.stack([t.moves for t in teams]), dtype=jnp.int32),
        jnp.asarray(np.stack([t.ivs for t in teams]), dtype=jnp.int32),
        jnp.asarray(np.stack([t.evs for t in teams]), dtype=jnp.int32),
        tables,
        jnp.bool_(format == RANDOM_FORMAT),
    )
    name = f"l3-{battle_index}"
    if sides is None:
        sides = [{"team": team.showdown_sets()} for team in teams]
    snap = showdown.start(name, format, seed, sides[0], sides[1], trace=True)
    step = _jitted_step(kind)
    history: list[tuple[int, int]] = []
    previous = snap
    try:
        for decision in range(max_decisions):
            host_state = _to_host(state)
            diffs = compare(snap, host_state, kind)
            mask = np.asarray(_legal_actions(state))
            for side in range(2):
                expected = showdown_legal(snap["requests"][side])
                if not np.array_equal(expected, mask[side]):
                    diffs.append(
                        f"p{side + 1} legal actions: showdown {expected.astype(int)} jax {mask[side].astype(int)}"
                    )
            if counts is not None:
                tally(snap["log"], counts)
                counts[CANNOT_MOVE_EVENT] += sum(
                    side_state["lastSelectedMove"] == "cannotmove" for side_state in snap["state"]["sides"]
                )
                counts[RAGE_EVENT] += _rage_boosts(previous, snap)
                counts.update(_trap_events(previous, snap))
                counts[HAZE_TOXIC_EVENT] += _haze_toxic(previous, snap)
                counts[PP_UNDERFLOW_EVENT] += any(
                    m["pp"] < 0 or m["pp"] > m["maxpp"]
                    for side_state in snap["state"]["sides"]
                    for p in side_state["pokemon"]
                    for m in p["moves"]
                )
            previous = snap
            if diffs:
                raise L3Divergence(
                    {
                        "battle": battle_index,
                        "seed": seed,
                        "format": format,
                        "turn": snap["turn"],
                        "decision": decision,
                        "diffs": diffs,
                        "history": history,
                        "log": snap["log"],
                        "prng_calls": snap.get("prngCalls", []),
                    }
                )
            if snap["ended"]:
                return {"decisions": decision, "turns": snap["turn"], "winner": snap["winner"]}
            actions = [int(rng.choice(np.flatnonzero(mask[side]))) if mask[side].any() else 0 for side in range(2)]
            for side in range(2):
                wanted = preferred[side][decision % len(preferred[side])] if preferred else None
                if wanted is not None and mask[side].any() and mask[side][wanted]:
                    actions[side] = wanted
            choices = [choice_string(a) if mask[side].any() else "" for side, a in enumerate(actions)]
            history.append(tuple(actions))
            snap = showdown.choose(name, *choices)
            state = step(state, jnp.asarray(actions, dtype=jnp.int32), tables)
        return {"decisions": max_decisions, "turns": snap["turn"], "winner": None, "stopped": "decision limit"}
    finally:
        showdown.end(name)


_STEPS: dict[str, Any] = {}
_NEW_BATTLES: dict[str, Any] = {}
_GENERATORS: dict[str, Any] = {}
_legal_actions = jax.jit(jb.legal_actions)
# jitted: run eagerly on the host state, their few ops cost a dispatch each, 3 ms per comparison
_current_species = jax.jit(jb.current_species)
_stored_stats = jax.jit(jb.stored_stats)


def _as_words(leaf: jax.Array) -> jax.Array:
    """A leaf's elements as uint32 words: 32-bit types bit for bit, narrower integers and bools
    widened (their values fit)."""
    flat = jnp.ravel(leaf)
    if flat.dtype.itemsize != 4:
        if jnp.issubdtype(flat.dtype, jnp.floating) or flat.dtype.itemsize > 4:
            raise TypeError(f"cannot pack a {flat.dtype} leaf into 32-bit words")
        flat = flat.astype(jnp.int32)
    return jax.lax.bitcast_convert_type(flat, jnp.uint32)


_pack = jax.jit(lambda leaves: jnp.concatenate([_as_words(leaf) for leaf in leaves]))


def _to_host(state: jb.BattleState) -> jb.BattleState:
    """`jax.device_get(state)` in one transfer: the 49 fields packed into one array on the device
    and unpacked here (one copy per field cost about 2 ms per decision)."""
    leaves, treedef = jax.tree_util.tree_flatten(state)
    words = np.asarray(_pack(leaves))
    host, at = [], 0
    for leaf in leaves:
        dtype, chunk = np.dtype(leaf.dtype), words[at:at + leaf.size]
        at += leaf.size
        values = chunk.view(dtype) if dtype.itemsize == 4 else chunk.view(np.int32).astype(dtype)
        host.append(values.reshape(leaf.shape))
    return jax.tree_util.tree_unflatten(treedef, host)


@functools.cache
def _tables() -> jb.Tables:
    return jb.Tables.load()


def _jitted_new_battle(kind: str):
    # (jitted once: run eagerly, new_battle's PRNG loops compiled anew for every battle, and a
    # long run ran out of memory maps after some 2,000 battles)
    if kind not in _NEW_BATTLES:
        _NEW_BATTLES[kind] = jax.jit(functools.partial(jb.new_battle, kind))
    return _NEW_BATTLES[kind]


def _jitted_step(kind: str):
    if kind not in _STEPS:
        _STEPS[kind] = jax.jit(lambda state, actions, tables: jb.step(kind, state, actions, tables))
    return _STEPS[kind]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--battles", type=int, default=20)
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--tally", action="store_true", help="count what happened in the battles (Showdown's log)")
    parser.add_argument(
        "--format",
        choices=[FORMAT, RANDOM_FORMAT],
        default=FORMAT,
        help=f"{FORMAT}: random teams of the supported moves; {RANDOM_FORMAT}: Showdown's random battles",
    )
    args = parser.parse_args()
    counts: collections.Counter = collections.Counter()
    with Showdown() as showdown:
        for i in range(args.first, args.first + args.battles):
            try:
                player = play_random_battle if args.format == RANDOM_FORMAT else play
                result = player(showdown, i, counts=counts)
            except L3Divergence as divergence:
                print(divergence)
                raise SystemExit(1) from None
            print(f"battle {i}: equal after every decision: {result}")
    if args.tally:
        names = [name for name, _ in EVENTS] + [
            COUNTER_EVENT,
            RAGE_EVENT,
            CANNOT_MOVE_EVENT,
            TRAP_STARTED_EVENT,
            TRAP_TARGET_SWITCHED_EVENT,
            TRAPPER_SWITCHED_EVENT,
            TRAP_DISABLED_EVENT,
            METRONOME_TRAP_EVENT,
            PP_UNDERFLOW_EVENT,
            HAZE_TOXIC_EVENT,
        ]
        print("events:", ", ".join(f"{name} {counts[name]}" for name in names))
        used = {name[5:] for name in counts if name.startswith("move:")} - {"struggle"}
        if args.format == RANDOM_FORMAT:
            t = gen1_tables()
            sets = jax_teams.set_tables()
            arrays = (sets.move_pool, sets.combo_moves, sets.exclusive_moves, sets.essential_moves)
            pool = {t.move_ids[m] for array in arrays for m in np.asarray(array)[sets.pool_species].ravel() if m}
            print(f"moves used: {len(used & pool)} of the {len(pool)} in gen1randombattle's sets")
            unused = sorted(pool - used)
        else:
            print(f"moves used: {len(used)} of {len(jb.SUPPORTED_MOVES)} supported")
            unused = sorted(set(jb.SUPPORTED_MOVES) - used)
        if unused:
            print("never used:", " ".join(unused))


if __name__ == "__main__":
    main()
