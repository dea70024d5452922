"""``training.compare_reports``: two players, each evaluated at its own table on the same duplicate
deals, paired deal by deal; reports that do not pair are refused by name."""

from __future__ import annotations

import json
import math
import re

import pytest

from nertz_env.training import stats
from nertz_env.training.compare_reports import compare, main, per_deal
from nertz_env.training.evaluate import evaluate

OPPONENTS = ["greedy", "greedy", "passive"]


@pytest.fixture(scope="module")
def reports():
    base = evaluate(["heuristic", *OPPONENTS], hands=6, seed=5, progress=False)
    variant = evaluate(["random", *OPPONENTS], hands=6, seed=5, progress=False)
    return base, variant


def test_the_difference_is_the_mean_over_deals_of_each_deals_rotation_average(reports):
    base, variant = reports
    row = compare(base, variant)
    deals = sorted({h["key"][0] for h in base["hands"]})
    by_hand = {}
    for rep, sign in ((base, -1.0), (variant, 1.0)):
        for h in rep["hands"]:
            seat = h["seats"].index(0)
            by_hand.setdefault(h["key"][0], []).append((sign, stats.win_shares(h["scores"])[seat], h["scores"][seat]))
    rotations = base["players"]
    wins = [sum(s * w for s, w, _ in by_hand[d]) / rotations for d in deals]
    scores = [sum(s * x for s, _, x in by_hand[d]) / rotations for d in deals]
    assert row["deals"] == 6 and row["base"] == "heuristic" and row["variant"] == "random"
    assert math.isclose(row["win_share_diff"], sum(wins) / 6) and math.isclose(row["score_diff"], sum(scores) / 6)
    lo, hi = row["score_diff_ci"]
    assert lo < row["score_diff"] < hi
    assert row["score_diff"] < 0  # random against the heuristic, at the same tables
    win_of = {r["agent"]: r["win_share"] for r in base["summary"]}
    assert math.isclose(row["base_win_share"], win_of["heuristic"])


def test_a_report_against_itself_differs_by_zero(reports):
    base, _ = reports
    row = compare(base, base)
    assert row["win_share_diff"] == row["score_diff"] == 0.0
    assert per_deal(base, 0).keys() == {0, 1, 2, 3, 4, 5}


def test_reports_that_do_not_pair_are_refused_by_name(reports):
    base, variant = reports
    with pytest.raises(ValueError, match="differs from the base in 'seed'"):
        compare(base, evaluate(["random", *OPPONENTS], hands=6, seed=6, progress=False))
    with pytest.raises(ValueError, match="seats other agents than the base"):
        compare(base, evaluate(["random", "greedy", "passive", "passive"], hands=6, seed=5, progress=False))
    with pytest.raises(ValueError, match="hold different deals"):
        compare(base, evaluate(["random", *OPPONENTS], hands=6, seed=5, progress=False, first_deal=1))
    with pytest.raises(ValueError, match="holds no hands"):
        compare(base, {k: v for k, v in variant.items() if k != "hands"})
    with pytest.raises(ValueError, match="--agent 4: the base has agents 0 to 3"):
        compare(base, variant, agent=4)
    teams = {**variant, "config": {**variant["config"], "partners": True}}
    with pytest.raises(ValueError, match="the variant was played by partners \\(R8\\), whose win is the team's"):
        compare(base, teams)


def test_the_command_prints_and_writes_the_differences(reports, tmp_path, capsys):
    base, variant = reports
    (tmp_path / "b.json").write_text(json.dumps(base, default=float))
    (tmp_path / "v.json").write_text(json.dumps(variant, default=float))
    out = tmp_path / "d.json"
    assert main([str(tmp_path / "b.json"), str(tmp_path / "v.json"), "--json", str(out)]) == 0
    assert "random" in capsys.readouterr().out
    written = json.loads(out.read_text())
    assert written["rows"][0]["score_diff"] == pytest.approx(compare(base, variant)["score_diff"])
    with pytest.raises(SystemExit) as stop:
        main([str(tmp_path / "b.json"), str(tmp_path / "missing.json")])
    assert stop.value.code == 2
    assert "missing.json" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        main([str(tmp_path / "b.json"), str(tmp_path / "v.json"), "--agent", "-1"])
    assert stop.value.code == 2
    assert "argument --agent: expected an integer >= 0, got '-1'" in capsys.readouterr().err


def test_seed_pairs_give_the_mean_over_training_seeds_with_an_interval_over_seeds_and_deals(
    reports, tmp_path, capsys
):
    base, variant = reports
    other = evaluate(["greedy", *OPPONENTS], hands=6, seed=5, progress=False)
    other_variant = evaluate(["passive", *OPPONENTS], hands=6, seed=5, progress=False)
    paths = {}
    for name, rep in (("b", base), ("v", variant), ("o", other), ("ov", other_variant)):
        paths[name] = str(tmp_path / f"{name}.json")
        (tmp_path / f"{name}.json").write_text(json.dumps(rep, default=float))
    out = tmp_path / "d.json"
    # Seed 1: heuristic -> random; seed 2: greedy -> passive (two "training seeds" of each recipe).
    assert main([paths["b"], paths["v"], "--seed-pair", paths["o"], paths["ov"], "--json", str(out)]) == 0
    assert "over 2 training seeds (interval over seeds and deals)" in capsys.readouterr().out
    total = json.loads(out.read_text())["over_seeds"]
    first, second = compare(base, variant), compare(other, other_variant)
    assert total["training_seeds"] == 2
    assert total["score_diff"] == pytest.approx((first["score_diff"] + second["score_diff"]) / 2)
    t = stats.t_quantile(0.975, 5)  # each seed's error over its 6 deals, read back from its interval
    errors = [(r["win_share_diff_ci"][1] - r["win_share_diff_ci"][0]) / (2 * t) for r in (first, second)]
    expected = stats.seeds_and_deals_interval([first["win_share_diff"], second["win_share_diff"]], errors, 6)
    assert total["win_share_diff_ci"] == pytest.approx(list(expected[1:]))
    other_deals = str(tmp_path / "x.json")
    (tmp_path / "x.json").write_text(json.dumps(evaluate(["greedy", *OPPONENTS], hands=6, seed=6, progress=False)))
    for argv, message in (
        ([paths["b"], paths["v"], "--seed-pair", other_deals, paths["v"]], "differs from the base in 'seed'"),
        ([paths["b"], paths["v"], paths["o"], "--seed-pair", paths["o"], paths["v"]], "compares one variant"),
        ([paths["b"], paths["v"], "--seed-pair", paths["b"], paths["v"]],
         f"{paths['b']} holds the hands of {paths['b']}: every --seed-pair must be another training seed's runs"),
        ([paths["b"], paths["v"], "--seed-pair", paths["o"], paths["v"]], f"{paths['v']} holds the hands of"),
    ):  # fmt: skip
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 2 and message in capsys.readouterr().err


def test_a_seed_pair_on_other_deals_is_refused_naming_them(reports, tmp_path, capsys):
    """Before, a pair on deals 6-11 (``--first-deal 6``) passed beside the first pair's deals 0-5:
    only the deal count and the seed were compared."""
    base, variant = reports
    later_base = evaluate(["greedy", *OPPONENTS], hands=6, seed=5, progress=False, first_deal=6)
    later_variant = evaluate(["random", *OPPONENTS], hands=6, seed=5, progress=False, first_deal=6)
    paths = {}
    for name, rep in (("b", base), ("v", variant), ("lb", later_base), ("lv", later_variant)):
        paths[name] = str(tmp_path / f"{name}.json")
        (tmp_path / f"{name}.json").write_text(json.dumps(rep, default=float))
    for pair, message in (
        ((paths["lb"], paths["lv"]), f"{paths['lb']} holds deals 6-11, the first base deals 0-5: every --seed-pair "
                                     "must be evaluated on the first pair's deals"),
        ((paths["b"], paths["lv"]), "hold different deals (deal 0 is in one only)"),
    ):  # fmt: skip
        capsys.readouterr()
        with pytest.raises(SystemExit) as stop:
            main([paths["b"], paths["v"], "--seed-pair", *pair])
        err = capsys.readouterr().err
        assert stop.value.code == 2 and message in err and err.count("\n") == 1, err


def _refused_by_the_command(paths, capsys) -> str:
    with pytest.raises(SystemExit) as stop:
        main([str(p) for p in paths])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_a_report_without_a_hand_of_the_compared_agent_is_refused_by_name(reports, tmp_path, capsys):
    """Reports with no hand of the compared agent (``hands`` empty, or a pool where it never sat)
    ended in a ZeroDivisionError traceback (exit status 1)."""
    base, variant = reports
    empty = {**variant, "hands": []}
    with pytest.raises(ValueError, match=re.escape("the variant holds no hand of agent 0 (random): its hands are "
                                                   "none, or none seated it")):  # fmt: skip
        compare(base, empty)
    unseated = {**base, "hands": [h for h in base["hands"] if 0 not in h["seats"]]}  # as a pool that never sat it
    with pytest.raises(ValueError, match=re.escape("the base holds no hand of agent 0 (heuristic)")):
        compare(unseated, unseated)
    (tmp_path / "b.json").write_text(json.dumps(base, default=float))
    (tmp_path / "e.json").write_text(json.dumps(empty, default=float))
    err = _refused_by_the_command([tmp_path / "b.json", tmp_path / "e.json"], capsys)
    assert f"ValueError: {tmp_path / 'e.json'} holds no hand of agent 0 (random)" in err


@pytest.mark.parametrize("bad", [math.nan, math.inf, None, "3", True])
def test_a_score_that_is_not_a_finite_number_is_refused_by_name(reports, tmp_path, capsys, bad):
    """A NaN score passed silently (the differences came out NaN)."""
    base, variant = reports
    broken = json.loads(json.dumps(variant, default=float))
    broken["hands"][3]["scores"][1] = bad
    key = broken["hands"][3]["key"]
    with pytest.raises(ValueError, match=re.escape(f"the variant holds a hand (key {key}) whose scores")):
        compare(base, broken)
    (tmp_path / "b.json").write_text(json.dumps(base, default=float))
    (tmp_path / "n.json").write_text(json.dumps(broken))
    err = _refused_by_the_command([tmp_path / "b.json", tmp_path / "n.json"], capsys)
    assert "are not all finite numbers: pass the --out file of nertz eval as it wrote it" in err


def test_reports_of_another_nertz_env_or_numpy_do_not_pair(reports):
    """Those versions make the deals and the other seats' play; merge_reports refuses them too."""
    base, variant = reports
    for key in ("nertz_env", "numpy"):
        other = {**variant, "versions": {**variant["versions"], key: "0.0.1"}}
        with pytest.raises(ValueError, match=f"the variant was played with {key} 0.0.1, the base with"):
            compare(base, other)
    compare(base, {**variant, "versions": {**variant["versions"], "python": "3.0.0"}})  # changes no deal


def test_the_stored_intervals_over_seeds_are_those_of_their_rows():
    """The research log's and README's ablations over three seeds: each file's ``over_seeds`` is
    ``over_seeds`` of its rows, regenerated and not retyped."""
    from pathlib import Path

    from nertz_env.training.compare_reports import over_seeds

    files = sorted((Path(__file__).parents[1] / "docs/learning/feature_groups").glob("*_seeds.json"))
    stored = [json.loads(f.read_text()) for f in files]
    stored = [d for d in stored if "over_seeds" in d]
    assert len(stored) == 10
    for d in stored:
        again = over_seeds(d["rows"])
        assert d["over_seeds"].keys() == again.keys()
        for key, value in again.items():
            assert d["over_seeds"][key] == pytest.approx(value, rel=1e-12), key
