"""One scenario per rule of RULES.md, the hand as a whole (R5 ending a hand, R6 collisions, R7
scoring, R1 conservation, R10 notation): build an exact table from R10 fixed deals, make the moves
by their R10 names, check the table (``Game.snapshot()``, every pile bottom to top). The moves (R4,
R3) are in ``test_rules_moves.py``; the shared tables (``IDLE``, ``rules``, ``one_card_nertz``) in
``conftest.py``."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import (
    FULL_DECK,
    IDLE,
    cards_of,
    legal_names,
    make_deck,
    new_game,
    one_card_nertz,
    play,
    rules,
    stock_rest,
)

from nertz_env.cards import parse_card
from nertz_env.config import NertzConfig

# --- R5 ending a hand ---------------------------------------------------------------------


def test_r5_the_hand_ends_at_the_end_of_the_calling_tick_and_other_moves_still_resolve():
    game = one_card_nertz(rules(nertz_pile_size=1, call_bonus=10))
    play(game, "nertz>foundation", "wait")
    snap = play(game, "call", "nertz>foundation")
    assert snap["ended"] and snap["end_reason"] == "call" and snap["callers"] == [0]
    assert snap["foundations"] == [
        {"cards": [[0, "AS"]], "complete": False},
        {"cards": [[1, "AH"]], "complete": False},
    ]
    assert snap["scores"] == [1 + 10, 1]
    assert legal_names(game, 0) == legal_names(game, 1) == {"wait"}
    again = play(game, "wait", "wait")
    assert again == snap  # after the hand nothing moves, not even the clock


def test_r5_several_players_may_call_in_the_same_tick():
    game = one_card_nertz(rules(nertz_pile_size=1, call_bonus=10))
    play(game, "nertz>foundation", "nertz>foundation")
    snap = play(game, "call", "call")
    assert snap["callers"] == [0, 1] and snap["end_reason"] == "call"
    assert snap["scores"] == [11, 11]


def test_r5_stall_rotation_turns_the_waste_under_the_stock_then_top_card_to_bottom():
    """Stock top first s1 s2 ...; player 0 drew s1 s2 s3. Turned over under the stock the order is
    s4 ... sK s1 s2 s3, then s4 goes to the bottom: s5 ... sK s1 s2 s3 s4."""
    config = rules(stall_ticks=3)
    deck0 = make_deck(["2C", "3C", "4C"], ["9S", "9H", "9D", "9C"])
    s = deck0[7:]  # player 0's stock, top first
    game = new_game(config, [deck0, IDLE])
    play(game, "draw", "wait")
    snap = play(game, "wait", "wait")
    assert snap["players"][0]["waste"] == s[:3]  # two ticks: no rotation yet
    snap = play(game, "wait", "wait")
    top_first = s[4:] + s[:4]
    assert snap["players"][0]["stock"] == top_first[::-1]
    assert snap["players"][0]["waste"] == []
    idle = IDLE[7:]
    assert snap["players"][1]["stock"] == (idle[1:] + idle[:1])[::-1]
    assert not snap["ended"]


def test_r5_progress_restarts_the_stall_clock_and_work_to_work_is_not_progress():
    config = rules(stall_ticks=3, stock_draw=1)
    deck0 = make_deck(["2C", "3C", "AS"], ["TS", "9H", "9D", "9C"], ["8C"])
    game = new_game(config, [deck0, IDLE])
    play(game, "wait", "wait")
    play(game, "work1>work0:1", "wait")  # work to work: no progress
    snap = play(game, "nertz>foundation", "wait")  # tick 3: a card leaves the Nertz pile
    assert snap["players"][0]["stock"] == stock_rest(deck0, config)
    play(game, "draw", "wait")
    play(game, "waste>work0", "wait")  # tick 5: a waste card reaches a work pile
    play(game, "wait", "wait")
    snap = play(game, "wait", "wait")
    assert snap["players"][0]["stock"] == stock_rest(deck0, config, 1)  # not rotated at tick 7
    snap = play(game, "wait", "wait")  # tick 8: rotated (empty waste: only top card to bottom)
    stock = stock_rest(deck0, config, 1)
    assert snap["players"][0]["stock"] == [stock[-1]] + stock[:-1]


@pytest.mark.parametrize("rotations", [0, 1, 2])
def test_r5_max_stall_rotations_without_progress_end_the_hand_with_no_caller(rotations):
    config = rules(stall_ticks=2, max_stall_rotations=rotations, call_bonus=10)
    game = new_game(config, [make_deck([], []), IDLE])
    for tick in range(1, 2 * (rotations + 1)):
        assert not play(game, "wait", "wait")["ended"], tick
    snap = play(game, "wait", "wait")
    assert snap["ended"] and snap["end_reason"] == "stall" and snap["callers"] == []
    assert snap["tick"] == 2 * (rotations + 1)
    assert snap["scores"] == [-6, -6]


@pytest.mark.parametrize(("stock_draw", "ticks"), [(3, 4), (1, 2)])
def test_r5_max_stall_rotations_defaults_to_3_for_draw_3_and_1_for_draw_1(stock_draw, ticks):
    game = new_game(rules(stall_ticks=1, stock_draw=stock_draw), [IDLE, IDLE])
    for _ in range(ticks):
        snap = play(game, "wait", "wait")
    assert snap["end_reason"] == "stall" and snap["tick"] == ticks


@pytest.mark.parametrize(("stock_draw", "cycle"), [(3, 12 + 1), (1, 35 + 1)])
def test_r5_stall_ticks_auto_is_one_whole_stock_cycle(stock_draw, cycle):
    """Reading of "auto": 35 stock cards take ceil(35 / stock_draw) draws plus the flip."""
    config = NertzConfig(num_players=2, stock_draw=stock_draw)
    game = new_game(config, [IDLE, IDLE])
    stock = game.snapshot()["players"][0]["stock"]
    for _ in range(cycle - 1):
        assert play(game, "wait", "wait")["players"][0]["stock"] == stock
    assert play(game, "wait", "wait")["players"][0]["stock"] == [stock[-1]] + stock[:-1]


def test_r5_max_cycles_truncates_the_hand():
    game = new_game(rules(max_cycles=5, call_bonus=10), [IDLE, IDLE])
    for _ in range(4):
        play(game, "draw", "wait")
    assert not game.ended
    snap = play(game, "draw", "wait")
    assert snap["ended"] and snap["end_reason"] == "max_cycles" and snap["callers"] == []
    assert snap["scores"] == [-6, -6]


def test_r5_a_call_on_the_last_tick_is_still_a_call():
    game = one_card_nertz(rules(nertz_pile_size=1, max_cycles=2))
    play(game, "nertz>foundation", "wait")
    assert play(game, "call", "wait")["end_reason"] == "call"


# --- R6 collisions ------------------------------------------------------------------------


def race_game(config, players=2, piles=1):
    """Every player has 2H as work0; ``piles`` players start by playing their Nertz top AH."""
    decks = [make_deck(["KC", "AH"], ["2H", "9H", "9D", "9C"]) for _ in range(players)]
    game = new_game(config, decks)
    play(game, *["nertz>foundation" if p < piles else "wait" for p in range(players)])
    return game


def test_r6_one_pile_two_claimants_exactly_one_wins_the_loser_keeps_the_card():
    game = race_game(rules(nertz_pile_size=2))
    snap = play(game, "work0>foundation", "work0>foundation")
    assert snap["foundations"] == [{"cards": [[0, "AH"], [0, "2H"]], "complete": False}]
    assert snap["players"][1]["work"] == [["2H"], ["9H"], ["9D"], ["9C"]]
    assert game.state.collision[0].tolist() == [False, True]
    assert game.state.won_race[0].tolist() == [True, False]
    play(game, "wait", "wait")
    assert game.state.collision[0].tolist() == [False, False]


def test_r6_two_piles_two_claimants_both_win():
    game = race_game(rules(nertz_pile_size=2), piles=2)
    snap = play(game, "work0>foundation", "work0>foundation")
    assert sorted(pile["cards"][1] for pile in snap["foundations"]) == [[0, "2H"], [1, "2H"]]
    assert game.state.collision[0].tolist() == [False, False]


def test_r6_three_claimants_two_piles_collision_seat_lower_seats_win():
    game = race_game(rules(num_players=3, nertz_pile_size=2), players=3, piles=2)
    snap = play(game, "work0>foundation", "work0>foundation", "work0>foundation")
    assert sorted(pile["cards"][1][0] for pile in snap["foundations"]) == [0, 1]
    assert snap["players"][2]["work"][0] == ["2H"]
    assert game.state.collision[0].tolist() == [False, False, True]


@pytest.mark.parametrize(("speed", "favourite"), [((1000.0, 1.0), 0), ((1.0, 1000.0), 1)])
def test_r6_random_collisions_follow_speed_weights(speed, favourite):
    config = rules(nertz_pile_size=2, collision="random", speed=speed)
    deck = make_deck(["KC", "AH"], ["2H", "9H", "9D", "9C"])
    wins = 0
    for seed in range(200):
        game = new_game(config, [deck, deck], seed=seed)
        play(game, "nertz>foundation", "wait")
        play(game, "work0>foundation", "work0>foundation")
        wins += int(game.state.won_race[0, favourite])
    assert wins >= 190


def test_r6_equal_speeds_give_both_players_wins_and_a_seed_repeats_the_draw():
    config = rules(nertz_pile_size=2, collision="random")
    deck = make_deck(["KC", "AH"], ["2H", "9H", "9D", "9C"])
    winners = []
    for seed in list(range(200)) + [7]:
        game = new_game(config, [deck, deck], seed=seed)
        play(game, "nertz>foundation", "wait")
        play(game, "work0>foundation", "work0>foundation")
        assert game.state.won_race[0].sum() == 1 and game.state.collision[0].sum() == 1
        winners.append(int(game.state.won_race[0, 1]))
    assert 60 <= sum(winners[:200]) <= 140
    assert winners[-1] == winners[7]


def test_r6_aces_never_collide():
    game = new_game(rules(nertz_pile_size=2), [make_deck(["KC", "AH"], ["2H", "9H", "9D", "9C"])] * 2)
    snap = play(game, "nertz>foundation", "nertz>foundation")
    assert snap["foundations"] == [
        {"cards": [[0, "AH"]], "complete": False},
        {"cards": [[1, "AH"]], "complete": False},
    ]
    assert not game.state.collision[0].any() and not game.state.won_race[0].any()


# --- R7 scoring, R1 conservation, R10 notation ----------------------------------------------


@pytest.mark.parametrize(("penalty", "bonus"), [(2, 0), (1, 0), (2, 10), (1, 10)])
def test_r7_score_is_foundation_cards_minus_penalty_times_nertz_left_plus_call_bonus(penalty, bonus):
    config = rules(nertz_pile_size=2, nertz_penalty=penalty, call_bonus=bonus)
    deck0 = make_deck(["AS", "AC"], ["2C", "9H", "9D", "2S"])
    deck1 = make_deck(["KC", "AH"], ["9S", "9C", "JD", "QD"])
    game = new_game(config, [deck0, deck1])
    assert game.snapshot()["scores"] == [-2 * penalty, -2 * penalty]
    play(game, "nertz>foundation", "nertz>foundation")
    play(game, "work0>foundation", "wait")  # 2C: a work card scores but costs no Nertz card
    play(game, "nertz>foundation", "wait")
    snap = play(game, "work3>foundation", "wait")
    assert snap["scores"] == [4, 1 - penalty]
    snap = play(game, "call", "wait")
    assert snap["scores"] == [4 + bonus, 1 - penalty]


def test_r1_every_card_stays_in_exactly_one_place():
    game = new_game(NertzConfig(num_players=3), [IDLE, FULL_DECK, make_deck(["TH"], ["2D"])])
    rng = np.random.default_rng(1)
    for tick in range(300):
        snap = game.snapshot()
        for p in range(3):
            assert sorted(cards_of(snap, p)) == sorted(FULL_DECK), (tick, p)
        if snap["ended"]:
            break
        game.step([rng.choice(game.legal_actions(p)) for p in range(3)])


def test_r10_ten_is_t_and_either_case_is_read():
    assert parse_card("10H") == parse_card("TH") == parse_card("th") == parse_card("10h")
    deck = ["10H" if c == "TH" else c for c in FULL_DECK]
    game = new_game(rules(), [deck, IDLE])
    assert game.snapshot()["players"][0]["nertz"] == ["AC", "2C", "3C"]
    assert "TH" in cards_of(game.snapshot(), 0) and "10H" not in cards_of(game.snapshot(), 0)


@pytest.mark.parametrize("bad", ["1H", "ZZ", "AX", "", "ACE", "11S", "T", "10"])
def test_r10_a_bad_card_raises_naming_the_card(bad):
    with pytest.raises(ValueError, match=re.escape(repr(bad))):
        parse_card(bad)
