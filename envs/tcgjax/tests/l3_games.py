"""L3: 1,000 games (500 of random legal decks, 500 of the fixed decks paired in turn) played on the
Python reference and on the JAX engine from equal seeds with the same random legal actions: the
legal mask and every state field are identical after every action, and so are the winners
(envs/tcgjax/l3_games.py says what is compared and how the actions are drawn)."""

from __future__ import annotations

import collections

import pytest

from envs.tcgjax import l3_games
from envs.tcgjax.reference import engine as E
from envs.tcgjax.tests.components import TCGJAX

GAMES = 1_000
# op kinds that 1,000 random games must have run (the rest are rarer: the README's tally)
MUST_SEE = {"status", "heal_self", "coins_per_heads", "coins_plus", "discard_own_energy", "recoil", "draw",
            "heal_target", "zone_attach_self", "zone_attach_target", "force_switch", "turn_boost", "search_hand_basic",
            "opp_hand_to_deck_draw", "return_active", "bench_each", "if_plus", "extra_energy_plus", "set_base",
            "copy_opponent_attack"}


@pytest.fixture(scope="module")
def games():
    """The 1,000 games: seed s plays random legal decks when s is even, else the fixed pair s % 36 (the
    JAX side 64 games to a vmapped step: `play_games`)."""
    return l3_games.play_games(range(GAMES), l3_games.l3_decks)


@TCGJAX.covers("engine")
def test_games_equal_reference(games):
    diverged = [r for r in games if r.divergence is not None]
    assert not diverged, "\n".join(f"seed {r.seed}, decks {r.decks}: {r.divergence}\n{r.reproducer()}"
                                    for r in diverged[:3])


@TCGJAX.covers("engine")
def test_games_end_every_way(games):
    """The comparison means something only if games are played to all their ends."""
    winners = collections.Counter(r.winner for r in games)
    assert winners[0] > 20 and winners[1] > 20 and winners[E.DRAW] > 20, winners


@TCGJAX.covers("engine")
def test_the_games_ran_the_card_effects(games):
    events = collections.Counter()
    for report in games:
        events.update(report.events)
    seen = {key.split(":", 1)[1] for key in events if key.startswith("op:")}
    assert MUST_SEE <= seen, sorted(MUST_SEE - seen)
    assert events["evolve"] > 100 and events["action:promote"] > 100 and events["action:retreat"] > 100


@TCGJAX.covers("engine")
def test_a_divergence_is_reported_with_the_field(monkeypatch):
    """L3 self-test: a reference whose Poison does 20 instead of 10 (R-6.3) diverges from the JAX engine
    in a game that poisons, and the report names the action and the damage field."""
    from envs.tcgjax.reference import engine as reference

    original = reference._checkup

    def wrong_checkup(game):
        for who in (0, 1):
            active = game.players[who].active
            if active is not None and active.poisoned:
                active.damage += 10
        original(game)

    monkeypatch.setattr(reference, "_checkup", wrong_checkup)
    for seed in range(200):
        report = l3_games.play_game(seed, ("psychic", "grass"))  # Koffing/Weezing poison
        if report.divergence:
            assert "damage" in report.divergence and "after action" in report.divergence, report.divergence
            assert "replay(" in report.reproducer()
            break
    else:
        pytest.fail("200 games with a wrong Poison never diverged")
    # the batched runner finds the same game and reports it the same way; the others stay equal
    batched = l3_games.play_games(range(max(0, seed - 2), seed + 1), lambda _: ("psychic", "grass"))
    assert batched[-1].divergence == report.divergence
    assert all(r.divergence is None for r in batched[:-1]), [r.divergence for r in batched]
