"""The stock-cycle columns of ``agents.features`` (``ActionFeatures(cycle=True)``): what a DRAW
turns up once the viewer knows its stock (R4.1, R9's memory), on an exact table (R10 fixed
deal), and that they add columns without changing the others."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_deck, needs_torch, new_game, play

from nertz_env.agents import features as F
from nertz_env.agents.policy import build_scorer, load_network, save_policy
from nertz_env.config import NertzConfig
from nertz_env.layout import ObservationLayout
from nertz_env.vector import NertzVectorEnv

CONFIG = NertzConfig(num_players=2, nertz_pile_size=3, collision="seat", stall_ticks=10_000)
# The Nertz pile shows AH; the stock turns 3D, 7D, 2H first (2H on top of the waste after a DRAW).
ME = make_deck(["KD", "5C", "AH"], ["9S", "8H", "4C", "QC"], ["3D", "7D", "2H"])
RIVAL = make_deck(["KS", "QS", "JH"], ["TS", "9C", "8S", "7S"])
STOCK = 52 - 3 - 4


def cycle_features(game, player=0):
    obs, masks = game.obs[player : player + 1], game.masks[player : player + 1]
    rows, acts, feats = F.ActionFeatures(game.config, lookahead=False, cycle=True)(obs, masks)
    assert feats.shape == (len(rows), F.N_CYCLE_FEATURES)
    return {game.catalogue.names[a]: f for a, f in zip(acts, feats)}


def test_r9_an_unknown_stock_leaves_the_cycle_columns_at_zero():
    game = new_game(CONFIG, [ME, RIVAL])
    for move in cycle_features(game).values():
        assert (move[list(F.CYCLE_COLUMNS)] == 0).all()


def test_r4_1_a_draw_of_a_known_stock_shows_the_card_it_turns_up():
    game = new_game(CONFIG, [ME, RIVAL])
    play(game, "nertz>foundation", "wait")  # AH up: 2H now fits a foundation
    for _ in range(STOCK // 3):  # turn the whole stock once
        play(game, "draw", "wait")
    flip = cycle_features(game)["draw"]  # the stock is empty: DRAW turns the waste over
    assert flip[F.F_STOCK_KNOWN] == 1 and flip[F.F_TURNED_TO_FOUNDATION] == flip[F.F_DRAWS_TO_USEFUL] == 0
    play(game, "draw", "wait")
    assert ObservationLayout(CONFIG).view(game.obs[0], "own_stock_known")[0] == 1
    f = cycle_features(game)
    draw = f["draw"]
    assert draw[F.F_STOCK_KNOWN] == 1 and draw[F.F_TURNED_TO_FOUNDATION] == 1  # 2H onto AH (R4.2)
    assert draw[F.F_DRAWS_TO_USEFUL] == 1 and draw[F.F_COVERS_PLAYABLE] == 0  # the waste is empty
    assert draw[F.F_CYCLE_AFTER] > 0
    assert f["wait"][F.F_STOCK_KNOWN] == 1 and f["wait"][F.F_CYCLE_GAIN] == 0
    play(game, "draw", "wait")  # 2H shows on the waste; the next DRAW would cover it
    f = cycle_features(game)
    assert f["draw"][F.F_COVERS_PLAYABLE] == 1
    assert f["waste>foundation"][F.F_STOCK_KNOWN] == 1


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_cycle_adds_columns_and_changes_no_other(seed):
    env = NertzVectorEnv(16, seed=seed, **CONFIG.to_dict())
    obs, masks = env.reset()
    known = 0
    for _ in range(60):
        obs, masks, *_ = env.step(env.sample_actions())
        o, m = obs.reshape(32, -1), masks.reshape(32, -1)
        rows, acts, bare = F.ActionFeatures(CONFIG, lookahead=False)(o, m)
        rows2, acts2, full = F.ActionFeatures(CONFIG, lookahead=False, cycle=True)(o, m)
        assert (rows == rows2).all() and (acts == acts2).all() and bare.shape[1] == F.N_FEATURES
        assert np.array_equal(full[:, : F.N_FEATURES], bare) and np.isfinite(full).all()
        known += int(full[:, F.F_STOCK_KNOWN].sum())
    assert known > 0


@needs_torch
def test_a_policy_keeps_its_cycle_columns_through_a_file(tmp_path):
    net = build_scorer(CONFIG, (16,), 8, lookahead=False, cycle=True)
    assert net.move_in.in_features == F.N_CYCLE_FEATURES
    path = save_policy(tmp_path / "p.pt", net, CONFIG, (16,), action_hidden=8)
    loaded, _, blob = load_network(path)
    assert blob["cycle"] is True and loaded.cycle and loaded.features.width == F.N_CYCLE_FEATURES
    plain = build_scorer(CONFIG, (16,), 8, lookahead=False)
    assert not plain.cycle and plain.move_in.in_features == F.N_FEATURES
