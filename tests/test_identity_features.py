"""The card identity columns of ``agents.features`` (``ActionFeatures(identity=True)``): one column
per card, 1 on the card a move takes (the bottom card of a block; none for WAIT, DRAW and CALL),
on an exact table (R10 fixed deal); that they add columns without changing the others; and that
a policy saves and loads them (and the opponent and follow-up columns), and ``--init-policy`` refuses a network
that differs in them."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_deck, needs_torch, new_game, play

from nertz_env.agents import features as F
from nertz_env.agents.policy import build_scorer, load_network, save_policy
from nertz_env.cards import parse_card
from nertz_env.config import NertzConfig
from nertz_env.vector import NertzVectorEnv

CONFIG = NertzConfig(num_players=2, nertz_pile_size=3, collision="seat", stall_ticks=10_000)
# My Nertz pile shows AH over 5C; my work piles 9S 8H 4C QC; my first DRAW shows 3H.
ME = make_deck(["KD", "5C", "AH"], ["9S", "8H", "4C", "QC"], ["3D", "7D", "3H"])
RIVAL = make_deck(["KS", "QS", "2H"], ["TS", "9C", "8S", "7S"])


def moved_cards(game, player=0):
    """``{move name: the card names whose identity column is 1}`` for ``player``'s legal moves."""
    obs, masks = game.obs[player : player + 1], game.masks[player : player + 1]
    rows, acts, feats = F.ActionFeatures(game.config, lookahead=False, identity=True)(obs, masks)
    assert feats.shape == (len(rows), F.N_IDENTITY_FEATURES)
    assert set(np.unique(feats[:, list(F.IDENTITY_COLUMNS)])) <= {0.0, 1.0}
    names = "A23456789TJQK"
    return {
        game.catalogue.names[a]: {names[c % 13] + "CDHS"[c // 13] for c in np.flatnonzero(f[F.N_OPPONENT_FEATURES :])}
        for a, f in zip(acts, feats)
    }


def test_the_identity_column_is_the_card_each_move_takes():
    assert parse_card("AH") == 26 and parse_card("3H") == 28  # the columns' order: suits C D H S, ranks A to K
    game = new_game(CONFIG, [ME, RIVAL])
    moves = moved_cards(game)
    assert moves["nertz>foundation"] == {"AH"}
    assert moves["work1>work0:1"] == {"8H"} and moves["wait"] == moves["draw"] == set()
    play(game, "nertz>foundation", "wait")  # AH up; 5C shows on my Nertz pile
    play(game, "draw", "wait")  # 3H on my waste
    moves = moved_cards(game)
    assert moves["waste>work2"] == {"3H"}  # 3H onto 4C (R4.3)
    assert set(moves) == {"draw", "wait", "waste>work2", "work1>work0:1"} and moves["work1>work0:1"] == {"8H"}


@pytest.mark.parametrize("seed", [1, 2])
def test_the_identity_columns_add_columns_and_change_no_other(seed):
    env = NertzVectorEnv(16, seed=seed, **CONFIG.to_dict())
    obs, masks = env.reset()
    plain = F.ActionFeatures(CONFIG, lookahead=False, cycle=True, opponent=True)
    both = F.ActionFeatures(CONFIG, lookahead=False, cycle=True, opponent=True, identity=True)
    seen = np.zeros(52)
    for _ in range(80):
        o, m = obs.reshape(32, -1), masks.reshape(32, -1)
        (r1, a1, f1), (r2, a2, f2) = plain(o, m), both(o, m)
        assert (r1 == r2).all() and (a1 == a2).all() and (f1 == f2[:, : F.N_OPPONENT_FEATURES]).all()
        one_hot = f2[:, list(F.IDENTITY_COLUMNS)]
        moves_a_card = f1[:, [F.F_TO_FOUNDATION, F.F_TO_WORK, F.F_UNDER]].sum(1) > 0
        assert (one_hot.sum(1) == moves_a_card).all()  # one card for each move that takes one, else none
        seen += one_hot.any(0)
        obs, masks, *_ = env.step(env.sample_actions())
    assert (seen > 0).sum() > 40  # most cards are moved somewhere in play


def test_identity_alone_leaves_the_cycle_and_opponent_columns_zero():
    game = new_game(CONFIG, [ME, RIVAL])
    rows, acts, feats = F.ActionFeatures(CONFIG, lookahead=False, identity=True)(game.obs[:1], game.masks[:1])
    assert (feats[:, list(F.CYCLE_COLUMNS + F.OPPONENT_COLUMNS)] == 0).all()
    dropped = F.ActionFeatures(CONFIG, lookahead=False, identity=True, drop_features=("identity",))
    assert (dropped(game.obs[:1], game.masks[:1])[2][:, list(F.IDENTITY_COLUMNS)] == 0).all()


@pytest.mark.parametrize(
    ("flag", "width"),
    [("opponent", F.N_OPPONENT_FEATURES), ("identity", F.N_IDENTITY_FEATURES), ("follow", F.N_FOLLOW_FEATURES),
     ("race", F.N_RACE_FEATURES)],  # fmt: skip
)
@needs_torch
def test_a_policy_saves_and_loads_its_columns_and_is_refused_as_a_start_without_them(tmp_path, flag, width):
    from training.init_policy import start_from

    net = build_scorer(CONFIG, (16,), 8, lookahead=False, **{flag: True})
    assert getattr(net, flag) and net.move_in.in_features == width
    save_policy(tmp_path / "p.pt", net, CONFIG, (16,), action_hidden=8)
    loaded, _, blob = load_network(tmp_path / "p.pt")
    assert blob[flag] is True and getattr(loaded, flag) and loaded.features.width == width
    plain = build_scorer(CONFIG, (16,), 8, lookahead=False)
    assert not getattr(plain, flag)
    with pytest.raises(ValueError, match=f"{flag} features True"):
        start_from(plain, str(tmp_path / "p.pt"), CONFIG)
