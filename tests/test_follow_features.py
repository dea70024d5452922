"""The follow-up columns of ``agents.features`` (``ActionFeatures(follow=True)``, ``agents._follow``):
what a card laid on a work pile lets another work pile do next (R4.3: build on it; R4.4: the pile
it leaves may empty; R4.2: the card it uncovers may fit a foundation), on an exact table (R10
fixed deal); and that they add columns without changing the others."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_deck, new_game, play

from nertz_env import agents
from nertz_env.agents import features as F
from nertz_env.config import NertzConfig
from nertz_env.vector import NertzVectorEnv

CONFIG = NertzConfig(num_players=2, nertz_pile_size=3, collision="seat", stall_ticks=10_000)
# My work piles 9S 7C 4D QC; my first DRAW shows 8H (over 2S).
ME = make_deck(["KD", "5C", "AH"], ["9S", "7C", "4D", "QC"], ["3D", "2S", "8H"])
RIVAL = make_deck(["KS", "QS", "2H"], ["TS", "9C", "8S", "7S"])
FOLLOWS, EMPTIES, EXPOSES = F.FOLLOW_COLUMNS


def follow_columns(game, player=0):
    obs, masks = game.obs[player : player + 1], game.masks[player : player + 1]
    rows, acts, feats = F.ActionFeatures(game.config, lookahead=False, follow=True)(obs, masks)
    assert feats.shape == (len(rows), F.N_FOLLOW_FEATURES)
    return {game.catalogue.names[a]: tuple(f[list(F.FOLLOW_COLUMNS)]) for a, f in zip(acts, feats)}


def test_r4_3_a_card_laid_where_another_piles_card_may_follow_and_empty_its_pile():
    game = new_game(CONFIG, [ME, RIVAL])
    play(game, "draw", "wait")
    f = follow_columns(game)
    assert f["waste>work0"] == (1, 1, 0)  # 8H onto 9S: then 7C onto 8H (R4.3), and work1 empties (R4.4)
    assert all(v == (0, 0, 0) for name, v in f.items() if name != "waste>work0")  # no card laid on a work pile
    play(game, "waste>work0", "wait")  # 8H on 9S; 2S on my waste
    f = follow_columns(game)
    assert f["work1>work0:1"] == (0, 0, 0)  # 7C onto 8H: nothing of another pile fits on 7C


def test_r4_2_a_follow_up_that_uncovers_a_card_for_a_foundation_exposes_it():
    me = make_deck(["KD", "5C", "AH"], ["3C", "2H", "9D", "QC"], ["3D", "7D", "AS", "4S", "6S", "2D"])
    game = new_game(CONFIG, [me, RIVAL])
    play(game, "nertz>foundation", "wait")  # AH up: 2H fits a foundation
    play(game, "draw", "wait")  # AS on my waste
    play(game, "waste>work1", "wait")  # AS onto 2H (R4.3): 2H is covered
    play(game, "draw", "wait")  # 2D on my waste
    f = follow_columns(game)
    assert f["waste>work0"] == (1, 0, 1)  # 2D onto 3C: then AS onto 2D uncovers 2H, which goes up


@pytest.mark.parametrize("seed", [1, 2])
def test_the_follow_columns_add_columns_and_change_no_other(seed):
    env = NertzVectorEnv(16, seed=seed, **CONFIG.to_dict())
    player = agents.make("heuristic", config=CONFIG)  # builds piles that random play seldom does
    obs, masks = env.reset()
    plain = F.ActionFeatures(CONFIG, lookahead=False, cycle=True, opponent=True, identity=True)
    both = F.ActionFeatures(CONFIG, lookahead=False, cycle=True, opponent=True, identity=True, follow=True)
    seen = np.zeros(3)
    for _ in range(150):
        o, m = obs.reshape(32, -1), masks.reshape(32, -1)
        (r1, a1, f1), (r2, a2, f2) = plain(o, m), both(o, m)
        assert (r1 == r2).all() and (a1 == a2).all() and (f1 == f2[:, : F.N_IDENTITY_FEATURES]).all()
        follow = f2[:, list(F.FOLLOW_COLUMNS)]
        assert (follow[f1[:, F.F_TO_WORK] == 0] == 0).all()  # only a card laid on a work pile
        assert (follow[:, 1:].max(1) <= follow[:, 0]).all()  # emptying or exposing is by a move that follows
        seen += (follow > 0).any(0)
        obs, masks, *_ = env.step(player.act_batch(o, m).reshape(16, 2))
    assert seen[:2].all()  # set somewhere in play (uncovering a card for a foundation is rarer: the exact table)
