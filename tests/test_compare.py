"""``nertz_env.benchmarks.compare``: what ``--against`` accepts and how the report reads (the
workloads themselves are timed only by the benchmark, never in tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nertz_env.benchmarks import compare

ROOT = Path(__file__).resolve().parents[1]


def test_against_a_folder_holding_a_source_tree():
    assert compare.source_tree(str(ROOT)) == ROOT


@pytest.mark.parametrize("against", ["no-such-revision-anywhere", "tests"])
def test_against_anything_else_is_refused_by_name(against, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    with pytest.raises(SystemExit, match=f"--against '{against}'"):
        compare.source_tree(against)


def test_the_report_gives_each_workload_both_medians_and_their_ratio():
    medians = {"this": {k: 300.0 for k in compare.NAMES}, "other": {k: 200.0 for k in compare.NAMES}}
    medians["this"]["engine"] = 100.0
    report = {"medians": medians, "ratios": {k: medians["this"][k] / medians["other"][k] for k in compare.NAMES}}
    lines = compare.table(report).splitlines()
    assert len(lines) == 2 + len(compare.NAMES)
    engine = next(line for line in lines if line.startswith(compare.NAMES["engine"]))
    assert engine.split()[-3:] == ["100", "200", "0.50"]
    assert all(line.endswith("1.50") for line in lines[2:] if line is not engine)


def test_a_workload_the_other_tree_lacks_reads_not_available():
    medians = {"this": {k: 300.0 for k in compare.NAMES}, "other": {k: 200.0 for k in compare.NAMES}}
    medians["other"]["move_ticks"] = None  # an older tree without the option
    report = {"medians": medians, "ratios": {k: compare.ratio(medians["this"][k], medians["other"][k])
                                             for k in compare.NAMES}}  # fmt: skip
    assert report["ratios"]["move_ticks"] is None and report["ratios"]["vector"] == 1.5
    line = next(line for line in compare.table(report).splitlines() if line.startswith(compare.NAMES["move_ticks"]))
    assert line.split()[-3:] == ["300", "n/a", "n/a"]
    assert compare._median([1.0, None, 3.0]) is None and compare._median([1.0, 5.0, 3.0]) == 3.0


def test_every_house_rule_workload_is_named_in_the_report():
    from nertz_env.benchmarks import compare_workload

    assert set(compare_workload.OPTION_GAMES) <= set(compare.NAMES)
    from nertz_env import NertzConfig

    for options in compare_workload.OPTION_GAMES.values():
        assert NertzConfig.from_kwargs(**options) != NertzConfig()  # each turns a rule on


def test_the_report_names_both_trees_and_takes_medians_of_alternate_runs(monkeypatch, tmp_path):
    """``compare`` runs the trees alternately; its report names the other tree by its path (the
    loop's per-round rates once took that name's place) and gives medians over the rounds."""
    calls = []

    def fake_workload(tree, runs):
        calls.append(tree)
        rounds = sum(t == tree for t in calls)
        return {k: (100.0 if tree == compare.HERE else 50.0) * rounds for k in compare.NAMES}

    monkeypatch.setattr(compare, "run_workload", fake_workload)
    report = compare.compare(tmp_path, repeats=3, runs=1, log=lambda _: None)
    assert report["this"] == str(compare.HERE) and report["other"] == str(tmp_path)
    assert calls == [compare.HERE, tmp_path] * 4  # a warm-up each, then three alternate rounds
    assert report["medians"]["this"]["vector"] == 300.0 and report["medians"]["other"]["vector"] == 150.0
    assert report["ratios"]["engine"] == 2.0


@pytest.mark.parametrize(
    ("argv", "message"),
    [(["/", "--runs", "1"], "argument tree: '/' is not a nertz-env source tree"),
     ([str(ROOT), "--runs", "0"], "argument --runs: expected an integer >= 1, got 0")],
)  # fmt: skip
def test_the_workload_refuses_a_bad_tree_or_run_count_before_it_imports(argv, message):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(compare.WORKLOAD), *argv], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr
