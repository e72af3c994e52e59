"""L2: whole turns on the Python reference engine: Knock Outs, promotion and points (R-5.1 to R-5.3),
game end and simultaneous outcomes (R-5.4, R-5.5), the turn limit (R-5.7), setup from `new_game`
(R-2.1 to R-2.3), the turn-1 draw and deck-out (R-3.1).

Expected values are worked out by hand from `data/cards_a1.json` and RULES.md, never copied from an
engine run. Coin-dependent tests read the generator (`rng.Stream`) to choose their seed; the draw order
the engine follows is listed in l1_rules.py's docstring (Confusion coin, damage coins, effect coins,
Checkup coins with the ending player first and Burn before Asleep, then one Energy-roll draw at the
start of each turn after turn 1).
"""

from __future__ import annotations

import random

import pytest

from envs.tcgjax.reference import actions as A
from envs.tcgjax.reference import engine as E
from envs.tcgjax.reference.cards import load_pool
from envs.tcgjax.reference.config import RuleConfig
from envs.tcgjax.reference.decks import fixed_deck, random_deck
from envs.tcgjax.reference.rng import Stream
from envs.tcgjax.reference.scenario import Mon, Side, scenario
from envs.tcgjax.tests.card_records import records
from envs.tcgjax.tests.components import TCGJAX

POOL = load_pool()
ONGOING, DRAW = -1, 2
H, T, X = True, False, None
COUNT = RuleConfig()  # tie_policy="count_conditions" (the default)
EMPTY_LOSES = RuleConfig(tie_policy="empty_board_loses")




def check_card(card: str, **expected) -> None:
    record = records()[card]
    for key, value in expected.items():
        got = record["types"][0] if key == "type" else record[key]
        assert got == value, f"{card}: data says {key}={got!r}, the test assumes {value!r}"


def is_basic(index: int) -> bool:
    """From the data, not the engine: a Pokemon card whose stage is Basic (a Fossil is a Trainer)."""
    record = records()[POOL[index].gameplay_id]
    return record["category"] == "Pokemon" and record.get("stage") == "Basic"


def coins(seed: int, n: int) -> list[bool]:
    stream = Stream(seed)
    return [stream.coin() for _ in range(n)]


def seed_for(*pattern) -> int:
    for seed in range(1, 200_000):
        if all(p is None or p == f for p, f in zip(pattern, coins(seed, len(pattern)), strict=True)):
            return seed
    raise AssertionError(f"no seed for {pattern}")


def act(game, kind: str, slot: int = 0, target: int = 0) -> None:
    E.step(game, A.encode(kind, slot, target))


def legal(game, kind: str, slot: int = 0, target: int = 0) -> bool:
    return E.why_illegal(game, A.encode(kind, slot, target)) is None


def idx(name: str) -> int:
    return POOL.card(name).index


def name_at(game, player: int, slot: int) -> str | None:
    pokemon = game.players[player].board[slot]
    return None if pokemon is None else POOL[pokemon.top].name


def promote_all(game) -> None:
    """Resolve every promotion owed, each player taking their first occupied Bench slot."""
    while game.phase == "promote":
        who = game.decision_player
        act(game, "promote", game.players[who].bench_slots()[0])


# ----------------------------------------------------------------------------------------------
# a Knock Out, then the promotion, then points

def test_ko_discards_the_stack_scores_then_owner_promotes_R_5_1_R_5_2_R_5_3():
    """Gnaw 20 + 20 (Wartortle is weak to Lightning) on a Wartortle with 40 damage: 80 = its HP."""
    check_card("Wartortle", hp=80, weakness="Lightning")
    game = scenario(me=Side(active=Mon("Pikachu", energy={"Lightning": 1})),
                    foe=Side(active=Mon("Wartortle", below=("Squirtle",), damage=40, energy={"Water": 2}),
                             bench=[Mon("Bulbasaur"), Mon("Snorlax")]))
    act(game, "attack", 0, 0)
    assert game.players[1].board[0] is None
    assert sorted(game.players[1].discard) == sorted([idx("Squirtle"), idx("Wartortle")])  # Energy just leaves
    assert game.players[0].points == 1
    assert (game.phase, game.decision_player, game.winner) == ("promote", 1, ONGOING)
    assert sorted(E.legal_actions(game)) == [A.encode("promote", 1), A.encode("promote", 2)]
    with pytest.raises(E.IllegalAction):
        act(game, "end")
    act(game, "promote", 2)
    assert name_at(game, 1, 0) == "Snorlax"
    assert (name_at(game, 1, 1), name_at(game, 1, 2)) == ("Bulbasaur", None)
    assert (game.phase, game.turn, game.current) == ("main", 4, 1)  # then the turn passes


def test_ex_knock_out_is_worth_2_R_5_2():
    """Hitmonchan's Jab 30 + 20 (Pikachu ex is weak to Fighting) on 70 damage: 120 = its HP."""
    check_card("Pikachu ex", hp=120, weakness="Fighting", is_ex=True)
    game = scenario(me=Side(active=Mon("Hitmonchan", energy={"Fighting": 1})),
                    foe=Side(active=Mon("Pikachu ex", damage=70), bench=[Mon("Pikachu")]))
    act(game, "attack", 0, 0)
    assert game.players[0].points == 2


def test_fossil_knock_out_is_worth_1_R_5_2():
    game = scenario(me=Side(active=Mon("Pikachu", energy={"Lightning": 1})),
                    foe=Side(active=Mon("Helix Fossil", damage=20), bench=[Mon("Pikachu")]))
    act(game, "attack", 0, 0)
    assert game.players[1].board[0] is None
    assert game.players[0].points == 1


def test_recoil_knock_out_scores_for_the_opponent_R_5_2():
    """Arcanine (130 HP) with 110 damage uses Heat Tackle: 20 to itself is a Knock Out; Snorlax survives 100."""
    check_card("Arcanine", hp=130)
    game = scenario(me=Side(active=Mon("Arcanine", below=("Growlithe",), damage=110, energy={"Fire": 3}),
                            bench=[Mon("Squirtle")]),
                    foe=Side(active=Mon("Snorlax")))
    act(game, "attack", 0, 0)
    assert game.players[1].board[0].damage == 100
    assert (game.players[0].points, game.players[1].points) == (0, 1)
    assert (game.phase, game.decision_player) == ("promote", 0)
    act(game, "promote", 1)
    assert (game.phase, game.turn, game.current) == ("main", 4, 1)


def test_counterattack_knock_out_scores_for_the_defender_R_5_2():
    """Pikachu (60 HP, 40 damage) hits Poliwrath: Counterattack does 20 back, a Knock Out."""
    check_card("Pikachu", hp=60)
    game = scenario(me=Side(active=Mon("Pikachu", damage=40, energy={"Lightning": 1}), bench=[Mon("Squirtle")]),
                    foe=Side(active=Mon("Poliwrath", below=("Poliwag", "Poliwhirl"))))
    act(game, "attack", 0, 0)
    assert game.players[1].board[0].damage == 40  # 20 + 20 Weakness
    assert game.players[0].board[0] is None
    assert game.players[1].points == 1


def test_poison_knock_out_in_checkup_scores_for_the_other_player_R_5_2_R_6_3():
    game = scenario(me=Side(active=Mon("Pikachu")),
                    foe=Side(active=Mon("Squirtle", damage=50, conditions=("Poisoned",)), bench=[Mon("Bulbasaur")]))
    act(game, "end")
    assert game.players[1].board[0] is None
    assert (game.players[0].points, game.players[1].points) == (1, 0)
    assert (game.phase, game.decision_player) == ("promote", 1)
    act(game, "promote", 1)
    assert (game.phase, game.turn, game.current) == ("main", 4, 1)
    assert name_at(game, 1, 0) == "Bulbasaur"


def test_own_poison_knock_out_after_own_turn_scores_for_opponent_R_5_2():
    game = scenario(me=Side(active=Mon("Pikachu", damage=50, conditions=("Poisoned",)), bench=[Mon("Squirtle")]),
                    foe=Side(active=Mon("Snorlax")))
    act(game, "end")
    assert (game.players[0].points, game.players[1].points) == (0, 1)
    assert (game.phase, game.decision_player) == ("promote", 0)
    act(game, "promote", 1)
    assert (game.turn, game.current) == (4, 1)


def test_burn_knock_out_in_checkup_scores_R_5_2_R_6_4():
    game = scenario(me=Side(active=Mon("Pikachu")),
                    foe=Side(active=Mon("Pikachu ex", damage=100, conditions=("Burned",)), bench=[Mon("Pikachu")]))
    act(game, "end")
    assert game.players[0].points == 2


def test_both_sides_score_in_one_checkup_R_6_8_R_5_2():
    """Knock Outs are evaluated after the whole Checkup: both Poisoned Actives fall, both players score."""
    game = scenario(me=Side(active=Mon("Pikachu", damage=50, conditions=("Poisoned",)), bench=[Mon("Bulbasaur")]),
                    foe=Side(active=Mon("Squirtle", damage=50, conditions=("Poisoned",)), bench=[Mon("Snorlax")]))
    act(game, "end")
    assert game.players[0].board[0] is None and game.players[1].board[0] is None
    assert (game.players[0].points, game.players[1].points) == (1, 1)
    assert game.winner == ONGOING and game.phase == "promote"
    promote_all(game)
    assert (name_at(game, 0, 0), name_at(game, 1, 0)) == ("Bulbasaur", "Snorlax")
    assert (game.phase, game.turn, game.current) == ("main", 4, 1)


def test_double_knock_out_by_attack_and_recoil_turn_player_promotes_first_R_5_3():
    """Arcanine (110 damage) Heat Tackles Squirtle: 100 Knocks it Out, the 20 recoil Knocks Arcanine Out."""
    game = scenario(me=Side(active=Mon("Arcanine", below=("Growlithe",), damage=110, energy={"Fire": 3}),
                            bench=[Mon("Pikachu")]),
                    foe=Side(active=Mon("Squirtle"), bench=[Mon("Bulbasaur")]))
    act(game, "attack", 0, 0)
    assert (game.players[0].points, game.players[1].points) == (1, 1)
    assert (game.phase, game.decision_player) == ("promote", 0)
    act(game, "promote", 1)
    assert (game.phase, game.decision_player) == ("promote", 1)
    act(game, "promote", 1)
    assert (game.phase, game.turn, game.current) == ("main", 4, 1)


def test_double_knock_out_with_the_opponent_promoting_first_R_5_3():
    """turn_player_promotes_first=False (the ⚠ default turned off): the same double Knock Out, the opponent
    chooses its new Active first, then the turn player; then the opponent's turn starts as before."""
    game = scenario(me=Side(active=Mon("Arcanine", below=("Growlithe",), damage=110, energy={"Fire": 3}),
                            bench=[Mon("Pikachu")]),
                    foe=Side(active=Mon("Squirtle"), bench=[Mon("Bulbasaur")]),
                    config=RuleConfig(turn_player_promotes_first=False))
    act(game, "attack", 0, 0)
    assert (game.phase, game.decision_player) == ("promote", 1)
    act(game, "promote", 1)
    assert POOL[game.players[1].board[0].top].name == "Bulbasaur"
    assert (game.phase, game.decision_player) == ("promote", 0)
    act(game, "promote", 1)
    assert POOL[game.players[0].board[0].top].name == "Pikachu"
    assert (game.phase, game.turn, game.current) == ("main", 4, 1)


def test_benched_knock_out_needs_no_promotion_R_5_1():
    """Articuno ex's Blizzard: 10 to each Benched Pokemon Knocks Out a Magikarp (30 HP) with 20 damage."""
    check_card("Magikarp", hp=30)
    game = scenario(me=Side(active=Mon("Articuno ex", energy={"Water": 3})),
                    foe=Side(active=Mon("Snorlax"), bench=[Mon("Magikarp", damage=20), Mon("Squirtle")]))
    act(game, "attack", 1, 0)
    assert game.players[1].board[1] is None
    assert game.players[0].points == 1
    assert (game.phase, game.turn) == ("main", 4)


# ----------------------------------------------------------------------------------------------
# game end

def test_third_point_wins_R_5_4_a():
    game = scenario(me=Side(active=Mon("Pikachu", energy={"Lightning": 1}), points=2),
                    foe=Side(active=Mon("Squirtle", damage=20), bench=[Mon("Bulbasaur")]))
    act(game, "attack", 0, 0)
    assert (game.winner, game.phase) == (0, "over")
    assert E.legal_actions(game) == []


def test_ex_knock_out_from_1_point_wins_R_5_4_a():
    game = scenario(me=Side(active=Mon("Hitmonchan", energy={"Fighting": 1}), points=1),
                    foe=Side(active=Mon("Pikachu ex", damage=70), bench=[Mon("Pikachu")]))
    act(game, "attack", 0, 0)
    assert game.players[0].points == 3
    assert game.winner == 0


def test_two_points_do_not_win_R_5_4_a():
    game = scenario(me=Side(active=Mon("Pikachu", energy={"Lightning": 1}), points=1),
                    foe=Side(active=Mon("Squirtle", damage=20), bench=[Mon("Bulbasaur")]))
    act(game, "attack", 0, 0)
    assert game.players[0].points == 2 and game.winner == ONGOING


def test_opponent_with_no_pokemon_left_loses_R_5_4_b():
    game = scenario(me=Side(active=Mon("Pikachu", energy={"Lightning": 1})),
                    foe=Side(active=Mon("Squirtle", damage=20), points=2))
    act(game, "attack", 0, 0)
    assert game.players[0].points == 1
    assert (game.winner, game.phase) == (0, "over")


def test_own_poison_leaves_no_pokemon_loses_R_5_4_b():
    game = scenario(me=Side(active=Mon("Pikachu", damage=50, conditions=("Poisoned",)), points=2),
                    foe=Side(active=Mon("Snorlax")))
    act(game, "end")
    assert game.winner == 1


def test_discarding_the_last_fossil_loses_R_5_4_b():
    game = scenario(me=Side(active=Mon("Helix Fossil")), foe=Side(active=Mon("Snorlax")))
    act(game, "discard_fossil", 0)
    assert game.winner == 1


@pytest.mark.parametrize("config", [COUNT, EMPTY_LOSES], ids=["count_conditions", "empty_board_loses"])
def test_no_pokemon_loses_under_both_policies_R_5_4_b(config):
    game = scenario(me=Side(active=Mon("Pikachu", energy={"Lightning": 1})),
                    foe=Side(active=Mon("Squirtle", damage=20)), config=config)
    act(game, "attack", 0, 0)
    assert game.winner == 0


# ----------------------------------------------------------------------------------------------
# simultaneous outcomes (both Actives Poisoned with 10 HP left: both fall in one Checkup)

def _double_poison(my_points: int, my_bench: bool, foe_points: int, foe_bench: bool, config: RuleConfig):
    return scenario(
        me=Side(active=Mon("Pikachu", damage=50, conditions=("Poisoned",)),
                bench=[Mon("Bulbasaur")] if my_bench else [], points=my_points),
        foe=Side(active=Mon("Squirtle", damage=50, conditions=("Poisoned",)),
                 bench=[Mon("Snorlax")] if foe_bench else [], points=foe_points),
        config=config)


@pytest.mark.parametrize("config", [COUNT, EMPTY_LOSES], ids=["count_conditions", "empty_board_loses"])
def test_both_reach_3_points_together_is_a_draw_R_5_5(config):
    game = _double_poison(2, True, 2, True, config)
    act(game, "end")
    assert (game.players[0].points, game.players[1].points) == (3, 3)
    assert (game.winner, game.phase) == (DRAW, "over")


@pytest.mark.parametrize("config", [COUNT, EMPTY_LOSES], ids=["count_conditions", "empty_board_loses"])
def test_both_lose_all_pokemon_together_is_a_draw_R_5_5(config):
    game = _double_poison(0, False, 0, False, config)
    act(game, "end")
    assert (game.winner, game.phase) == (DRAW, "over")


def test_3_points_but_empty_board_vs_opponent_with_pokemon_ties_by_default_R_5_5():
    """count_conditions: I have the points condition, the opponent has "my board is empty": one each, a tie."""
    game = _double_poison(2, False, 0, True, COUNT)
    act(game, "end")
    assert (game.players[0].points, game.players[1].points) == (3, 1)
    assert game.winner == DRAW


def test_3_points_but_empty_board_loses_with_empty_board_loses_R_5_5():
    game = _double_poison(2, False, 0, True, EMPTY_LOSES)
    act(game, "end")
    assert game.winner == 1


@pytest.mark.parametrize("config", [COUNT, EMPTY_LOSES], ids=["count_conditions", "empty_board_loses"])
def test_both_reach_3_one_board_empty_the_other_wins_R_5_5(config):
    game = _double_poison(2, False, 2, True, config)
    act(game, "end")
    assert game.winner == 1


@pytest.mark.parametrize("config", [COUNT, EMPTY_LOSES], ids=["count_conditions", "empty_board_loses"])
def test_both_reach_3_one_board_empty_mirrored_R_5_5(config):
    game = _double_poison(2, True, 2, False, config)
    act(game, "end")
    assert game.winner == 0


def test_double_knock_out_by_attack_on_last_pokemon_both_empty_is_a_draw_R_5_5():
    """Arcanine's Heat Tackle Knocks Out the opponent's only Pokemon and its recoil Knocks Out Arcanine,
    my only Pokemon: both boards empty together, nobody at 3 points."""
    game = scenario(me=Side(active=Mon("Arcanine", below=("Growlithe",), damage=110, energy={"Fire": 3})),
                    foe=Side(active=Mon("Squirtle")))
    act(game, "attack", 0, 0)
    assert game.winner == DRAW


# ----------------------------------------------------------------------------------------------
# the turn limit

def test_draw_after_turn_30_checkup_R_5_7():
    game = scenario(me=Side(active=Mon("Pikachu")), foe=Side(active=Mon("Snorlax")), turn=30)
    act(game, "end")
    assert (game.winner, game.phase) == (DRAW, "over")
    assert E.legal_actions(game) == []


def test_no_draw_after_turn_29_R_5_7():
    game = scenario(me=Side(active=Mon("Pikachu")), foe=Side(active=Mon("Snorlax")), turn=29)
    act(game, "end")
    assert (game.winner, game.phase, game.turn) == (ONGOING, "main", 30)


def test_draw_after_turn_30_ending_with_an_attack_R_5_7():
    game = scenario(me=Side(active=Mon("Pikachu", energy={"Lightning": 1})), foe=Side(active=Mon("Snorlax")), turn=30)
    act(game, "attack", 0, 0)
    assert game.winner == DRAW


def test_win_by_empty_board_in_turn_30_checkup_stands_R_5_7():
    game = scenario(me=Side(active=Mon("Pikachu")),
                    foe=Side(active=Mon("Squirtle", damage=50, conditions=("Poisoned",))), turn=30)
    act(game, "end")
    assert game.winner == 0


def test_win_by_third_point_in_turn_30_checkup_stands_R_5_7():
    game = scenario(me=Side(active=Mon("Pikachu"), points=2),
                    foe=Side(active=Mon("Squirtle", damage=50, conditions=("Poisoned",)), bench=[Mon("Snorlax")]),
                    turn=30)
    act(game, "end")
    assert game.winner == 0


def test_non_deciding_knock_out_in_turn_30_checkup_still_a_draw_R_5_7():
    game = scenario(me=Side(active=Mon("Pikachu")),
                    foe=Side(active=Mon("Squirtle", damage=50, conditions=("Poisoned",)), bench=[Mon("Snorlax")]),
                    turn=30)
    act(game, "end")
    assert game.players[0].points == 1
    assert (game.winner, game.phase) == (DRAW, "over")


def test_turn_limit_flag_R_5_7():
    game = scenario(me=Side(active=Mon("Pikachu")), foe=Side(active=Mon("Snorlax")), turn=9,
                    config=RuleConfig(max_turns=10))
    act(game, "end")
    assert game.winner == ONGOING
    act(game, "end")
    assert game.winner == DRAW


# ----------------------------------------------------------------------------------------------
# retreat and status across whole turns

def test_retreated_pokemon_loses_poison_and_confusion_for_good_R_3_10_R_6_1():
    game = scenario(me=Side(active=Mon("Pikachu", energy={"Lightning": 2}, conditions=("Poisoned", "Confused")),
                            bench=[Mon("Starmie", below=("Staryu",))]),
                    foe=Side(active=Mon("Snorlax")))
    act(game, "retreat", 1)
    act(game, "end")
    act(game, "end")
    assert game.players[0].board[1].damage == 0
    act(game, "retreat", 1)  # turn 5: Starmie (Retreat Cost 0) swaps back
    pikachu = game.players[0].board[0]
    assert (pikachu.poisoned, pikachu.exclusive, pikachu.damage) == (False, 0, 0)
    assert pikachu.energy[3] == 1  # it paid 1 Lightning when it retreated on turn 3
    act(game, "end")
    assert game.players[0].board[0].damage == 0  # no Poison left to deal damage


def test_asleep_cannot_retreat_until_it_wakes_R_3_10_R_6_6():
    """Draws: 0 my Asleep coin after turn 3 (tails), 1 the Energy roll of turn 4, 2 my Asleep coin after
    turn 4 (heads: wakes; the opponent, whose turn ended, has no coin), 3 the Energy roll of turn 5."""
    game = scenario(me=Side(active=Mon("Pikachu", energy={"Lightning": 2}, conditions=("Asleep",)),
                            bench=[Mon("Squirtle")]),
                    foe=Side(active=Mon("Snorlax")), seed=seed_for(T, X, H))
    assert not legal(game, "retreat", 1)
    act(game, "end")
    act(game, "end")
    assert game.turn == 5 and game.players[0].board[0].exclusive == 0
    act(game, "retreat", 1)
    assert name_at(game, 0, 0) == "Squirtle"


def test_switched_in_pokemon_may_retreat_on_its_owners_turn_R_3_10():
    """Sabrina switches the opponent's Snorlax out; on their next turn their new Active may retreat once."""
    game = scenario(me=Side(active=Mon("Pikachu"), hand=["Sabrina"]),
                    foe=Side(active=Mon("Snorlax"), bench=[Mon("Squirtle", energy={"Water": 1})]))
    act(game, "play", 0, 0)
    act(game, "promote", 1)
    act(game, "end")
    assert game.current == 1 and name_at(game, 1, 0) == "Squirtle"
    act(game, "retreat", 1)
    assert name_at(game, 1, 0) == "Snorlax"


# ----------------------------------------------------------------------------------------------
# setup from new_game, the first turn, deck-out

def _deck(counts: dict[str, int], types=("Grass",)) -> E.Deck:
    return E.Deck([idx(n) for n, k in counts.items() for _ in range(k)], types)


ONE_BASIC = {"Bulbasaur": 1, "Ivysaur": 2, "Venusaur": 1, "Venusaur ex": 2, "Helix Fossil": 2, "Potion": 2,
             "X Speed": 2, "Hand Scope": 2, "Pokédex": 2, "Poké Ball": 2, "Red Card": 2}
ALL_BASIC = {"Bulbasaur": 2, "Pikachu": 2, "Squirtle": 2, "Charmander": 2, "Rattata": 2, "Meowth": 2, "Pidgey": 2,
             "Eevee": 2, "Magikarp": 2, "Snorlax": 2}
MIXED = {"Bulbasaur": 2, "Ivysaur": 2, "Pikachu": 2, "Squirtle": 2, "Helix Fossil": 2, "Potion": 2, "X Speed": 2,
         "Professor's Research": 2, "Poké Ball": 2, "Red Card": 2}


def test_deck_fixtures_match_the_data():
    """A check of this file's decks (20 cards each, R-1.1; Basics counted from the data), not of the engine."""
    assert sum(ONE_BASIC.values()) == sum(ALL_BASIC.values()) == sum(MIXED.values()) == 20
    assert sum(k for n, k in ONE_BASIC.items() if is_basic(idx(n))) == 1
    assert all(is_basic(idx(n)) for n in ALL_BASIC)


def test_opening_hand_of_5_always_holds_a_basic_R_2_2():
    """Over many seeds, with a deck holding a single Basic Pokemon (and two Fossils, which do not count):
    both hands have exactly 5 cards and hold the Bulbasaur; no mulligan, no extra card."""
    deck = _deck(ONE_BASIC)
    positions, firsts = set(), set()
    for seed in range(300):
        game = E.new_game(deck, deck, seed)
        firsts.add(game.first)
        assert (game.phase, game.turn, game.current) == ("setup", 0, game.first)
        for player in game.players:
            assert len(player.hand) == 5 and len(player.deck) == 15
            assert sorted(player.hand + player.deck) == sorted(deck.cards)
            assert player.hand.count(idx("Bulbasaur")) == 1
            positions.add(player.hand.index(idx("Bulbasaur")))
    assert firsts == {0, 1}  # a coin decides who goes first
    # Option A (reshuffle until a Basic is in the top 5) leaves the Basic anywhere in the hand; "put a Basic on
    # top" (option B) would always put it first.
    assert positions == {0, 1, 2, 3, 4}


def test_opening_hand_guarantee_mixed_deck_R_2_2():
    deck = _deck(MIXED, ("Grass", "Lightning", "Water"))
    for seed in range(200):
        game = E.new_game(deck, deck, seed)
        for player in game.players:
            assert len(player.hand) == 5
            assert any(is_basic(c) for c in player.hand)


def test_setup_places_only_basics_R_2_3():
    """With the one-Basic deck every other card in hand (Items, Supporters, Fossils, evolutions) can't be
    placed, and nothing but placing and ending is possible."""
    deck = _deck(ONE_BASIC)
    kinds_seen = set()
    for seed in range(30):
        game = E.new_game(deck, deck, seed)
        for _ in range(2):
            player = game.players[game.current]
            assert not legal(game, "end")  # an Active first
            for i, card in enumerate(player.hand):
                kinds_seen.add(POOL[card].name)
                assert legal(game, "play", i, 0) == is_basic(card), POOL[card].name
                assert not legal(game, "play", i, 1)
            assert not any(legal(game, k, s) for k in ("attach", "retreat", "attack", "discard_fossil")
                           for s in (0, 1))
            act(game, "play", player.hand.index(idx("Bulbasaur")), 0)
            act(game, "end")
        assert game.phase == "main" and game.turn == 1
    assert {"Helix Fossil", "Ivysaur", "Potion"} <= kinds_seen


def test_setup_sequence_and_first_turn_draw_R_2_3_R_2_4_R_3_1():
    deck = _deck(ALL_BASIC)
    game = E.new_game(deck, deck, 9)
    first, second = game.first, 1 - game.first
    assert game.decision_player == first
    for _ in range(4):
        act(game, "play", 0, 0)  # Active, then 3 on the Bench
    assert [game.players[first].board[s] is not None for s in range(4)] == [True] * 4
    assert not legal(game, "play", 0, 0)  # the Bench is full
    act(game, "end")
    assert (game.phase, game.current) == ("setup", second)
    act(game, "play", 0, 0)
    act(game, "end")
    assert (game.phase, game.turn, game.current) == ("main", 1, first)
    assert len(game.players[first].hand) == 5 - 4 + 1  # the first player draws on turn 1
    assert len(game.players[first].deck) == 14
    assert len(game.players[second].hand) == 4
    act(game, "end")
    assert (game.turn, game.current) == (2, second)
    assert len(game.players[second].hand) == 5 and len(game.players[second].deck) == 14


def test_first_player_draw_flag_off_R_3_1():
    deck = _deck(ALL_BASIC)
    game = E.new_game(deck, deck, 9, config=RuleConfig(first_player_draws_turn1=False))
    act(game, "play", 0, 0)
    act(game, "end")
    act(game, "play", 0, 0)
    act(game, "end")
    assert len(game.players[game.first].hand) == 4 and len(game.players[game.first].deck) == 15


def _evolution_plays(game) -> list[int]:
    hand = game.players[game.current].hand
    return [a for a in E.legal_actions(game) if A.decode(a).kind == "play"
            and records()[POOL[hand[A.decode(a).slot]].gameplay_id].get("stage") in ("Stage1", "Stage2")]


def test_placed_pokemon_cannot_evolve_on_turn_1_or_2_R_3_6_a():
    deck = _deck(MIXED, ("Grass",))
    for seed in range(40):
        game = E.new_game(deck, deck, seed)
        for _ in range(2):
            hand = game.players[game.current].hand
            act(game, "play", next(i for i, c in enumerate(hand) if is_basic(c)), 0)
            act(game, "end")
        for _ in range(2):  # turns 1 and 2
            assert _evolution_plays(game) == []
            act(game, "end")


def test_deck_out_is_not_a_loss_R_3_1():
    game = scenario(me=Side(active=Mon("Pikachu"), hand=["Potion"]), foe=Side(active=Mon("Snorlax")))
    for _ in range(6):
        act(game, "end")
    assert (game.winner, game.phase, game.turn) == (ONGOING, "main", 9)
    assert len(game.players[0].hand) == 1 and game.players[0].deck == []


def test_last_card_drawn_then_empty_deck_R_3_1():
    game = scenario(me=Side(active=Mon("Pikachu"), deck=["Squirtle"]), foe=Side(active=Mon("Snorlax")))
    act(game, "end")
    act(game, "end")
    assert game.players[0].hand == [idx("Squirtle")]
    act(game, "end")
    act(game, "end")
    assert game.players[0].hand == [idx("Squirtle")] and game.winner == ONGOING


# ----------------------------------------------------------------------------------------------
# whole games: every game ends by the turn limit, and every win is a rule's win

def _play(deck0, deck1, seed: int):
    game = E.new_game(deck0, deck1, seed)
    rng = random.Random(seed)
    steps = 0
    while game.winner == ONGOING:
        moves = E.legal_actions(game)
        assert moves, "a live game always has a legal action"
        E.step(game, rng.choice(moves))
        steps += 1
        assert steps < 5000
        for player in game.players:
            assert len(player.hand) <= 10
            assert sum(p is not None for p in player.board[1:]) <= 3
            if game.phase == "main":
                assert player.board[0] is not None  # an empty Active Spot is always filled first
    return game


@pytest.mark.parametrize("seed", range(12))
def test_random_games_end_by_turn_30_with_a_rule_outcome_R_5_4_R_5_7(seed):
    names = ["grass", "fire", "water", "lightning", "psychic", "fossil"]
    deck0 = fixed_deck(names[seed % 6]) if seed % 2 else random_deck(seed)
    deck1 = random_deck(1000 + seed) if seed % 3 else fixed_deck(names[(seed + 1) % 6])
    game = _play(deck0, deck1, seed)
    assert game.phase == "over" and game.turn <= 30
    points = [p.points >= 3 for p in game.players]
    empty = [not p.in_play() for p in game.players]
    if game.winner in (0, 1):
        w = game.winner
        assert points[w] or empty[1 - w]
        assert points[w] + empty[1 - w] > points[1 - w] + empty[w]  # count_conditions
    else:
        assert game.winner == DRAW
        assert game.turn == 30 or points[0] + empty[1] == points[1] + empty[0]


# Every test here pins the rules component: a failure reads "[tcgjax/rules] ...".
for _name, _test in list(globals().items()):
    if _name.startswith("test_") and callable(_test):
        globals()[_name] = TCGJAX.covers("rules")(_test)
