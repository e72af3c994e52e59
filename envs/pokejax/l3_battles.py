"""L3 for PokeJAX: battles played on Showdown and on the JAX engine from the same seed and the same
random legal choices, compared after every decision: the PRNG state, the turn, every Pokemon's
species (in Showdown's current team order), HP, PP, status (and sleep counter), modified speed, the
legal actions,
the end and the winner.

Battles are within jax/battle.py's scope: two teams of six random species with random levels
(50-100), DVs and stat experience, each knowing four random SUPPORTED_MOVES (damage-only moves and
the status moves); every third battle is a
mirror match (both sides the same team), where every speed ties and every tie-breaking draw is
exercised. Battle i uses Showdown seed `battle_seed(i)` (sodium for even i, gen5 for odd) and
NumPy's default_rng(i) for its teams and choices, so one number reproduces it:

    python -m envs.pokejax.l3_battles --battles 100          # compare, stop at the first divergence
    python -m envs.pokejax.l3_battles --first 17 --battles 1 # replay battle 17
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envs.pokejax.jax import battle as jb
from envs.pokejax.jax import prng
from envs.pokejax.jax.tables import STATUSES, gen1_tables
from envs.pokejax.reference.showdown import Showdown
from envs.pokejax.showdown_io import choice_string, showdown_legal, showdown_sets

FORMAT = "gen1customgame"


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
    for side in range(2):
        for slot, p in enumerate(s["sides"][side]["pokemon"]):
            where = f"p{side + 1} slot {slot + 1}"
            ours_species = t.species_ids[int(state.species[side, slot])]
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
            speed = int(state.modified[side, slot, jb.SPE])
            if p["modifiedStats"]["spe"] != speed:
                diffs.append(
                    f"{where} ({ours_species}) modified speed: showdown {p['modifiedStats']['spe']} jax {speed}"
                )
            pp = [m["pp"] for m in p["moves"]]
            ours_pp = np.asarray(state.pp[side, slot])[: len(pp)].tolist()
            if pp != ours_pp:
                diffs.append(f"{where} ({ours_species}) pp: showdown {pp} jax {ours_pp}")
    ended = bool(snap["ended"])
    if ended != bool(state.ended):
        diffs.append(f"ended: showdown {ended} jax {bool(state.ended)}")
    elif ended:
        winner = {"p1": jb.P1_WINS, "p2": jb.P2_WINS}.get(snap["winner"], jb.NO_WINNER)
        if winner != int(state.winner):
            diffs.append(f"winner: showdown {snap['winner']!r} jax {int(state.winner)}")
    return diffs


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
            f"  reproduce: python -m envs.pokejax.l3_battles --first {result['battle']} --battles 1",
        ]
        super().__init__("\n".join(lines))


def play(showdown: Showdown, battle_index: int, max_decisions: int = 400) -> dict[str, Any]:
    """One battle on both engines; returns its outcome, or raises L3Divergence."""
    seed = battle_seed(battle_index)
    rng = np.random.default_rng(battle_index)
    teams = [supported_team(rng), supported_team(rng)]
    if battle_index % 3 == 0:
        # mirror matches: every speed ties, so every tie-breaking draw is exercised
        teams[1] = teams[0]
    kind, rng_state = prng.parse_seed(seed)
    tables = jb.Tables.load()
    state = jb.new_battle(
        kind,
        jnp.asarray(rng_state),
        jnp.asarray(np.stack([t.species for t in teams]), dtype=jnp.int32),
        jnp.asarray(np.stack([t.level for t in teams]), dtype=jnp.int32),
        jnp.asarray(np.stack([t.moves for t in teams]), dtype=jnp.int32),
        jnp.asarray(np.stack([t.ivs for t in teams]), dtype=jnp.int32),
        jnp.asarray(np.stack([t.evs for t in teams]), dtype=jnp.int32),
        tables,
    )
    name = f"l3-{battle_index}"
    snap = showdown.start(
        name, FORMAT, seed, {"team": teams[0].showdown_sets()}, {"team": teams[1].showdown_sets()}, trace=True
    )
    step = _jitted_step(kind)
    history: list[tuple[int, int]] = []
    try:
        for decision in range(max_decisions):
            host_state = jax.device_get(state)
            diffs = compare(snap, host_state, kind)
            mask = np.asarray(_legal_actions(state))
            for side in range(2):
                expected = showdown_legal(snap["requests"][side])
                if not np.array_equal(expected, mask[side]):
                    diffs.append(
                        f"p{side + 1} legal actions: showdown {expected.astype(int)} jax {mask[side].astype(int)}"
                    )
            if diffs:
                raise L3Divergence(
                    {
                        "battle": battle_index,
                        "seed": seed,
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
            if any("struggle" in str(r) for r in snap["requests"] if r):
                return {"decisions": decision, "turns": snap["turn"], "winner": None, "stopped": "struggle"}
            actions = [int(rng.choice(np.flatnonzero(mask[side]))) if mask[side].any() else 0 for side in range(2)]
            choices = [choice_string(a) if mask[side].any() else "" for side, a in enumerate(actions)]
            history.append(tuple(actions))
            snap = showdown.choose(name, *choices)
            state = step(state, jnp.asarray(actions, dtype=jnp.int32), tables)
        return {"decisions": max_decisions, "turns": snap["turn"], "winner": None, "stopped": "decision limit"}
    finally:
        showdown.end(name)


_STEPS: dict[str, Any] = {}
_legal_actions = jax.jit(jb.legal_actions)


def _jitted_step(kind: str):
    if kind not in _STEPS:
        _STEPS[kind] = jax.jit(lambda state, actions, tables: jb.step(kind, state, actions, tables))
    return _STEPS[kind]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--battles", type=int, default=20)
    parser.add_argument("--first", type=int, default=0)
    args = parser.parse_args()
    with Showdown() as showdown:
        for i in range(args.first, args.first + args.battles):
            try:
                result = play(showdown, i)
            except L3Divergence as divergence:
                print(divergence)
                raise SystemExit(1) from None
            print(f"battle {i}: equal after every decision: {result}")


if __name__ == "__main__":
    main()
