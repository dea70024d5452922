"""The rule systems of the source texts, scenario by scenario (R10 fixed deals, moves by their
names, the table checked): R5's stock cycle measured from the last progress, and the options
``block_moves``, ``aces_to_work`` (R4.3) and ``fill_empty_from="nertz_or_waste"`` (R4.4)."""

from __future__ import annotations

import pytest
from conftest import legal_names, make_deck, new_game, play, rules

from nertz_env.config import NertzConfig

# 13 Nertz cards, bottom to top, none of them an ace: the Nertz pile of a player who never plays it.
NERTZ_13 = ["KC", "QC", "JC", "TC", "9C", "8C", "7C", "6C", "5C", "4C", "3C", "2C", "KD"]


# --- R5: a whole stock cycle, from where everyone stands at the last progress -----------------


def test_r5_the_cycle_is_measured_from_the_last_progress_stock_and_waste_apart():
    """Both players draw three and play two aces from the waste: each then has 32 cards in stock
    and 1 in the waste. Turning through all of it takes ceil(32/3) + 1 + ceil(1/3) = 13 DRAWs; a
    cycle counted from the 33 cards together (ceil(33/3) + 1 = 12) rotates one DRAW too early."""
    config = NertzConfig(num_players=2, collision="seat")
    decks = [make_deck(NERTZ_13, ["9S", "9H", "9D", "QS"], stock) for stock in (["5D", "AD", "AS"], ["5H", "AH", "AC"])]
    game = new_game(config, decks)
    play(game, "draw", "draw")
    play(game, "waste>foundation", "waste>foundation")
    snap = play(game, "waste>foundation", "waste>foundation")  # progress: the clock starts here
    stocks = [me["stock"] for me in snap["players"]]
    assert [len(s) for s in stocks] == [32, 32] and [me["waste"] for me in snap["players"]] == [["5D"], ["5H"]]
    for tick in range(1, 13):
        snap = play(game, "wait", "wait")
        assert [me["stock"] for me in snap["players"]] == stocks, f"rotated after {tick} ticks"
        assert game.state.since_progress[0] == tick
    snap = play(game, "wait", "wait")  # the 13th tick without progress: every player rotates
    for me, stock, waste in zip(snap["players"], stocks, ("5D", "5H")):
        turned = [waste] + stock  # the waste turned over under the stock, bottom to top
        assert me["stock"] == [turned[-1]] + turned[:-1] and me["waste"] == []
    assert game.state.since_progress[0] == 0 and game.state.rotations[0] == 1


# --- R4.3 block_moves --------------------------------------------------------------------------


def built_table(config: NertzConfig):
    """Work piles 9S 8H 9C TD; after ``work1>work0:1`` pile 0 is [9S, 8H], pile 1 is empty."""
    deck = make_deck(["KC", "QC", "KD"], ["9S", "8H", "9C", "TD"])
    game = new_game(config, [deck, deck])
    snap = play(game, "work1>work0:1", "wait")
    assert snap["players"][0]["work"] == [["9S", "8H"], [], ["9C"], ["TD"]]
    return game


@pytest.mark.parametrize(
    ("block_moves", "legal"),
    [
        ("any", {"work0>work1:1", "work0>work1:2", "work0>work2:1", "work0>work3:2"}),
        ("whole", {"work0>work1:2", "work0>work3:2"}),  # Nerds: a whole pile moves
        ("none", {"work0>work1:1", "work0>work2:1"}),  # German Nerts: only the exposed card moves
    ],
)
def test_r4_3_block_moves_any_whole_or_none(block_moves, legal):
    """From [9S, 8H]: 8H onto 9C or into the space, the whole pile onto TD or into the space."""
    game = built_table(rules(block_moves=block_moves))
    assert {n for n in legal_names(game, 0) if n.startswith("work0>")} == legal


def test_r4_3_block_moves_whole_moves_the_pile_and_refuses_part_of_it():
    game = built_table(rules(block_moves="whole"))
    assert "block_moves='whole'" in game.why_illegal(0, game.catalogue.index("work0>work2:1"))
    snap = play(game, "work0>work2:1", "wait", check=False)  # 8H alone onto 9C: not the whole pile
    assert game.state.illegal[0, 0] and snap["players"][0]["work"] == [["9S", "8H"], [], ["9C"], ["TD"]]
    snap = play(game, "work0>work3:2", "wait")
    assert snap["players"][0]["work"] == [[], [], ["9C"], ["TD", "9S", "8H"]]


def test_r4_3_block_moves_none_moves_one_card_and_refuses_a_block():
    game = built_table(rules(block_moves="none"))
    assert "block_moves='none'" in game.why_illegal(0, game.catalogue.index("work0>work3:2"))
    snap = play(game, "work0>work3:2", "wait", check=False)
    assert game.state.illegal[0, 0] and snap["players"][0]["work"] == [["9S", "8H"], [], ["9C"], ["TD"]]
    snap = play(game, "work0>work2:1", "wait")
    assert snap["players"][0]["work"] == [["9S"], [], ["9C", "8H"], ["TD"]]


# --- R4.3 aces_to_work, R4.4 fill_empty_from ----------------------------------------------------


def space_table(config: NertzConfig, nertz_top: str, work: list[str], stock: list[str]):
    """Work pile 0 starts as AS and goes to a foundation (a space opens), then player 0 draws."""
    deck = make_deck(["KC", "QC", nertz_top], ["AS", *work], stock)
    game = new_game(config, [deck, make_deck(["KD", "QD", "JD"], ["9S", "9H", "9D", "9C"])])
    play(game, "work0>foundation", "wait")
    snap = play(game, "draw", "wait")
    assert snap["players"][0]["work"][0] == [] and snap["players"][0]["waste"][-1] == stock[2]
    return game


@pytest.mark.parametrize("aces_to_work", [True, False])
def test_r4_3_aces_to_work_false_keeps_every_ace_off_the_work_piles(aces_to_work):
    """Nertz top AH, waste top AD, work pile 1 a dealt AC, pile 2 a 2H, pile 0 empty: with
    aces_to_work=False (German Nerts) no ace goes into the space, nor AC onto the 2H; each ace
    still goes to a foundation."""
    game = space_table(rules(aces_to_work=aces_to_work), "AH", ["AC", "2H", "9C"], ["KH", "QS", "AD"])
    to_work = {"nertz>work0", "waste>work0", "work1>work0:1", "work1>work2:1"}
    legal = legal_names(game, 0)
    assert to_work & legal == (to_work if aces_to_work else set())
    if not aces_to_work:
        assert "aces_to_work=False" in game.why_illegal(0, game.catalogue.index("work1>work2:1"))
    assert {"nertz>foundation", "waste>foundation", "work1>foundation"} <= legal


@pytest.mark.parametrize(
    ("fill", "legal"),
    [
        ("any", {"nertz>work0", "waste>work0", "work1>work0:1", "work2>work0:1", "work3>work0:1",
                 "waste>under1", "waste>under2"}),  # fmt: skip
        ("nertz", {"nertz>work0"}),  # Snerts: only the Snerts pile fills a space
        ("nertz_or_waste", {"nertz>work0", "waste>work0", "waste>under1", "waste>under2"}),  # Nerds
    ],
)
def test_r4_4_fill_empty_from(fill, legal):
    """Space 0, Nertz top 5C, waste top TC, work piles 9H 9D 9C: what may fill the space, and which
    waste card may take the slide-under shortcut through it (R4.5)."""
    game = space_table(rules(fill_empty_from=fill), "5C", ["9H", "9D", "9C"], ["KH", "QS", "TC"])
    assert {n for n in legal_names(game, 0) if ">work0" in n or ">under" in n} == legal


def test_r4_4_nertz_or_waste_fills_the_space_from_the_waste_and_refuses_a_work_card():
    game = space_table(rules(fill_empty_from="nertz_or_waste"), "5C", ["9H", "9D", "9C"], ["KH", "QS", "TC"])
    assert "fill_empty_from='nertz_or_waste'" in game.why_illegal(0, game.catalogue.index("work1>work0:1"))
    snap = play(game, "work1>work0:1", "wait", check=False)
    assert game.state.illegal[0, 0] and snap["players"][0]["work"][:2] == [[], ["9H"]]
    snap = play(game, "waste>work0", "wait")
    assert snap["players"][0]["work"][0] == ["TC"] and snap["players"][0]["waste"][-1] == "QS"


# --- the presets: each source text's rule system -------------------------------------------------


def preset(name: str, **overrides) -> NertzConfig:
    """A preset for two players with three-card Nertz piles and seat-order races."""
    base = {"num_players": 2, "nertz_pile_size": 3, "collision": "seat", "stall_ticks": 10_000}
    return NertzConfig.from_kwargs(preset=name, **{**base, **overrides})


def test_nerds_preset_whole_piles_and_no_work_card_into_a_space():
    """Nerds: from [9S, 8H] only the whole pile moves, and not into the space."""
    game = built_table(preset("nerds"))
    assert {n for n in legal_names(game, 0) if n.startswith("work0>")} == {"work0>work3:2"}


def test_nerds_preset_fills_a_space_from_the_nerds_pile_or_the_discard():
    game = space_table(preset("nerds"), "5C", ["9H", "9D", "9C"], ["KH", "QS", "TC"])
    assert {n for n in legal_names(game, 0) if ">work0" in n} == {"nertz>work0", "waste>work0"}


def test_nerds_preset_the_hand_ends_the_moment_a_nerds_pile_empties():
    """Nerds: no choice to play on; the penalty is one point a card (R7)."""
    game = new_game(preset("nerds", nertz_pile_size=1), [make_deck(["AS"], ["9S", "9H", "9D", "9C"]),
                                                          make_deck(["KD"], ["9S", "9H", "9D", "9C"])])
    snap = play(game, "nertz>foundation", "wait")
    assert snap["ended"] and snap["end_reason"] == "call" and snap["callers"] == [0]
    assert snap["scores"] == [1, -1]


def test_snerts_preset_the_snerts_pile_only_fills_spaces():
    """Snerts: the Snerts top never goes onto a work pile, only into a space; no waste card fills one."""
    game = space_table(preset("snerts"), "8S", ["9H", "9D", "9C"], ["KH", "QS", "TC"])
    legal = legal_names(game, 0)
    assert {n for n in legal if n.startswith("nertz>")} == {"nertz>work0"}  # 8S not onto 9H or 9D
    assert "waste>work0" not in legal and "waste>under1" not in legal


def test_nerts_preset_single_cards_no_aces_on_the_tableau_and_builds_on_nertz_piles():
    """German Nerts: only the top card of a pile moves, an ace goes only to the middle,
    no slide-under, and a card may go onto an opponent's Nertz top of its suit, one rank apart."""
    game = built_table(preset("nerts"))
    assert {n for n in legal_names(game, 0) if n.startswith("work0>")} == {"work0>work1:1", "work0>work2:1"}
    assert not any(">under" in n for n in game.catalogue.names)
    game = space_table(preset("nerts"), "AH", ["AC", "QD", "9C"], ["KH", "QS", "AD"])
    legal = legal_names(game, 0)
    assert not {"nertz>work0", "waste>work0", "work1>work0:1"} & legal
    assert "work2>nertz@1" in legal  # QD onto the opponent's Nertz top JD
