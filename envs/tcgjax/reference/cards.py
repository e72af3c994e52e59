"""The card pool: `data/cards_a1.json` (tcgdex, MIT; Genetic Apex A1 and Promo-A P-A) read into one
`Card` per distinct gameplay card, with each text compiled to an effect program (effects.py).

A card is *playable* when both engines implement it: every text compiles, and (for an evolution)
its line is complete in A1 + P-A (data/README: 12 P-A evolutions have pre-evolutions only in later
sets). `coverage()` says which cards are in and why the others are out."""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path
from typing import Optional

from envs.tcgjax.reference import effects
from envs.tcgjax.reference.effects import Op, Program, Unsupported

DATA = Path(__file__).resolve().parent.parent / "data" / "cards_a1.json"

# Energy types an Energy Zone can produce (R-1.4), in the engines' index order.
ENERGY_TYPES = ("Grass", "Fire", "Water", "Lightning", "Psychic", "Fighting", "Darkness", "Metal")
POKEMON_TYPES = ENERGY_TYPES + ("Colorless", "Dragon")
STAGES = ("Basic", "Stage1", "Stage2")
FOSSIL_HP = 40


@dataclasses.dataclass(frozen=True)
class Attack:
    name: str
    cost: tuple[str, ...]  # energy type names; "Colorless" = any
    base: int  # printed damage (0 when none)
    program: Program


@dataclasses.dataclass(frozen=True)
class Card:
    index: int  # position in the pool (both engines' card id)
    gameplay_id: str  # e.g. "A1-001": the first printing with this gameplay
    name: str
    category: str  # "Pokemon" | "Trainer"
    # Pokemon (and Fossils, played as 40-HP Basic Colorless Pokemon)
    stage: str = ""
    evolve_from: Optional[str] = None
    hp: int = 0
    type: str = ""
    is_ex: bool = False
    weakness: Optional[str] = None
    retreat: int = 0
    attacks: tuple[Attack, ...] = ()
    ability_name: str = ""
    ability: Optional[Program] = None  # activated ("Once during your turn")
    passive: Optional[Op] = None  # static or triggered
    # Trainer
    trainer_type: str = ""  # "Item" | "Supporter"
    is_fossil: bool = False
    program: Optional[Program] = None
    printings: tuple[str, ...] = ()
    unsupported: str = ""  # why the engines do not play it ("" when playable)

    @property
    def is_pokemon(self) -> bool:
        return self.category == "Pokemon"

    @property
    def is_basic(self) -> bool:
        """A Basic Pokemon card (a Fossil is not one for deck rules and the opening hand: R-1.3, R-2.2)."""
        return self.category == "Pokemon" and self.stage == "Basic"

    @property
    def playable(self) -> bool:
        return not self.unsupported


def _attack(record: dict) -> Attack:
    return Attack(record["name"], tuple(record["cost"]), int(record["damage_base"] or 0),
                  effects.attack_program(record.get("effect")))


def _card(index: int, record: dict, printings: tuple[str, ...]) -> Card:
    common = dict(index=index, gameplay_id=record["gameplay_id"], name=record["name"], category=record["category"],
                  printings=printings)
    reason = ""
    if record["category"] == "Pokemon":
        attacks, ability, passive, ability_name = (), None, None, ""
        try:
            attacks = tuple(_attack(a) for a in record["attacks"])
            if record.get("ability"):
                ability_name = record["ability"]["name"]
                ability, passive = effects.ability_program(record["ability"]["effect"])
        except Unsupported as why:
            reason = str(why)
        return Card(**common, stage=record["stage"], evolve_from=record["evolve_from"], hp=int(record["hp"]),
                    type=record["types"][0], is_ex=bool(record["is_ex"]), weakness=record["weakness"],
                    retreat=int(record["retreat"]), attacks=attacks, ability_name=ability_name, ability=ability,
                    passive=passive, unsupported=reason)
    is_fossil = record.get("trainer_subtype") == "Fossil"
    program = None
    if not is_fossil:
        try:
            program = effects.trainer_program(record["effect"])
        except Unsupported as why:
            reason = str(why)
    return Card(**common, trainer_type=record["trainer_type"], is_fossil=is_fossil, program=program,
                hp=FOSSIL_HP if is_fossil else 0, type="Colorless" if is_fossil else "", unsupported=reason)


class CardPool:
    """Every distinct gameplay card, indexed; `by_name` lists the indices of each English name."""

    def __init__(self, records: list[dict]):
        printings: dict[str, list[str]] = {}
        first: dict[str, dict] = {}
        for record in records:
            printings.setdefault(record["gameplay_id"], []).append(record["id"])
            first.setdefault(record["gameplay_id"], record)
        cards = [_card(i, first[g], tuple(printings[g])) for i, g in enumerate(first)]
        self.cards = _mark_incomplete_lines(cards)
        self.by_gameplay_id = {c.gameplay_id: c for c in self.cards}
        self.by_printing = {p: c for c in self.cards for p in c.printings}
        self.by_name: dict[str, list[int]] = {}
        for card in self.cards:
            self.by_name.setdefault(card.name, []).append(card.index)

    def __len__(self) -> int:
        return len(self.cards)

    def __getitem__(self, index: int) -> Card:
        return self.cards[index]

    def card(self, key: str) -> Card:
        """A card by printing id ("A1-227"), gameplay id or English name (the first printing)."""
        if key in self.by_printing:
            return self.by_printing[key]
        if key in self.by_name:
            return self.cards[self.by_name[key][0]]
        raise KeyError(f"no card {key!r} in A1 / P-A (use a printing id such as 'A1-001' or an English name)")

    def playable(self) -> list[Card]:
        return [c for c in self.cards if c.playable]

    def coverage(self) -> dict:
        """Playable and excluded cards (with the reason), and the op kinds each uses."""
        out = {"playable": [], "excluded": []}
        for card in self.cards:
            if card.playable:
                out["playable"].append(card.gameplay_id)
            else:
                out["excluded"].append({"card": card.gameplay_id, "name": card.name, "why": card.unsupported})
        return out


def _mark_incomplete_lines(cards: list[Card]) -> list[Card]:
    """An evolution whose pre-evolution is not a playable card of the pool cannot be played (R-3.6).
    A line missing from A1 / P-A altogether is the reason given first, before any text."""
    exists = {c.name for c in cards if c.is_pokemon or c.is_fossil}
    cards = [dataclasses.replace(c, unsupported=f"evolution line incomplete: no {c.evolve_from} in A1 / P-A")
             if c.is_pokemon and c.stage != "Basic" and c.evolve_from not in exists else c for c in cards]
    changed = True
    while changed:
        changed = False
        names: dict[str, list[Card]] = {}
        for card in cards:
            if card.playable and (card.is_pokemon or card.is_fossil):
                names.setdefault(card.name, []).append(card)
        for i, card in enumerate(cards):
            if not (card.playable and card.is_pokemon and card.stage != "Basic"):
                continue
            wanted = "Basic" if card.stage == "Stage1" else "Stage1"
            below = [c for c in names.get(card.evolve_from, []) if c.stage == wanted or c.is_fossil]
            if not below:
                cards[i] = dataclasses.replace(
                    card, unsupported=f"evolution line incomplete: {card.evolve_from} is not playable")
                changed = True
    return cards


@functools.lru_cache(maxsize=1)
def load_pool(path: Optional[str] = None) -> CardPool:
    return CardPool(json.loads(Path(path or DATA).read_text()))


def main(argv=None) -> int:
    """python -m envs.tcgjax.reference.cards: the coverage table (playable cards per op kind, exclusions)."""
    import argparse
    import collections

    parser = argparse.ArgumentParser(description="Card coverage: the playable cards per effect op kind, and the "
                                                 "cards excluded with the reason")
    parser.add_argument("--data", default=None, help=f"the card records (default: {DATA})")
    args = parser.parse_args(argv)
    pool = load_pool(args.data)
    kinds: collections.Counter = collections.Counter()
    for card in pool.playable():
        programs = [a.program for a in card.attacks] + [card.ability, card.program]
        for program in programs:
            for op in (program.ops if program else ()):
                kinds[op.kind] += 1
        if card.passive is not None:
            kinds[card.passive.kind] += 1
    print(f"{len(pool.playable())} of {len(pool)} gameplay cards playable")
    for kind, count in sorted(kinds.items()):
        print(f"  {kind}: {count}")
    for entry in pool.coverage()["excluded"]:
        print(f"excluded {entry['card']} {entry['name']}: {entry['why']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
