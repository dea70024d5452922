"""R8 ``match_end``: how a match to ``target_score`` ends and who wins it, as the source texts say
(Snerts: the caller who reached the target; German Nerts: also on the spread of the totals; Nerds:
a total must exceed the target). The engine's single statement of the rule (``match_decision``)
on exact totals, whole matches from R10 fixed deals, and the harness and tournaments that use it."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_deck, new_game, play

from nertz_env import engine
from nertz_env.config import MATCH_ENDS, NertzConfig
from nertz_env.training import tournament
from nertz_env.training.arena import HandResult
from nertz_env.training.evaluate import match_stream


def decide(totals, called, match_end, target=100, last=None):
    """``engine.match_decision`` after a hand of an untied match: the state and who is left."""
    n = len(totals)
    contenders = np.ones(n, np.bool_)
    last = np.zeros(n, np.int64) if last is None else np.asarray(last, np.int64)
    status = engine.match_decision(
        np.asarray(totals, np.int64), last, contenders, 3, engine.MATCH_PLAYING, target, 0, 100,
        np.asarray(called, np.bool_), MATCH_ENDS.index(match_end),
    )  # fmt: skip
    return status, [int(t) for t in np.flatnonzero(contenders)]


DECIDED, PLAYING = engine.MATCH_DECIDED, engine.MATCH_PLAYING


@pytest.mark.parametrize(
    ("totals", "called", "match_end", "expected"),
    [
        # Snerts: the caller on 102 beats a player on 108; under "highest" the 108 wins.
        ([102, 108], [True, False], "caller", (DECIDED, [0])),
        ([102, 108], [True, False], "highest", (DECIDED, [1])),
        # The caller has not reached the target, two others have: the higher of them wins.
        ([90, 108, 104], [True, False, False], "caller", (DECIDED, [1])),
        # No caller (a stalled hand): the highest total.
        ([101, 108], [False, False], "caller", (DECIDED, [1])),
        # Nobody has reached the target: the caller's call decides nothing.
        ([99, 60], [True, False], "caller", (PLAYING, [0, 1])),
        # German Nerts: 60 and -45 are 105 apart, the spread reaches 100: the highest total wins.
        ([60, -45], [False, False], "spread", (DECIDED, [0])),
        ([60, -45], [False, False], "highest", (PLAYING, [0, 1])),
        ([60, -39, 10], [True, False, False], "spread", (PLAYING, [0, 1, 2])),
        # Nerds: the leader must exceed the target.
        ([100, 80], [True, False], "exceed", (PLAYING, [0, 1])),
        ([100, 80], [True, False], "highest", (DECIDED, [0])),
        ([101, 80], [False, True], "exceed", (DECIDED, [0])),
    ],
)
def test_r8_match_end_decides_on_exact_totals(totals, called, match_end, expected):
    assert decide(totals, called, match_end) == expected


def test_r8_caller_rule_among_several_callers_at_the_target_is_the_tie_rule():
    """Two callers at the target: the higher total of the two, not the non-caller's 120."""
    assert decide([103, 101, 120], [True, True, False], "caller") == (DECIDED, [0])
    status, left = decide([103, 103, 120], [True, True, False], "caller", last=[5, 5, 9])
    assert (status, left) == (engine.MATCH_TIE_BREAK, [0, 1])  # tied callers play another hand


# --- whole matches from R10 fixed deals ------------------------------------------------------------


def one_hand_match(match_end: str, target: int, player1_scores: bool):
    """Two players with one-card Nertz piles. Player 0 plays AS and calls (hand score 1). Player 1
    plays AH and then 2H (score 2), or never plays (score -2, a Nertz card left)."""
    config = NertzConfig(
        num_players=2, nertz_pile_size=1, collision="seat", stall_ticks=10_000, episode="match",
        target_score=target, match_end=match_end,
    )  # fmt: skip
    decks = [make_deck(["AS"], ["9S", "9H", "9D", "9C"]), make_deck(["AH"], ["2H", "9S", "9D", "9C"])]
    game = new_game(config, decks)
    play(game, "nertz>foundation", "nertz>foundation" if player1_scores else "wait")
    play(game, "call", "work0>foundation" if player1_scores else "wait")
    assert game.hand_over and game.last_hand()["callers"] == [0]
    return game


@pytest.mark.parametrize(("match_end", "winner"), [("highest", 1), ("caller", 0)])
def test_r8_snerts_the_caller_at_the_target_wins_the_match(match_end, winner):
    game = one_hand_match(match_end, target=1, player1_scores=True)
    assert game.last_hand()["totals"] == [1, 2]
    assert game.snapshot()["match"]["state"] == "decided" and game.match_winners() == [winner]


@pytest.mark.parametrize(("match_end", "state"), [("highest", "decided"), ("exceed", "playing")])
def test_r8_nerds_a_total_equal_to_the_target_does_not_end_the_match(match_end, state):
    game = one_hand_match(match_end, target=2, player1_scores=True)
    snap = game.snapshot()
    assert game.last_hand()["totals"] == [1, 2] and snap["match"]["state"] == state
    if state == "playing":  # the next hand is dealt at once
        assert snap["match"]["hands_played"] == 1 and snap["tick"] == 0 and not game.ended


@pytest.mark.parametrize(("match_end", "state"), [("highest", "playing"), ("spread", "decided")])
def test_r8_german_nerts_the_spread_of_the_totals_ends_the_match(match_end, state):
    """Totals 1 and -2 with target 3: nobody has 3, but the spread does."""
    game = one_hand_match(match_end, target=3, player1_scores=False)
    assert game.last_hand()["totals"] == [1, -2] and game.snapshot()["match"]["state"] == state
    if state == "decided":
        assert game.match_winners() == [0]


# --- the harness and the tournaments -----------------------------------------------------------------


@pytest.mark.parametrize(("match_end", "winners"), [("highest", [1]), ("caller", [0]), ("exceed", [1])])
def test_r8_the_harness_match_follows_match_end(match_end, winners):
    records: list[dict] = []
    stream = match_stream(0, 0, 0, (0, 1), 100, 10, records.append, match_end=match_end)
    hand = next(stream)
    pair = (0, 0)
    result = HandResult(hand, (102, 108), pair, pair, (True, False), pair, pair, 50, "call")
    with pytest.raises(StopIteration):
        stream.send(result)
    assert records[0]["winners"] == winners


@pytest.mark.parametrize(("preset", "match_end"), [("standard", "highest"), ("snerts", "caller"),
                                                   ("nerts", "spread"), ("nerds", "exceed")])
def test_r8_tournament_tables_play_the_preset_match_end(monkeypatch, preset, match_end):
    seen: list[str] = []

    def record(*args, match_end=None, **kwargs):
        seen.append(match_end)
        return iter(())  # no hand to play

    monkeypatch.setattr(tournament, "match_stream", record)
    play_tables = tournament.ArenaPlay(["random"] * 4, NertzConfig.from_kwargs(preset=preset), seed=0)
    play_tables("elimination", 1, [(0, 1, 2, 3)])
    assert seen == [match_end]
