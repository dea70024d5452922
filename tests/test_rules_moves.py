"""One scenario per rule of RULES.md, the moves (R4.1 to R4.7, R3 illegal actions): build an exact
table from R10 fixed deals, make the moves by their R10 names, check the table (``Game.snapshot()``,
every pile bottom to top). R5 to R10 are in ``test_rules_hand.py``; the shared tables
(``IDLE``, ``rules``, ``one_card_nertz``) in ``conftest.py``."""

from __future__ import annotations

import pytest
from conftest import IDLE, legal_names, make_deck, new_game, one_card_nertz, play, rules, stock_rest


def seat(**pile) -> dict:
    """A player's table in snapshot form, empty piles by default."""
    return {"nertz": [], "work": [[], [], [], []], "stock": [], "waste": [], **pile}


# --- R4.1 DRAW -------------------------------------------------------------------------------


def test_r4_1_draw_turns_three_one_by_one_last_on_top():
    config = rules(nertz_pile_size=4)
    deck = make_deck(["2C", "3C", "4C", "5C"], ["9S", "9H", "9D", "9C"], ["KH", "QS", "JD"])
    game = new_game(config, [deck, IDLE])
    snap = play(game, "draw", "wait")
    assert snap["players"][0] == seat(
        nertz=["2C", "3C", "4C", "5C"], work=[["9S"], ["9H"], ["9D"], ["9C"]],
        stock=stock_rest(deck, config, 3), waste=["KH", "QS", "JD"],
    )


def test_r4_1_draw_one():
    config = rules(stock_draw=1)
    deck = make_deck(["2C", "3C", "4C"], ["9S", "9H", "9D", "9C"], ["KH", "QS"])
    game = new_game(config, [deck, IDLE])
    assert play(game, "draw", "wait")["players"][0]["waste"] == ["KH"]
    snap = play(game, "draw", "wait")
    assert snap["players"][0]["waste"] == ["KH", "QS"]
    assert snap["players"][0]["stock"] == stock_rest(deck, config, 2)


def test_r4_1_fewer_than_three_left_are_all_turned_and_the_waste_flips_without_padding():
    """44 stock cards: 14 draws of three, then one of the last two (never topped up from the
    waste), then DRAW on the empty stock only turns the waste over (a real flip: the first card
    turned is the next to turn again), then turning starts again from the top."""
    config = rules(nertz_pile_size=4)
    deck = make_deck(["2C", "3C", "4C", "5C"], ["9S", "9H", "9D", "9C"])
    turned = deck[8:]
    game = new_game(config, [deck, IDLE])
    for _ in range(14):
        play(game, "draw", "wait")
    assert len(game.snapshot()["players"][0]["stock"]) == 2
    snap = play(game, "draw", "wait")
    assert snap["players"][0]["stock"] == []
    assert snap["players"][0]["waste"] == turned
    snap = play(game, "draw", "wait")
    assert snap["players"][0]["waste"] == []
    assert snap["players"][0]["stock"] == turned[::-1] == stock_rest(deck, config)
    snap = play(game, "draw", "wait")
    assert snap["players"][0]["waste"] == turned[:3]
    assert snap["players"][0]["stock"] == stock_rest(deck, config, 3)


def test_r4_1_draw_is_illegal_with_empty_stock_and_waste():
    config = rules(nertz_pile_size=48)
    game = new_game(config, [make_deck([], []), IDLE])
    assert game.snapshot()["players"][0]["stock"] == []
    assert "draw" not in legal_names(game, 0)
    before = game.snapshot()
    after = play(game, "draw", "wait", check=False)
    assert bool(game.state.illegal[0, 0])
    assert after["players"] == before["players"]


# --- R4.2 foundations ----------------------------------------------------------------------


def test_r4_2_an_ace_from_every_source_starts_a_new_pile():
    config = rules(stock_draw=1)
    deck = make_deck(["2C", "3C", "AS"], ["AD", "9H", "9D", "9C"], ["AH"])
    game = new_game(config, [deck, IDLE])
    play(game, "nertz>foundation", "wait")
    play(game, "draw", "wait")
    play(game, "waste>foundation", "wait")
    snap = play(game, "work0>foundation", "wait")
    assert snap["foundations"] == [
        {"cards": [[0, "AS"]], "complete": False},
        {"cards": [[0, "AH"]], "complete": False},
        {"cards": [[0, "AD"]], "complete": False},
    ]
    assert snap["players"][0] == seat(
        nertz=["2C", "3C"], work=[[], ["9H"], ["9D"], ["9C"]], stock=stock_rest(deck, config, 1)
    )


def test_r4_2_next_rank_of_the_same_suit_goes_on_anyones_pile():
    config = rules()
    deck0 = make_deck(["2C", "3C", "AH"], ["9S", "9H", "9D", "9C"])
    deck1 = make_deck(["KC", "KD", "KS"], ["2H", "2S", "3H", "2D"])
    game = new_game(config, [deck0, deck1])
    assert not {"work0>foundation", "work1>foundation"} & legal_names(game, 1)
    play(game, "nertz>foundation", "wait")
    legal = legal_names(game, 1)
    assert "work0>foundation" in legal  # 2H on the AH of player 0
    assert "work1>foundation" not in legal  # wrong suit
    assert "work2>foundation" not in legal  # 3H skips a rank
    assert "work3>foundation" not in legal  # no diamond pile
    snap = play(game, "wait", "work0>foundation")
    assert snap["foundations"] == [{"cards": [[0, "AH"], [1, "2H"]], "complete": False}]
    assert snap["players"][1]["work"] == [[], ["2S"], ["3H"], ["2D"]]


def test_r4_2_a_pile_is_complete_at_its_king_and_still_scores():
    config = rules(stock_draw=1, nertz_pile_size=1)
    hearts = [r + "H" for r in "A23456789TJQK"]
    deck = make_deck(["2C"], ["9S", "9D", "3C", "4C"], hearts)
    game = new_game(config, [deck, IDLE])
    for _ in hearts:
        play(game, "draw", "wait")
        snap = play(game, "waste>foundation", "wait")
    assert snap["foundations"] == [{"cards": [[0, c] for c in hearts], "complete": True}]
    assert snap["scores"][0] == 13 - 2 * 1


# --- R4.3 onto a non-empty work pile ----------------------------------------------------------


def test_r4_3_one_rank_lower_and_the_other_colour():
    config = rules(stock_draw=1)
    deck = make_deck(["2C", "3C", "8H"], ["9S", "9H", "9D", "9C"], ["8C"])
    game = new_game(config, [deck, IDLE])
    to_work = {n for n in legal_names(game, 0) if ">work" in n and not n.startswith("work")}
    assert to_work == {"nertz>work0", "nertz>work3"}
    play(game, "draw", "wait")
    to_work = {n for n in legal_names(game, 0) if ">work" in n and not n.startswith("work")}
    assert to_work == {"nertz>work0", "nertz>work3", "waste>work1", "waste>work2"}
    play(game, "nertz>work0", "wait")
    snap = play(game, "waste>work2", "wait")
    assert snap["players"][0] == seat(
        nertz=["2C", "3C"], work=[["9S", "8H"], ["9H"], ["9D", "8C"], ["9C"]], stock=stock_rest(deck, config, 1)
    )


def test_r4_3_a_block_moves_by_its_first_card_and_keeps_its_order():
    config = rules()
    deck = make_deck(["2C", "3C", "4C"], ["TS", "9H", "8C", "KD"])
    game = new_game(config, [deck, IDLE])
    play(game, "work2>work1:1", "wait")
    legal = legal_names(game, 0)
    assert "work1>work0:2" in legal  # 9H on TS
    assert "work1>work0:1" not in legal  # 8C on TS
    assert "work1>work0:3" not in legal  # no third card
    snap = play(game, "work1>work0:2", "wait")
    assert snap["players"][0]["work"] == [["TS", "9H", "8C"], [], [], ["KD"]]


def test_r4_3_snerts_nertz_to_work_off_keeps_the_nertz_top_off_non_empty_piles():
    """With ``nertz_to_work=False`` the Nertz top may still fill a space (R4.4 lists it)."""
    config = rules(nertz_to_work=False)
    deck = make_deck(["2C", "3C", "8H"], ["9S", "AS", "9D", "9C"])
    game = new_game(config, [deck, IDLE])
    assert not any(n.startswith("nertz>work") for n in legal_names(game, 0))
    play(game, "work1>foundation", "wait")
    assert {n for n in legal_names(game, 0) if n.startswith("nertz>work")} == {"nertz>work1"}
    snap = play(game, "nertz>work1", "wait")
    assert snap["players"][0]["work"] == [["9S"], ["8H"], ["9D"], ["9C"]]


# --- R4.4 into an empty work pile ----------------------------------------------------------


def empty_pile_game(**options):
    """Work piles [TS 9H 8C], [], [KD], [5C] after two moves; Nertz top 2D, waste top QH."""
    config = rules(stock_draw=1, **options)
    deck = make_deck(["2C", "3C", "2D"], ["TS", "9H", "8C", "KD"], ["QH"])
    game = new_game(config, [deck, IDLE])
    play(game, "work2>work1:1", "wait")
    play(game, "work1>work0:2", "draw")
    play(game, "draw", "wait")
    assert game.snapshot()["players"][0]["work"] == [["TS", "9H", "8C"], [], [], ["KD"]]
    return game


def into(game, j):
    return {n for n in legal_names(game, 0) if n.partition(">")[2].split(":")[0] == f"work{j}"}


def test_r4_4_an_empty_pile_takes_any_single_card_or_any_block():
    """Any block includes the whole pile (a legal move that only relabels the pile)."""
    game = empty_pile_game()
    blocks = {f"work0>work1:{n}" for n in (1, 2, 3)} | {"work3>work1:1"}
    assert into(game, 1) == {"nertz>work1", "waste>work1"} | blocks
    snap = play(game, "work0>work1:2", "wait")
    assert snap["players"][0]["work"] == [["TS"], ["9H", "8C"], [], ["KD"]]
    snap = play(game, "waste>work2", "wait")
    assert snap["players"][0]["work"] == [["TS"], ["9H", "8C"], ["QH"], ["KD"]]
    assert snap["players"][0]["waste"] == []


def test_r4_4_fill_empty_from_nertz_lets_only_the_nertz_top_fill_a_space():
    game = empty_pile_game(fill_empty_from="nertz")
    assert into(game, 1) == {"nertz>work1"}
    assert into(game, 2) == {"nertz>work2"}
    snap = play(game, "nertz>work1", "wait")
    assert snap["players"][0]["work"] == [["TS", "9H", "8C"], ["2D"], [], ["KD"]]
    assert snap["players"][0]["nertz"] == ["2C", "3C"]


# --- R4.5 slide under ---------------------------------------------------------------------


def slide_game(**options):
    config = rules(stock_draw=1, **options)
    deck = make_deck(["2C", "3C", "TH"], ["9S", "8H", "AD", "KD"], ["TD"])
    return config, deck, new_game(config, [deck, IDLE])


def unders(game):
    return {n for n in legal_names(game, 0) if ">under" in n}


def test_r4_5_slide_under_the_first_card_while_a_pile_is_empty():
    config, deck, game = slide_game()
    play(game, "draw", "wait")
    assert unders(game) == set()  # no empty pile yet
    play(game, "work1>work0:1", "wait")
    assert unders(game) == {"nertz>under0", "waste>under0"}  # first card 9S, not exposed 8H
    snap = play(game, "nertz>under0", "wait")
    assert snap["players"][0] == seat(
        nertz=["2C", "3C"], work=[["TH", "9S", "8H"], [], ["AD"], ["KD"]],
        stock=stock_rest(deck, config, 1), waste=["TD"],
    )
    assert unders(game) == set()  # TD is not one higher than TH


def test_r4_5_slide_under_off_is_absent_from_the_catalogue():
    config, _, game = slide_game(slide_under=False)
    assert not [n for n in game.catalogue.names if "under" in n]
    with pytest.raises(ValueError, match="nertz>under0"):
        game.catalogue.index("nertz>under0")
    play(game, "work1>work0:1", "wait")
    assert not [n for n in legal_names(game, 0) if "under" in n]


def test_r4_5_with_fill_empty_from_nertz_only_the_nertz_top_slides_under():
    """Reading: R4.5 is the shortcut "put it in the space, move the pile onto it", so it is open
    only to a card that may fill a space (R4.4); under Snerts the waste top may not."""
    _, _, game = slide_game(fill_empty_from="nertz")
    play(game, "draw", "wait")
    play(game, "work1>work0:1", "wait")
    assert unders(game) == {"nertz>under0"}


def test_r4_5_slide_under_is_not_limited_by_nertz_to_work():
    _, _, game = slide_game(nertz_to_work=False)
    play(game, "draw", "wait")
    play(game, "work1>work0:1", "wait")
    assert unders(game) == {"nertz>under0", "waste>under0"}


# --- R4.6 CALL, R4.7 WAIT, R3 illegal actions -----------------------------------------------


def test_r4_6_call_is_legal_only_with_an_empty_nertz_pile_and_is_a_choice():
    game = one_card_nertz(rules(nertz_pile_size=1))
    assert "call" not in legal_names(game, 0)
    snap = play(game, "nertz>foundation", "wait")
    assert not snap["ended"] and snap["callers"] == []
    assert {"call", "draw", "wait"} <= legal_names(game, 0)
    assert "call" not in legal_names(game, 1)
    snap = play(game, "draw", "wait")  # playing on to improve the score
    assert not snap["ended"]


def test_r4_6_auto_call_calls_when_the_nertz_pile_empties():
    game = one_card_nertz(rules(nertz_pile_size=1, auto_call=True, call_bonus=10))
    snap = play(game, "nertz>foundation", "wait")
    assert snap["ended"] and snap["end_reason"] == "call" and snap["callers"] == [0]
    assert snap["scores"] == [1 + 10, -2]


def test_r4_7_wait_is_always_legal_and_changes_nothing_but_the_tick():
    game = one_card_nertz(rules(nertz_pile_size=1))
    before = game.snapshot()
    after = play(game, "wait", "wait")
    assert after == {**before, "tick": 1}


def test_r3_an_illegal_action_is_played_as_wait_and_flagged():
    game = one_card_nertz(rules(nertz_pile_size=1))
    before = game.snapshot()
    after = play(game, "call", "work0>work1:1", check=False)
    assert after == {**before, "tick": 1}
    assert game.state.illegal[0].tolist() == [True, True]
