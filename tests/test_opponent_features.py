"""The opponent columns of ``agents.features`` (``ActionFeatures(opponent=True)``): the viewer's
cards that an opponent's next foundation play would free, the moves that cover one, and the
foundation moves that let an opponent's card follow (R4.2: anyone may play on any foundation),
on an exact table (R10 fixed deal); and that they add columns without changing the others."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_deck, new_game, play

from nertz_env.agents import features as F
from nertz_env.config import NertzConfig
from nertz_env.vector import NertzVectorEnv

CONFIG = NertzConfig(num_players=2, nertz_pile_size=3, collision="seat", stall_ticks=10_000)
# My Nertz pile shows AH; my first DRAW shows 3H. The rival's Nertz pile shows 2H.
ME = make_deck(["KD", "5C", "AH"], ["9S", "8H", "4C", "QC"], ["3D", "7D", "3H"])
RIVAL = make_deck(["KS", "QS", "2H"], ["TS", "9C", "8S", "7S"])
SOON, BURIES, FEEDS = F.F_SOON_MINE, F.F_BURIES_SOON, F.F_FEEDS


def opponent_features(game, player=0):
    obs, masks = game.obs[player : player + 1], game.masks[player : player + 1]
    rows, acts, feats = F.ActionFeatures(game.config, lookahead=False, opponent=True)(obs, masks)
    assert feats.shape == (len(rows), F.N_OPPONENT_FEATURES)
    assert (feats[:, list(F.CYCLE_COLUMNS)] == 0).all()  # without cycle=True
    return {game.catalogue.names[a]: f for a, f in zip(acts, feats)}


def test_r4_2_a_foundation_move_that_lets_an_opponents_card_follow_feeds_it():
    game = new_game(CONFIG, [ME, RIVAL])
    f = opponent_features(game)
    assert f["nertz>foundation"][FEEDS] == pytest.approx(1 / 3)  # AH up: the rival's 2H follows
    assert all(move[FEEDS] == 0 for name, move in f.items() if name != "nertz>foundation")
    assert all((move[[SOON, BURIES]] == 0).all() for move in f.values())  # nothing of mine waits on the rival


def test_a_draw_that_covers_a_card_the_opponent_is_about_to_free_buries_it():
    game = new_game(CONFIG, [ME, RIVAL])
    play(game, "nertz>foundation", "wait")  # AH up: the rival's 2H fits now
    play(game, "draw", "wait")  # 3H shows on my waste: it fits once the rival plays 2H
    f = opponent_features(game)
    assert all(move[SOON] == pytest.approx(1 / 3) for move in f.values())  # a fact of the row
    assert f["draw"][BURIES] == 1  # DRAW covers 3H
    assert f["wait"][BURIES] == 0 and f["waste>work2"][BURIES] == 0  # 3H onto 4C keeps it exposed
    play(game, "wait", "nertz>foundation")  # the rival plays 2H: my 3H fits now
    f = opponent_features(game)
    assert f["waste>foundation"][FEEDS] == 0 and all(move[[SOON, BURIES]].sum() == 0 for move in f.values())


@pytest.mark.parametrize("seed", [1, 2])
def test_the_opponent_columns_add_columns_and_change_no_other(seed):
    env = NertzVectorEnv(16, seed=seed, **CONFIG.to_dict())
    obs, masks = env.reset()
    plain = F.ActionFeatures(CONFIG, lookahead=False, cycle=True)
    both = F.ActionFeatures(CONFIG, lookahead=False, cycle=True, opponent=True)
    seen = np.zeros(3)
    for _ in range(60):
        o, m = obs.reshape(32, -1), masks.reshape(32, -1)
        (r1, a1, f1), (r2, a2, f2) = plain(o, m), both(o, m)
        assert (r1 == r2).all() and (a1 == a2).all() and (f1 == f2[:, : F.N_CYCLE_FEATURES]).all()
        seen += (f2[:, list(F.OPPONENT_COLUMNS)] > 0).any(0)
        obs, masks, *_ = env.step(env.sample_actions())
    assert seen.all()  # each column is set somewhere in play


def test_wait_soon_waits_instead_of_covering_a_card_the_opponent_is_about_to_free():
    """``heuristic:wait=soon`` (``_judge.wait_for_opponents``): a DRAW that would cover my 3H while
    the rival can put up 2H becomes WAIT (R4.7); once 2H is up, or for a row without such a card,
    the DRAW stands; any other choice is left alone."""
    from nertz_env import agents
    from nertz_env.actions import ACTION_DRAW, ACTION_WAIT
    from nertz_env.agents._judge import wait_for_opponents
    from nertz_env.agents.base import observation_offsets

    game = new_game(CONFIG, [ME, RIVAL])
    off, table = observation_offsets(CONFIG), game.catalogue.table

    def decided(player, choice):
        out = np.array([choice], np.int64)
        wait_for_opponents(game.obs[player : player + 1], off, table, out)
        return int(out[0])

    play(game, "nertz>foundation", "wait")
    play(game, "draw", "wait")
    assert decided(0, ACTION_DRAW) == ACTION_WAIT
    assert decided(0, game.catalogue.index("waste>work2")) == game.catalogue.index("waste>work2")
    assert decided(1, ACTION_DRAW) == ACTION_DRAW  # the rival's waste is empty
    rows = game.obs[:1], game.masks[:1]
    plain = int(agents.make("heuristic", config=CONFIG).act_batch(*rows)[0])
    waiting = int(agents.make("heuristic", config=CONFIG, wait="soon").act_batch(*rows)[0])
    assert waiting == (ACTION_WAIT if plain == ACTION_DRAW else plain)
    play(game, "wait", "nertz>foundation")  # 2H up: 3H fits, nothing to wait for
    assert decided(0, ACTION_DRAW) == ACTION_DRAW
    with pytest.raises(ValueError, match="invalid wait='always': accepted never, soon"):
        agents.make("heuristic", config=CONFIG, wait="always")


def test_wait_soon_changes_only_draws_into_waits_in_play():
    from nertz_env import agents
    from nertz_env.actions import ACTION_DRAW, ACTION_WAIT

    config = NertzConfig()
    plain, waiting = agents.make("heuristic", config=config), agents.make("heuristic", config=config, wait="soon")
    env = NertzVectorEnv(16, seed=9)
    obs, masks = env.reset()
    changed = 0
    for _ in range(80):
        o, m = obs.reshape(64, -1), masks.reshape(64, -1)
        a, b = plain.act_batch(o, m), waiting.act_batch(o, m)
        assert ((a == b) | ((a == ACTION_DRAW) & (b == ACTION_WAIT))).all()
        changed += int((a != b).sum())
        obs, masks, *_ = env.step(a.reshape(16, 4))
    assert changed > 0
