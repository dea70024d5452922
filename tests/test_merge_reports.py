"""Shards of a duplicate evaluation (``--first-deal``) merged into the report of one whole run."""

from __future__ import annotations

import json

import pytest

from nertz_env.training.evaluate import evaluate
from nertz_env.training.merge_reports import main, merge

AGENTS = ["heuristic", "greedy", "greedy", "passive"]


def _without_timing(report: dict) -> dict:
    return {k: v for k, v in report.items() if k not in ("elapsed_s", "ticks_per_s", "shards", "versions")}


def test_shards_merge_into_the_whole_run():
    """Deals 0-2 and 3-4 as two shards (given in either order) make exactly the report of deals
    0-4 played at once: every hand, summary row, paired difference, interval and rating."""
    whole = evaluate(AGENTS, hands=5, seed=11, progress=False)
    first = evaluate(AGENTS, hands=3, seed=11, progress=False)
    second = evaluate(AGENTS, hands=2, seed=11, progress=False, first_deal=3)
    assert {tuple(h["key"])[0] for h in second["hands"]} == {3, 4}
    merged = merge([second, first])
    assert merged["shards"] == 2 and merged["deals"] == 5 and merged["first_deal"] == 0
    assert json.loads(json.dumps(_without_timing(merged), default=float)) == json.loads(
        json.dumps(_without_timing(whole), default=float)
    )


def test_merge_refuses_what_is_not_one_run():
    a = evaluate(AGENTS, hands=2, seed=11, progress=False)
    with pytest.raises(ValueError, match="repeats deal 0"):
        merge([a, a])
    other_seed = evaluate(AGENTS, hands=1, seed=12, progress=False, first_deal=2)
    with pytest.raises(ValueError, match="differs from report 0 in 'seed'"):
        merge([a, other_seed])
    matches = evaluate(AGENTS[:2], hands=1, seed=11, progress=False, matches=True, target_score=5)
    with pytest.raises(ValueError, match="only duplicate deals merge"):
        merge([matches])
    with pytest.raises(ValueError, match="first_deal=3 shards duplicate deals"):
        evaluate(AGENTS[:2], hands=1, seed=11, progress=False, matches=True, first_deal=3)
    with pytest.raises(ValueError, match="invalid first_deal=-1"):
        evaluate(AGENTS, hands=1, first_deal=-1, progress=False)


def test_the_cli_merges_files_and_names_a_bad_one(tmp_path, capsys):
    paths = []
    for first, hands in ((0, 2), (2, 1)):
        report = evaluate(AGENTS, hands=hands, seed=3, progress=False, first_deal=first)
        paths.append(tmp_path / f"s{first}.json")
        paths[-1].write_text(json.dumps(report, default=float))
    assert main([str(p) for p in paths] + ["--out", str(tmp_path / "all.json")]) == 0
    assert json.loads((tmp_path / "all.json").read_text())["deals"] == 3
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(SystemExit):
        main([str(tmp_path / "bad.json"), "--out", str(tmp_path / "x.json")])
    assert "JSONDecodeError" in capsys.readouterr().err
