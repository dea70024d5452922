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


def _shard(tmp_path, name: str, first: int, hands: int = 2, **changes) -> str:
    report = evaluate(AGENTS[:2], hands=hands, seed=3, progress=False, first_deal=first)
    report.update(changes)
    path = tmp_path / name
    path.write_text(json.dumps(report, default=float))
    return str(path)


def _refused(argv, capsys) -> str:
    capsys.readouterr()  # what came before, e.g. the rules engine's compile notice
    with pytest.raises(SystemExit) as stop:
        main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize(("text", "kind"), [("[1, 2, 3]", "list"), ("null", "null"), ('"a"', "str")])
def test_a_file_that_is_not_a_report_is_named(tmp_path, capsys, text, kind):
    """Before, ``[1,2,3]`` or ``null`` gave an AttributeError traceback."""
    (tmp_path / "odd.json").write_text(text)
    err = _refused([str(tmp_path / "odd.json"), "--out", str(tmp_path / "all.json")], capsys)
    assert f"odd.json is not a report of nertz eval --out: a JSON object expected, got {kind}" in err
    (tmp_path / "slim.json").write_text(json.dumps({"agents": ["a"], "config": {}, "mode": "duplicate"}))
    err = _refused([str(tmp_path / "slim.json"), "--out", str(tmp_path / "all.json")], capsys)
    assert "slim.json is not a full report of nertz eval --out: missing hands, elapsed_s" in err


def test_shards_with_a_gap_are_refused_naming_the_missing_deals(tmp_path, capsys):
    """Before, deals 0-1 and 10-11 merged into ``deals=4, first_deal=0``: a claim of deals 0-3."""
    a, b, c = _shard(tmp_path, "a.json", 0), _shard(tmp_path, "b.json", 10), _shard(tmp_path, "c.json", 4, hands=1)
    err = _refused([a, b, "--out", str(tmp_path / "all.json")], capsys)
    assert "the shards leave out deals 2-9 between deal 0 and deal 11" in err
    err = _refused([a, c, b, "--out", str(tmp_path / "all.json")], capsys)
    assert "leave out deals 2-3, 5-9 between" in err and not (tmp_path / "all.json").exists()
    later = _shard(tmp_path, "d.json", 12)  # deals 10-13: contiguous, though not from deal 0
    assert main([b, later, "--out", str(tmp_path / "all.json")]) == 0
    merged = json.loads((tmp_path / "all.json").read_text())
    assert merged["deals"] == 4 and merged["first_deal"] == 10 and "shard_versions" not in merged


def test_shards_of_other_versions_are_refused_or_listed(tmp_path, capsys):
    """The rules engine (nertz_env) and the shuffles (numpy) must match; Python, numba and
    openskill change no deal nor hand, and the merged report lists every shard's versions."""
    a = _shard(tmp_path, "a.json", 0)
    ours = json.loads((tmp_path / "a.json").read_text())["versions"]
    for key in ("nertz_env", "numpy"):
        other = _shard(tmp_path, f"{key}.json", 2, versions={**ours, key: "0.0.1"})
        err = _refused([a, other, "--out", str(tmp_path / "all.json")], capsys)
        assert f"{key}.json was played with {key} 0.0.1, {a} with {ours[key]}: only reports of the same" in err
    unrecorded = _shard(tmp_path, "none.json", 2, versions=None)
    assert "none.json does not record the nertz_env and numpy versions" in _refused(
        [a, unrecorded, "--out", str(tmp_path / "all.json")], capsys
    )
    other_python = _shard(tmp_path, "py.json", 2, versions={**ours, "python": "3.0.0"})
    assert main([a, other_python, "--out", str(tmp_path / "all.json")]) == 0
    merged = json.loads((tmp_path / "all.json").read_text())
    assert merged["shard_versions"] == [ours, {**ours, "python": "3.0.0"}] and merged["versions"] == ours
