"""The rule systems of the source texts, scenario by scenario (R10 fixed deals, moves by their
names, the table checked): R5's stock cycle measured from the last progress."""

from __future__ import annotations

from conftest import make_deck, new_game, play

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

