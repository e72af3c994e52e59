"""Decks: a few fixed ones (one per main type, each a complete evolution plan), and a generator of
random legal decks (R-1.1 to R-1.4) built from complete evolution lines, so random play sees
evolutions, Fossils, Abilities and Trainers."""

from __future__ import annotations

import functools

import numpy as np

from envs.tcgjax.reference.cards import ENERGY_TYPES, CardPool, load_pool
from envs.tcgjax.reference.engine import Deck

FIXED_DECKS: dict[str, tuple[tuple[str, ...], dict[str, int]]] = {
    "grass": (("Grass",), {"Bulbasaur": 2, "Ivysaur": 2, "Venusaur ex": 2, "Exeggcute": 2, "Exeggutor ex": 2,
                           "Petilil": 2, "Lilligant": 2, "Erika": 2, "Potion": 2, "Professor's Research": 2}),
    "fire": (("Fire",), {"Charmander": 2, "Charmeleon": 2, "Charizard ex": 2, "Moltres ex": 2, "Vulpix": 2,
                         "Ninetales": 2, "Growlithe": 2, "Arcanine ex": 2, "Blaine": 2, "Professor's Research": 2}),
    "water": (("Water",), {"Squirtle": 2, "Wartortle": 2, "Blastoise ex": 2, "Staryu": 2, "Starmie ex": 2,
                           "Articuno ex": 2, "Misty": 2, "Potion": 2, "Poké Ball": 2, "Professor's Research": 2}),
    "lightning": (("Lightning",), {"Pikachu ex": 2, "Zapdos ex": 2, "Voltorb": 2, "Electrode": 2, "Magnemite": 2,
                                   "Magneton": 2, "Lt. Surge": 1, "Sabrina": 1, "Giovanni": 2, "Poké Ball": 2,
                                   "X Speed": 2}),
    "psychic": (("Psychic", "Darkness"), {"Ralts": 2, "Kirlia": 2, "Gardevoir": 2, "Mewtwo ex": 2, "Jynx": 2,
                                          "Koffing": 2, "Weezing": 2, "Koga": 2, "Professor's Research": 2,
                                          "Red Card": 2}),
    "fossil": (("Water", "Fighting"), {"Helix Fossil": 2, "Omanyte": 2, "Omastar": 2, "Dome Fossil": 2, "Kabuto": 2,
                                       "Kabutops": 2, "Old Amber": 2, "Aerodactyl": 2, "Geodude": 2, "Graveler": 1,
                                       "Golem": 1}),
}


def fixed_deck(name: str, pool: CardPool | None = None) -> Deck:
    pool = pool or load_pool()
    if name not in FIXED_DECKS:
        raise KeyError(f"no fixed deck {name!r}; choose one of {sorted(FIXED_DECKS)}")
    types, counts = FIXED_DECKS[name]
    cards = [pool.card(card).index for card, n in counts.items() for _ in range(n)]
    deck = Deck(cards, types, name)
    deck.validate(pool)
    return deck


@functools.lru_cache(maxsize=4)
def _deck_parts(pool: CardPool) -> tuple[tuple[tuple[tuple[int, ...], str], ...], tuple[int, ...]]:
    """A pool's deck-building material, computed once per pool (otherwise most of a random deck's
    cost, and a vector env deals two decks per new episode): every complete evolution line that is
    not all Fossils, with its last stage's type, and every Trainer that is not a Fossil."""
    lines = tuple((tuple(line), pool[line[-1]].type) for line in _lines(pool)
                  if not all(pool[i].is_fossil for i in line))
    trainers = tuple(c.index for c in pool.playable() if c.category == "Trainer" and not c.is_fossil)
    return lines, trainers


def _lines(pool: CardPool) -> list[list[int]]:
    """Every complete evolution line (Basic or Fossil first), one card index per stage."""
    playable = [c for c in pool.playable() if c.is_pokemon or c.is_fossil]
    children: dict[str, list] = {}
    for card in playable:
        if card.evolve_from:
            children.setdefault(card.evolve_from, []).append(card)
    lines = []

    def extend(line):
        lines.append(line)
        for child in children.get(pool[line[-1]].name, []):
            extend(line + [child.index])

    for card in playable:
        if card.is_basic or card.is_fossil:
            extend([card.index])
    return lines


def random_deck(seed: int, pool: CardPool | None = None) -> Deck:
    """A random legal deck: 1-2 Energy types; 2-4 lines of those types (or Colorless), 2 copies of each
    card of a line (1 for Stage 2), then Trainers up to 20 cards."""
    pool = pool or load_pool()
    rng = np.random.default_rng(seed)
    types = tuple(str(t) for t in rng.choice(ENERGY_TYPES, size=int(rng.integers(1, 3)), replace=False))
    all_lines, trainers = _deck_parts(pool)
    lines = [line for line, line_type in all_lines if line_type in types + ("Colorless",)]
    rng.shuffle(lines)
    cards: list[int] = []
    names: dict[str, int] = {}

    def add(index: int, copies: int) -> None:
        name = pool[index].name
        take = min(copies, 2 - names.get(name, 0), 20 - len(cards))
        cards.extend([index] * take)
        names[name] = names.get(name, 0) + take

    for line in lines[: int(rng.integers(2, 5))]:
        if len(cards) + 2 * len(line) > 14:
            continue
        for depth, index in enumerate(line):
            add(index, 1 if depth == 2 else 2)
    while len(cards) < 20:
        add(int(rng.choice(trainers)), 2)
        if len(cards) < 20 and len(set(names)) > 40:
            break
    if not any(pool[i].is_basic for i in cards):
        basics = [c.index for c in pool.playable() if c.is_basic and c.type in types]
        cards[-1] = int(rng.choice(basics))
    deck = Deck(cards, types, f"random-{seed}")
    deck.validate(pool)
    return deck
