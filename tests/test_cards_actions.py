"""R10 notation: card codes, the action catalogue's names, and fixed deals that are malformed."""

from __future__ import annotations

import re

import numpy as np
import pytest
import reference
from conftest import FULL_DECK

from nertz_env import nertz_v0
from nertz_env.actions import ACTION_CALL, ACTION_DRAW, ACTION_WAIT, ActionCatalogue
from nertz_env.cards import card_name, parse_card, parse_deck
from nertz_env.config import NertzConfig
from nertz_env.game import Game

# --- cards (R1, R10) --------------------------------------------------------------------------


def test_r10_every_card_name_round_trips_and_codes_follow_suit_then_rank():
    assert [card_name(c) for c in range(52)] == list(FULL_DECK)
    assert [parse_card(n) for n in FULL_DECK] == list(range(52))
    assert parse_card("10S") == parse_card("TS") == parse_card(" ts ")
    assert card_name(np.int8(5)) == "6C"
    for bad in (52, -1, 2.9, True, "3", np.float64(3.0)):  # no truncation, no bool, no text
        with pytest.raises(ValueError, match=r"a card code is a whole number 0\.\.51 \(R10\), got"):
            card_name(bad)


def test_r10_a_deal_may_be_a_string_or_codes():
    assert parse_deck(" ".join(FULL_DECK)) == list(range(52))
    assert parse_deck(list(range(52))[::-1]) == list(range(52))[::-1]
    assert parse_deck(np.arange(52, dtype=np.int8)[::-1]) == list(range(52))[::-1]  # codes as deal_decks gives them


# --- the action catalogue (R4, R10) -------------------------------------------------------------


@pytest.mark.parametrize("work_piles", [4, 5, 6])
@pytest.mark.parametrize("slide_under", [True, False])
def test_r10_catalogue_names_are_the_r10_names(work_piles, slide_under):
    config = NertzConfig(work_piles=work_piles, slide_under=slide_under)
    names = ActionCatalogue(config).names
    assert len(set(names)) == len(names)
    assert set(names) == set(reference.all_action_names(config))
    assert (names[ACTION_WAIT], names[ACTION_DRAW], names[ACTION_CALL]) == ("wait", "draw", "call")


@pytest.mark.parametrize(
    ("work_piles", "slide_under", "size"),
    [(4, True, 181), (5, True, 290), (6, True, 425), (4, False, 173), (5, False, 280), (6, False, 413)],
)
def test_catalogue_size(work_piles, slide_under, size):
    """3 (wait, draw, call) + (2 + w) to a foundation + 2w Nertz/waste to work (+ 2w under) +
    w(w-1) pile pairs x 13 block lengths (a work pile holds at most K down to A)."""
    config = NertzConfig(work_piles=work_piles, slide_under=slide_under)
    assert len(ActionCatalogue(config)) == size
    assert len(ActionCatalogue(config.replace(num_players=8))) == size  # seats do not matter


def test_r10_names_examples():
    four = ActionCatalogue(NertzConfig())
    for name in ["work0>work3:2", "work3>work0:13", "nertz>under1", "waste>under3", "nertz>work0",
                 "waste>work2", "work2>foundation", "nertz>foundation", "waste>foundation"]:
        assert name in four.names
    for name in ["work4>foundation", "work0>work0:1", "work0>work1:0", "work0>work1:14", "nertz>work4",
                 "waste>under4", "foundation>work0", "work0>work1", "nertz>nertz@1"]:
        assert name not in four.names
    six = ActionCatalogue(NertzConfig(work_piles=6))
    assert {"work5>foundation", "work5>work4:13", "nertz>under5"} <= set(six.names)


def test_index_and_name_round_trip_and_unknowns_raise():
    catalogue = ActionCatalogue(NertzConfig(work_piles=5))
    for i, name in enumerate(catalogue.names):
        assert catalogue.index(name) == i and catalogue.name(i) == name
    with pytest.raises(ValueError, match=re.escape("'nertz>work9'")):
        catalogue.index("nertz>work9")
    with pytest.raises(ValueError, match="out of range"):
        catalogue.name(len(catalogue))
    with pytest.raises(ValueError, match="out of range"):
        catalogue.name(-1)


@pytest.mark.parametrize("index", [2.9, 3.0, True, np.bool_(False), "5", None, np.float64(1.0), [1]])
def test_an_action_name_is_only_given_for_an_integer(index):
    """``name(2.9)`` was 'call', ``name(True)`` 'draw' and ``name('5')`` an action too: ``int()``
    read them. A plain or numpy integer in range is the only action (``env.unwrapped.action_name``)."""
    catalogue = ActionCatalogue(NertzConfig())
    with pytest.raises(TypeError, match=re.escape(f"an action is an integer 0..180, got {index!r}")):
        catalogue.name(index)
    env = nertz_v0.parallel_env(num_players=2)
    with pytest.raises(TypeError, match="an action is an integer 0..180"):
        env.unwrapped.action_name(index)
    assert catalogue.name(np.int8(2)) == env.unwrapped.action_name(np.int64(2)) == catalogue.name(2) == "call"
    with pytest.raises(ValueError, match="action 181 is out of range; actions are 0..180"):
        catalogue.name(181)


# --- malformed fixed deals (R10) ----------------------------------------------------------------


@pytest.fixture(scope="module")
def game():
    return Game(NertzConfig(num_players=2))


@pytest.mark.parametrize(
    ("second_deck", "message"),
    [
        (list(FULL_DECK[:51]), "player 1 must list exactly 52 cards, got 51"),
        ([*FULL_DECK, "AC"], "player 1 must list exactly 52 cards, got 53"),
        (["AC", *FULL_DECK[:50], "AC"], "player 1 repeats AC"),
        (["10C", *FULL_DECK[:50], "TC"], "player 1 repeats TC"),
        (["1H", *FULL_DECK[1:]], "unknown card '1H'"),
        (["XX", *FULL_DECK[1:]], "unknown card 'XX'"),
        ([52, *range(1, 52)], "unknown card 52 for player 1"),
        ([None, *FULL_DECK[1:]], "unknown card None for player 1"),
        ([0, True, *range(2, 52)], "unknown card True for player 1"),  # was read as code 1, 2C
        (set(FULL_DECK), "player 1 is a set"),  # no order: the deal changed with the hash seed
    ],
)
def test_a_malformed_deal_raises_a_clear_error(game, second_deck, message):
    """Every error names the bad card or count; a bad card name is reported by ``parse_card``,
    which does not know the player."""
    with pytest.raises(ValueError) as info:
        game.reset(seed=0, decks=[list(FULL_DECK), second_deck])
    assert message in str(info.value)


@pytest.mark.parametrize("decks", [[list(FULL_DECK)], [list(FULL_DECK)] * 3, " ".join(FULL_DECK), []])
def test_the_number_of_deals_must_be_the_number_of_players(game, decks):
    with pytest.raises(ValueError, match="list of 2 decks"):
        game.reset(seed=0, decks=decks)


def test_a_rejected_deal_leaves_the_game_usable(game):
    with pytest.raises(ValueError, match="the deal for player 1 repeats AC; each card once"):
        game.reset(seed=0, decks=[list(FULL_DECK), ["AC"] * 52])
    game.reset(seed=0, decks=[list(FULL_DECK), list(FULL_DECK)])
    assert game.snapshot()["players"][1]["nertz"] == list(FULL_DECK[:13])
