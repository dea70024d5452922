"""A saved table that keeps its ranges and card conservation but breaks a rule is still refused by
``set_state`` (``nertz_env.check_table_rules``): each test builds an exact table, tampers one
field and asserts the error names it. Each of these tables was accepted before and then played
on into observations outside the observation space, a match with no winner, or an int32 wrap."""

from __future__ import annotations

import numpy as np
import pytest

from nertz_env import NertzConfig, engine
from nertz_env.game import Game


def dealt(**options) -> Game:
    game = Game(NertzConfig(**options))
    game.reset(seed=0)
    return game


def all_in_nertz(game: Game, player: int) -> engine.State:
    """The dealt table with every card of ``player``'s layout moved into their Nertz pile (R1
    conservation and the R7 score kept): 52 cards, as only R4.8 builds could ever pile up."""
    s, p = game.get_state(), player
    cards = [*s.nertz[0, p, : s.nertz_len[0, p]], *s.stock[0, p, : s.stock_len[0, p]]]
    cards += [c for j in range(s.work.shape[2]) for c in s.work[0, p, j, : s.work_len[0, p, j]]]
    assert len(cards) == 52
    s.nertz[0, p], s.nertz_len[0, p] = cards, 52
    s.work_len[0, p], s.stock_len[0, p], s.waste_len[0, p] = 0, 0, 0
    s.score[0, p] = -game.config.nertz_penalty * 52
    return s


@pytest.mark.parametrize("size", [13, 10])
def test_a_nertz_pile_larger_than_the_deal_is_refused_without_builds(size):
    """R2: the deal puts nertz_pile_size cards there and nothing else adds any (R4), so 52 cards
    were accepted and then observed as nertz_count 52 above the space's high of 48."""
    game = dealt(nertz_pile_size=size)
    with pytest.raises(ValueError, match=rf"player 1's Nertz pile holds 52 cards \(nertz_len\); a deal of "
                                         rf"nertz_pile_size={size} gives at most {size}.*R4\.8"):  # fmt: skip
        game.set_state(all_in_nertz(game, 1))
    state = game.get_state()
    state.nertz_len[0, 0] += 1  # one card more than dealt: the card of the slot above comes in from the stock
    state.nertz[0, 0, size] = state.stock[0, 0, state.stock_len[0, 0] - 1]
    state.stock_len[0, 0] -= 1
    state.score[0, 0] -= game.config.nertz_penalty
    with pytest.raises(ValueError, match=rf"player 0's Nertz pile holds {size + 1} cards"):
        game.set_state(state)


def test_with_builds_a_full_nertz_pile_restores_inside_the_observation_space():
    """R4.8: builds can pile up to 52 cards, and the observation space holds that count."""
    game = dealt(nertz_builds=True, num_players=2)
    game.set_state(all_in_nertz(game, 0))
    assert (game.obs >= 0).all() and (game.obs <= game.layout.high).all()
    assert game.layout.view(game.obs[0], "self.nertz_count").tolist() == [52]


def test_a_call_with_cards_in_the_nertz_pile_is_refused():
    """R4.6: CALL is legal only with an empty Nertz pile (R5: it ends the hand)."""
    game = dealt()
    state = game.get_state()
    state.called[0, 0], state.ended[0] = True, engine.END_REASONS.index("call")
    with pytest.raises(ValueError, match=r"player 0 called with 13 cards in their Nertz pile; R4\.6"):
        game.set_state(state)


@pytest.mark.parametrize("field", ["stock_known", "called", "collision", "won_race", "illegal"])
@pytest.mark.parametrize("byte", [5, 9])
def test_a_bool_field_holding_another_byte_is_refused(field, byte):
    """A numpy bool written through an int8 view holds any byte: True to Python, not to the engine."""
    game = dealt()
    state = game.get_state()
    getattr(state, field).view(np.int8)[0, 1] = byte
    with pytest.raises(ValueError, match=rf"{field}\[0, 1\] holds the byte {byte}; bool fields hold 0 .* or 1"):
        game.set_state(state)


def played_match(ticks: int, **options) -> Game:
    game = dealt(episode="match", **options)
    rng = np.random.default_rng(0)
    for _ in range(ticks):
        if game.ended:
            break
        game.step([rng.choice(np.flatnonzero(game.masks[p])) for p in range(game.config.num_players)])
    return game


def test_a_match_with_no_contender_is_refused():
    """R8: until a tie is played off everyone may win; with none, hands=1 played on to max_hands."""
    game = played_match(0, hands=1, num_players=2)
    state = game.get_state()
    state.match_seats[0, engine.MS_CONTENDER] = 0
    with pytest.raises(ValueError, match=r"the match is playing with 0 contender\(s\) \(match_seats row "
                                         r"MS_CONTENDER\); R8: .* all 2 players"):  # fmt: skip
        game.set_state(state)
    state.match_seats[0, engine.MS_CONTENDER] = [1, 0]
    with pytest.raises(ValueError, match=r"playing with 1 contender"):
        game.set_state(state)


def test_partners_are_contenders_together():
    game = played_match(0, num_players=4, partners=True)
    state = game.get_state()
    state.match_seats[0, engine.MS_CONTENDER, 2] = 0
    with pytest.raises(ValueError, match="partners 0 and 2 differ as match contenders"):
        game.set_state(state)


def test_a_decided_match_has_one_winner_and_its_last_hand_on_the_table():
    game = played_match(10_000, hands=1, max_cycles=30, num_players=2)
    assert game.ended and game.match_winners() and game.state.match_info[0, engine.MI_STATE] == engine.MATCH_DECIDED
    game.set_state(game.get_state())  # as played
    state = game.get_state()
    state.match_seats[0, engine.MS_CONTENDER] = 1
    with pytest.raises(ValueError, match=r"the match is decided with 2 contender\(s\)"):
        game.set_state(state)


def test_a_running_match_whose_hand_ended_is_refused():
    """R8: a hand that does not end the match is followed by the next deal in the same tick."""
    game = played_match(29, max_cycles=30)
    state = game.get_state()
    assert state.tick[0] == 29
    state.tick[0], state.ended[0] = 30, engine.END_REASONS.index("max_cycles")
    with pytest.raises(ValueError, match="the match is playing but the hand ended"):
        game.set_state(state)


def test_match_ticks_that_would_overflow_are_refused():
    """A hand lasts at most max_cycles ticks (R5): 2**31 - 1 wrapped to -2147483646 in int32."""
    game = played_match(15, hands=3)
    state = game.get_state()
    assert state.match_info[0, engine.MI_TICKS] == 15
    state.match_info[0, engine.MI_TICKS] = 2**31 - 1
    with pytest.raises(ValueError, match=r"match_info ticks is 2147483647 after 0 hands and 15 ticks of this one; "
                                         r"accepted 0\.\.15"):  # fmt: skip
        game.set_state(state)


def test_a_match_total_the_observation_cannot_hold_is_refused():
    """R8: totals are observed as sign, hundreds (at most 127) and rest."""
    game = played_match(0)
    state = game.get_state()
    state.match_seats[0, engine.MS_TOTAL] = [-12_799, 12_799, 0, 0]
    game.set_state(state)
    state.match_seats[0, engine.MS_TOTAL, 2] = -12_800
    with pytest.raises(ValueError, match=r"player 2's match total is -12800; totals within \+-12799"):
        game.set_state(state)


def drawn(ticks: int, **options) -> Game:
    """A hand in which every seat turns its stock whenever it may (R4.1) and otherwise waits."""
    game = dealt(stall_ticks=10**6, **options)  # no stall rotation (R5) turns a stock meanwhile
    draw = game.catalogue.index("draw")
    for _ in range(ticks):
        if game.ended:
            break
        game.step([draw if game.masks[p, draw] else 0 for p in range(game.config.num_players)])
    return game


def test_a_stock_known_on_the_deal_is_refused():
    """R9: the observation shows a player's own stock only once they have turned through it; marked
    known on the deal, it showed the 35 cards of a stock never turned."""
    game = dealt(num_players=2)
    state = game.get_state()
    state.stock_known[0, 1] = True
    with pytest.raises(ValueError, match=r"player 1 knows their stock \(stock_known\) at tick 0; R9: a stock is known "
                                         r"once turned through \(R4\.1\), at tick 13 at the earliest"):  # fmt: skip
        Game(game.config).set_state(state)


# The first tick a seat can know its stock: the deal leaves 35 cards (R2), turned 3 (or 1) per DRAW,
# then a DRAW turns the waste over (R4.1); move_ticks["draw"] ticks per DRAW, and under turn_based
# only on the seat's own turns (R3), seat 1 first acting at tick 1.
FIRST_KNOWN = [
    ({}, 0, 13), ({"stock_draw": 1}, 1, 36), ({"move_ticks": {"draw": 3}}, 0, 39),
    ({"turn_based": True}, 1, 1 + 12 * 2 + 1),
    ({"turn_based": True, "num_players": 3, "stock_draw": 1}, 2, 2 + 35 * 3 + 1),
    ({"turn_based": True, "move_ticks": {"draw": 3}}, 0, 12 * 4 + 3),  # a DRAW every 4 ticks: the next own turn
    ({"nertz_pile_size": 31, "work_piles": 6}, 0, 6),  # 15 cards in stock
]  # fmt: skip


@pytest.mark.parametrize(("options", "seat", "first"), FIRST_KNOWN)
def test_a_stock_is_known_exactly_from_the_first_tick_play_can_turn_it(options, seat, first):
    """The bound is the engine's own: a seat that draws whenever it may knows its stock at ``first``
    (and the table restores), and one tick before, the table marked known is refused."""
    options = {"num_players": 2, **options}
    before = drawn(first - 1, **options)
    assert not before.state.stock_known[0, seat]
    state = before.get_state()
    state.stock_known[0, seat] = True
    with pytest.raises(ValueError, match=rf"player {seat} knows their stock \(stock_known\) at tick {first - 1}; .*"
                                         rf"at tick {first} at the earliest for this seat"):  # fmt: skip
        Game(before.config).set_state(state)
    after = drawn(first, **options)
    assert after.state.stock_known[0, seat]
    Game(after.config).set_state(after.get_state())


def test_a_draw_in_the_air_lands_at_the_end_of_the_hand():
    """R5: the hand's end lands a DRAW still in the air, so an ended hand may know a stock two
    ticks sooner under move_ticks={"draw": 3}: at tick 37, not 39."""
    game = drawn(100, num_players=2, move_ticks={"draw": 3}, max_cycles=37)
    assert game.end_reason == "max_cycles" and game.tick == 37 and game.state.stock_known[0].all()
    Game(game.config).set_state(game.get_state())
    shorter = drawn(100, num_players=2, move_ticks={"draw": 3}, max_cycles=36)
    state = shorter.get_state()
    assert shorter.ended and not state.stock_known[0].any()  # the turn-over was never made
    state.stock_known[0, 0] = True
    with pytest.raises(ValueError, match=r"at tick 36; .* at tick 37 at the earliest for this seat under this "
                                         r"config \(an ended hand\)"):  # fmt: skip
        Game(shorter.config).set_state(state)


REACHED = [
    {"stock_draw": draw, **timing} for draw in (1, 3) for timing in (
        {}, {"turn_based": True}, {"move_ticks": {"draw": 2, "foundation": 3}}, {"turn_based": True, "move_ticks": 3},
        {"nertz_pile_size": 20, "work_piles": 6, "max_cycles": 40}, {"episode": "match", "max_cycles": 50, "hands": 3},
    )
]  # fmt: skip


@pytest.mark.parametrize("options", REACHED, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_every_table_of_play_keeps_its_known_stocks(options):
    """Play that mostly draws as soon as it may (else a random legal move), over many seeds: every
    table reached, ended hands and later hands of a match included, passes the R9 check."""
    known = 0
    for seed in range(6):
        config = NertzConfig(num_players=2 + seed % 3, **options)
        game, twin, rng = dealt(**config.to_dict()), Game(config), np.random.default_rng(seed)
        game.reset(seed=seed)
        draw = game.catalogue.index("draw")
        for _ in range(160):
            if game.ended:
                game.reset()
            game.step([draw if game.masks[p, draw] and rng.random() < 0.9 else rng.choice(np.flatnonzero(game.masks[p]))
                       for p in range(config.num_players)])  # fmt: skip
            twin._checked.clear()  # the full check
            twin.set_state(game.get_state())
            known += int(game.state.stock_known[0].sum())
    assert known > 0
