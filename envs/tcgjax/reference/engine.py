"""The Python reference engine of a Pokemon TCG Pocket battle (A1 + P-A), written from RULES.md.

It is the specification the JAX engine is checked against, so it is written to be read: one method
per rule, each citing its clause. Randomness comes only from the game's `Stream` (rng.py), in the
order listed in the README's "Randomness contract".

    game = new_game(deck0, deck1, seed)            # decks: 20 card indices + energy types
    while game.winner == ONGOING:
        step(game, legal_actions(game)[0])          # the decision player's action (actions.py)
"""

from __future__ import annotations

from typing import Optional

from envs.tcgjax.reference import actions as A
from envs.tcgjax.reference.cards import ENERGY_TYPES, Card, CardPool, load_pool
from envs.tcgjax.reference.config import RuleConfig
from envs.tcgjax.reference.effects import Op, Program
from envs.tcgjax.reference.rng import Stream
from envs.tcgjax.reference.state import (
    ASLEEP,
    CONDITION_NAMES,
    CONFUSED,
    DRAW,
    NEVER,
    NO_ENERGY,
    ONGOING,
    PARALYZED,
    Game,
    InPlay,
    Player,
)

__all__ = ["ONGOING", "DRAW", "Deck", "IllegalAction", "new_game", "legal_actions", "action_mask", "why_illegal",
           "step", "cost_met"]

DECK_SIZE = 20
POINTS_TO_WIN = 3
TYPE_INDEX = {name: i for i, name in enumerate(ENERGY_TYPES)}


class IllegalAction(ValueError):
    """An action the rules do not allow in this state (the message says why)."""


class Deck:
    """20 cards (pool indices) and the Energy types its zone produces (R-1.1, R-1.4)."""

    def __init__(self, cards: list[int], energy_types: tuple[str, ...], name: str = ""):
        self.cards = [int(c) for c in cards]
        self.energy_types = tuple(energy_types)
        self.name = name

    def validate(self, pool: CardPool, config: RuleConfig = RuleConfig()) -> None:
        """Raise ValueError naming the rule a deck breaks."""
        if len(self.cards) != DECK_SIZE:
            raise ValueError(f"R-1.1: a deck has exactly {DECK_SIZE} cards, this one {len(self.cards)}")
        counts: dict[str, int] = {}
        for index in self.cards:
            if not 0 <= index < len(pool):
                raise ValueError(f"card index {index} is not in the pool (0..{len(pool) - 1})")
            card = pool[index]
            if not card.playable:
                raise ValueError(f"{card.gameplay_id} {card.name} is not implemented: {card.unsupported}")
            counts[card.name] = counts.get(card.name, 0) + 1
            if counts[card.name] > 2:
                raise ValueError(f"R-1.2: at most 2 cards named {card.name!r}")
        basics = [i for i in self.cards if pool[i].is_basic or (config.fossil_counts_as_basic_for_deck
                                                                and pool[i].is_fossil)]
        if not basics:
            raise ValueError("R-1.3: a deck needs at least one Basic Pokemon")
        if not any(pool[i].is_basic for i in self.cards):
            raise ValueError("R-2.2: the opening hand must hold a Basic Pokemon, and Fossils are not placed in setup")
        types = self.energy_types
        if not 1 <= len(types) <= config.max_energy_types or len(set(types)) != len(types):
            raise ValueError(f"R-1.4: 1 to {config.max_energy_types} distinct Energy types, got {types}")
        for name in types:
            if name not in TYPE_INDEX:
                raise ValueError(f"R-1.4: {name!r} is not one of the 8 Energy types {ENERGY_TYPES}")


# ----------------------------------------------------------------------------------------------
# Setup

def new_game(deck0: Deck, deck1: Deck, seed: int, config: RuleConfig = RuleConfig(),
             pool: Optional[CardPool] = None) -> Game:
    pool = pool or load_pool()
    for deck in (deck0, deck1):
        deck.validate(pool, config)
    rng = Stream(seed)
    players = [Player(deck=list(d.cards), energy_types=tuple(TYPE_INDEX[t] for t in d.energy_types))
               for d in (deck0, deck1)]
    game = Game(players=players, rng=rng)
    game.first = 0 if rng.coin() else 1  # heads, player 0 goes first
    size = config.opening_hand_size
    redraws = []
    for player in players:  # the top 5 (or 7) made to hold a Basic
        redraws.append(_shuffle_opening(player, rng, pool, size, config.basic_guarantee))
        player.hand, player.deck = player.deck[:size], player.deck[size:]
    _attach_context(game, pool, config)
    if config.opening_hand == "seven_with_mulligan":  # one card per redraw of the opponent, player 0 first
        for who, player in enumerate(players):
            _draw(game, player, redraws[1 - who])
    for player in players:  # R-3.3: both players' next Energy at setup, player 0 first
        player.energy_next = _roll_energy(game, player)
    game.current = game.first  # the first player places first
    game.phase = "setup"
    return game


def _attach_context(game: Game, pool: CardPool, config: RuleConfig) -> None:
    game.pool, game.config = pool, config  # type: ignore[attr-defined]


def _shuffle_opening(player: Player, rng: Stream, pool: CardPool, size: int, guarantee: str) -> int:
    """Makes the top `size` cards hold a Basic; returns how many shuffles came after the first (under
    seven_with_mulligan, the mulligans). "reshuffle" (option A) shuffles the whole deck until they do;
    "basic_on_top" (option B) takes one Basic Pokemon copy, `below(copies)` in deck-list order, puts it on
    top and shuffles the other 19 under it."""
    if guarantee == "basic_on_top":
        basics = [i for i, c in enumerate(player.deck) if pool[c].is_basic]
        chosen = player.deck.pop(basics[rng.below(len(basics))])
        rng.shuffle(player.deck)
        player.deck.insert(0, chosen)
        return 0
    redraws = 0
    while True:
        rng.shuffle(player.deck)
        if any(pool[c].is_basic for c in player.deck[:size]):
            return redraws
        redraws += 1


def _roll_energy(game: Game, player: Player) -> int:
    """R-3.3: one `below(candidates)` even with one candidate; the candidates are the deck's types, or
    under energy_choice="active_costs" those that the Active's attack costs name (all when none does)."""
    types = player.energy_types
    if game.config.energy_choice == "active_costs" and player.active is not None:
        named = {TYPE_INDEX[symbol] for attack in game.pool[player.active.top].attacks
                 for symbol in attack.cost if symbol != "Colorless"}
        types = tuple(t for t in types if t in named) or types
    return types[game.rng.below(len(types))]


# ----------------------------------------------------------------------------------------------
# Legal actions

def legal_actions(game: Game) -> list[int]:
    return [a for a in range(A.NUM_ACTIONS) if why_illegal(game, a) is None]


def action_mask(game: Game) -> list[bool]:
    return [why_illegal(game, a) is None for a in range(A.NUM_ACTIONS)]


def why_illegal(game: Game, action: int) -> Optional[str]:
    """None if the decision player may take `action`, else the reason."""
    try:
        act = A.decode(action)
    except ValueError as error:
        return str(error)
    if game.phase == "over":
        return "the game is over"
    if game.phase == "promote":
        if act.kind != "promote":
            return "a new Active Pokemon must be chosen first (R-5.3)"
        player = game.players[game.decision_player]
        return None if player.board[act.slot] is not None else f"bench slot {act.slot} is empty"
    if act.kind == "promote":
        return "no promotion is pending"
    if game.phase == "setup":
        return _why_illegal_setup(game, act)
    return _why_illegal_main(game, act)


def _why_illegal_setup(game: Game, act: A.Action) -> Optional[str]:
    player, pool = game.players[game.current], game.pool
    if act.kind == "end":
        return None if player.active is not None else "R-2.3: put a Basic Pokemon in the Active Spot first"
    if act.kind != "play" or act.target != 0:
        return "R-2.3: during setup only Basic Pokemon are placed"
    if act.slot >= len(player.hand):
        return f"no card at hand index {act.slot}"
    if not pool[player.hand[act.slot]].is_basic:
        return "R-2.3: only Basic Pokemon are placed during setup (no Trainers, no Fossils)"
    if player.active is not None and not _free_bench(player):
        return "R-2.4: the Bench is full"
    return None


def _why_illegal_main(game: Game, act: A.Action) -> Optional[str]:
    player, pool = game.players[game.current], game.pool
    opponent = game.players[1 - game.current]
    if act.kind == "end":
        return None
    if act.kind == "attach":
        if player.energy_current == NO_ENERGY:
            return "R-3.3: no Energy in the zone this turn"
        if player.attached:
            return "R-3.4: Energy was already attached this turn"
        return None if player.board[act.slot] is not None else f"slot {act.slot} is empty"
    if act.kind == "play":
        if act.slot >= len(player.hand):
            return f"no card at hand index {act.slot}"
        return _why_card_unplayable(game, player, opponent, pool[player.hand[act.slot]], act.slot, act.target)
    if act.kind == "retreat":
        return _why_no_retreat(game, player, act.slot)
    if act.kind == "ability":
        return _why_no_ability(game, player, opponent, act.slot, act.target)
    if act.kind == "attack":
        return _why_no_attack(game, player, opponent, act.slot, act.target)
    if act.kind == "copy":
        return _why_no_copy(game, player, opponent, act.slot, act.index, act.target)
    if act.kind == "discard_fossil":
        pokemon = player.board[act.slot]
        if pokemon is None or not pool[pokemon.top].is_fossil:
            return f"slot {act.slot} holds no Fossil (R-3.5)"
        return None
    return f"unknown action {act}"


def _free_bench(player: Player) -> Optional[int]:
    for slot in (1, 2, 3):
        if player.board[slot] is None:
            return slot
    return None


def _why_card_unplayable(game, player, opponent, card: Card, hand_index: int, target: int) -> Optional[str]:
    pool, config = game.pool, game.config
    if card.is_basic or card.is_fossil:
        if target != 0:
            return "a Basic Pokemon or Fossil is played with target 0"
        return None if _free_bench(player) else "R-2.4: the Bench is full"
    if card.is_pokemon:  # an evolution
        pokemon = player.board[target]
        if pokemon is None:
            return f"slot {target} is empty"
        if game.turn <= 2:
            return "R-3.6(a): no evolving on either player's first turn"
        if pool[pokemon.top].name != card.evolve_from:
            return f"R-3.6: {card.name} evolves from {card.evolve_from}, not {pool[pokemon.top].name}"
        if pokemon.entered_turn >= game.turn:
            return ("R-3.6(b, c): that Pokemon came into play or evolved this turn" if config.evolve_once_per_turn
                    else "R-3.6(b): that Pokemon came into play this turn")
        return None
    # Trainers
    if card.trainer_type == "Supporter":
        if player.supporter_played:
            return "R-3.7: one Supporter per turn"
        if game.turn == 1 and not config.supporter_on_turn1:
            return "R-3.7: no Supporter on the first turn (supporter_on_turn1=False)"
        if player.supporter_lock_until >= game.turn or _spellbound(game, opponent):
            return "a Supporter lock is in force (Headache, Bother, Shadowy Spellbind)"
    return _why_program_inapplicable(game, player, opponent, card.program, target, source_slot=None)


def _spellbound(game: Game, opponent: Player) -> bool:
    active = opponent.active
    return active is not None and _passive(game, active, "passive_supporter_lock") is not None


def _why_no_retreat(game: Game, player: Player, bench: int) -> Optional[str]:
    active = player.active
    if player.retreated:
        return "R-3.10: one retreat per turn"
    if player.board[bench] is None:
        return f"R-3.10: bench slot {bench} is empty"
    if game.pool[active.top].is_fossil:
        return "R-3.5: a Fossil can't retreat"
    if active.exclusive in (ASLEEP, PARALYZED):
        return "R-3.10: an Asleep or Paralyzed Pokemon can't retreat"
    if active.cant_retreat_until >= game.turn:
        return "the Defending Pokemon can't retreat this turn (Corner)"
    if sum(active.energy) < _retreat_cost(game, player):
        return "R-3.10: not enough Energy for the Retreat Cost"
    return None


def _retreat_cost(game: Game, player: Player) -> int:
    return max(0, game.pool[player.active.top].retreat - player.retreat_discount)


def _why_no_ability(game, player, opponent, slot: int, target: int) -> Optional[str]:
    pokemon = player.board[slot]
    if pokemon is None:
        return f"slot {slot} is empty"
    card = game.pool[pokemon.top]
    if card.ability is None:
        return f"{card.name} has no Ability to use"
    if pokemon.ability_used_turn == game.turn:
        return "R-3.9: once during your turn, per Pokemon"
    return _why_program_inapplicable(game, player, opponent, card.ability, target, source_slot=slot)


def _why_no_attack(game, player, opponent, index: int, target: int) -> Optional[str]:
    card = game.pool[player.active.top]
    if index >= len(card.attacks):
        return f"{card.name} has no attack {index}"
    reason = _why_active_cannot_attack(game, player, index)
    if reason is not None:
        return reason
    if copies(card.attacks[index]):
        return f"{card.attacks[index].name} names the attack it copies: use a copy action"
    return _why_program_inapplicable(game, player, opponent, card.attacks[index].program, target, source_slot=0,
                                     attack=True)


def _why_active_cannot_attack(game, player, index: int) -> Optional[str]:
    """What stops the Active from using its attack `index` at all (R-3.11, R-3.12)."""
    active = player.active
    if game.turn == 1 and not game.config.attack_on_turn1:
        return "R-3.12: no attack on the first turn (attack_on_turn1=False)"
    if active.exclusive in (ASLEEP, PARALYZED):
        return "R-3.11: an Asleep or Paralyzed Pokemon can't attack"
    if active.cant_attack_until >= game.turn:
        return "the Defending Pokemon can't attack this turn"
    if not cost_met(active.energy, game.pool[active.top].attacks[index].cost):
        return "R-3.11: the attached Energy does not cover the cost"
    return None


def copies(attack) -> bool:
    """Ditto's Copy Anything: the attack is another one, chosen when it is used."""
    return any(op.kind == "copy_opponent_attack" for op in attack.program.ops)


def copying_attack_index(card) -> Optional[int]:
    return next((i for i, attack in enumerate(card.attacks) if copies(attack)), None)


def _why_no_copy(game, player, opponent, slot: int, index: int, target: int) -> Optional[str]:
    """Copy Anything: "Choose 1 of your opponent's Pokemon's attacks and use it as this attack." Any
    attack of any of their Pokemon in play may be chosen; one this Pokemon lacks the Energy for is
    still a legal choice (the attack then does nothing). Engine default: a copying attack cannot be
    copied (it would name no attack of its own), and the copied attack's own target rules apply."""
    card = game.pool[player.active.top]
    own = copying_attack_index(card)
    if own is None:
        return f"{card.name} has no attack that copies"
    reason = _why_active_cannot_attack(game, player, own)
    if reason is not None:
        return reason
    source = opponent.board[slot]
    if source is None:
        return f"the opponent's slot {slot} is empty"
    source_card = game.pool[source.top]
    if index >= len(source_card.attacks):
        return f"{source_card.name} has no attack {index}"
    copied = source_card.attacks[index]
    if copies(copied):
        return f"{copied.name} copies an attack itself: nothing to copy"
    return _why_program_inapplicable(game, player, opponent, copied.program, target, source_slot=0, attack=True)


def cost_met(energy: list[int], cost: tuple[str, ...]) -> bool:
    """R-3.11: typed symbols need their type; Colorless takes any."""
    left = list(energy)
    colorless = 0
    for symbol in cost:
        if symbol == "Colorless":
            colorless += 1
            continue
        t = TYPE_INDEX[symbol]
        if left[t] == 0:
            return False
        left[t] -= 1
    return sum(left) >= colorless


def _valid_targets(game: Game, player: Player, opponent: Player, program: Program) -> list[int]:
    pool = game.pool
    kind = program.target
    if kind == "opp_any":
        return opponent.in_play()
    if kind == "opp_bench":
        return opponent.bench_slots()
    if kind == "opp_bench_basic":
        return [s for s in opponent.bench_slots() if pool[opponent.board[s].top].stage in ("Basic", "")]
    if kind == "own_any":
        return player.in_play()
    if kind == "own_bench":
        return player.bench_slots()
    if kind == "own_bench_typed":
        wanted = program.target_type
        return [s for s in player.bench_slots() if pool[player.board[s].top].type == wanted]
    if kind == "own_typed":
        wanted = program.target_type
        slots = [s for s in player.in_play() if pool[player.board[s].top].type == wanted]
        if program.ops[0].kind == "heal_target":
            slots = [s for s in slots if player.board[s].damage > 0]
        return slots
    if kind == "own_named":
        names = program.ops[0].params[1]
        return [s for s in player.in_play() if pool[player.board[s].top].name in names]
    if kind == "own_damaged":
        return [s for s in player.in_play() if player.board[s].damage > 0]
    if kind == "own_bench_pair":
        bench = player.bench_slots()
        return [p for p, (a, b) in PAIRS.items() if a in bench and b in bench]
    return []


PAIRS = {1: (1, 2), 2: (1, 3), 3: (2, 3)}


# Targets a Trainer must find to be played at all (the app does not let a card do nothing: engine
# default, README); attacks and Abilities may be used with no target (target 0: that part is skipped).
_TRAINER_NEEDS_TARGET = ("own_typed", "own_named", "own_damaged")


def _why_program_inapplicable(game, player, opponent, program: Program, target: int,
                              source_slot: Optional[int], attack: bool = False) -> Optional[str]:
    """Why the program cannot be used with `target` now, or None. A Trainer or an Ability that would do
    nothing cannot be used (engine default, README); an attack always can, its damage being the point:
    an effect part with nothing to act on is skipped when it runs (Knock Back against a lone Active)."""
    pool = game.pool
    targets = _valid_targets(game, player, opponent, program)
    if program.target == "none":
        if target != 0:
            return "this card takes no target (use target 0)"
    elif targets:
        if target not in targets:
            return f"target {target} is not one of {targets} ({program.target})"
    elif program.target in _TRAINER_NEEDS_TARGET or program.target == "opp_bench_basic":
        return f"no valid target ({program.target})"
    elif target != 0:
        return f"no valid target ({program.target}): use target 0"
    if program.active_only and source_slot != 0:
        return "this Ability works only from the Active Spot"
    for op in program.ops:
        kind = op.kind
        if kind == "force_switch" and not opponent.bench_slots() and not attack:
            return "the opponent has no Benched Pokemon to switch in"
        if kind == "zone_attach_active_typed" and pool[player.active.top].type != op.params[0]:
            return f"the Active Pokemon is not a {op.params[0]} Pokemon"
        if kind == "return_active":
            active = player.active
            if pool[active.top].name not in op.params[0]:
                return f"the Active Pokemon is not {' or '.join(op.params[0])}"
            if not player.bench_slots():
                return "nothing on the Bench would replace it"
            if len(player.hand) - 1 + len(active.stack) > game.config.hand_limit:
                return "R-3.2: the hand would pass its limit"
        if kind == "move_energy_to_active" and pool[player.active.top].name not in op.params[1]:
            return f"the Active Pokemon is not {', '.join(op.params[1])}"
    return None


# ----------------------------------------------------------------------------------------------
# Step

def step(game: Game, action: int) -> None:
    """Apply the decision player's action; raise IllegalAction (with the reason) if it is not legal."""
    reason = why_illegal(game, action)
    if reason is not None:
        raise IllegalAction(f"action {action} ({A.decode(action) if 0 <= int(action) < A.NUM_ACTIONS else '?'}): {reason}")
    act = A.decode(action)
    if game.phase == "setup":
        _setup_step(game, act)
    elif game.phase == "promote":
        _promote(game, act.slot)
    else:
        _main_step(game, act)


def _setup_step(game: Game, act: A.Action) -> None:
    player = game.players[game.current]
    if act.kind == "play":
        card = player.hand.pop(act.slot)
        slot = 0 if player.active is None else _free_bench(player)
        player.board[slot] = InPlay(stack=[card], entered_turn=0)
        return
    game.setup_done[game.current] = True
    if not all(game.setup_done):
        game.current = 1 - game.current  # then the second player places
        return
    game.phase = "main"
    _start_turn(game, game.first)


def _start_turn(game: Game, who: int) -> None:
    """R-3.1, R-3.3: the turn counter, the Energy Zone, the draw."""
    game.turn += 1
    game.current = who
    player = game.players[who]
    player.attached = player.supporter_played = player.retreated = False
    player.retreat_discount = 0
    player.turn_boosts = []
    # the player going first gets no Energy on turn 1; with unused_energy_carries_over the
    # current slot is refilled only when it is empty ([S11]'s reading)
    refill = player.energy_current == NO_ENERGY or not game.config.unused_energy_carries_over
    if game.turn > 1 and refill:
        player.energy_current = player.energy_next
        player.energy_next = _roll_energy(game, player)
    if game.turn > 1 or game.config.first_player_draws_turn1:
        _draw(game, player, 1)
    game.phase = "main"


def _draw(game: Game, player: Player, count: int) -> None:
    """R-3.1: an empty deck draws nothing; R-3.2: nothing moves past the hand limit."""
    for _ in range(count):
        if not player.deck or len(player.hand) >= game.config.hand_limit:
            return
        player.hand.append(player.deck.pop(0))


def _main_step(game: Game, act: A.Action) -> None:
    player, opponent = game.players[game.current], game.players[1 - game.current]
    if act.kind == "end":
        _end_turn(game)
    elif act.kind == "attach":
        energy = player.energy_current
        player.energy_current = NO_ENERGY
        player.attached = True
        _attach_from_zone(game, player, act.slot, energy, 1)
        _after_action(game, resume="main")
    elif act.kind == "play":
        _play_card(game, player, opponent, act.slot, act.target)
    elif act.kind == "retreat":
        _pay_retreat(game, player)
        player.retreated = True
        _swap_active(game, player, act.slot)
    elif act.kind == "ability":
        pokemon = player.board[act.slot]
        pokemon.ability_used_turn = game.turn
        _run_program(game, game.pool[pokemon.top].ability, act.slot, act.target, ability=True)
        _after_action(game, resume="main")
    elif act.kind == "attack":
        _attack(game, act.slot, act.target)
    elif act.kind == "copy":
        _attack(game, copying_attack_index(game.pool[player.active.top]), act.target, copy=(act.slot, act.index))
    elif act.kind == "discard_fossil":
        fossil = player.board[act.slot]
        player.board[act.slot] = None
        player.discard.extend(fossil.stack)
        if act.slot == 0:
            _owe_promotion(game, game.current, "ko")
        _after_action(game, resume="main")


def _play_card(game: Game, player: Player, opponent: Player, hand_index: int, target: int) -> None:
    card = game.pool[player.hand[hand_index]]
    if card.is_basic or card.is_fossil:
        player.hand.pop(hand_index)
        player.board[_free_bench(player)] = InPlay(stack=[card.index], entered_turn=game.turn)
        return
    if card.is_pokemon:  # keeps damage and Energy, removes Special Conditions
        player.hand.pop(hand_index)
        pokemon = player.board[target]
        pokemon.stack.append(card.index)
        pokemon.evolved_turn = game.turn
        if game.config.evolve_once_per_turn:  # R-3.6(c): it counts as entering play this turn
            pokemon.entered_turn = game.turn
        pokemon.clear_conditions()
        return
    player.hand.pop(hand_index)  # a played Trainer goes to the discard pile
    if card.trainer_type == "Supporter":
        player.supporter_played = True
    _run_program(game, card.program, None, target, ability=False)
    player.discard.append(card.index)
    _after_action(game, resume="main")


def _pay_retreat(game: Game, player: Player) -> None:
    """R-3.10 with the engine default: the most plentiful type first, ties to the lower index."""
    active = player.active
    for _ in range(_retreat_cost(game, player)):
        most = max(range(8), key=lambda t: (active.energy[t], -t))
        active.energy[most] -= 1


def _swap_active(game: Game, player: Player, bench: int) -> None:
    player.active.leave_active(game.config.effects_end_on_leaving_active)
    player.board[0], player.board[bench] = player.board[bench], player.board[0]


# ----------------------------------------------------------------------------------------------
# Attacks

def _attack(game: Game, index: int, target: int, copy: Optional[tuple[int, int]] = None) -> None:
    """The Active's attack `index`; for a copying attack, `copy` = (opponent's slot, attack index)
    names the attack it is used as: its cost, base damage and program; this Pokemon's type, boosts
    and Energy."""
    player = game.players[game.current]
    attacker = player.active
    card = game.pool[attacker.top]
    attack = card.attacks[index]
    if copy is not None:
        attack = game.pool[game.players[1 - game.current].board[copy[0]].top].attacks[copy[1]]
    if attacker.exclusive == CONFUSED and not game.rng.coin():  # tails, nothing happens
        _after_action(game, resume="end_turn")
        return
    if copy is not None and not cost_met(attacker.energy, attack.cost):  # "this attack does nothing"
        _after_action(game, resume="end_turn")
        return
    _run_program(game, attack.program, 0, target, ability=False, attack=attack)
    if attack.name == "Sweets Relay":
        player.sweets_relay_turn = game.turn
    _after_action(game, resume="end_turn")


class _Resolution:
    """What one attack has done so far (for drain, counters and Weakness)."""

    def __init__(self, target_kind: str):
        self.target_kind = target_kind
        self.recoil = 0
        self.damage_to_defender = 0
        self.nothing = False


def _run_program(game: Game, program: Program, source_slot: Optional[int], target: int, ability: bool,
                 attack=None) -> None:
    player, opponent = game.players[game.current], game.players[1 - game.current]
    rng, pool = game.rng, game.pool
    source = player.board[source_slot] if source_slot is not None else None
    has_target = target in _valid_targets(game, player, opponent, program)
    if attack is None:
        for op in program.ops:
            _run_effect(game, op, player, opponent, source, target if has_target else None, None)
        return
    # step 1: the base damage, computed from the text
    res = _Resolution(program.target)
    damage = attack.base
    for op in program.ops:
        k, p = op.kind, op.params
        if k == "coins_per_heads":
            damage = p[1] * sum(rng.coin() for _ in range(p[0]))
        elif k == "until_tails_per":
            damage = p[0] * rng.coins_until_tails()
        elif k == "until_tails_plus":
            damage += p[0] * rng.coins_until_tails()
        elif k == "coins_plus":
            if all([rng.coin() for _ in range(p[0])]):
                damage += p[1]
            else:
                res.recoil += p[2]
        elif k == "coin_or_nothing":
            if not rng.coin():
                res.nothing = True
        elif k == "extra_energy_plus":
            if _extra_energy(source.energy, attack.cost, p[0]) >= p[1]:
                damage += p[2]
        elif k == "if_plus":
            if _condition(game, p[0], player, opponent, source):
                damage += p[1]
        elif k == "per_own_bench":
            damage = p[1] * sum(1 for s in player.bench_slots() if not p[0] or pool[player.board[s].top].type == p[0])
        elif k == "per_defender_energy_plus":
            damage += p[0] * sum(opponent.active.energy)
        elif k == "per_own_bench_named_plus":
            damage += p[1] * sum(1 for s in player.bench_slots() if pool[player.board[s].top].name == p[0])
        elif k == "set_base":
            damage = p[0]
    if res.nothing:
        return
    defender = opponent.active
    main_slot = (target if has_target else None) if program.damage_to_target else 0
    if main_slot is not None and (damage > 0 or attack.base > 0 or program.damage_to_target):
        dealt = _attack_damage(game, player, opponent, source, main_slot, damage, attack)
        if main_slot == 0:
            res.damage_to_defender = dealt
    for op in program.ops:
        if op.kind in _DAMAGE_STAGE:
            continue
        if _blocked_by_prevention(game, op, defender):
            continue
        _run_effect(game, op, player, opponent, source, target if has_target else None, res)
    if res.recoil:  # no Weakness, no boosts
        source.damage += res.recoil


_DAMAGE_STAGE = {"coins_per_heads", "until_tails_per", "until_tails_plus", "coins_plus", "coin_or_nothing",
                 "extra_energy_plus", "if_plus", "per_own_bench", "per_defender_energy_plus",
                 "per_own_bench_named_plus", "set_base"}
# Effects "done to" the Defending Pokemon, which Dig's "prevent all damage from - and effects of -
# attacks" stops (R-4.1 step 4).
_EFFECTS_ON_DEFENDER = {"status", "discard_opp_energy", "defender_cant_attack", "defender_cant_retreat",
                        "defender_minus", "bounce", "force_switch"}


def _blocked_by_prevention(game: Game, op: Op, defender: InPlay) -> bool:
    return (op.kind in _EFFECTS_ON_DEFENDER and defender.prevent_until >= game.turn and defender.prevent_effects)


def _extra_energy(energy: list[int], cost: tuple[str, ...], type_name: str) -> int:
    """Energy of `type_name` beyond the cost, paying Colorless with other types first (README)."""
    t = TYPE_INDEX[type_name]
    typed_need = sum(1 for s in cost if s == type_name)
    colorless = sum(1 for s in cost if s == "Colorless")
    others = sum(energy) - energy[t]
    return energy[t] - typed_need - max(0, colorless - others)


def _condition(game: Game, name: str, player: Player, opponent: Player, source: InPlay) -> bool:
    defender = opponent.active
    if name == "defender_damaged":
        return defender.damage > 0
    if name == "self_damaged":
        return source.damage > 0
    if name == "defender_poisoned":
        return defender.poisoned
    if name == "defender_evolution":
        return len(defender.stack) > 1
    if name == "evolved_this_turn":
        return source.evolved_turn == game.turn
    if name == "has_tool":
        return False  # no Pokemon Tool exists in A1 / P-A
    if name == "sweets_relay_last_turn":
        return player.sweets_relay_turn == game.turn - 2
    raise ValueError(f"unknown condition {name!r}")


def _attack_damage(game: Game, player: Player, opponent: Player, attacker: InPlay, slot: int, damage: int,
                   attack) -> int:
    """R-4.1's order on the opponent's Active (R-4.3: a Benched target takes the base damage)."""
    pool, config = game.pool, game.config
    defender = opponent.board[slot]
    if slot != 0:  # no Weakness, no boosts; the defender's own "takes -N from attacks" still counts
        return _plain_attack_damage(game, defender, damage)
    card = pool[attacker.top]
    computed = damage
    if computed > 0 or not config.bonuses_need_damage:
        for amount, names in player.turn_boosts:  # step 2: Giovanni, Blaine
            if not names or card.name in names:
                damage += amount
        if attacker.boost_turn == game.turn:
            damage += attacker.boost
        if attacker.attack_minus_until >= game.turn:
            damage -= attacker.attack_minus
    # step 3; R-4.2 "does not apply to a 0-damage result", whatever bonuses_need_damage says
    if computed > 0 and pool[defender.top].weakness == card.type:
        damage += 20
    damage -= _defender_reduction(game, defender)  # step 4
    if defender.prevent_until >= game.turn:
        damage = 0
    damage = max(0, damage)  # step 5
    defender.damage += damage
    if damage > 0:
        _counter_damage(game, defender, attacker)
    return damage


def _plain_attack_damage(game: Game, pokemon: InPlay, damage: int) -> int:
    """Attack damage with no Weakness or boosts (a Benched target, R-4.3): only a static "takes -N
    damage from attacks" Ability reduces it (R-3.9; a Benched Pokemon has no timed effects)."""
    passive = _passive(game, pokemon, "passive_reduce")
    dealt = max(0, damage - (passive.params[0] if passive is not None else 0))
    pokemon.damage += dealt
    return dealt


def _defender_reduction(game: Game, defender: InPlay) -> int:
    reduction = 0
    passive = _passive(game, defender, "passive_reduce")
    if passive is not None:
        reduction += passive.params[0]
    if defender.takes_minus_until >= game.turn:
        reduction += defender.takes_minus
    return reduction  # "passive_reduce_if_arceus": no Arceus in A1 / P-A, never applies


def _counter_damage(game: Game, defender: InPlay, attacker: InPlay) -> None:
    """Counterattack (while Active) and Bristling Spikes: damage back to the Attacking Pokemon
    (not attack damage: no Weakness, R-4.2's default; an Ability's with weakness_on_ability_damage)."""
    passive = _passive(game, defender, "passive_counter")
    if passive is not None:
        attacker.damage += passive.params[0] + _ability_weakness(game, defender, attacker)
    if defender.counter_until >= game.turn:
        attacker.damage += defender.counter_damage


def _ability_weakness(game: Game, source: InPlay, hit: InPlay) -> int:
    """R-4.2 ⚠: +20 on an Ability's damage to a Pokemon weak to the source's type, only under
    weakness_on_ability_damage (callers pass only hits on an Active)."""
    weak = game.pool[hit.top].weakness == game.pool[source.top].type
    return 20 if game.config.weakness_on_ability_damage and weak else 0


def _passive(game: Game, pokemon: InPlay, kind: str) -> Optional[Op]:
    passive = game.pool[pokemon.top].passive
    return passive if passive is not None and passive.kind == kind else None


def _run_effect(game: Game, op: Op, player: Player, opponent: Player, source: Optional[InPlay],
                target: Optional[int], res: Optional[_Resolution]) -> None:
    """One operation after the damage (text order), or one Trainer / Ability operation."""
    rng, turn = game.rng, game.turn
    k, p = op.kind, op.params
    if k == "noop":
        return
    if k == "heal_self":
        if not p[1] or rng.coin():
            _heal(source, p[0])
    elif k == "drain":
        _heal(source, res.damage_to_defender)
    elif k == "status":
        if not p[1] or rng.coin():
            _apply_condition(game, opponent.active, p[0])
    elif k == "self_status":
        _apply_condition(game, source, p[0])
    elif k == "discard_own_energy":
        if p[1] < 0:
            source.energy = [0] * 8
        else:
            t = TYPE_INDEX[p[0]]
            source.energy[t] -= min(p[1], source.energy[t])
    elif k == "discard_opp_energy":
        if not p[0] or rng.coin():
            _discard_random_energy(rng, opponent.active)
    elif k == "zone_attach_self":
        _attach_from_zone(game, player, player.board.index(source), TYPE_INDEX[p[0]], p[1])
    elif k == "zone_attach_target":
        if target is not None:
            _attach_from_zone(game, player, target, TYPE_INDEX[p[0]], p[1])
    elif k == "zone_attach_coins_target":
        heads = sum(rng.coin() for _ in range(p[1]))
        if target is not None and heads:
            _attach_from_zone(game, player, target, TYPE_INDEX[p[0]], heads)
    elif k == "zone_attach_pair":
        slots = PAIRS[target] if target is not None else tuple(player.bench_slots())
        for slot in slots:
            _attach_from_zone(game, player, slot, TYPE_INDEX[p[0]], 1)
    elif k == "zone_attach_until_tails_target":
        heads = rng.coins_until_tails()
        if heads:
            _attach_from_zone(game, player, target, TYPE_INDEX[p[0]], heads)
    elif k == "zone_attach_named_target":
        _attach_from_zone(game, player, target, TYPE_INDEX[p[0]], 1)
    elif k == "zone_attach_active_typed":
        _attach_from_zone(game, player, 0, TYPE_INDEX[p[0]], 1)
    elif k == "recoil":
        res.recoil += p[0]
    elif k == "bench_each":
        for slot in opponent.bench_slots():
            _plain_attack_damage(game, opponent.board[slot], p[0])
    elif k == "damage_target":
        if target is not None:
            # Spark aims at the opponent's Bench, Raging Thunder and Shadow Hit at the user's side
            side = opponent if res.target_kind.startswith("opp") else player
            _plain_attack_damage(game, side.board[target], p[0])
    elif k == "random_hits":
        _random_hits(game, player, opponent, source, p[0], p[1])
    elif k == "supporter_lock":
        opponent.supporter_lock_until = turn + 1
    elif k == "defender_cant_attack":
        if not p[0] or rng.coin():
            opponent.active.cant_attack_until = turn + 1
    elif k == "defender_cant_retreat":
        opponent.active.cant_retreat_until = turn + 1
    elif k == "defender_minus":
        opponent.active.attack_minus_until, opponent.active.attack_minus = turn + 1, p[0]
    elif k == "self_takes_minus":
        source.takes_minus_until, source.takes_minus = turn + 1, p[0]
    elif k == "prevent_next_turn":
        if rng.coin():
            source.prevent_until, source.prevent_effects = turn + 1, p[0]
    elif k == "counter_next_turn":
        source.counter_until, source.counter_damage = turn + 1, p[0]
    elif k == "next_turn_boost":
        source.boost_turn, source.boost = turn + 2, p[0]
    elif k == "switch_self":
        if target is not None:
            _swap_active(game, player, target)
    elif k == "force_switch":
        if opponent.bench_slots():
            opponent.active.leave_active(game.config.effects_end_on_leaving_active)
            _owe_promotion(game, 1 - game.current, "swap")
    elif k == "gust":
        if (not p[0] or rng.coin()) and target is not None:  # the coin is flipped even with no Bench
            _swap_active(game, opponent, target)
    elif k == "bounce":
        if rng.coin():
            active = opponent.active
            opponent.board[0] = None
            opponent.deck.extend(active.stack)
            rng.shuffle(opponent.deck)
            _owe_promotion(game, 1 - game.current, "ko")
    elif k == "draw":
        _draw(game, player, p[0])
    elif k == "search_hand":
        _search_to_hand(game, player, lambda c: c.is_pokemon and (not p[0] or c.type == p[0]))
    elif k == "search_hand_basic":
        _search_to_hand(game, player, lambda c: c.is_basic)
    elif k == "search_bench":
        _search_to_bench(game, player, p[0])
    elif k == "discard_opp_hand":
        if (not p[0] or rng.coin()) and opponent.hand:
            opponent.discard.append(opponent.hand.pop(rng.below(len(opponent.hand))))
    elif k == "mill":
        for who in (player, opponent):
            milled, who.deck = who.deck[:p[0]], who.deck[p[0]:]
            who.discard.extend(milled)
    elif k == "heal_each_own":
        for slot in player.in_play():
            _heal(player.board[slot], p[0])
    elif k == "ability_damage":
        if target is not None:
            hit = opponent.board[target]  # not attack damage: no reductions; Weakness only under the flag
            hit.damage += p[0] + (_ability_weakness(game, source, hit) if target == 0 else 0)
    elif k == "heal_target":
        _heal(player.board[target], p[0])
    elif k == "turn_boost":
        player.turn_boosts.append((p[0], tuple(p[1])))
    elif k == "return_active":
        active = player.board[0]
        player.board[0] = None
        player.hand.extend(active.stack)
        _owe_promotion(game, game.current, "ko")
    elif k == "move_energy_to_active":
        t = TYPE_INDEX[p[0]]
        for slot in player.bench_slots():
            player.active.energy[t] += player.board[slot].energy[t]
            player.board[slot].energy[t] = 0
    elif k == "retreat_discount":
        player.retreat_discount += p[0]
    elif k == "opp_hand_to_deck_draw":
        opponent.deck.extend(opponent.hand)
        opponent.hand = []
        rng.shuffle(opponent.deck)
        _draw(game, opponent, p[0])
    else:
        raise ValueError(f"no handler for op {k!r}")


def _heal(pokemon: Optional[InPlay], amount: int) -> None:
    if pokemon is not None:
        pokemon.damage = max(0, pokemon.damage - amount)


def _apply_condition(game: Game, pokemon: InPlay, name: str) -> None:
    """R-6.2: Asleep / Paralyzed / Confused replace each other; Poisoned and Burned stack."""
    if name == "Poisoned":
        pokemon.poisoned = True
    elif name == "Burned":
        pokemon.burned = True
    else:
        pokemon.exclusive = CONDITION_NAMES[name]
        if name == "Paralyzed":
            pokemon.paralyzed_on_turn = game.turn


def _discard_random_energy(rng: Stream, pokemon: InPlay) -> None:
    """One Energy unit uniformly (below(total)), counted through the types in index order."""
    total = sum(pokemon.energy)
    if total == 0:
        return
    pick = rng.below(total)
    for t in range(8):
        if pick < pokemon.energy[t]:
            pokemon.energy[t] -= 1
            return
        pick -= pokemon.energy[t]


def _attach_from_zone(game: Game, player: Player, slot: int, energy: int, count: int) -> None:
    """Energy from the zone onto a Pokemon, and the Abilities it triggers (Lunar Plumage, Nightmare Aura)."""
    pokemon = player.board[slot]
    if pokemon is None or count <= 0:
        return
    pokemon.energy[energy] += count
    passive = game.pool[pokemon.top].passive
    if passive is None or passive.params[:1] != (ENERGY_TYPES[energy],):
        return
    for _ in range(count):
        if passive.kind == "on_attach_heal":
            _heal(pokemon, passive.params[1])
        elif passive.kind == "on_attach_damage":
            opponent = game.players[1 - game.players.index(player)]
            opponent.active.damage += passive.params[1]


def _random_hits(game: Game, player: Player, opponent: Player, source: InPlay, times: int, each: int) -> None:
    """Draco Meteor: `times` draws of below(number of the opponent's Pokemon), slots in order; the hits
    on the Active are one attack's damage (Weakness and reductions once), a Benched Pokemon takes them with no Weakness or boosts (R-4.3)."""
    slots = opponent.in_play()
    hits = [0] * 4
    for _ in range(times):
        hits[slots[game.rng.below(len(slots))]] += 1
    for slot in slots:
        if hits[slot]:
            _attack_damage(game, player, opponent, source, slot, each * hits[slot], None)


def _search_to_hand(game: Game, player: Player, wanted) -> None:
    """A random matching card from the deck to the hand (below(matches)), then the deck is shuffled
    (README: every deck search shuffles; nothing moves past the hand limit, R-3.2)."""
    matches = [i for i, c in enumerate(player.deck) if wanted(game.pool[c])]
    if matches and len(player.hand) < game.config.hand_limit:
        player.hand.append(player.deck.pop(matches[game.rng.below(len(matches))]))
    game.rng.shuffle(player.deck)


def _search_to_bench(game: Game, player: Player, name: str) -> None:
    matches = [i for i, c in enumerate(player.deck) if game.pool[c].name == name]
    slot = _free_bench(player)
    if matches and slot is not None:
        card = player.deck.pop(matches[game.rng.below(len(matches))])
        player.board[slot] = InPlay(stack=[card], entered_turn=game.turn)
    game.rng.shuffle(player.deck)


# ----------------------------------------------------------------------------------------------
# Knock Outs, promotion, the end of a turn, winning

def _owe_promotion(game: Game, who: int, mode: str) -> None:
    game.pending.append((who, mode))


def _knock_outs(game: Game) -> None:
    """R-5.1, R-5.2: every Pokemon with damage >= HP goes to the discard pile; the other player scores."""
    for who in (game.current, 1 - game.current):
        player = game.players[who]
        for slot in player.in_play():
            pokemon = player.board[slot]
            card = game.pool[pokemon.top]
            if pokemon.damage >= card.hp:
                player.board[slot] = None
                player.discard.extend(pokemon.stack)
                game.players[1 - who].points += 2 if card.is_ex else 1
                if slot == 0:
                    _owe_promotion(game, who, "ko")


def _decide(game: Game) -> bool:
    """R-5.4, R-5.5: set the winner if the game has ended; True if it has."""
    points = [p.points >= POINTS_TO_WIN for p in game.players]
    empty = [not p.in_play() for p in game.players]
    if not (any(points) or any(empty)):
        return False
    if game.config.tie_policy == "count_conditions":
        score = [points[i] + empty[1 - i] for i in (0, 1)]
        game.winner = 0 if score[0] > score[1] else 1 if score[1] > score[0] else DRAW
    elif all(empty):
        game.winner = DRAW
    elif any(empty):
        game.winner = 1 if empty[0] else 0
    else:
        game.winner = DRAW if all(points) else (0 if points[0] else 1)
    game.phase = "over"
    game.pending = []
    return True


def _after_action(game: Game, resume: str) -> None:
    """After every action: Knock Outs, the win check, then the promotions owed (the turn player first:
    R-5.3), then `resume`."""
    _knock_outs(game)
    if _decide(game):
        return
    _order_pending(game)
    game.resume = resume
    _continue(game)


def _order_pending(game: Game) -> None:
    """The turn player first (R-5.3 ⚠; its opponent first without turn_player_promotes_first); one
    promotion per player: a Knock Out of the Active replaces a switch the same attack forced (Knock Back
    that also knocks out promotes once, from the Bench)."""
    ordered = []
    first = game.current if game.config.turn_player_promotes_first else 1 - game.current
    for who in (first, 1 - first):
        modes = {mode for owner, mode in game.pending if owner == who}
        if modes:
            ordered.append((who, "ko" if "ko" in modes else "swap"))
    game.pending = ordered


def _continue(game: Game) -> None:
    if game.pending:
        game.phase = "promote"
        return
    resume, game.resume = game.resume, "main"
    if resume == "main":
        game.phase = "main"
    elif resume == "end_turn":
        _end_turn(game)
    elif resume == "next_turn":
        _start_turn(game, 1 - game.current)


def _promote(game: Game, bench: int) -> None:
    who, mode = game.pending.pop(0)
    player = game.players[who]
    if mode == "swap":
        player.board[0], player.board[bench] = player.board[bench], player.board[0]
    else:
        player.board[0], player.board[bench] = player.board[bench], None
    _continue(game)


def _end_turn(game: Game) -> None:
    """R-3.3 (unused Energy is lost), end-of-first-turn Abilities, then the Checkup (R-6.8)."""
    player = game.players[game.current]
    if not game.config.unused_energy_carries_over:
        player.energy_current = NO_ENERGY
    player.turns_taken += 1
    if player.turns_taken == 1:
        for slot in player.in_play():
            passive = _passive(game, player.board[slot], "end_of_first_turn_attach")
            if passive is not None:
                _attach_from_zone(game, player, slot, TYPE_INDEX[passive.params[0]], 1)
    _checkup(game)
    _knock_outs(game)
    if _decide(game):
        return
    if game.turn >= game.config.max_turns:
        game.winner = DRAW
        game.phase = "over"
        game.pending = []
        return
    _order_pending(game)
    game.resume = "next_turn"
    _continue(game)


def _checkup(game: Game) -> None:
    """R-6.8: the ending player first; per Pokemon Poison, Burn (+ coin), Asleep coin, Paralysis."""
    for who in (game.current, 1 - game.current):
        active = game.players[who].active
        if active is None:
            continue
        if active.poisoned:
            active.damage += 10
        if active.burned:
            active.damage += 20
            if game.rng.coin():
                active.burned = False
        if active.exclusive == ASLEEP and game.rng.coin():
            active.exclusive = 0
        if (active.exclusive == PARALYZED and who == game.current
                and game.turn > active.paralyzed_on_turn):
            active.exclusive = 0
            active.paralyzed_on_turn = NEVER
