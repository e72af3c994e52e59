"""L1: single rules of RULES.md checked one at a time on the Python reference engine.

Every expected number here is worked out by hand from `data/cards_a1.json` (HP, damage, Weakness,
Retreat Cost; the `_data` helper reads the file so each assumption is also asserted) and from the
rule text; none is copied from an engine run.

Randomness. Coin-dependent tests pick their seed by reading the generator itself (`rng.Stream`), not
the engine. A game built by `scenario` starts its stream at draw 0; the engine consumes draws in this
order (the randomness contract, RULES.md §7 / R-6.8):
  1. the Confusion coin of a Confused attacker,
  2. damage coins in text order,
  3. effect coins in text order,
  4. Checkup coins: the player whose turn ended first, and for one Pokemon the Burn coin before the
     Asleep coin,
  5. at the start of every turn after turn 1, one draw for the turn player's next Energy (one draw
     even when the deck has a single Energy type).
An Ability's coin is drawn when the Ability is used.
"""

from __future__ import annotations

import pytest

from envs.tcgjax.reference import actions as A
from envs.tcgjax.reference import engine as E
from envs.tcgjax.reference.cards import ENERGY_TYPES, load_pool
from envs.tcgjax.reference.config import RuleConfig
from envs.tcgjax.reference.rng import Stream
from envs.tcgjax.reference.scenario import Mon, Side, scenario
from envs.tcgjax.tests.card_records import records
from envs.tcgjax.tests.components import TCGJAX

ASLEEP, PARALYZED, CONFUSED = 1, 2, 3
NO_ENERGY = -1
NEVER = -1
POOL = load_pool()


# ----------------------------------------------------------------------------------------------
# helpers



def _data(name: str) -> dict:
    return records()[name]


def hp(name: str) -> int:
    return int(_data(name)["hp"])


def check_card(card: str, **expected) -> None:
    """Assert the card data says what a test's arithmetic assumes (hp, weakness, retreat, types...)."""
    record = _data(card)
    for key, value in expected.items():
        got = record["types"][0] if key == "type" else record[key]
        assert got == value, f"{card}: data says {key}={got!r}, the test assumes {value!r}"


def attack_damage(name: str, index: int = 0) -> int:
    return int(_data(name)["attacks"][index]["damage_base"])


def coins(seed: int, n: int) -> list[bool]:
    """The first n draws of the stream read as coins (True = heads)."""
    stream = Stream(seed)
    return [stream.coin() for _ in range(n)]


def seed_for(*pattern) -> int:
    """A seed whose first draws, read as coins, match `pattern` (True heads, False tails, None any)."""
    for seed in range(1, 200_000):
        flips = coins(seed, len(pattern))
        if all(p is None or p == f for p, f in zip(pattern, flips, strict=True)):
            return seed
    raise AssertionError(f"no seed for {pattern}")


H, T, X = True, False, None


def act(game, kind: str, slot: int = 0, target: int = 0) -> None:
    E.step(game, A.encode(kind, slot, target))


def legal(game, kind: str, slot: int = 0, target: int = 0) -> bool:
    return E.why_illegal(game, A.encode(kind, slot, target)) is None


def energy(**counts) -> list[int]:
    return [counts.get(t, 0) for t in ENERGY_TYPES]


def me(game):
    return game.players[0]


def foe(game):
    return game.players[1]


def idx(name: str) -> int:
    return POOL.card(name).index


# ----------------------------------------------------------------------------------------------
# the opening hand

def opening_redraws(seed: int, decks, size: int) -> list[int]:
    """Each player's shuffles after the first, read from the generator itself by R-7's setup contract:
    the first-player coin, then player 0's deck shuffled until its top `size` hold a Basic, then player 1's."""
    stream = Stream(seed)
    stream.coin()
    redraws = []
    for deck in decks:
        cards, count = list(deck.cards), 0
        while True:
            stream.shuffle(cards)
            if any(POOL[c].is_basic for c in cards[:size]):
                break
            count += 1
        redraws.append(count)
    return redraws


def _deck_pairs():
    from envs.tcgjax.reference.decks import random_deck
    return [(seed, (random_deck(seed), random_deck(seed + 1000))) for seed in range(300)]


def test_opening_hand_of_five_holds_a_basic_and_no_one_draws_for_redraws_R_2_2():
    for seed, decks in _deck_pairs()[:60]:
        game = E.new_game(*decks, seed=seed)
        for player in game.players:
            assert len(player.hand) == 5 and len(player.deck) == 15
            assert any(POOL[c].is_basic for c in player.hand)


@pytest.mark.parametrize("hand_limit", [10, 8])
def test_seven_with_mulligan_draws_one_card_per_opponent_redraw_up_to_the_limit_R_2_2_R_3_2(hand_limit):
    """[S14]'s opening (the ⚑ alternative): 7 cards holding a Basic, then each player draws one card for
    each redraw (mulligan) its opponent took, stopping at the hand limit (R-3.2)."""
    config = RuleConfig(opening_hand="seven_with_mulligan", hand_limit=hand_limit)
    bonus_games = 0
    for seed, decks in _deck_pairs():
        redraws = opening_redraws(seed, decks, 7)
        game = E.new_game(*decks, seed=seed, config=config)
        for who, player in enumerate(game.players):
            expected = 7 + min(redraws[1 - who], hand_limit - 7)
            assert len(player.hand) == expected, (seed, who, redraws)
            assert len(player.deck) == 20 - expected
            assert any(POOL[c].is_basic for c in player.hand[:7])
        bonus_games += any(redraws)
    assert bonus_games >= 10, "the decks must make some players redraw"


def basic_on_top_hands(seed: int, decks, size: int) -> list[list[int]]:
    """The opening hands under basic_guarantee="basic_on_top", read from the generator by R-7's setup
    contract: the first-player coin, then per player (0 first) `below(Basic copies)` picking a Basic in
    deck-list order, a Fisher-Yates of the other 19 in their list order, the Basic on top."""
    stream = Stream(seed)
    stream.coin()
    hands = []
    for deck in decks:
        cards = list(deck.cards)
        basics = [i for i, c in enumerate(cards) if POOL[c].is_basic]
        chosen = cards.pop(basics[stream.below(len(basics))])
        stream.shuffle(cards)
        hands.append(([chosen] + cards)[:size])
    return hands


@pytest.mark.parametrize("opening_hand,size", [("five_with_basic", 5), ("seven_with_mulligan", 7)])
def test_basic_on_top_deals_the_contracts_hands_and_never_redraws_R_2_2(opening_hand, size):
    """Option B of R-2.2's ⚠ (how the guaranteed Basic is sampled, [C1]'s way): a Basic on top, the rest
    shuffled; nothing is redrawn, so under seven_with_mulligan no one draws extra cards."""
    config = RuleConfig(opening_hand=opening_hand, basic_guarantee="basic_on_top")
    for seed, decks in _deck_pairs()[:100]:
        game = E.new_game(*decks, seed=seed, config=config)
        for player, hand in zip(game.players, basic_on_top_hands(seed, decks, size), strict=True):
            assert player.hand == hand and POOL[hand[0]].is_basic, seed
            assert len(player.deck) == 20 - size


def _two_basic_deck():
    counts = {"Bulbasaur": 2, "Ivysaur": 2, "Venusaur": 2, "Potion": 2, "Poké Ball": 2, "Professor's Research": 2,
              "X Speed": 2, "Red Card": 2, "Sabrina": 2, "Giovanni": 2}
    return E.Deck([POOL.card(name).index for name, n in counts.items() for _ in range(n)], ("Grass",), "two basics")


def test_the_two_guarantees_sample_different_hands_R_2_2():
    """RULES.md: "The two give different distributions". With 2 Basics in 20 cards, the chance that a
    5-card opening holds both is, by counting, C(18,3) / (C(20,5) - C(18,5)) = 816 / 6936 = 0.118 when
    every qualifying hand is equally likely (option A), and 4/19 = 0.211 with a Basic put on top (option
    B: the other 4 cards from 19 holding the second Basic). 3,000 deals each: standard errors below 0.008."""
    deck, bulbasaur, games = _two_basic_deck(), POOL.card("Bulbasaur").index, 3000
    for guarantee, expected in (("reshuffle", 816 / 6936), ("basic_on_top", 4 / 19)):
        config = RuleConfig(basic_guarantee=guarantee)
        both = sum(E.new_game(deck, deck, seed=seed, config=config).players[0].hand.count(bulbasaur) == 2
                   for seed in range(games))
        assert abs(both / games - expected) < 0.03, (guarantee, both / games, expected)


@pytest.mark.parametrize("flag,choices", [("opening_hand", "'five_with_basic', 'seven_with_mulligan'"),
                                           ("basic_guarantee", "'reshuffle', 'basic_on_top'"),
                                           ("energy_choice", "'uniform', 'active_costs'"),
                                           ("tie_policy", "'count_conditions' or 'empty_board_loses'")])
def test_a_rule_flag_with_an_unknown_value_is_a_clear_error(flag, choices):
    with pytest.raises(ValueError, match=f"{flag} must be .*{choices}.*got 'mystery'"):
        RuleConfig(**{flag: "mystery"})


# ----------------------------------------------------------------------------------------------
# the Energy type under energy_choice="active_costs"

@pytest.mark.parametrize("active,costs,zone,candidates", [
    ("Dratini", [["Water", "Lightning"]], ("Water", "Fire", "Lightning"), ("Water", "Lightning")),  # in zone order
    ("Squirtle", [["Water"]], ("Fire", "Water"), ("Water",)),
    ("Charmander", [["Fire"]], ("Water", "Grass"), ("Water", "Grass")),  # {R} is not in the zone: every type
    ("Rattata", [["Colorless"]], ("Fire", "Water", "Lightning"), ("Fire", "Water", "Lightning")),  # names no type
])
def test_active_costs_rolls_among_the_types_the_actives_attacks_name_R_3_3(active, costs, zone, candidates):
    """[S15]'s reading (the ⚑ alternative): the foe's *next* Energy, rolled at the start of its turn (the
    first draw of a scenario's stream when nothing else draws), is `below(candidates)` of the zone types
    its Active's attack costs name; RULES.md's default rolls among the whole zone."""
    assert [attack["cost"] for attack in _data(active)["attacks"]] == costs
    for seed in range(40):
        for config, types in ((RuleConfig(energy_choice="active_costs"), candidates), (RuleConfig(), zone)):
            game = scenario(me=Side(active=Mon("Bulbasaur")), foe=Side(active=Mon(active), energy_types=zone),
                            seed=seed, config=config)
            act(game, "end")
            expected = types[Stream(seed).below(len(types))]
            assert foe(game).energy_next == ENERGY_TYPES.index(expected), (seed, config.energy_choice)


# ----------------------------------------------------------------------------------------------
# damage order, R-4.2 / R-4.3 Weakness

def test_weakness_adds_20_on_active_R_4_1_R_4_2():
    check_card("Pikachu", type="Lightning")
    check_card("Squirtle", weakness="Lightning", hp=60)
    game = scenario(me=Side(active=Mon("Pikachu", energy={"Lightning": 1})), foe=Side(active=Mon("Squirtle")))
    act(game, "attack", 0, 0)
    assert foe(game).board[0].damage == attack_damage("Pikachu") + 20 == 40


def test_no_weakness_when_not_weak_R_4_2():
    check_card("Bulbasaur", weakness="Fire")
    game = scenario(me=Side(active=Mon("Pikachu", energy={"Lightning": 1})), foe=Side(active=Mon("Bulbasaur")))
    act(game, "attack", 0, 0)
    assert foe(game).board[0].damage == 20


def test_giovanni_then_weakness_then_shell_armor_R_4_1():
    """20 (Gnaw) + 10 (Giovanni, step 2) + 20 (Weakness, step 3) - 10 (Shell Armor, step 4) = 40."""
    check_card("Cloyster", weakness="Lightning", hp=120)
    assert "-10" in _data("Cloyster")["ability"]["effect"]
    game = scenario(me=Side(active=Mon("Pikachu", energy={"Lightning": 1}), hand=["Giovanni"]),
                    foe=Side(active=Mon("Cloyster", below=("Shellder",))))
    act(game, "play", 0, 0)
    act(game, "attack", 0, 0)
    assert foe(game).board[0].damage == 40


def test_blaine_boosts_named_pokemon_and_weakness_after_R_4_1():
    """Rapidash's Fire Mane 40 + Blaine 30 + Weakness 20 against Venusaur (160 HP, weak to Fire) = 90."""
    check_card("Rapidash", type="Fire")
    check_card("Venusaur", weakness="Fire", hp=160)
    game = scenario(me=Side(active=Mon("Rapidash", below=("Ponyta",), energy={"Fire": 1}), hand=["Blaine"]),
                    foe=Side(active=Mon("Venusaur", below=("Bulbasaur", "Ivysaur"))))
    act(game, "play", 0, 0)
    act(game, "attack", 0, 0)
    assert foe(game).board[0].damage == 40 + 30 + 20


def test_blaine_does_not_boost_other_pokemon_R_4_1():
    """Blaine names Ninetales, Rapidash and Magmar only: Charmander's Ember stays 30 (Snorlax: weak to Fighting)."""
    check_card("Snorlax", weakness="Fighting", hp=150)
    game = scenario(me=Side(active=Mon("Charmander", energy={"Fire": 1}), hand=["Blaine"]),
                    foe=Side(active=Mon("Snorlax")))
    act(game, "play", 0, 0)
    act(game, "attack", 0, 0)
    assert foe(game).board[0].damage == 30


def test_growl_minus_20_before_weakness_floor_only_at_end_R_4_1():
    """Growl sits on the Pokemon that then attacks (step 2). Cottonee's 10 - 20 = -10 is not floored yet;
    Weakness (Cubone is weak to Grass) makes it +10. The effect lasts one opponent turn (R-6.9)."""
    check_card("Cubone", weakness="Grass", hp=60)
    check_card("Cottonee", type="Grass")
    assert attack_damage("Cottonee") == 10
    game = scenario(me=Side(active=Mon("Cubone", energy={"Fighting": 1})),
                    foe=Side(active=Mon("Cottonee", energy={"Grass": 1})), turn=3)
    act(game, "attack", 0, 0)  # Growl
    assert (game.turn, game.current) == (4, 1)
    act(game, "attack", 0, 0)  # Cottonee's Attach under Growl
    assert me(game).board[0].damage == 10
    act(game, "end")  # turn 5
    act(game, "attack", 0, 0)  # turn 6: Growl has expired, 10 + 20
    assert me(game).board[0].damage == 10 + 30


def test_growl_without_weakness_R_4_1():
    """Bulbasaur's Vine Whip 40 - 20 against Eevee (Growl, weak to Fighting) = 20."""
    check_card("P-A-030", name="Eevee", weakness="Fighting", hp=60)
    game = scenario(me=Side(active=Mon("P-A-030", energy={"Grass": 1})),
                    foe=Side(active=Mon("Bulbasaur", energy={"Grass": 2})))
    act(game, "attack", 0, 0)
    act(game, "attack", 0, 0)
    assert me(game).board[0].damage == 20


def test_hard_coat_after_weakness_R_4_1():
    """Ponyta's Flare 20 + 20 (Melmetal is weak to Fire) - 20 (Hard Coat) = 20."""
    check_card("Melmetal", weakness="Fire", hp=130)
    assert "-20" in _data("Melmetal")["ability"]["effect"]
    game = scenario(me=Side(active=Mon("Ponyta", energy={"Fire": 1})),
                    foe=Side(active=Mon("Melmetal", below=("Meltan",))))
    act(game, "attack", 0, 0)
    assert foe(game).board[0].damage == 20


def test_hard_coat_floors_at_zero_R_4_1():
    """Cottonee's 10 - 20 (Hard Coat; Melmetal is not weak to Grass) floors at 0, never negative."""
    game = scenario(me=Side(active=Mon("Cottonee", energy={"Grass": 1})),
                    foe=Side(active=Mon("Melmetal", below=("Meltan",), damage=30)))
    act(game, "attack", 0, 0)
    assert foe(game).board[0].damage == 30


def test_barrier_attack_minus_20_after_weakness_R_4_1():
    """Mr. Mime's Barrier Attack: next turn Ekans' Bite 20 + 20 (weak to Darkness) - 20 = 20."""
    check_card("Mr. Mime", weakness="Darkness", hp=80)
    check_card("Ekans", type="Darkness", weakness="Fighting", hp=60)
    game = scenario(me=Side(active=Mon("Mr. Mime", energy={"Psychic": 2})),
                    foe=Side(active=Mon("Ekans", energy={"Darkness": 1})))
    act(game, "attack", 0, 0)
    assert foe(game).board[0].damage == 30  # Psychic attack, Ekans is weak to Fighting
    act(game, "attack", 0, 0)
    assert me(game).board[0].damage == 20


@pytest.mark.parametrize("heads", [True, False])
def test_dig_prevents_damage_on_heads_R_4_1(heads):
    """Draws: 0 = Dig's coin; 1 = the opponent's Energy roll. Vine Whip 40 + 20 (Dugtrio weak to Grass)."""
    check_card("Dugtrio", weakness="Grass", hp=70)
    game = scenario(me=Side(active=Mon("Dugtrio", below=("Diglett",), energy={"Fighting": 1})),
                    foe=Side(active=Mon("Bulbasaur", energy={"Grass": 2})), seed=seed_for(heads))
    act(game, "attack", 0, 0)
    assert foe(game).board[0].damage == 40
    act(game, "attack", 0, 0)
    assert me(game).board[0].damage == (0 if heads else 60)


@pytest.mark.parametrize("heads", [True, False])
def test_dig_prevents_effects_on_heads_R_4_1(heads):
    """Dig prevents damage *and effects*: Venomoth's Poison Powder (30, Poisoned) does nothing on heads.
    On tails: 30 + 20 Weakness, then 10 Poison at the Checkup after the opponent's turn (R-6.3)."""
    game = scenario(me=Side(active=Mon("Dugtrio", below=("Diglett",), energy={"Fighting": 1})),
                    foe=Side(active=Mon("Venomoth", below=("Venonat",), energy={"Grass": 1})),
                    seed=seed_for(heads))
    act(game, "attack", 0, 0)
    act(game, "attack", 0, 0)
    dugtrio = me(game).board[0]
    assert dugtrio.poisoned == (not heads)
    assert dugtrio.damage == (0 if heads else 30 + 20 + 10)


@pytest.mark.parametrize("pattern,expected", [((H, H), 120), ((H, T), 70), ((T, H), 70), ((T, T), 0)])
def test_weakness_once_per_attack_not_per_heads_R_4_2(pattern, expected):
    """Pinsir's Double Horn, 50 per heads, against Golem (weak to Grass): Weakness +20 once, and not on 0."""
    check_card("Golem", weakness="Grass", hp=160)
    check_card("Pinsir", type="Grass")
    game = scenario(me=Side(active=Mon("Pinsir", energy={"Grass": 2})),
                    foe=Side(active=Mon("Golem", below=("Geodude", "Graveler"))), seed=seed_for(*pattern))
    act(game, "attack", 0, 0)
    assert foe(game).board[0].damage == expected


def test_bench_target_takes_no_weakness_no_giovanni_R_4_2_R_4_3():
    """Zebstrika's Thunder Spear (30 to 1 of the opponent's Pokemon) on a benched Squirtle (weak to Lightning)."""
    game = scenario(me=Side(active=Mon("Zebstrika", below=("Blitzle",), energy={"Lightning": 1}), hand=["Giovanni"]),
                    foe=Side(active=Mon("Bulbasaur"), bench=[Mon("Squirtle")]))
    act(game, "play", 0, 0)
    act(game, "attack", 0, 1)
    assert foe(game).board[1].damage == 30
    assert foe(game).board[0].damage == 0


def test_snipe_on_the_active_takes_weakness_R_4_2():
    game = scenario(me=Side(active=Mon("Zebstrika", below=("Blitzle",), energy={"Lightning": 1})),
                    foe=Side(active=Mon("Squirtle", damage=0), bench=[Mon("Bulbasaur")]))
    act(game, "attack", 0, 0)
    assert foe(game).board[0].damage == 30 + 20


def test_bench_splash_plain_while_active_gets_boost_and_weakness_R_4_3():
    """Articuno ex's Blizzard (80, 10 to each Benched) with Giovanni: Arcanine (weak to Water) takes
    80 + 10 + 20 = 110; the benched Charmander (also weak to Water) and Squirtle take 10 each."""
    check_card("Arcanine", weakness="Water", hp=130)
    check_card("Charmander", weakness="Water")
    game = scenario(me=Side(active=Mon("Articuno ex", energy={"Water": 3}), hand=["Giovanni"]),
                    foe=Side(active=Mon("Arcanine", below=("Growlithe",)), bench=[Mon("Charmander"), Mon("Squirtle")]))
    act(game, "play", 0, 0)
    act(game, "attack", 1, 0)
    assert [foe(game).board[s].damage for s in (0, 1, 2)] == [110, 10, 10]


def test_bench_target_still_gets_shell_armor_R_4_1_R_4_3():
    """R-4.3 drops only Weakness and the Active-naming boosts on the Bench; Shell Armor is a static Ability
    that is always on (R-3.9) and reads "takes -10 damage from attacks": Thunder Spear's 30 on a benched
    Cloyster is 20."""
    game = scenario(me=Side(active=Mon("Zebstrika", below=("Blitzle",), energy={"Lightning": 1})),
                    foe=Side(active=Mon("Snorlax"), bench=[Mon("Cloyster", below=("Shellder",))]))
    act(game, "attack", 0, 1)
    assert foe(game).board[1].damage == 30 - 10


def test_bench_splash_still_gets_hard_coat_R_4_1_R_4_3():
    """Articuno ex's Blizzard: 10 to each Benched Pokemon; a benched Melmetal (Hard Coat -20) takes 0."""
    game = scenario(me=Side(active=Mon("Articuno ex", energy={"Water": 3})),
                    foe=Side(active=Mon("Snorlax"), bench=[Mon("Melmetal", below=("Meltan",)), Mon("Squirtle")]))
    act(game, "attack", 1, 0)
    assert [foe(game).board[s].damage for s in (0, 1, 2)] == [80, 0, 10]


def test_no_weakness_or_giovanni_on_an_all_tails_result_R_4_2():
    """Pinsir's Double Horn, both tails (draws 0, 1), with Giovanni, against a Grass-weak Golem: 0."""
    game = scenario(me=Side(active=Mon("Pinsir", energy={"Grass": 2}), hand=["Giovanni"]),
                    foe=Side(active=Mon("Golem", below=("Geodude", "Graveler"))), seed=seed_for(T, T))
    act(game, "play", 0, 0)
    act(game, "attack", 0, 0)
    assert foe(game).board[0].damage == 0


def test_all_tails_takes_giovanni_but_never_weakness_when_bonuses_need_no_damage_R_4_2():
    """bonuses_need_damage=False lets Giovanni's +10 apply to Double Horn's all-tails 0, but R-4.2 (its
    sources agree, no flag) keeps Weakness off a 0-damage result: 10 on the Grass-weak Golem, not 30."""
    check_card("Golem", weakness="Grass", hp=160)
    config = RuleConfig(bonuses_need_damage=False)
    game = scenario(me=Side(active=Mon("Pinsir", energy={"Grass": 2}), hand=["Giovanni"]),
                    foe=Side(active=Mon("Golem", below=("Geodude", "Graveler"))), seed=seed_for(T, T), config=config)
    act(game, "play", 0, 0)
    act(game, "attack", 0, 0)
    assert foe(game).board[0].damage == 10


def test_no_damage_printed_stays_zero_with_giovanni_and_weakness_R_4_2():
    """Cubone's Growl prints no damage: no Weakness (Snorlax is weak to Fighting), no Giovanni."""
    game = scenario(me=Side(active=Mon("Cubone", energy={"Fighting": 1}), hand=["Giovanni"]),
                    foe=Side(active=Mon("Snorlax")))
    act(game, "play", 0, 0)
    act(game, "attack", 0, 0)
    assert foe(game).board[0].damage == 0


def test_poison_is_not_reduced_by_shell_armor_R_6_3():
    """Shell Armor reduces damage *from attacks*; Poison is not an attack: 10."""
    game = scenario(me=Side(active=Mon("Pikachu")), foe=Side(active=Mon("Cloyster", below=("Shellder",),
                                                                         conditions=("Poisoned",))))
    act(game, "end")
    assert foe(game).board[0].damage == 10


def test_ability_damage_takes_no_weakness_R_4_2():
    """Greninja's Water Shuriken is not attack damage (engine default of R-4.2): 20 on a Water-weak Active."""
    game = scenario(me=Side(active=Mon("Pikachu"), bench=[Mon("Greninja", below=("Froakie", "Frogadier"))]),
                    foe=Side(active=Mon("Charmander"), bench=[Mon("Growlithe")]))
    act(game, "ability", 1, 0)
    assert foe(game).board[0].damage == 20
    assert game.turn == 3  # using an Ability does not end the turn


@pytest.mark.parametrize("target,expected", [(0, 40), (1, 20)])
def test_ability_damage_takes_weakness_on_the_active_with_the_flag_R_4_2_R_4_3(target, expected):
    """weakness_on_ability_damage=True (the ⚠ default turned off): Water Shuriken's 20 + 20 on the
    Water-weak Charmander in the Active Spot; the Benched Growlithe (also Water-weak) takes 20 (R-4.3)."""
    check_card("Charmander", weakness="Water")
    check_card("Growlithe", weakness="Water")
    check_card("Greninja", type="Water")
    game = scenario(me=Side(active=Mon("Pikachu"), bench=[Mon("Greninja", below=("Froakie", "Frogadier"))]),
                    foe=Side(active=Mon("Charmander"), bench=[Mon("Growlithe")]),
                    config=RuleConfig(weakness_on_ability_damage=True))
    act(game, "ability", 1, target)
    assert foe(game).board[target].damage == expected


@pytest.mark.parametrize("flag,expected", [(False, 20), (True, 40)])
def test_counterattack_takes_weakness_only_with_the_flag_R_4_2(flag, expected):
    """Charmander's Ember (30) hits Poliwrath; Counterattack does 20 back to the Water-weak Charmander,
    plus Weakness's 20 under weakness_on_ability_damage."""
    check_card("Poliwrath", type="Water")
    check_card("Charmander", weakness="Water", hp=60)
    game = scenario(me=Side(active=Mon("Charmander", energy={"Fire": 1})),
                    foe=Side(active=Mon("Poliwrath", below=("Poliwag", "Poliwhirl"))),
                    config=RuleConfig(weakness_on_ability_damage=flag))
    act(game, "attack", 0, 0)
    assert foe(game).board[0].damage == attack_damage("Charmander") == 30
    assert me(game).board[0].damage == expected


# ----------------------------------------------------------------------------------------------
# recoil, R-4.5 heal

def test_recoil_not_boosted_by_giovanni_R_4_4():
    """Arcanine's Heat Tackle with Giovanni: Snorlax takes 100 + 10; Arcanine takes exactly its 20."""
    game = scenario(me=Side(active=Mon("Arcanine", below=("Growlithe",), energy={"Fire": 3}), hand=["Giovanni"]),
                    foe=Side(active=Mon("Snorlax")))
    act(game, "play", 0, 0)
    act(game, "attack", 0, 0)
    assert foe(game).board[0].damage == 110
    assert me(game).board[0].damage == 20


@pytest.mark.parametrize("heads", [True, False])
def test_coin_recoil_on_tails_R_4_4(heads):
    """Electabuzz's Thunder Punch (40, +40 on heads, 20 to itself on tails) with Giovanni against Snorlax."""
    game = scenario(me=Side(active=Mon("Electabuzz", energy={"Lightning": 2}), hand=["Giovanni"]),
                    foe=Side(active=Mon("Snorlax")), seed=seed_for(heads))
    act(game, "play", 0, 0)
    act(game, "attack", 0, 0)
    assert foe(game).board[0].damage == (90 if heads else 50)
    assert me(game).board[0].damage == (0 if heads else 20)


def test_potion_heal_floors_at_zero_R_4_5():
    game = scenario(me=Side(active=Mon("Bulbasaur", damage=10), hand=["Potion"]), foe=Side(active=Mon("Squirtle")))
    act(game, "play", 0, 0)
    assert me(game).board[0].damage == 0
    assert me(game).discard == [idx("Potion")]  # a played Trainer goes to the discard pile


def test_erika_heal_floors_at_zero_R_4_5():
    game = scenario(me=Side(active=Mon("Pikachu"), bench=[Mon("Bulbasaur", damage=30)], hand=["Erika"]),
                    foe=Side(active=Mon("Squirtle")))
    act(game, "play", 0, 1)
    assert me(game).board[1].damage == 0


def test_attack_self_heal_floors_at_zero_R_4_5():
    """Tangela's Absorb (40, heal 10 from itself) while it has no damage."""
    game = scenario(me=Side(active=Mon("Tangela", energy={"Grass": 2})), foe=Side(active=Mon("Snorlax")))
    act(game, "attack", 0, 0)
    assert me(game).board[0].damage == 0
    assert foe(game).board[0].damage == 40


# ----------------------------------------------------------------------------------------------
# Special Conditions

def test_poison_stacks_with_asleep_and_burned_R_6_2():
    """Weezing's Gas Leak (an Ability: no Checkup follows) on an Asleep, Burned Active."""
    game = scenario(me=Side(active=Mon("Weezing", below=("Koffing",))),
                    foe=Side(active=Mon("Squirtle", conditions=("Asleep", "Burned"))))
    act(game, "ability", 0, 0)
    target = foe(game).board[0]
    assert (target.poisoned, target.burned, target.exclusive) == (True, True, ASLEEP)


@pytest.mark.parametrize("heads", [True, False])
def test_asleep_replaces_confused_keeps_poison_R_6_2(heads):
    """Hypno's Sleep Pendulum (draw 0 is its coin) on a Confused, Poisoned Active."""
    game = scenario(me=Side(active=Mon("Hypno", below=("Drowzee",))),
                    foe=Side(active=Mon("Squirtle", conditions=("Confused", "Poisoned"))), seed=seed_for(heads))
    act(game, "ability", 0, 0)
    target = foe(game).board[0]
    assert target.poisoned
    assert target.exclusive == (ASLEEP if heads else CONFUSED)


def test_paralyzed_replaces_asleep_R_6_2():
    """Pincurchin's Thunder Shock, heads (draw 0), on an Asleep, Poisoned Bulbasaur: Paralyzed and Poisoned.
    The Checkup after the attack: 10 Poison; no Asleep coin (it is no longer Asleep); Paralysis stays (R-6.7)."""
    game = scenario(me=Side(active=Mon("Pincurchin", energy={"Lightning": 2})),
                    foe=Side(active=Mon("Bulbasaur", conditions=("Asleep", "Poisoned"))), seed=seed_for(H))
    act(game, "attack", 0, 0)
    target = foe(game).board[0]
    assert (target.exclusive, target.poisoned) == (PARALYZED, True)
    assert target.damage == 40 + 10


@pytest.mark.parametrize("heads", [True, False])
def test_confused_replaces_asleep_keeps_burn_R_6_2(heads):
    """Misdreavus' Confuse Ray on an Asleep, Burned Bulbasaur. Checkup: Burn 20, then its coin (draw 0);
    Confusion does not wear off at the Checkup (R-6.5) and there is no Asleep coin any more."""
    game = scenario(me=Side(active=Mon("Misdreavus", energy={"Psychic": 1})),
                    foe=Side(active=Mon("Bulbasaur", conditions=("Asleep", "Burned"))), seed=seed_for(heads))
    act(game, "attack", 0, 0)
    target = foe(game).board[0]
    assert target.exclusive == CONFUSED
    assert target.burned == (not heads)
    assert target.damage == 20


@pytest.mark.parametrize("heads", [True, False])
def test_asleep_replaces_paralyzed_R_6_2(heads):
    """Jigglypuff's Sing on a Paralyzed Active: Asleep; the Checkup flips its Asleep coin (draw 0)."""
    game = scenario(me=Side(active=Mon("P-A-022", energy={"Grass": 1})),
                    foe=Side(active=Mon("Squirtle", conditions=("Paralyzed",))), seed=seed_for(heads))
    act(game, "attack", 0, 0)
    assert foe(game).board[0].exclusive == (0 if heads else ASLEEP)


# ----------------------------------------------------------------------------------------------
# the Checkup

def test_poison_10_after_each_players_turn_R_6_3():
    game = scenario(me=Side(active=Mon("Pikachu", conditions=("Poisoned",))),
                    foe=Side(active=Mon("Snorlax", conditions=("Poisoned",))))
    act(game, "end")
    assert (me(game).board[0].damage, foe(game).board[0].damage) == (10, 10)
    act(game, "end")
    assert (me(game).board[0].damage, foe(game).board[0].damage) == (20, 20)
    assert me(game).board[0].poisoned and foe(game).board[0].poisoned  # it does not wear off


@pytest.mark.parametrize("heads", [True, False])
def test_burn_20_then_coin_R_6_4(heads):
    """Only the opponent is Burned: its coin is draw 0."""
    game = scenario(me=Side(active=Mon("Pikachu")), foe=Side(active=Mon("Snorlax", conditions=("Burned",))),
                    seed=seed_for(heads))
    act(game, "end")
    assert foe(game).board[0].damage == 20
    assert foe(game).board[0].burned == (not heads)


def test_burn_deals_damage_even_when_the_coin_removes_it_and_repeats_otherwise_R_6_4():
    """Draw 0 tails (still Burned), draw 1 the opponent's Energy roll, draw 2 heads (Burn removed)."""
    game = scenario(me=Side(active=Mon("Pikachu")), foe=Side(active=Mon("Snorlax", conditions=("Burned",))),
                    seed=seed_for(T, X, H))
    act(game, "end")
    act(game, "end")
    assert foe(game).board[0].damage == 40
    assert not foe(game).board[0].burned


@pytest.mark.parametrize("heads", [True, False])
def test_asleep_coin_wakes_on_heads_R_6_6(heads):
    game = scenario(me=Side(active=Mon("Pikachu")), foe=Side(active=Mon("Snorlax", conditions=("Asleep",))),
                    seed=seed_for(heads))
    act(game, "end")
    assert foe(game).board[0].exclusive == (0 if heads else ASLEEP)


def test_checkup_order_ending_player_first_burn_before_sleep_R_6_8():
    """Both Actives Burned and Asleep. Draws: 0 my Burn coin, 1 my Asleep coin, 2 the opponent's Burn
    coin, 3 the opponent's Asleep coin. With H, T, T, H: my Burn goes and I stay Asleep; the opponent
    stays Burned and wakes. (Any other order of those four coins gives a different result.)"""
    game = scenario(me=Side(active=Mon("Snorlax", conditions=("Burned", "Asleep"))),
                    foe=Side(active=Mon("Snorlax", conditions=("Burned", "Asleep"))), seed=seed_for(H, T, T, H))
    act(game, "end")
    mine, theirs = me(game).board[0], foe(game).board[0]
    assert (mine.burned, mine.exclusive, mine.damage) == (False, ASLEEP, 20)
    assert (theirs.burned, theirs.exclusive, theirs.damage) == (True, 0, 20)


def test_checkup_order_on_the_other_players_turn_R_6_8():
    """Same position, but the turn that ends is the opponent's (player 1 moves on turn 4): player 1's
    coins come first. Draws 0-3 = H, T, T, H: player 1 loses the Burn and stays Asleep."""
    game = scenario(me=Side(active=Mon("Snorlax", conditions=("Burned", "Asleep"))),
                    foe=Side(active=Mon("Snorlax", conditions=("Burned", "Asleep"))), seed=seed_for(H, T, T, H),
                    me_index=1, turn=4)
    act(game, "end")
    ender, other = game.players[1].board[0], game.players[0].board[0]
    assert (ender.burned, ender.exclusive) == (False, ASLEEP)
    assert (other.burned, other.exclusive) == (True, 0)


def test_paralysis_from_opponents_attack_blocks_owners_whole_next_turn_R_6_7():
    """Pincurchin's Thunder Shock, heads (draw 0), on turn 4. The Checkup right after the attack must not
    remove it; the owner can neither attack nor retreat on turn 5; the Checkup after turn 5 removes it.
    Draws: 0 the Paralysis coin, 1 the Energy roll of turn 5, 2 of turn 6, 3 of turn 7."""
    check_card("Bulbasaur", hp=70, retreat=1)
    game = scenario(me=Side(active=Mon("Pincurchin", energy={"Lightning": 2})),
                    foe=Side(active=Mon("Bulbasaur", energy={"Grass": 2}), bench=[Mon("Squirtle")]),
                    turn=4, seed=seed_for(H))
    act(game, "attack", 0, 0)
    assert (game.turn, game.current) == (5, 1)
    bulbasaur = foe(game).board[0]
    assert bulbasaur.exclusive == PARALYZED  # survived the Checkup right after the attack
    assert not legal(game, "attack", 0, 0)
    assert not legal(game, "retreat", 1)
    act(game, "end")  # the Checkup after the owner's turn 5 removes it
    assert foe(game).board[0].exclusive == 0
    act(game, "end")  # turn 6
    assert game.turn == 7
    assert legal(game, "attack", 0, 0)
    assert legal(game, "retreat", 1)


def test_paralysis_landing_on_owners_own_turn_lasts_through_their_next_turn_R_6_7():
    """Paralyzed during the owner's own turn 3: it survives the Checkups after turns 3 and 4 and blocks
    turn 5; the Checkup after turn 5 removes it."""
    game = scenario(me=Side(active=Mon("Pikachu", energy={"Lightning": 1}, conditions=("Paralyzed",),
                                       paralyzed_on_turn=3)),
                    foe=Side(active=Mon("Snorlax")), turn=3)
    act(game, "end")
    assert me(game).board[0].exclusive == PARALYZED
    act(game, "end")
    assert game.turn == 5 and me(game).board[0].exclusive == PARALYZED
    assert not legal(game, "attack", 0, 0)
    act(game, "end")
    assert me(game).board[0].exclusive == 0


@pytest.mark.parametrize("heads", [True, False])
def test_confused_attack_coin_R_6_5(heads):
    """Draw 0 is the Confusion coin. Tails: nothing happens (no self-damage) and the turn still ends.
    Confusion does not wear off at the Checkup."""
    game = scenario(me=Side(active=Mon("Pikachu", energy={"Lightning": 1}, conditions=("Confused",))),
                    foe=Side(active=Mon("Squirtle")), seed=seed_for(heads))
    act(game, "attack", 0, 0)
    assert foe(game).board[0].damage == (40 if heads else 0)
    assert me(game).board[0].damage == 0
    assert (game.turn, game.current) == (4, 1)
    assert me(game).board[0].exclusive == CONFUSED


@pytest.mark.parametrize("condition", ["Asleep", "Paralyzed"])
def test_asleep_or_paralyzed_cannot_attack_R_3_11(condition):
    game = scenario(me=Side(active=Mon("Pikachu", energy={"Lightning": 1}, conditions=(condition,))),
                    foe=Side(active=Mon("Squirtle")))
    assert not legal(game, "attack", 0, 0)
    with pytest.raises(E.IllegalAction):
        act(game, "attack", 0, 0)


def test_conditions_only_on_the_active_bench_damage_untouched_by_checkup_R_6_1():
    """Retreating a Poisoned, Confused Active clears both; no Checkup damage follows on the Bench."""
    game = scenario(me=Side(active=Mon("Pikachu", energy={"Lightning": 1}, conditions=("Poisoned", "Confused")),
                            bench=[Mon("Squirtle")]),
                    foe=Side(active=Mon("Snorlax")))
    act(game, "retreat", 1)
    benched = me(game).board[1]
    assert (benched.poisoned, benched.exclusive) == (False, 0)
    act(game, "end")
    assert me(game).board[1].damage == 0 and me(game).board[0].damage == 0


def test_switched_out_by_sabrina_clears_conditions_R_6_1():
    """Sabrina moves the opponent's Poisoned, Asleep Active to the Bench: no conditions, no Checkup damage."""
    game = scenario(me=Side(active=Mon("Pikachu"), hand=["Sabrina"]),
                    foe=Side(active=Mon("Snorlax", conditions=("Poisoned", "Asleep")), bench=[Mon("Squirtle")]))
    act(game, "play", 0, 0)
    assert game.phase == "promote" and game.decision_player == 1  # the opponent chooses
    act(game, "promote", 1)
    snorlax = foe(game).board[1]
    assert POOL[snorlax.top].name == "Snorlax"
    assert (snorlax.poisoned, snorlax.exclusive) == (False, 0)
    act(game, "end")
    assert foe(game).board[1].damage == 0 and foe(game).board[0].damage == 0


# ----------------------------------------------------------------------------------------------
# Effects with nothing to act on (engine default, README "Engine defaults"): a Trainer or an Ability
# that would do nothing cannot be used; an attack always can, and the part with nothing to act on is
# skipped.

def test_knock_back_against_a_lone_active_does_its_damage_and_switches_nothing():
    """Grapploct's Knock Back (70, {F}{F}{C}; "Switch out your opponent's Active Pokemon to the Bench")
    against a Snorlax weak to Fighting with no Bench: legal, 70 + 20, Snorlax stays Active."""
    check_card("Grapploct", type="Fighting")
    check_card("Snorlax", weakness="Fighting", hp=150)
    assert _data("Grapploct")["attacks"][0]["cost"] == ["Fighting", "Fighting", "Colorless"]
    assert "Switch out your opponent’s Active" in _data("Grapploct")["attacks"][0]["effect"]
    game = scenario(me=Side(active=Mon("Grapploct", energy={"Fighting": 3}, below=("Clobbopus",))),
                    foe=Side(active=Mon("Snorlax")), turn=3)
    assert legal(game, "attack", 0, 0)
    act(game, "attack", 0, 0)
    assert POOL[foe(game).board[0].top].name == "Snorlax"
    assert foe(game).board[0].damage == attack_damage("Grapploct") + 20 == 90
    assert game.phase == "main" and game.turn == 4  # no promotion owed: the attack ended the turn


def test_knock_back_with_a_bench_switches_the_active_out():
    """The control: with a Benched Squirtle, the same attack leaves the opponent to promote it."""
    game = scenario(me=Side(active=Mon("Grapploct", energy={"Fighting": 3}, below=("Clobbopus",))),
                    foe=Side(active=Mon("Snorlax"), bench=[Mon("Squirtle")]), turn=3)
    act(game, "attack", 0, 0)
    assert game.phase == "promote" and game.decision_player == 1
    act(game, "promote", 1)
    assert POOL[foe(game).board[0].top].name == "Squirtle" and foe(game).board[1].damage == 90


def test_ditto_copies_knock_back_against_a_lone_active():
    """Ditto (Colorless, so no Weakness) copies the lone Grapploct's Knock Back with {F}{F}{C} paid: 70."""
    check_card("Grapploct", weakness="Psychic", hp=130)
    game = scenario(me=Side(active=Mon("Ditto", energy={"Fighting": 2, "Water": 1})),
                    foe=Side(active=Mon("Grapploct", below=("Clobbopus",))))
    assert can_copy(game, 0)
    copy(game, 0)
    assert foe(game).board[0].damage == attack_damage("Grapploct") == 70
    assert POOL[foe(game).board[0].top].name == "Grapploct"


def test_sabrina_cannot_be_played_against_a_lone_active():
    game = scenario(me=Side(active=Mon("Pikachu"), hand=["Sabrina"]), foe=Side(active=Mon("Snorlax")))
    assert not legal(game, "play", 0, 0)
    game = scenario(me=Side(active=Mon("Pikachu"), hand=["Sabrina"]),
                    foe=Side(active=Mon("Snorlax"), bench=[Mon("Squirtle")]))
    assert legal(game, "play", 0, 0)


def test_drive_off_cannot_be_used_against_a_lone_active():
    """Pidgeot's Drive Off ("you may switch out your opponent's Active Pokemon to the Bench") would do
    nothing with no opposing Bench."""
    assert _data("Pidgeot")["ability"]["name"] == "Drive Off"
    pidgeot = Mon("Pidgeot", below=("Pidgey", "Pidgeotto"))
    game = scenario(me=Side(active=pidgeot), foe=Side(active=Mon("Snorlax")))
    assert not legal(game, "ability", 0, 0)
    game = scenario(me=Side(active=pidgeot), foe=Side(active=Mon("Snorlax"), bench=[Mon("Squirtle")]))
    assert legal(game, "ability", 0, 0)


def test_paralysis_from_the_opponents_last_turn_ends_after_this_turn_R_6_7():
    game = scenario(me=Side(active=Mon("Pikachu", energy={"Lightning": 1}, conditions=("Paralyzed",),
                                       paralyzed_on_turn=2)),
                    foe=Side(active=Mon("Snorlax")), turn=3)
    assert not legal(game, "attack", 0, 0)
    act(game, "end")
    assert me(game).board[0].exclusive == 0


# ----------------------------------------------------------------------------------------------
# evolution

@pytest.mark.parametrize("turn", [1, 2])
def test_no_evolving_on_either_players_first_turn_R_3_6_a(turn):
    game = scenario(me=Side(active=Mon("Bulbasaur"), hand=["Ivysaur"]), foe=Side(active=Mon("Squirtle")), turn=turn)
    assert not legal(game, "play", 0, 0)


def test_evolving_allowed_from_turn_3_R_3_6():
    game = scenario(me=Side(active=Mon("Bulbasaur"), hand=["Ivysaur"]), foe=Side(active=Mon("Squirtle")), turn=3)
    act(game, "play", 0, 0)
    assert me(game).board[0].stack == [idx("Bulbasaur"), idx("Ivysaur")]


def test_no_evolving_on_the_turn_it_entered_play_R_3_6_b():
    game = scenario(me=Side(active=Mon("Pikachu"), hand=["Bulbasaur", "Ivysaur"]), foe=Side(active=Mon("Squirtle")),
                    turn=5)
    act(game, "play", 0, 0)  # Bulbasaur to the Bench (slot 1)
    assert me(game).board[1].stack == [idx("Bulbasaur")]
    assert not legal(game, "play", 0, 1)  # Ivysaur is now hand index 0


def test_no_evolving_twice_in_one_turn_R_3_6_c():
    game = scenario(me=Side(active=Mon("Bulbasaur"), hand=["Ivysaur", "Venusaur"]), foe=Side(active=Mon("Squirtle")),
                    turn=5)
    act(game, "play", 0, 0)
    assert not legal(game, "play", 0, 0)  # Venusaur onto the Ivysaur that evolved this turn
    act(game, "end")
    act(game, "end")
    act(game, "play", 0, 0)  # turn 7: allowed
    assert POOL[me(game).board[0].top].name == "Venusaur"


def test_evolving_twice_in_one_turn_with_the_flag_off_R_3_6_c():
    """evolve_once_per_turn=False (the ⚠ default turned off): Basic -> Stage 1 -> Stage 2 in one turn, the
    Pokemon having been in play since an earlier turn; R-3.6(b) still holds for one played this turn."""
    config = RuleConfig(evolve_once_per_turn=False)
    game = scenario(me=Side(active=Mon("Bulbasaur"), hand=["Ivysaur", "Venusaur", "Bulbasaur", "Ivysaur"]),
                    foe=Side(active=Mon("Squirtle")), turn=5, config=config)
    act(game, "play", 0, 0)  # Ivysaur onto the Active
    act(game, "play", 0, 0)  # Venusaur onto it, the same turn
    assert me(game).board[0].stack == [idx("Bulbasaur"), idx("Ivysaur"), idx("Venusaur")]
    act(game, "play", 0, 0)  # the second Bulbasaur to the Bench
    assert E.why_illegal(game, A.encode("play", 0, 1)) == "R-3.6(b): that Pokemon came into play this turn"


def test_evolution_needs_the_matching_pokemon_R_3_6():
    game = scenario(me=Side(active=Mon("Squirtle"), bench=[Mon("Charmander")], hand=["Ivysaur", "Venusaur"]),
                    foe=Side(active=Mon("Snorlax")), turn=5)
    assert not legal(game, "play", 0, 0)
    assert not legal(game, "play", 0, 1)
    assert not legal(game, "play", 0, 2)  # empty slot
    game = scenario(me=Side(active=Mon("Bulbasaur"), hand=["Venusaur"]), foe=Side(active=Mon("Snorlax")), turn=5)
    assert not legal(game, "play", 0, 0)  # a Stage 2 does not go on a Basic


def test_evolving_keeps_damage_and_energy_clears_conditions_R_3_6():
    game = scenario(me=Side(active=Mon("Bulbasaur", damage=30, energy={"Grass": 2, "Fire": 1},
                                       conditions=("Poisoned", "Burned", "Asleep")), hand=["Ivysaur"]),
                    foe=Side(active=Mon("Snorlax")), turn=5)
    act(game, "play", 0, 0)
    ivysaur = me(game).board[0]
    assert POOL[ivysaur.top].name == "Ivysaur"
    assert ivysaur.damage == 30
    assert ivysaur.energy == energy(Grass=2, Fire=1)
    assert (ivysaur.poisoned, ivysaur.burned, ivysaur.exclusive) == (False, False, 0)


def test_evolving_clears_paralysis_so_it_can_attack_R_3_6():
    game = scenario(me=Side(active=Mon("Bulbasaur", energy={"Grass": 3}, conditions=("Paralyzed",)), hand=["Ivysaur"]),
                    foe=Side(active=Mon("Snorlax")), turn=5)
    assert not legal(game, "attack", 0, 0)
    act(game, "play", 0, 0)
    assert legal(game, "attack", 0, 0)


def test_different_pokemon_may_evolve_in_the_same_turn_R_3_6():
    game = scenario(me=Side(active=Mon("Bulbasaur"), bench=[Mon("Bulbasaur")], hand=["Ivysaur", "Ivysaur"]),
                    foe=Side(active=Mon("Snorlax")), turn=5)
    act(game, "play", 0, 0)
    act(game, "play", 0, 1)
    assert [POOL[me(game).board[s].top].name for s in (0, 1)] == ["Ivysaur", "Ivysaur"]


def test_fossil_evolves_into_its_pokemon_R_3_5_R_3_6():
    game = scenario(me=Side(active=Mon("Helix Fossil"), hand=["Omanyte"]), foe=Side(active=Mon("Snorlax")), turn=5)
    act(game, "play", 0, 0)
    assert POOL[me(game).board[0].top].name == "Omanyte"


# ----------------------------------------------------------------------------------------------
# retreat

def test_retreat_pays_cost_and_swaps_R_3_10():
    check_card("Pikachu", retreat=1)
    game = scenario(me=Side(active=Mon("Pikachu", energy={"Lightning": 2}), bench=[Mon("Squirtle")]),
                    foe=Side(active=Mon("Snorlax")))
    act(game, "retreat", 1)
    assert POOL[me(game).board[0].top].name == "Squirtle"
    assert POOL[me(game).board[1].top].name == "Pikachu"
    assert me(game).board[1].energy == energy(Lightning=1)
    assert game.turn == 3  # retreating does not end the turn


@pytest.mark.parametrize("flag", [True, False])
def test_effects_on_a_pokemon_end_when_it_leaves_the_active_only_by_default_R_3_10_R_6_9(flag):
    """Mr. Mime's Barrier Attack gives it -20 from attacks during the opponent's next turn; there the
    opponent's Sabrina sends it to the Bench. Under effects_end_on_leaving_active (RULES.md's ⚠ default)
    the effect ends there; with the flag off it stays until it expires at the end of that turn. Special
    Conditions end on leaving the Active Spot either way (R-3.10, sourced)."""
    check_card("Mr. Mime", hp=80)
    game = scenario(me=Side(active=Mon("Mr. Mime", energy={"Psychic": 2}), bench=[Mon("Pikachu")]),
                    foe=Side(active=Mon("Snorlax"), bench=[Mon("Bulbasaur")], hand=["Sabrina"]),
                    config=RuleConfig(effects_end_on_leaving_active=flag))
    mime = me(game).board[0]
    act(game, "attack", 0, 0)  # turn 3 ends
    assert (mime.takes_minus_until, mime.takes_minus) == (4, 20)
    mime.poisoned = True  # as if poisoned too (Barrier Attack poisons no one)
    act(game, "play", 0, 0)  # turn 4: Sabrina; the owner (player 0) picks the new Active
    assert game.phase == "promote" and game.decision_player == 0
    act(game, "promote", 1)
    assert me(game).board[1] is mime and not mime.poisoned
    assert (mime.takes_minus_until, mime.takes_minus) == ((NEVER, 0) if flag else (4, 20))


def test_retreat_cost_any_energy_type_R_3_10():
    check_card("Ivysaur", retreat=2)
    game = scenario(me=Side(active=Mon("Ivysaur", below=("Bulbasaur",), energy={"Fire": 1, "Water": 1}),
                            bench=[Mon("Squirtle")]),
                    foe=Side(active=Mon("Snorlax")))
    act(game, "retreat", 1)
    assert sum(me(game).board[1].energy) == 0


def test_retreat_needs_enough_energy_R_3_10():
    game = scenario(me=Side(active=Mon("Ivysaur", below=("Bulbasaur",), energy={"Grass": 1}), bench=[Mon("Squirtle")]),
                    foe=Side(active=Mon("Snorlax")))
    assert not legal(game, "retreat", 1)


def test_retreat_once_per_turn_even_at_cost_0_R_3_10():
    check_card("Starmie", retreat=0)
    game = scenario(me=Side(active=Mon("Starmie", below=("Staryu",)), bench=[Mon("Starmie", below=("Staryu",))]),
                    foe=Side(active=Mon("Snorlax")))
    assert legal(game, "retreat", 1)
    act(game, "retreat", 1)
    assert not legal(game, "retreat", 1)
    act(game, "end")
    act(game, "end")
    assert legal(game, "retreat", 1)  # a new turn


@pytest.mark.parametrize("condition", ["Asleep", "Paralyzed"])
def test_asleep_or_paralyzed_cannot_retreat_R_3_10(condition):
    game = scenario(me=Side(active=Mon("Pikachu", energy={"Lightning": 2}, conditions=(condition,)),
                            bench=[Mon("Squirtle")]),
                    foe=Side(active=Mon("Snorlax")))
    assert not legal(game, "retreat", 1)


def test_confused_can_retreat_and_pays_the_cost_R_3_10():
    game = scenario(me=Side(active=Mon("Pikachu", energy={"Lightning": 2}, conditions=("Confused",)),
                            bench=[Mon("Squirtle")]),
                    foe=Side(active=Mon("Snorlax")))
    act(game, "retreat", 1)
    assert me(game).board[1].energy == energy(Lightning=1)
    assert me(game).board[1].exclusive == 0


def test_retreat_needs_a_benched_pokemon_R_3_10():
    game = scenario(me=Side(active=Mon("Pikachu", energy={"Lightning": 2})), foe=Side(active=Mon("Snorlax")))
    assert not any(legal(game, "retreat", s) for s in (1, 2, 3))


def test_x_speed_lowers_retreat_cost_by_1_this_turn_R_3_10():
    game = scenario(me=Side(active=Mon("Ivysaur", below=("Bulbasaur",), energy={"Grass": 1}), bench=[Mon("Squirtle")],
                            hand=["X Speed"]),
                    foe=Side(active=Mon("Snorlax")))
    assert not legal(game, "retreat", 1)
    act(game, "play", 0, 0)
    act(game, "retreat", 1)
    assert sum(me(game).board[1].energy) == 0


def test_x_speed_makes_cost_1_free_and_expires_R_3_10_R_6_9():
    game = scenario(me=Side(active=Mon("Pikachu"), bench=[Mon("Squirtle")], hand=["X Speed"]),
                    foe=Side(active=Mon("Snorlax")))
    assert not legal(game, "retreat", 1)
    act(game, "play", 0, 0)
    assert legal(game, "retreat", 1)
    act(game, "end")
    act(game, "end")
    assert not legal(game, "retreat", 1)  # "during this turn" only


def test_fossil_cannot_retreat_but_can_be_discarded_R_3_5():
    game = scenario(me=Side(active=Mon("Helix Fossil"), bench=[Mon("Squirtle", energy={"Water": 2})]),
                    foe=Side(active=Mon("Snorlax")))
    assert not legal(game, "retreat", 1)
    act(game, "discard_fossil", 0)
    assert me(game).board[0] is None
    assert idx("Helix Fossil") in me(game).discard
    assert game.phase == "promote" and game.decision_player == 0  # the owner promotes
    act(game, "promote", 1)
    assert POOL[me(game).board[0].top].name == "Squirtle"
    assert foe(game).points == 0  # discarding is not a Knock Out


def test_bench_holds_at_most_3_R_2_4_R_3_5():
    game = scenario(me=Side(active=Mon("Pikachu"), bench=[Mon("Squirtle"), Mon("Squirtle"), Mon("Bulbasaur")],
                            hand=["Bulbasaur", "Helix Fossil"]),
                    foe=Side(active=Mon("Snorlax")))
    assert not legal(game, "play", 0, 0)
    assert not legal(game, "play", 1, 0)


def test_basic_and_fossil_played_to_the_bench_R_3_5():
    game = scenario(me=Side(active=Mon("Pikachu"), hand=["Bulbasaur", "Helix Fossil"]), foe=Side(active=Mon("Snorlax")))
    act(game, "play", 0, 0)
    act(game, "play", 0, 0)
    assert [POOL[me(game).board[s].top].name for s in (1, 2)] == ["Bulbasaur", "Helix Fossil"]
    assert me(game).hand == []


def test_ability_once_per_pokemon_per_turn_R_3_9():
    frogs = ("Froakie", "Frogadier")
    game = scenario(me=Side(active=Mon("Greninja", below=frogs), bench=[Mon("Greninja", below=frogs)]),
                    foe=Side(active=Mon("Snorlax")))
    act(game, "ability", 0, 0)
    assert not legal(game, "ability", 0, 0)
    act(game, "ability", 1, 0)  # a different Greninja may
    assert foe(game).board[0].damage == 40


# ----------------------------------------------------------------------------------------------
# attack cost

@pytest.mark.parametrize("attached,ok", [
    ({"Grass": 1, "Fire": 1}, True),  # Vine Whip: {G}{C}
    ({"Grass": 2}, True),
    ({"Grass": 1, "Metal": 1}, True),
    ({"Fire": 2}, False),
    ({"Grass": 1}, False),
    ({}, False),
])
def test_attack_cost_colorless_paid_by_any_type_R_3_11(attached, ok):
    assert _data("Bulbasaur")["attacks"][0]["cost"] == ["Grass", "Colorless"]
    game = scenario(me=Side(active=Mon("Bulbasaur", energy=attached)), foe=Side(active=Mon("Snorlax")))
    assert legal(game, "attack", 0, 0) == ok


@pytest.mark.parametrize("attached,ok", [
    ({"Fire": 2, "Water": 2}, True),  # Crimson Storm: {R}{R}{C}{C}
    ({"Fire": 4}, True),
    ({"Fire": 1, "Water": 3}, False),
    ({"Fire": 3}, False),
])
def test_attack_cost_typed_symbols_need_their_type_R_3_11(attached, ok):
    assert _data("Charizard ex")["attacks"][1]["cost"] == ["Fire", "Fire", "Colorless", "Colorless"]
    game = scenario(me=Side(active=Mon("Charizard ex", below=("Charmander", "Charmeleon"), energy=attached)),
                    foe=Side(active=Mon("Snorlax")))
    assert legal(game, "attack", 1, 0) == ok


def test_zero_cost_attack_needs_no_energy_R_3_11():
    game = scenario(me=Side(active=Mon("Cleffa"), deck=["Pikachu"]), foe=Side(active=Mon("Snorlax")))
    assert legal(game, "attack", 0, 0)


def test_attack_on_turn_1_allowed_when_the_cost_is_met_R_3_12():
    game = scenario(me=Side(active=Mon("Cleffa"), deck=["Pikachu"]), foe=Side(active=Mon("Snorlax")), turn=1)
    assert legal(game, "attack", 0, 0)
    game = scenario(me=Side(active=Mon("Cleffa"), deck=["Pikachu"]), foe=Side(active=Mon("Snorlax")), turn=1,
                    config=RuleConfig(attack_on_turn1=False))
    assert not legal(game, "attack", 0, 0)


def test_attack_ends_the_turn_R_3_11():
    game = scenario(me=Side(active=Mon("Pikachu", energy={"Lightning": 1})), foe=Side(active=Mon("Snorlax")))
    act(game, "attack", 0, 0)
    assert (game.turn, game.current) == (4, 1)


# ----------------------------------------------------------------------------------------------
# Copy Anything (Ditto): "Choose 1 of your opponent's Pokemon's attacks and use it as this attack. If
# this Pokemon doesn't have the necessary Energy to use that attack, this attack does nothing."

def copy(game, slot: int, index: int = 0, target: int = 0) -> None:
    E.step(game, A.encode("copy", slot, target, index))


def can_copy(game, slot: int, index: int = 0, target: int = 0) -> bool:
    return E.why_illegal(game, A.encode("copy", slot, target, index)) is None


def test_ditto_uses_a_benched_pokemons_attack_as_a_colorless_attacker():
    """Ditto copies the Benched Charmander's Ember (30; "Discard a Fire Energy from this Pokemon") onto
    a Bulbasaur weak to Fire: 30, no Weakness (the attacker is Ditto, Colorless), and Ditto discards."""
    check_card("Ditto", type="Colorless", hp=70)
    check_card("Charmander", type="Fire")
    check_card("Bulbasaur", weakness="Fire", hp=70)
    game = scenario(me=Side(active=Mon("Ditto", energy={"Fire": 1, "Water": 1})),
                    foe=Side(active=Mon("Bulbasaur"), bench=[Mon("Charmander")]))
    assert not legal(game, "attack", 0, 0), "Copy Anything names its attack: only copy actions use it"
    assert can_copy(game, 1) and can_copy(game, 0)
    copy(game, 1)
    assert foe(game).board[0].damage == attack_damage("Charmander") == 30
    assert foe(game).board[1].damage == 0
    assert me(game).board[0].energy == energy(Water=1)


def test_ditto_pays_the_copied_attacks_cost_from_its_own_energy():
    """Vine Whip costs {G}{C} (40): Ditto with Grass + Water deals 40 to the Bulbasaur it copied it from."""
    check_card("Bulbasaur", weakness="Fire", hp=70)
    game = scenario(me=Side(active=Mon("Ditto", energy={"Grass": 1, "Water": 1})), foe=Side(active=Mon("Bulbasaur")))
    copy(game, 0)
    assert foe(game).board[0].damage == attack_damage("Bulbasaur") == 40


def test_ditto_without_the_copied_attacks_energy_does_nothing():
    """One Water pays Copy Anything's {C} but not Vine Whip's {G}{C}: the copy is legal and does nothing
    (no damage, no Energy spent), and the attack still ends the turn."""
    game = scenario(me=Side(active=Mon("Ditto", energy={"Water": 1})), foe=Side(active=Mon("Bulbasaur")), turn=3)
    assert can_copy(game, 0)
    copy(game, 0)
    assert foe(game).board[0].damage == 0
    assert me(game).board[0].energy == energy(Water=1)
    assert game.turn == 4


def test_ditto_takes_the_copied_attacks_target():
    """Stretch Kick: "This attack does 30 damage to 1 of your opponent's Benched Pokemon." Copied from the
    opponent's Active Hitmonlee, it hits the chosen Benched Pokemon and must choose one."""
    check_card("Hitmonlee", type="Fighting")
    game = scenario(me=Side(active=Mon("Ditto", energy={"Fighting": 1})),
                    foe=Side(active=Mon("Hitmonlee"), bench=[Mon("Bulbasaur"), Mon("Squirtle")]))
    assert not can_copy(game, 0, target=0) and not can_copy(game, 0, target=3)
    copy(game, 0, target=2)
    assert [foe(game).board[s].damage for s in (0, 1, 2)] == [0, 0, 30]


def test_ditto_copying_sweets_relay_counts_as_using_it():
    """Engine default (README): a copied Sweets Relay is a Sweets Relay used by one of your Pokemon (what
    Vanillite's text counts); one Ditto lacks the Energy for does nothing and is not counted."""
    check_card("Vanillite", hp=60, weakness="Metal")
    game = scenario(me=Side(active=Mon("Ditto", energy={"Water": 1})), foe=Side(active=Mon("Vanillite")), turn=5)
    copy(game, 0)
    assert foe(game).board[0].damage == attack_damage("Vanillite") == 10
    assert me(game).sweets_relay_turn == 5
    unpaid = scenario(me=Side(active=Mon("Ditto", energy={"Grass": 1})), foe=Side(active=Mon("Vanillite")), turn=5)
    copy(unpaid, 0)
    assert unpaid.players[0].sweets_relay_turn == -1 and unpaid.players[1].board[0].damage == 0


def test_what_ditto_cannot_copy():
    game = scenario(me=Side(active=Mon("Ditto", energy={"Water": 1})),
                    foe=Side(active=Mon("Bulbasaur"), bench=[Mon("Ditto")]))
    assert not can_copy(game, 2), "an empty slot"
    assert not can_copy(game, 0, index=1), "Bulbasaur has one attack"
    assert not can_copy(game, 1), "a copying attack names no attack of its own"
    no_energy = scenario(me=Side(active=Mon("Ditto")), foe=Side(active=Mon("Bulbasaur")))
    assert not can_copy(no_energy, 0), "Copy Anything's own cost {C} is not paid"
    asleep = scenario(me=Side(active=Mon("Ditto", energy={"Water": 1})),
                      foe=Side(active=Mon("Bulbasaur")))
    asleep.players[0].board[0].exclusive = ASLEEP
    assert not can_copy(asleep, 0), "R-3.11: an Asleep Pokemon can't attack"
    not_ditto = scenario(me=Side(active=Mon("Squirtle", energy={"Water": 1})), foe=Side(active=Mon("Bulbasaur")))
    assert not can_copy(not_ditto, 0), "only a copying attack copies"


# ----------------------------------------------------------------------------------------------
# Trainers

def test_supporter_once_per_turn_R_3_7():
    game = scenario(me=Side(active=Mon("Pikachu"), hand=["Professor's Research", "Professor's Research"],
                            deck=["Potion", "X Speed", "Squirtle"]),
                    foe=Side(active=Mon("Snorlax")))
    act(game, "play", 0, 0)
    assert me(game).hand == [idx("Professor's Research"), idx("Potion"), idx("X Speed")]
    assert me(game).discard == [idx("Professor's Research")]
    assert not legal(game, "play", 0, 0)
    act(game, "end")
    act(game, "end")  # turn 5: drew the Squirtle, and may play a Supporter again
    assert legal(game, "play", 0, 0)


def test_items_any_number_per_turn_R_3_7():
    game = scenario(me=Side(active=Mon("Pikachu"), hand=["X Speed", "X Speed", "Hand Scope"]),
                    foe=Side(active=Mon("Snorlax")))
    for _ in range(3):
        act(game, "play", 0, 0)
    assert me(game).hand == []
    assert sorted(me(game).discard) == sorted([idx("X Speed")] * 2 + [idx("Hand Scope")])


def test_supporter_and_items_in_the_same_turn_R_3_7():
    game = scenario(me=Side(active=Mon("Pikachu", damage=20), hand=["Giovanni", "Potion", "Potion"]),
                    foe=Side(active=Mon("Snorlax")))
    act(game, "play", 0, 0)
    act(game, "play", 0, 0)
    assert me(game).board[0].damage == 0


def test_supporter_on_turn_1_allowed_by_default_R_3_7():
    game = scenario(me=Side(active=Mon("Pikachu"), hand=["Professor's Research"], deck=["Potion"]),
                    foe=Side(active=Mon("Snorlax")), turn=1)
    assert legal(game, "play", 0, 0)
    game = scenario(me=Side(active=Mon("Pikachu"), hand=["Professor's Research"], deck=["Potion"]),
                    foe=Side(active=Mon("Snorlax")), turn=1, config=RuleConfig(supporter_on_turn1=False))
    assert not legal(game, "play", 0, 0)


# ----------------------------------------------------------------------------------------------
# hand limit

def test_turn_draw_skipped_at_10_cards_card_stays_in_deck_R_3_2():
    game = scenario(me=Side(active=Mon("Pikachu"), hand=["Potion"] * 10, deck=["Squirtle", "Bulbasaur"]),
                    foe=Side(active=Mon("Snorlax")))
    act(game, "end")
    act(game, "end")
    assert game.turn == 5
    assert len(me(game).hand) == 10
    assert me(game).deck == [idx("Squirtle"), idx("Bulbasaur")]


def test_effect_draw_stops_at_10_cards_R_3_2():
    """Professor's Research with 10 cards in hand: it leaves (9), the first draw makes 10, the second waits."""
    game = scenario(me=Side(active=Mon("Pikachu"), hand=["Professor's Research"] + ["Potion"] * 9,
                            deck=["Squirtle", "Bulbasaur"]),
                    foe=Side(active=Mon("Snorlax")))
    act(game, "play", 0, 0)
    assert len(me(game).hand) == 10
    assert me(game).hand[-1] == idx("Squirtle")
    assert me(game).deck == [idx("Bulbasaur")]


def test_turn_draw_at_9_cards_R_3_2():
    game = scenario(me=Side(active=Mon("Pikachu"), hand=["Potion"] * 9, deck=["Squirtle", "Bulbasaur"]),
                    foe=Side(active=Mon("Snorlax")))
    act(game, "end")
    act(game, "end")
    assert len(me(game).hand) == 10
    assert me(game).deck == [idx("Bulbasaur")]


# ----------------------------------------------------------------------------------------------
# deck validation

def _deck(counts: dict[str, int]) -> list[int]:
    return [idx(name) for name, n in counts.items() for _ in range(n)]


LEGAL = {"Pikachu": 2, "Pikachu ex": 2, "Zapdos ex": 2, "Voltorb": 2, "Electrode": 2, "Magnemite": 2,
         "Magneton": 2, "Potion": 2, "X Speed": 2, "Professor's Research": 2}


def test_legal_deck_validates_R_1_1_R_1_2():
    assert len(_deck(LEGAL)) == 20
    E.Deck(_deck(LEGAL), ("Lightning",)).validate(POOL)  # 2 Pikachu + 2 Pikachu ex is legal


@pytest.mark.parametrize("size", [0, 19, 21])
def test_deck_must_have_exactly_20_cards_R_1_1(size):
    cards = (_deck(LEGAL) + [idx("Poké Ball")])[:size]
    with pytest.raises(ValueError):
        E.Deck(cards, ("Lightning",)).validate(POOL)


def test_at_most_2_cards_with_the_same_name_R_1_2():
    counts = dict(LEGAL, Pikachu=3, Potion=1)
    with pytest.raises(ValueError):
        E.Deck(_deck(counts), ("Lightning",)).validate(POOL)


def test_copy_limit_is_by_name_across_different_cards_R_1_2():
    """A1-206 and P-A-030 are both named Eevee but play differently: 3 of them break the limit."""
    assert _data("A1-206")["name"] == _data("P-A-030")["name"] == "Eevee"
    assert _data("A1-206")["gameplay_id"] != _data("P-A-030")["gameplay_id"]
    cards = _deck(dict(LEGAL, Potion=1)) + [idx("A1-206"), idx("A1-206"), idx("P-A-030")]
    cards.remove(idx("X Speed"))
    cards.remove(idx("X Speed"))
    assert len(cards) == 20
    with pytest.raises(ValueError):
        E.Deck(cards, ("Lightning",)).validate(POOL)


def test_copy_limit_counts_alternate_printings_together_R_1_2():
    """Three Bulbasaur from different printings (A1-001, A1-227, P-A-023)."""
    cards = _deck(dict(LEGAL, Potion=1)) + [POOL.card(p).index for p in ("A1-001", "A1-227", "P-A-023")]
    cards.remove(idx("X Speed"))
    cards.remove(idx("X Speed"))
    assert len(cards) == 20
    with pytest.raises(ValueError):
        E.Deck(cards, ("Lightning",)).validate(POOL)


def test_deck_needs_a_basic_pokemon_fossil_does_not_count_R_1_3():
    no_basic = {"Ivysaur": 2, "Venusaur": 2, "Helix Fossil": 2, "Dome Fossil": 2, "Old Amber": 2, "Potion": 2,
                "X Speed": 2, "Hand Scope": 2, "Pokédex": 2, "Professor's Research": 2}
    assert len(_deck(no_basic)) == 20
    with pytest.raises(ValueError):
        E.Deck(_deck(no_basic), ("Grass",)).validate(POOL)


def test_fossil_counts_as_basic_only_with_the_flag_R_1_3():
    fossils = {"Helix Fossil": 2, "Omanyte": 2, "Omastar": 2, "Potion": 2, "X Speed": 2, "Hand Scope": 2,
               "Pokédex": 2, "Poké Ball": 2, "Red Card": 2, "Professor's Research": 2}
    assert len(_deck(fossils)) == 20
    with pytest.raises(ValueError, match="R-1.3"):
        E.Deck(_deck(fossils), ("Water",)).validate(POOL)
    # With the flag R-1.3 accepts it, but no game could start: R-2.2's opening hand needs a Basic
    # Pokemon and does not place Fossils, so the deck is refused for that reason instead.
    with pytest.raises(ValueError, match="R-2.2"):
        E.Deck(_deck(fossils), ("Water",)).validate(POOL, RuleConfig(fossil_counts_as_basic_for_deck=True))


@pytest.mark.parametrize("types", [
    (),
    ("Lightning", "Water", "Fire", "Grass"),  # more than 3 (engine default)
    ("Colorless",),
    ("Dragon",),
    ("Lightning", "Lightning"),
])
def test_energy_types_1_to_3_basic_types_R_1_4(types):
    with pytest.raises(ValueError):
        E.Deck(_deck(LEGAL), types).validate(POOL)


@pytest.mark.parametrize("types", [("Lightning",), ("Lightning", "Metal"), ("Lightning", "Darkness", "Psychic")])
def test_energy_types_accepted_R_1_4(types):
    E.Deck(_deck(LEGAL), types).validate(POOL)


# ----------------------------------------------------------------------------------------------
# Energy Zone

def _basic_in_hand(game, player: int) -> int:
    hand = game.players[player].hand
    return next(i for i, c in enumerate(hand) if _data(POOL[c].gameplay_id).get("stage") == "Basic")


def _new_game_to_turn_1(seed: int):
    deck = E.Deck(_deck(LEGAL), ("Lightning",))
    game = E.new_game(deck, deck, seed)
    for _ in range(2):
        act(game, "play", _basic_in_hand(game, game.current), 0)
        act(game, "end")
    assert (game.phase, game.turn, game.current) == ("main", 1, game.first)
    return game


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_first_player_gets_no_energy_on_turn_1_second_does_on_turn_2_R_3_3(seed):
    game = _new_game_to_turn_1(seed)
    assert game.players[game.first].energy_current == NO_ENERGY
    assert not any(legal(game, "attach", s) for s in range(4))
    act(game, "end")
    assert game.turn == 2 and game.current == 1 - game.first
    assert game.players[game.current].energy_current == ENERGY_TYPES.index("Lightning")
    act(game, "attach", 0)
    assert game.players[game.current].board[0].energy == energy(Lightning=1)


def test_attach_once_per_turn_R_3_4():
    game = scenario(me=Side(active=Mon("Pikachu"), bench=[Mon("Squirtle")], energy_types=("Lightning",),
                            energy_current="Lightning"),
                    foe=Side(active=Mon("Snorlax")))
    act(game, "attach", 1)
    assert me(game).board[1].energy == energy(Lightning=1)
    assert not any(legal(game, "attach", s) for s in (0, 1))


def test_zone_energy_from_effects_does_not_use_the_attachment_R_3_4():
    """Magneton's Volt Charge takes a Lightning from the zone (the type in its text, not the current Water);
    the once-per-turn attachment of the current Energy is still available."""
    game = scenario(me=Side(active=Mon("Magneton", below=("Magnemite",)), energy_types=("Water",),
                            energy_current="Water"),
                    foe=Side(active=Mon("Snorlax")))
    act(game, "ability", 0, 0)
    assert legal(game, "attach", 0)
    act(game, "attach", 0)
    assert me(game).board[0].energy == energy(Lightning=1, Water=1)


def test_unused_energy_lost_next_becomes_current_R_3_3():
    """Current Lightning unused on turn 3 is lost; on turn 5 the zone offers the Water that was *next*."""
    game = scenario(me=Side(active=Mon("Pikachu"), energy_types=("Lightning", "Water"), energy_current="Lightning",
                            energy_next="Water"),
                    foe=Side(active=Mon("Snorlax")))
    act(game, "end")
    assert me(game).energy_current == NO_ENERGY
    act(game, "end")
    assert game.turn == 5
    act(game, "attach", 0)
    assert me(game).board[0].energy == energy(Water=1)


def test_energy_zone_rolls_only_the_decks_types_R_3_3():
    """Over many turns, the Energy offered is always one of the deck's types."""
    game = scenario(me=Side(active=Mon("Snorlax"), energy_types=("Lightning", "Metal"), energy_next="Metal"),
                    foe=Side(active=Mon("Snorlax"), energy_types=("Fire",), energy_next="Fire"),
                    config=RuleConfig(max_turns=200), seed=11)
    seen = set()
    for _ in range(60):
        act(game, "end")
        seen.add(ENERGY_TYPES[game.players[game.current].energy_current])
        if game.current == 1:
            assert game.players[1].energy_current == ENERGY_TYPES.index("Fire")
        else:
            assert ENERGY_TYPES[game.players[0].energy_current] in ("Lightning", "Metal")
    assert seen == {"Lightning", "Metal", "Fire"}


def test_unused_energy_carries_over_with_the_flag_R_3_3():
    """unused_energy_carries_over=True (the [S11] reading): the zone's current slot is refilled only when it is
    empty, so an unused Lightning is still the current Energy on the player's next turn."""
    game = scenario(me=Side(active=Mon("Pikachu"), energy_types=("Lightning", "Water"), energy_current="Lightning",
                            energy_next="Water"),
                    foe=Side(active=Mon("Snorlax")), config=RuleConfig(unused_energy_carries_over=True))
    act(game, "end")
    act(game, "end")
    act(game, "attach", 0)
    assert me(game).board[0].energy == energy(Lightning=1)


# Every test here pins the rules component: a failure reads "[tcgjax/rules] ...".
for _name, _test in list(globals().items()):
    if _name.startswith("test_") and callable(_test):
        globals()[_name] = TCGJAX.covers("rules")(_test)
