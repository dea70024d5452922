"""training.learning_results: harness reports kept without their hands, and the table built from them."""

import json

import pytest

from nertz_env.training import learning_results
from nertz_env.training.evaluate import evaluate


@pytest.fixture(scope="module")
def report():
    return evaluate(["greedy", "random", "random"], hands=3, seed=4, progress=False)


def test_a_kept_report_gives_its_row_of_the_table(report, tmp_path, capsys):
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    folder = tmp_path / "kept"
    assert learning_results.main(["--add", str(path), "--name", "greedy_3", "--note", "a test",
                                  "--folder", str(folder)]) == 0  # fmt: skip
    kept = json.loads((folder / "greedy_3.json").read_text())
    assert "hands" not in kept and kept["note"] == "a test" and kept["paired"] == report["paired"]
    out = capsys.readouterr().out
    me = report["summary"][0]
    assert f"| greedy_3 | a test | 3 (seed 4) | {me['win_share']:.3f} " in out
    diffs = [p["score_diff"] for p in report["paired"] if p["agent"] == "greedy"]
    assert len(diffs) == 2 and all(f"{d:+.2f} [" in out for d in diffs)


def test_what_is_not_a_report_is_refused(tmp_path, capsys):
    with pytest.raises(ValueError, match="not a harness report"):
        learning_results.slim({"agents": []}, "x")
    with pytest.raises(SystemExit) as stop:
        learning_results.main(["--add", str(tmp_path / "r.json"), "--folder", str(tmp_path)])
    assert stop.value.code == 2 and "error: --add needs --name" in capsys.readouterr().err


def test_a_missing_or_foreign_report_is_one_line_error(tmp_path, capsys):
    missing = tmp_path / "none.json"
    with pytest.raises(SystemExit) as exc:
        learning_results.main(["--add", str(missing), "--name", "x", "--folder", str(tmp_path)])
    assert exc.value.code == 2 and f"--add {missing}" in capsys.readouterr().err
    foreign = tmp_path / "foreign.json"
    foreign.write_text(json.dumps({"agents": []}))
    with pytest.raises(SystemExit):
        learning_results.main(["--add", str(foreign), "--name", "x", "--folder", str(tmp_path)])
    assert "not a harness report" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


def test_the_stored_table_reads_every_kept_report():
    rows = learning_results.table().splitlines()[2:]
    assert len(rows) == len(list(learning_results.FOLDER.glob("*.json"))) >= 3


def test_the_research_log_holds_the_table_of_every_stored_report():
    page = learning_results.PAGE.read_text()
    assert learning_results.with_table(page, learning_results.table()) == page, (
        "docs/research-log.md's table differs from docs/learning/: run "
        "python -m nertz_env.training.learning_results --write docs/research-log.md"
    )
    assert learning_results.main(["--check", str(learning_results.PAGE)]) == 0


def test_write_replaces_the_table_and_nothing_else(report, tmp_path, capsys):
    folder = tmp_path / "kept"
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    learning_results.main(["--add", str(path), "--name", "greedy_3", "--note", "n", "--folder", str(folder)])
    page = tmp_path / "log.md"
    old = f"{learning_results.HEADER} old |\n|---|\n| stale | row |"
    marked = f"{learning_results.START}\n{old}\n{learning_results.END}"
    page.write_text(f"# Log\n\nBefore.\n\n{marked}\n\nAfter.\n")
    args = ["--folder", str(folder)]
    assert learning_results.main([*args, "--check", str(page)]) == 1
    assert "differs" in capsys.readouterr().err
    assert learning_results.main([*args, "--write", str(page)]) == 0
    text = page.read_text()
    fresh = learning_results.table(folder)
    assert text == f"# Log\n\nBefore.\n\n{learning_results.START}\n{fresh}\n{learning_results.END}\n\nAfter.\n"
    assert "| greedy_3 | n |" in text and "stale" not in text
    assert learning_results.main([*args, "--check", str(page)]) == 0


def test_a_page_without_the_table_is_refused(tmp_path, capsys):
    page = tmp_path / "log.md"
    for text in ("# no table here\n", f"# its end line missing\n{learning_results.START}\n| run |\n"):
        page.write_text(text)
        for flag in ("--write", "--check"):
            with pytest.raises(SystemExit) as exc:
                learning_results.main([flag, str(page)])
            assert exc.value.code == 2 and "no table of learned players" in capsys.readouterr().err
        assert page.read_text() == text
    with pytest.raises(SystemExit) as exc:
        learning_results.main(["--check", str(tmp_path / "missing.md")])
    assert exc.value.code == 2 and "missing.md" in capsys.readouterr().err


def _stored(folder, name, first, win, deals=10_000, seed=2032, **changes):
    """A kept report of ``first`` against three ``heuristic:depth=3`` with win share ``win``."""
    agents = [first, "heuristic:depth=3", "heuristic:depth=3#2", "heuristic:depth=3#3"]
    summary = [{"agent": a, "win_share": w, "win_ci": [w - 0.004, w + 0.004]}
               for a, w in zip(agents, [win, *[(1 - win) / 3] * 3])]  # fmt: skip
    report = {"note": name, "agents": agents, "specs": [first, *["heuristic:depth=3"] * 3], "deals": deals,
              "seed": seed, "players": 4, "first_deal": 0, "summary": summary, "paired": []}  # fmt: skip
    report.update(changes)
    (folder / f"{name}.json").write_text(json.dumps(report))


def test_the_plot_draws_the_search_free_trained_players_of_the_standard_evaluation(tmp_path, capsys):
    _stored(tmp_path, "recipe_seed1", "policy:path=runs/a/policy.pt", 0.262)
    _stored(tmp_path, "recipe_cloning_only", "policy:path=runs/a/clone.pt", 0.215)
    _stored(tmp_path, "shipped", "ppo", 0.264)
    _stored(tmp_path, "called_by_rule", "ppo:call=ahead", 0.265)  # a rule put in: not the network's play
    _stored(tmp_path, "other_seed", "policy:path=runs/a/policy.pt", 0.267, seed=2041)
    _stored(tmp_path, "fewer_deals", "policy:path=runs/a/policy.pt", 0.270, deals=4000)
    _stored(tmp_path, "the_search", "heuristic:depth=3,wait=soon", 0.259)
    _stored(tmp_path, "learned_search", "rollout", 0.287)
    _stored(tmp_path, "clone_shifted", "offset-policy(path=runs/a/clone.pt, offsets=draw=-2)", 0.249)
    # the title's evaluation only: three heuristic:depth=3 at four players, from deal 0
    _stored(tmp_path, "other_table", "policy:path=runs/a/policy.pt", 0.3, specs=["policy:path=runs/a/policy.pt",
            "greedy", "greedy", "greedy"])  # fmt: skip
    _stored(tmp_path, "three_players", "policy:path=runs/a/policy.pt", 0.3, players=3)
    _stored(tmp_path, "later_deals", "policy:path=runs/a/policy.pt", 0.3, first_deal=10_000)
    rows = learning_results.search_free(tmp_path)
    assert [r[0] for r in rows] == ["recipe_cloning_only", "clone_shifted", "recipe_seed1", "shipped"]
    assert rows[2][1:] == pytest.approx((0.262, 0.258, 0.266))
    pytest.importorskip("matplotlib", reason="the plot needs the training extra's matplotlib")
    out = tmp_path / "plateau.png"
    assert learning_results.main(["--folder", str(tmp_path), "--plot", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert capsys.readouterr().out == f"{out}: 4 search-free players drawn\n"


def test_the_plot_is_refused_where_it_could_not_be_written(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        learning_results.main(["--folder", str(tmp_path), "--plot", str(tmp_path / "plateau.pdf")])
    assert exit_info.value.code == 2 and "must end in .png" in capsys.readouterr().err


def test_the_plot_without_matplotlib_is_one_line_naming_the_extra(tmp_path, capsys, monkeypatch):
    from nertz_env.training import plots

    def missing():
        raise ImportError("the plots need matplotlib: pip install 'nertz-env[training]'")

    monkeypatch.setattr(plots, "_pyplot", missing)
    _stored(tmp_path, "recipe_seed1", "policy:path=runs/a/policy.pt", 0.262)
    with pytest.raises(SystemExit) as exit_info:
        learning_results.main(["--folder", str(tmp_path), "--plot", str(tmp_path / "p.png")])
    assert exit_info.value.code == 2
    assert "--plot" in (err := capsys.readouterr().err) and "nertz-env[training]" in err and "Traceback" not in err


@pytest.mark.parametrize("name", ["../escaped", "a/b", ".hidden", " "])
def test_a_name_that_is_not_a_plain_file_name_is_refused(report, tmp_path, capsys, name):
    """Before, ``--name ../escaped`` wrote the kept report outside ``--folder``."""
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    folder = tmp_path / "kept"
    with pytest.raises(SystemExit) as exc:
        learning_results.main(["--add", str(path), "--name", name, "--folder", str(folder)])
    assert exc.value.code == 2 and f"--name {name!r}: accepted a plain file name" in capsys.readouterr().err
    assert not folder.exists() and not (tmp_path / "escaped.json").exists()


@pytest.mark.parametrize(
    ("argv", "said"),
    [(["--name", "x"], "--name and --note name a report of --add: add --add"),
     (["--note", "x"], "--name and --note name a report of --add: add --add"),
     (["--folder", "MISSING"], "--folder MISSING: no such folder of kept reports")],
)  # fmt: skip
def test_flags_that_would_be_ignored_or_a_missing_folder_are_refused(tmp_path, capsys, argv, said):
    argv = [a.replace("MISSING", str(tmp_path / "none")) for a in argv]
    with pytest.raises(SystemExit) as exc:
        learning_results.main([*argv, *([] if "--folder" in argv else ["--folder", str(tmp_path)])])
    assert exc.value.code == 2 and said.replace("MISSING", str(tmp_path / "none")) in capsys.readouterr().err


def _refused(argv, capsys) -> str:
    capsys.readouterr()  # what came before, e.g. the rules engine's compile notice
    with pytest.raises(SystemExit) as exc:
        learning_results.main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize(
    ("change", "said"),
    [(lambda r: [1, 2], "a JSON object expected, got list"),
     (lambda r: None, "a JSON object expected, got null"),
     (lambda r: {**r, "summary": [{"x": 1}]}, "'summary' is not a list of rows, each naming its 'agent'"),
     (lambda r: {**r, "summary": r["summary"][1:]}, "'summary' has no row of the first agent 'greedy'"),
     (lambda r: {**r, "deals": "3"}, "'deals' is '3', not a count >= 1"),
     (lambda r: {**r, "paired": [{**r["paired"][0], "score_diff_ci": None}]}, "lacks a 'score_diff' number or"),
     (lambda r: {**r, "mode": "matches"}, "a report of mode 'matches' (nertz eval --matches): the table is of")],
)  # fmt: skip
def test_a_report_the_table_cannot_read_is_refused_before_it_is_kept(report, tmp_path, capsys, change, said):
    """Before, ``--add`` kept any file with the right keys, and every later run on the folder
    crashed on it (KeyError, TypeError); a match report showed its matches as deals."""
    path = tmp_path / "report.json"
    path.write_text(json.dumps(change(report)))
    folder = tmp_path / "kept"
    err = _refused(["--add", str(path), "--name", "x", "--folder", str(folder)], capsys)
    assert f"--add {path}: " in err and said in err
    assert not (folder / "x.json").exists()


def test_a_match_report_is_refused(tmp_path, capsys):
    matches = evaluate(["greedy", "random"], hands=1, seed=4, progress=False, matches=True, target_score=5)
    path = tmp_path / "matches.json"
    path.write_text(json.dumps(matches))
    err = _refused(["--add", str(path), "--name", "m", "--folder", str(tmp_path / "kept")], capsys)
    assert "a report of mode 'matches'" in err and not (tmp_path / "kept" / "m.json").exists()


def test_a_damaged_kept_report_is_named_in_one_line(report, tmp_path, capsys):
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    folder = tmp_path / "kept"
    assert learning_results.main(["--add", str(path), "--name", "good", "--folder", str(folder)]) == 0
    capsys.readouterr()
    (folder / "truncated.json").write_text(json.dumps(report)[:300])
    for argv in ([], ["--check", str(tmp_path / "page.md")], ["--plot", str(tmp_path / "p.png")]):
        err = _refused(["--folder", str(folder), *argv], capsys)
        assert f"{folder / 'truncated.json'}: not a readable JSON file" in err and "restore it or delete it" in err
    (folder / "truncated.json").write_text(json.dumps({**report, "note": "n", "summary": [{"x": 1}]}))
    assert "truncated.json: not a harness report: 'summary' is not a list" in _refused(["--folder", str(folder)],
                                                                                        capsys)  # fmt: skip


def test_add_stores_nothing_in_a_folder_with_a_damaged_report(report, tmp_path, capsys):
    """``--add`` names a damaged kept report before it stores the new one: before, the new report
    was written and only then the folder's table failed on the old file."""
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    folder = tmp_path / "kept"
    folder.mkdir()
    (folder / "truncated.json").write_text(json.dumps(report)[:300])
    err = _refused(["--add", str(path), "--name", "new", "--folder", str(folder)], capsys)
    assert f"--add {path}: {folder / 'truncated.json'}: not a readable JSON file" in err
    assert sorted(p.name for p in folder.iterdir()) == ["truncated.json"]


def test_a_folder_that_is_a_file_is_refused(report, tmp_path, capsys):
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    err = _refused(["--add", str(path), "--name", "x", "--folder", str(path)], capsys)
    assert f"--folder {path}: a file, not a folder of kept reports" in err
