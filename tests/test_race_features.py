"""The race columns of ``agents.features`` (``ActionFeatures(race=True)``, ``agents._race``): how
near a moved or uncovered card is to the foundations (R4.2), the opponents' Nertz tops a foundation
move lets follow or whose slot it takes (R4.2, R6), and the opponents' Nertz piles (R5), on exact
tables (R10 fixed deals); and that they add columns without changing the others."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_deck, new_game, play

from nertz_env import agents
from nertz_env.agents import features as F
from nertz_env.config import NertzConfig
from nertz_env.vector import NertzVectorEnv

CONFIG = NertzConfig(num_players=2, nertz_pile_size=3, collision="seat", stall_ticks=10_000)
# My Nertz pile turns AH, 2H, 3H; my work piles 9S 7C 6H QC; my first DRAW shows 8H over 2S.
ME = make_deck(["3H", "2H", "AH"], ["9S", "7C", "6H", "QC"], ["3D", "2S", "8H"])
NEAR, EXPOSED_NEAR, FEEDS, TAKES, READY, RIVAL_LEFT = F.RACE_COLUMNS


def race_columns(game, player=0):
    obs, masks = game.obs[player : player + 1], game.masks[player : player + 1]
    rows, acts, feats = F.ActionFeatures(game.config, lookahead=False, race=True)(obs, masks)
    assert feats.shape == (len(rows), F.N_RACE_FEATURES)
    return {game.catalogue.names[a]: dict(zip(F.RACE_COLUMNS, f[list(F.RACE_COLUMNS)])) for a, f in zip(acts, feats)}


def test_r4_2_nearness_counts_the_ranks_still_to_go_up_on_the_foundations():
    rival = make_deck(["KS", "QS", "JS"], ["TS", "9C", "8S", "7S"])
    game = new_game(CONFIG, [ME, rival])
    f = race_columns(game)
    assert f["work2>work1:1"][NEAR] == pytest.approx(1 - 5 / 13)  # 6H onto 7C: no heart pile yet, A-5H to go
    assert f["work2>work1:1"][EXPOSED_NEAR] == 0  # the pile empties: nothing uncovered
    assert f["nertz>foundation"][NEAR] == 1  # AH starts a pile
    assert f["wait"][NEAR] == 0 and f["draw"][NEAR] == 0  # no card moved
    play(game, "nertz>foundation", "wait")  # AH up
    assert race_columns(game)["work2>work1:1"][NEAR] == pytest.approx(1 - 4 / 13)  # 2H-5H to go
    play(game, "draw", "wait")  # 8H on my waste, 2S under it
    f = race_columns(game)
    assert f["waste>work0"][NEAR] == pytest.approx(1 - 6 / 13)  # 8H onto 9S: 2H-7H to go
    assert f["waste>work0"][EXPOSED_NEAR] == pytest.approx(1 - 1 / 13)  # it uncovers 2S: AS first


def test_r4_2_a_foundation_move_that_lets_an_opponents_nertz_top_follow_feeds_it():
    rival = make_deck(["KS", "QS", "2H"], ["TS", "9C", "8S", "7S"])  # its Nertz top 2H
    game = new_game(CONFIG, [ME, rival])
    f = race_columns(game)
    assert f["nertz>foundation"][FEEDS] == pytest.approx(1 / 3)  # AH up: the rival's 2H fits after
    assert f["nertz>foundation"][TAKES] == 0  # an ace starts its own pile
    assert f["wait"][READY] == 0 and f["wait"][RIVAL_LEFT] == pytest.approx(3 / 13)
    assert all(v[FEEDS] == 0 and v[TAKES] == 0 for name, v in f.items() if name != "nertz>foundation")


def test_r6_a_foundation_move_takes_the_slot_an_opponents_nertz_top_needs():
    rival = make_deck(["KS", "QS", "3H"], ["TS", "9C", "8S", "7S"])  # its Nertz top 3H, as mine will be
    game = new_game(CONFIG, [ME, rival])
    play(game, "nertz>foundation", "wait")  # AH up
    f = race_columns(game)
    assert f["nertz>foundation"][FEEDS] == pytest.approx(1 / 3)  # 2H up lets the rival's 3H follow
    play(game, "nertz>foundation", "wait")  # 2H up: the one heart pile takes a 3H
    f = race_columns(game)
    assert f["wait"][READY] == pytest.approx(1 / 3)  # the rival's 3H fits now
    assert f["nertz>foundation"][TAKES] == pytest.approx(1 / 3)  # my 3H up: the rival's no longer fits
    assert f["nertz>foundation"][NEAR] == 1
    assert f["wait"][RIVAL_LEFT] == pytest.approx(3 / 13)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_race_columns_add_columns_and_change_no_other(seed):
    config = NertzConfig(num_players=4)
    env = NertzVectorEnv(8, seed=seed, **config.to_dict())
    player = agents.make("heuristic", config=config)
    obs, masks = env.reset()
    plain = F.ActionFeatures(config, lookahead=False, cycle=True, opponent=True, identity=True, follow=True)
    both = F.ActionFeatures(config, lookahead=False, cycle=True, opponent=True, identity=True, follow=True, race=True)
    seen = np.zeros(len(F.RACE_COLUMNS))
    for _ in range(150):
        o, m = obs.reshape(32, -1), masks.reshape(32, -1)
        (r1, a1, f1), (r2, a2, f2) = plain(o, m), both(o, m)
        assert (r1 == r2).all() and (a1 == a2).all() and (f1 == f2[:, : F.N_FOLLOW_FEATURES]).all()
        race = f2[:, list(F.RACE_COLUMNS)]
        moves_card = f2[:, [F.F_TO_FOUNDATION, F.F_TO_WORK, F.F_UNDER]].max(1) > 0
        assert ((race[:, 0] > 0) == moves_card).all()  # nearness exactly where a card moves
        assert ((race[:, 0] == 1) == (f2[:, F.F_FOUNDATION_READY] == 1)).all()  # 1 exactly where it fits now
        assert (race[f2[:, F.F_EXPOSES] == 0, 1] == 0).all()  # uncovered nearness only where a card is uncovered
        assert (race[f2[:, F.F_TO_FOUNDATION] == 0, 2:4] == 0).all()  # feeding and taking: foundation moves only
        seen += (race > 0).any(0)
        obs, masks, *_ = env.step(player.act_batch(o, m).reshape(8, 4))
    assert seen.all()  # each column set somewhere in play
