"""L1: every effect family, the JAX engine against the reference on generated situations.

For each op kind (the engines' unit of an effect family: README "Card coverage"), hypothesis builds
positions in which a card using that op can act: the attacker in the Active Spot with its cost paid,
the Ability's Pokemon in play, the Trainer in hand, a passive's Pokemon on either side; around it random
boards (Basic Pokemon with random damage, Energy and Special Conditions, random Benches), hands, decks,
discards, points, Energy Zones, turn and seed. The reference position is copied into a JAX GameState
(`l3_games.jax_state_of`); both engines then play the card's action and a few random legal actions after
it (the end of the turn, the Checkup and the opponent's turn included), and after each action the legal
mask and every state field must be equal. Expected values here are the reference's: the rules
themselves are pinned by l1_rules.py."""

from __future__ import annotations

import functools
import json
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from envs.tcgjax import l3_games
from envs.tcgjax.jax.tables import OP_KINDS
from envs.tcgjax.reference import actions as A
from envs.tcgjax.reference import engine as E
from envs.tcgjax.reference.cards import ENERGY_TYPES, Card, load_pool
from envs.tcgjax.reference.rng import Stream
from envs.tcgjax.reference.scenario import Mon, Side, scenario
from envs.tcgjax.tests.card_records import records
from envs.tcgjax.tests.components import TCGJAX

POOL = load_pool()
PLAYABLE = [c for c in POOL.cards if c.playable]
BASICS = [c.name for c in PLAYABLE if c.is_basic]
CARDS = [c.name for c in PLAYABLE]
FOLLOW_UP = 6  # random legal actions after the card's own
EXAMPLES = 20  # situations per op kind


def _uses() -> dict[str, list[tuple[Card, str, int]]]:
    """op kind -> (card, how it acts: attack | ability | trainer | passive, attack index)."""
    uses: dict[str, list] = {}
    for card in PLAYABLE:
        for i, attack in enumerate(card.attacks):
            for op in attack.program.ops:
                uses.setdefault(op.kind, []).append((card, "attack", i))
        if card.ability is not None:
            for op in card.ability.ops:
                uses.setdefault(op.kind, []).append((card, "ability", 0))
        if card.passive is not None:
            uses.setdefault(card.passive.kind, []).append((card, "passive", 0))
        if card.program is not None and not card.is_fossil:
            for op in card.program.ops:
                uses.setdefault(op.kind, []).append((card, "trainer", 0))
    return uses


USES = _uses()
POKEMON_NAMES = sorted({c.name for c in PLAYABLE if c.is_pokemon and not c.is_fossil})


@functools.cache
def _named(card: Card) -> tuple[str, ...]:
    """Pokemon its texts name (Koga's Muk or Weezing, Brock's Golem or Onix, Nidoking's Nidoking...):
    boards draw from them half of the time, so that the card has something to act on."""
    text = json.dumps(records()[card.gameplay_id])
    return tuple(n for n in POKEMON_NAMES if re.search(rf"\b{re.escape(n)}\b", text))


def _below(card: Card) -> tuple[str, ...]:
    """The pre-evolutions under an evolved card, Basic (or Fossil) first."""
    chain = []
    while card.evolve_from:
        card = POOL.card(card.evolve_from)
        chain.insert(0, card.gameplay_id)
    return tuple(chain)


energies = st.sampled_from(ENERGY_TYPES)


@st.composite
def _mon(draw, card: Card = None, cost=(), conditions=True, named=()) -> Mon:
    if card is None:
        use_named = bool(named) and draw(st.booleans())
        card = POOL.card(draw(st.sampled_from(named if use_named else BASICS)))
    energy: dict[str, int] = {}
    for need in cost:
        kind = draw(energies) if need == "Colorless" else need
        energy[kind] = energy.get(kind, 0) + 1
    for kind in draw(st.lists(energies, max_size=3)):
        energy[kind] = energy.get(kind, 0) + 1
    hp = card.hp or 40
    damage = 10 * draw(st.integers(0, max(0, hp // 10 - 1)))
    status = ()
    if conditions:
        status = tuple(draw(st.lists(st.sampled_from(("Poisoned", "Burned", "Asleep", "Paralyzed", "Confused")),
                                     max_size=2, unique=True)))
    return Mon(card.gameplay_id, damage=damage, energy=energy, conditions=status, below=_below(card))


@st.composite
def _side(draw, active: Mon, extra_bench=(), bench_slot: int = 0, hand_card: str = None, named=()) -> Side:
    bench = [draw(_mon(conditions=False, named=named)) if draw(st.booleans()) else None for _ in range(3)]
    if extra_bench:
        bench[bench_slot - 1] = extra_bench[0]
    while bench and bench[-1] is None:
        bench.pop()
    hand = draw(st.lists(st.sampled_from(CARDS), max_size=6))
    if hand_card is not None:
        hand.insert(draw(st.integers(0, len(hand))), hand_card)
    types = tuple(draw(st.lists(energies, min_size=1, max_size=3, unique=True)))
    return Side(active=active, bench=bench, hand=hand, deck=draw(st.lists(st.sampled_from(CARDS), max_size=14)),
                discard=draw(st.lists(st.sampled_from(CARDS), max_size=4)), points=draw(st.integers(0, 2)),
                energy_types=types, energy_current=draw(st.one_of(st.none(), st.sampled_from(types))))


@st.composite
def situations(draw, kind: str):
    """(reference game, the action that runs the card's op, or None for a passive: any legal action)."""
    card, how, index = draw(st.sampled_from(USES[kind]))
    named = _named(card)
    me_conditions = ("Poisoned", "Burned", "Confused")
    if how == "attack":
        active = draw(_mon(card, card.attacks[index].cost, conditions=False))
        active.conditions = tuple(draw(st.lists(st.sampled_from(me_conditions), max_size=2, unique=True)))
        me = draw(_side(active, named=named))
    elif how == "ability":
        slot = 0 if card.ability.active_only else draw(st.integers(0, 3))
        mine = draw(_mon(card, conditions=False))
        other = draw(_mon(conditions=False, named=named))
        me = draw(_side(mine if slot == 0 else other, (mine,) if slot else (), slot, named=named))
    elif how == "trainer":
        me = draw(_side(draw(_mon(conditions=False, named=named)), hand_card=card.gameplay_id, named=named))
    else:
        holder = draw(_mon(card, conditions=False))
        slot = draw(st.integers(0, 3))
        mine = draw(st.booleans())
        me = draw(_side(holder if mine and slot == 0 else draw(_mon(conditions=False)),
                        (holder,) if mine and slot else (), slot))
    if how == "passive" and not mine:
        foe = draw(_side(holder if slot == 0 else draw(_mon()), (holder,) if slot else (), slot))
    else:
        foe = draw(_side(draw(_mon())))
    turn = draw(st.integers(2, 12))
    seed = draw(st.integers(0, 2**32 - 1))
    game = scenario(me, foe, turn=turn, seed=seed, me_index=draw(st.integers(0, 1)))
    mask = E.action_mask(game)
    if how == "attack" and E.copies(card.attacks[index]):
        wanted = list(range(A.COPY, A.NUM_ACTIONS))  # Copy Anything: any attack of the opponent's
    elif how == "attack":
        wanted = [A.ATTACK + 4 * index + t for t in range(4)]
    elif how == "ability":
        wanted = [A.ABILITY + 4 * slot + t for t in range(4)]
    elif how == "trainer":
        h = game.players[game.current].hand.index(card.index)
        wanted = [A.PLAY + 4 * h + t for t in range(4)]
    else:
        wanted = list(range(A.NUM_ACTIONS))
    legal = [a for a in wanted if mask[a]]
    assume(legal)
    return game, draw(st.sampled_from(legal)), seed, f"{card.name} ({card.gameplay_id}, {how})"


@functools.lru_cache(maxsize=1)
def _engines():
    return l3_games.jitted()


def _compare(game, action: int, seed: int, label: str, jax_state=None) -> None:
    """The card's action, then FOLLOW_UP random legal ones, on both engines; equal after each."""
    _, legal_mask, step = _engines()
    state = l3_games.jax_state_of(game) if jax_state is None else jax_state
    policy = Stream(seed ^ l3_games.POLICY_SALT)
    history = []
    for k in range(FOLLOW_UP + 1):
        if game.winner != E.ONGOING:
            break
        mask = np.asarray(E.action_mask(game))
        jax_mask = np.asarray(legal_mask(state))
        assert np.array_equal(mask, jax_mask), (
            f"{label}: legal mask after {history}: reference {np.flatnonzero(mask).tolist()} vs JAX "
            f"{np.flatnonzero(jax_mask).tolist()}")
        if k > 0:
            action = l3_games.policy_action(policy, mask)
        history.append(str(A.decode(action)))
        E.step(game, action)
        state = step(state, action)
        difference = l3_games.first_difference(l3_games.reference_snapshot(game), l3_games.jax_snapshot(state))
        assert difference is None, f"{label}: after {history} (turn {game.turn}): {difference}"


def test_every_op_kind_has_a_card():
    """Each op kind the JAX tables know is used by a playable card, so each gets situations below."""
    unused = set(OP_KINDS) - {"none"} - set(USES)
    assert not unused, sorted(unused)


@pytest.mark.parametrize("kind", sorted(USES))
@TCGJAX.covers("engine")
def test_family_matches_reference(kind):
    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(situations(kind))
    def check(situation):
        played.append(situation[3])
        _compare(*situation)

    played: list[str] = []
    check()
    # hypothesis stops early when situations are rarely legal: require most of them to have run
    assert len(played) >= EXAMPLES // 2, f"only {len(played)} situations for {kind}"


@TCGJAX.covers("engine")
@settings(max_examples=5, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(situations("heal_target"))
def test_comparison_fails_on_a_wrong_state(situation):
    """Self-test: a situation whose JAX copy gives the opponent one more point must fail (at the
    points, or at the winner and phase if that point wins the game there)."""
    game = situation[0]
    state = l3_games.jax_state_of(game)
    state = state.replace(points=state.points.at[1 - game.current].add(1))
    with pytest.raises(AssertionError, match="points|winner|phase"):
        _compare(*situation, jax_state=state)


@pytest.mark.parametrize("ditto_energy", [{"Water": 1}, {"Grass": 1}])
@TCGJAX.covers("engine")
def test_copied_sweets_relay_matches_reference(ditto_energy):
    """A position random ones rarely reach: Ditto copying Vanillite's Sweets Relay, paid (it counts as a
    Sweets Relay used, see README) and unpaid (it does nothing); then Vanillite's Sweets Relay next turn,
    whose bonus reads that mark."""
    game = scenario(Side(active=Mon("Ditto", energy=ditto_energy), deck=["Ditto"] * 5),
                    Side(active=Mon("Vanillite", energy={"Water": 1}), deck=["Ditto"] * 5,
                         energy_types=("Water",)), turn=5, seed=3)
    _compare(game, A.encode("copy", 0, 0, 0), seed=3, label=f"Ditto {ditto_energy} copies Sweets Relay")
