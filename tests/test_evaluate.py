"""The evaluation harness: the duplicate format really replays each deal from every seat, a
recorded hand replays exactly with ``Game``, matches follow R8, and the interval code matches
known values."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from nertz_env import agents
from nertz_env.config import NertzConfig
from nertz_env.game import Game
from nertz_env.training import stats
from nertz_env.training.evaluate import deal_decks, evaluate, main, match_decks, match_winner, parse_rules, rate_pool


@pytest.fixture(scope="module")
def report():
    return evaluate(["greedy", "passive", "heuristic"], hands=6, seed=11, progress=False)


def test_duplicate_rotation_plays_every_deal_from_every_seat(report):
    by_deal: dict[int, list[dict]] = {}
    for rec in report["hands"]:
        by_deal.setdefault(rec["key"][0], []).append(rec)
    assert sorted(by_deal) == list(range(6))
    for recs in by_deal.values():
        assert sorted(r["key"][1] for r in recs) == [0, 1, 2]  # one hand per rotation
        for agent in range(3):  # every agent sat in every seat, so played every deck of the deal
            assert sorted(r["seats"].index(agent) for r in recs) == [0, 1, 2]
        for r in recs:
            rot = r["key"][1]
            assert r["seats"] == [(s - rot) % 3 for s in range(3)]
    assert report["hands_played"] == 18
    assert [row["hands"] for row in report["summary"]] == [18, 18, 18]


def test_a_recorded_hand_replays_with_game(report):
    """Each record names its deal and its stream seed: ``Game.reset(seed, decks)`` replays it."""
    config = NertzConfig(num_players=3)
    names = ["greedy", "passive", "heuristic"]
    for rec in report["hands"][:6]:
        deal, _ = rec["key"]
        game = Game(config)
        game.reset(seed=rec["seed"], decks=deal_decks(11, deal, 3).tolist())
        seats = [agents.make(names[k], config=config) for k in rec["seats"]]
        while not game.ended:
            game.step([a.act_batch(game.obs[p : p + 1], game.masks[p : p + 1])[0] for p, a in enumerate(seats)])
        assert game.scores.tolist() == rec["scores"]
        assert game.tick == rec["ticks"] and game.end_reason == rec["end_reason"]


def test_deals_are_fixed_by_seed_and_index():
    a, b = deal_decks(5, 3, 4), deal_decks(5, 3, 4)
    assert a.shape == (4, 52) and (a == b).all()
    assert all(sorted(row) == list(range(52)) for row in a.tolist())
    assert not (deal_decks(5, 4, 4) == a).all()


def test_summary_is_consistent(report):
    """Each agent's row is the mean of its hands' records (R7: the top score wins, a tie splits the
    win), inside its interval; each pair's score difference is the mean over the hands both played."""
    rows = {r["agent"]: r for r in report["summary"]}
    assert math.isclose(sum(r["win_share"] for r in rows.values()), 1.0)
    for r in rows.values():
        mine = [(h, h["seats"].index(r["index"])) for h in report["hands"]]
        shares = [(h["scores"][s] == max(h["scores"])) / h["scores"].count(max(h["scores"])) for h, s in mine]
        assert r["score"] == pytest.approx(np.mean([h["scores"][s] for h, s in mine]))
        assert r["win_share"] == pytest.approx(np.mean(shares))
        assert r["called"] == pytest.approx(np.mean([h["called"][s] for h, s in mine]))
        assert r["nertz_out"] == pytest.approx(np.mean([h["nertz_left"][s] == 0 for h, s in mine]))
        assert r["score_ci"][0] <= r["score"] <= r["score_ci"][1]
        assert r["win_ci"][0] <= r["win_share"] <= r["win_ci"][1]
        assert 0 <= r["called"] <= 1 and 0 <= r["nertz_out"] <= 1
    assert set(report["ratings"]) == {"greedy", "passive", "heuristic"}
    pairs = {(p["agent"], p["versus"]) for p in report["paired"]}
    assert pairs == {("greedy", "passive"), ("greedy", "heuristic"), ("passive", "heuristic")}
    for p in report["paired"]:
        assert p["hands"] == 18 and p["score_diff_ci"][0] <= p["score_diff"] <= p["score_diff_ci"][1]
        i, j = rows[p["agent"]]["index"], rows[p["versus"]]["index"]
        diffs = [h["scores"][h["seats"].index(i)] - h["scores"][h["seats"].index(j)] for h in report["hands"]]
        assert p["score_diff"] == pytest.approx(np.mean(diffs))


def test_calls_won_is_the_win_share_of_the_hands_an_agent_called(report):
    from nertz_env.training.stats import win_shares

    for r in report["summary"]:
        mine = [win_shares(h["scores"])[s] for h in report["hands"] for s, k in enumerate(h["seats"])
                if k == r["index"] and h["called"][s]]  # fmt: skip
        assert r["calls_won"] == (pytest.approx(sum(mine) / len(mine)) if mine else None)
    rows = {r["agent"]: r for r in report["summary"]}
    assert rows["passive"]["calls_won"] is None and rows["heuristic"]["calls_won"] is not None  # R4.6: a choice


def test_pool_tables_and_ratings():
    ratings = rate_pool(["heuristic", "greedy", "passive", "random", "greedy"], players_per_table=3, hands=12, seed=2)
    assert set(ratings) == {"heuristic", "greedy", "passive", "random", "greedy#2"}
    assert ratings["heuristic"][0] > ratings["random"][0]
    rep = evaluate(["greedy", "passive", "random", "heuristic"], players=2, hands=5, seed=1, progress=False)
    for rec in rep["hands"]:
        assert len(rec["seats"]) == 2 and len(set(rec["seats"])) == 2


def test_matches_follow_r8():
    rep = evaluate(["greedy", "passive"], hands=3, seed=4, matches=True, target_score=30, progress=False)
    assert len(rep["matches"]) == 6  # 3 matches x 2 rotations
    for m in rep["matches"]:
        totals = m["totals"]
        assert max(totals) >= 30 or m["capped"]
        winner_seat = m["seats"].index(m["winners"][0])
        assert totals[winner_seat] == max(totals)
        assert len(m["hand_scores"]) == m["hands"] and np.sum(m["hand_scores"], axis=0).tolist() == totals
    assert math.isclose(sum(r["match_win_share"] for r in rep["summary"]), 1.0)
    # The deals of a match are the same in both rotations, and a hand replays with Game.
    first = [h for h in rep["hands"] if h["key"][0] == 0]
    assert {h["key"][1] for h in first} == {0, 1}
    config, names = NertzConfig(num_players=2), ["greedy", "passive"]
    for rec in first[:3]:
        match, _, hand = rec["key"]
        game = Game(config)
        game.reset(seed=rec["seed"], decks=match_decks(4, match, hand, 2).tolist())
        seats = [agents.make(names[k], config=config) for k in rec["seats"]]
        while not game.ended:
            game.step([a.act_batch(game.obs[p : p + 1], game.masks[p : p + 1])[0] for p, a in enumerate(seats)])
        assert game.scores.tolist() == rec["scores"]


def test_match_tie_rules():
    """R8: the highest total wins; a tie goes to the higher last hand; else another hand."""
    totals, last = np.array([100, 104, 104]), np.array([5, 9, 3])
    assert match_winner(totals, last, [0, 1, 2]) == [1]
    assert match_winner(np.array([104, 104, 90]), np.array([4, 4, 0]), [0, 1, 2]) == [0, 1]
    assert match_winner(np.array([120, 130, 140]), np.array([0, 0, 0]), [0, 1]) == [1]


def test_cli_writes_json(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["--agents", "greedy", "random", "--hands", "3", "--quiet", "--out", str(out),
                 "--rules", "stock_draw=1", "nertz_pile_size=5"]) == 0
    text = capsys.readouterr().out
    assert "greedy" in text and "win share" in text
    data = json.loads(out.read_text())
    assert data["config"]["stock_draw"] == 1 and data["config"]["nertz_pile_size"] == 5
    assert data["versions"]["numpy"] == np.__version__
    assert len(data["hands"]) == 6 and data["seed"] == 0
    assert parse_rules(["speed=1,2", "auto_call=true"]) == {"speed": (1, 2), "auto_call": True}


# --- intervals against known values ----------------------------------------------------------


def test_wilson_interval_known_values():
    lo, hi = stats.wilson_interval(50, 100)
    assert (round(lo, 4), round(hi, 4)) == (0.4038, 0.5962)
    lo, hi = stats.wilson_interval(0, 10)
    assert lo == 0.0 and round(hi, 4) == 0.2775
    lo, hi = stats.wilson_interval(81, 263)  # the textbook example (Wilson 1927 style tables)
    assert (round(lo, 4), round(hi, 4)) == (0.2553, 0.3662)


def test_t_and_normal_quantiles():
    assert round(stats.normal_quantile(0.975), 6) == 1.959964
    for p, df, t in ((0.975, 1, 12.7062), (0.975, 9, 2.2622), (0.975, 30, 2.0423), (0.995, 4, 4.6041),
                     (0.95, 20, 1.7247)):
        assert round(stats.t_quantile(p, df), 4) == t
    assert math.isclose(stats.t_quantile(0.025, 9), -stats.t_quantile(0.975, 9))


def test_mean_intervals():
    mean, lo, hi = stats.mean_interval([1, 2, 3, 4, 5])
    assert mean == 3 and (round(lo, 4), round(hi, 4)) == (1.0368, 4.9632)
    mean, lo, hi = stats.normal_interval([1, 2, 3, 4, 5])
    assert (round(lo, 4), round(hi, 4)) == (1.6141, 4.3859)
    assert math.isnan(stats.mean_interval([2.0])[1])


def test_win_shares_split_ties():
    assert stats.win_shares([3, 7, 7, 1]) == [0.0, 0.5, 0.5, 0.0]
    ratings = stats.rate_hands([(["a", "b"], [5, 1])] * 5)
    assert ratings["a"][0] > ratings["b"][0]
    with pytest.raises(ValueError, match="sits twice"):
        stats.rate_hands([(["a", "a"], [1, 2])])
