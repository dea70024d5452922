"""``Game``'s own arguments are checked as the envs check theirs: its config, the illegal-action
penalty (at construction and through its setter), and the seat and action of ``legal_actions`` and
``why_illegal`` (R10 catalogue). Each case here was read as something else before: a NaN or
infinite penalty became the reward, ``"1"`` became 1.0, seat -1 answered for the last seat and
action -1 for the last action, and 1.5 or 999 raised numpy's IndexError."""

from __future__ import annotations

import numpy as np
import pytest

from nertz_env import NertzConfig
from nertz_env.game import Game

CONFIG = NertzConfig(num_players=2)
PENALTY = r"invalid illegal_action_penalty=.*: accepted a number from -1000 to 1000"


def dealt(**options) -> Game:
    game = Game(CONFIG, **options)
    game.reset(seed=0)
    return game


def illegal_tick(game: Game) -> np.ndarray:
    """A tick in which seat 0 plays an illegal action (played as WAIT) and seat 1 waits; the rewards."""
    illegal = int(np.flatnonzero(game.masks[0] == 0)[0])
    game.step(np.array([illegal, 0]))
    assert game.state.illegal[0].tolist() == [True, False]
    return game.rewards.copy()


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), "1", True, None, 1000.5, [1.0]])
def test_a_penalty_that_is_not_a_number_in_range_is_refused(value):
    with pytest.raises(ValueError, match=PENALTY):
        Game(CONFIG, illegal_action_penalty=value)
    game = dealt(illegal_action_penalty=2.5)
    with pytest.raises(ValueError, match=PENALTY):
        game.illegal_action_penalty = value
    assert game.illegal_action_penalty == 2.5  # the refused value left the penalty as it was
    assert illegal_tick(game).tolist() == [-2.5, 0.0]


@pytest.mark.parametrize("value", [0, 3, -1000, 1000, 0.25, np.float32(1.5), np.int64(7)])
def test_a_penalty_in_range_is_subtracted_from_the_illegal_seat(value):
    """An illegal action is played as WAIT and costs the penalty (the dense reward is otherwise 0)."""
    assert illegal_tick(dealt(illegal_action_penalty=value)).tolist() == [-float(value), 0.0]
    game = dealt()
    game.illegal_action_penalty = value
    assert game.illegal_action_penalty == float(value)
    assert illegal_tick(game).tolist() == [-float(value), 0.0]


@pytest.mark.parametrize("config", [{"num_players": 2}, None, 2, "standard"])
def test_game_takes_a_nertz_config(config):
    with pytest.raises(TypeError, match=r"Game takes a NertzConfig, such as NertzConfig\(num_players=2\), not a "):
        Game(config)


@pytest.mark.parametrize("seat", [-1, 2, 99, -3])
def test_a_seat_out_of_range_is_refused(seat):
    game = dealt()
    message = rf"player {seat} is not a seat of this 2-player game; seats are 0\.\.1"
    with pytest.raises(ValueError, match=message):
        game.legal_actions(seat)
    with pytest.raises(ValueError, match=message):
        game.why_illegal(seat, 1)


@pytest.mark.parametrize("seat", [1.0, True, "0", None, np.float64(0)])
def test_a_seat_that_is_not_an_integer_is_refused(seat):
    game = dealt()
    with pytest.raises(TypeError, match=r"player must be a seat, an integer 0\.\.1, got"):
        game.legal_actions(seat)
    with pytest.raises(TypeError, match=r"player must be a seat, an integer 0\.\.1, got"):
        game.why_illegal(seat, 1)


@pytest.mark.parametrize("action", [-1, 181, 999])
def test_an_action_out_of_the_catalogue_is_refused(action):
    with pytest.raises(ValueError, match=rf"action {action} for seat 0 is out of range; actions are 0\.\.180"):
        dealt().why_illegal(0, action)


@pytest.mark.parametrize("action", [1.5, True, "wait", None])
def test_an_action_that_is_not_an_integer_is_refused(action):
    with pytest.raises(TypeError, match=r"action for seat 1 must be an integer 0\.\.180, got"):
        dealt().why_illegal(1, action)


def test_each_seat_answers_for_itself():
    """The checked seat and action reach the same answers as before: seat 1's own mask and reason."""
    game = dealt()
    for seat in (0, np.int64(1)):
        assert game.legal_actions(seat).tolist() == np.flatnonzero(game.masks[int(seat)]).tolist()
    last = len(game.catalogue) - 1
    assert game.why_illegal(np.int8(1), np.int64(last)) == game.why_illegal(1, last)
    assert game.why_illegal(1, last).startswith(f"R4 does not allow {game.catalogue.names[last]!r}")
    assert game.why_illegal(0, game.catalogue.index("call")).startswith("call needs an empty Nertz pile (R4.6)")
