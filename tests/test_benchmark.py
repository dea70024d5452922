"""The benchmark: named tasks, the evaluation protocol and its JSON, intervals over deals (the unit
of pairing in the duplicate format), the exploitability proxy's arithmetic, and the results table."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from nertz_env import tasks
from nertz_env.training import stats
from nertz_env.training.report import summarize


def test_every_task_names_its_rules_players_and_evaluation():
    assert {"nertz-2p", "nertz-4p", "nertz-partners-4p", "nertz-builds-4p"} <= set(tasks.names())
    assert tasks.get("nertz-2p").num_players == 2
    assert tasks.get("nertz-partners-4p").partners and tasks.get("nertz-partners-4p").num_players == 4
    assert tasks.get("nertz-builds-4p").config.nertz_builds
    for name in tasks.names():
        t = tasks.get(name)
        assert t.pool == ("greedy", "heuristic", "heuristic:depth=3")
        assert t.eval_deals >= 2 and t.agent_steps > 0 and t.version >= 1
        assert json.loads(json.dumps(t.to_dict()))["name"] == name


@pytest.mark.parametrize("bad", ["nertz-5p", "", None, "NERTZ-4P"])
def test_an_unknown_task_is_an_error_naming_the_known_ones(bad):
    with pytest.raises(ValueError, match="unknown benchmark task") as err:
        tasks.get(bad)
    for name in tasks.names():
        assert name in str(err.value)


def test_clustered_interval_matches_a_hand_computation():
    # Three deals of two hands each: deal means 0.5, 1.0, 0.0; overall mean 0.5.
    groups = [[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]]
    mean, lo, hi = stats.clustered_interval(groups)
    # Equal groups: the t interval over the deal means, sd = 0.5, t(0.975, 2) = 4.302653.
    half = 4.302653 * 0.5 / math.sqrt(3)
    assert mean == pytest.approx(0.5)
    assert (lo, hi) == pytest.approx((0.5 - half, 0.5 + half), abs=1e-6)
    assert stats.clustered_interval(groups)[1:] == pytest.approx(stats.mean_interval([0.5, 1.0, 0.0])[1:])
    # Unequal groups: the cluster-robust variance G/(G-1) * sum (S_g - mean n_g)^2 / N^2.
    groups = [[2.0], [0.0, 1.0, 3.0]]  # mean 6/4 = 1.5; residuals 2 - 1.5 = 0.5 and 4 - 4.5 = -0.5
    var = 2 / 1 * (0.25 + 0.25) / 16
    mean, lo, hi = stats.clustered_interval(groups)
    assert mean == pytest.approx(1.5)
    assert hi - mean == pytest.approx(12.706205 * math.sqrt(var), rel=1e-6)
    assert stats.clustered_interval([[0.9, 1.0], [1.0, 1.0], [0.2, 0.1]], bounds=(0.0, 1.0))[2] <= 1.0
    assert all(math.isnan(x) for x in stats.clustered_interval([[1.0, 2.0]])[1:])


def test_per_deal_interval_is_wider_than_the_naive_one_on_correlated_hands():
    rng = np.random.default_rng(0)
    # Correlated rotations: a deal is good or bad for the agent in all four of its rotations.
    deals = rng.random(200) < 0.3
    groups = [[float(w)] * 4 for w in deals]
    _, lo, hi = stats.clustered_interval(groups, bounds=(0.0, 1.0))
    wins, n = sum(sum(g) for g in groups), 4 * len(groups)
    w_lo, w_hi = stats.wilson_interval(wins, n)
    assert (hi - lo) > 1.8 * (w_hi - w_lo)  # four perfectly correlated hands: twice as wide (sqrt 4)


def _hand(deal, rotation, seats, scores):
    return {"key": [deal, rotation], "seats": seats, "scores": scores, "nertz_left": [1] * len(seats),
            "called": [False] * len(seats), "on_foundations": [0] * len(seats), "ticks": 10,
            "races_won": [0] * len(seats), "races_lost": [0] * len(seats)}


def test_the_harness_reports_shares_with_intervals_over_deals():
    # Two agents, two seats, 6 deals x 2 rotations. Agent 0 wins both rotations of deals 0-2 and
    # loses both of deals 3-5: per-deal shares 1,1,1,0,0,0.
    records = []
    for d in range(6):
        for r in range(2):
            seats = [0, 1] if r == 0 else [1, 0]
            mine = 10 if d < 3 else 0
            scores = [mine, 5] if r == 0 else [5, mine]
            records.append(_hand(d, r, seats, scores))
    row = summarize(records, ["a", "b"])[0]
    # The Wilson interval at the effective size p (1 - p) / var = 0.25 / (0.3 / 6) = 5 deals, with
    # t(0.975, 5): inside [0, 1] where the t interval over deals, +-0.57, would be clipped.
    z = stats.t_quantile(0.975, 5)
    centre, half = 0.5, z * math.sqrt(0.25 / 5 + z * z / 100) / (1 + z * z / 5)
    assert row["win_share"] == pytest.approx(0.5)
    assert row["win_ci"] == pytest.approx([centre - half, centre + half])
    assert stats.mean_interval([1, 1, 1, 0, 0, 0])[2] > 1.0
    naive = stats.wilson_interval(6, 12)
    assert row["win_ci"][1] - row["win_ci"][0] > naive[1] - naive[0]
    assert row["deals"] == 6


def test_protocol_json_and_cross_play():
    from nertz_env.training.benchmark import SCHEMA, protocol

    rec = protocol("nertz-2p", ["greedy", "random"], deals=4, pool=["passive", "greedy"])
    assert rec["schema"] == SCHEMA and rec["task"]["name"] == "nertz-2p"
    assert rec["seed"] == tasks.get("nertz-2p").eval_seed
    assert [(r["agent"], r["opponent"]) for r in rec["results"]] == [
        ("greedy", "passive"), ("greedy", "greedy"), ("random", "passive"), ("random", "greedy")]
    assert [(r["agent"], r["opponent"]) for r in rec["cross_play"]] == [("greedy", "random"), ("random", "greedy")]
    for r in rec["results"] + rec["cross_play"]:
        assert r["deals"] == 4 and r["hands"] == 8 and r["even_share"] == 0.5
        for key, ci in (("score", "score_ci"), ("win_share", "win_ci"), ("margin", "margin_ci")):
            lo, hi = r[ci]  # four deals: every interval has a spread to measure
            assert math.isfinite(lo) and math.isfinite(hi) and lo <= r[key] <= hi
    by = {(r["agent"], r["opponent"]): r for r in rec["results"]}
    assert by["greedy", "passive"]["win_share"] > 0.9 and by["greedy", "passive"]["margin"] > 0
    assert by["random", "passive"]["win_share"] < by["greedy", "passive"]["win_share"]
    json.dumps(rec)


def test_protocol_partners_scores_the_team():
    from nertz_env.training.benchmark import lineup, margins, protocol

    task = tasks.get("nertz-partners-4p")
    assert lineup(task, "A", "X") == ["A", "X", "A", "X"]
    hands = [{"key": [0, 1], "seats": [3, 0, 1, 2], "scores": [1, 5, 2, 7]}]  # agents 0 and 2 in seats 1 and 3
    assert margins(hands, partners=True) == [(0, (5 + 7) - (1 + 2))]
    assert margins([{"key": [4, 0], "seats": [1, 2, 0, 3], "scores": [3, 6, 9, 0]}], partners=False) == [(4, 6.0)]
    rec = protocol(task, ["greedy"], deals=2, pool=["passive"])
    assert rec["results"][0]["even_share"] == 0.5 and rec["results"][0]["win_share"] > 0.9


def test_protocol_rejects_bad_input():
    from nertz_env.training.benchmark import protocol

    with pytest.raises(ValueError, match="known tasks are"):
        protocol("chess", ["greedy"])
    with pytest.raises(ValueError, match=r"invalid deals=1: accepted an integer >= 2 \(intervals are over deals\)"):
        protocol("nertz-2p", ["greedy"], deals=1)
    with pytest.raises(ValueError, match=r"the protocol needs one or more agent specs .*, got \[\]"):
        protocol("nertz-2p", [])
    # a spec no agent reads fails before any row plays, naming the task (a Task takes any strings:
    # nertz_env sits below the agents), not after the rows before it have been played
    task = tasks.Task("custom", 1, "a pool with a bad spec", pool=("greedy", "heuristic:depth=9"))
    with pytest.raises(ValueError, match="task custom: agent spec 'heuristic:depth=9'"):
        protocol(task, ["greedy"], deals=2)


def test_cli_lists_tasks_and_names_them_on_a_bad_one(capsys):
    from nertz_env.training.cli import main

    assert main(["benchmark", "tasks"]) == 0
    assert "nertz-partners-4p" in capsys.readouterr().out
    with pytest.raises(SystemExit) as err:
        main(["benchmark", "eval", "--task", "nertz-9p", "--agent", "greedy"])
    assert err.value.code == 2
    known = f"known tasks are {', '.join(tasks.names())}"
    assert f"nertz benchmark: error: unknown benchmark task 'nertz-9p': {known}" in capsys.readouterr().err


def test_exploit_score_gain_is_paired_by_deal():
    from nertz_env.training.exploit import per_seat, score_gain

    hands = [{"key": [d, r], "seats": [(r + s) % 4 for s in range(4)], "scores": [d + s for s in range(4)]}
             for d in range(3) for r in range(4)]
    assert per_seat(hands, False, 0)[:2] == [(0, 0.0), (0, 3.0)]
    assert len(per_seat(hands, True, None)) == 24 and per_seat(hands, True, None)[0] == (0, 2.0)
    br = [(0, 5.0), (1, 7.0), (2, 3.0)]
    frozen = [(0, 4.0), (0, 2.0), (1, 6.0), (2, 3.0)]
    gain, ci = score_gain(br, frozen)  # per deal 2, 1, 0
    assert gain == pytest.approx(1.0)
    assert ci == pytest.approx(list(stats.mean_interval([2.0, 1.0, 0.0])[1:]))


def test_table_marks_every_missing_row_with_its_reason_and_command(tmp_path):
    from nertz_env.training import bench_table

    page = tmp_path / "page.md"
    page.write_text(f"intro\n{bench_table.START}\nold\n{bench_table.END}\nafter\n")
    bench_table.write_page(page, bench_table.table({}, "not run: test"))
    text = page.read_text()
    assert "old" not in text and text.startswith("intro") and text.rstrip().endswith("after")
    rows = [line for line in text.splitlines() if line.startswith("| nertz")]
    assert len(rows) == len(tasks.names()) * 4 * 3
    assert all("not run: test" in r and "python -m nertz_env.training.reference --task" in r for r in rows)
    assert all(r.count("|") == rows[0].count("|") for r in rows)
    cut = tmp_path / "cut.md"  # the end line missing: refused, and nothing after the start is dropped
    cut.write_text(f"intro\n{bench_table.START}\nold\nafter\n")
    with pytest.raises(ValueError, match="has no .* lines to write the table between"):
        bench_table.write_page(cut, "new")
    assert cut.read_text() == f"intro\n{bench_table.START}\nold\nafter\n"


def test_cli_eval_writes_the_protocol_json(tmp_path, capsys):
    from nertz_env.training.benchmark import SCHEMA, main

    out = tmp_path / "r.json"
    assert main(["eval", "--task", "nertz-2p", "--agent", "greedy", "--deals", "2", "--quiet", "--out", str(out)]) == 0
    rec = json.loads(out.read_text())
    assert rec["schema"] == SCHEMA and [r["opponent"] for r in rec["results"]] == list(tasks.POOL)
    assert rec["cross_play"] == [] and "nertz-2p v1" in capsys.readouterr().out


def test_cli_exploit_names_the_known_tasks_on_a_bad_one(capsys):
    pytest.importorskip("torch", reason="the best responder trains with torch (extra: training)")
    from nertz_env.training.cli import main

    with pytest.raises(SystemExit) as err:
        main(["benchmark", "exploit", "--task", "go", "--agent", "greedy"])
    known = f"known tasks are {', '.join(tasks.names())}"
    assert err.value.code == 2
    assert f"nertz benchmark exploit: error: unknown benchmark task 'go': {known}" in capsys.readouterr().err
