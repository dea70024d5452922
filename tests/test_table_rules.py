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
