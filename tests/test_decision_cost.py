"""The decision-cost benchmark runs, names what each agent computes and checks its arguments (the
rates themselves are measured by running it, never asserted here)."""

from __future__ import annotations

import pytest

from nertz_env.benchmarks import decision_cost as dc


def test_each_agent_gets_both_rates_and_what_it_computes():
    rows = dc.decision_cost(["random", "heuristic:depth=3"], rows=64, single_rows=4, repeats=1)
    assert [r["spec"] for r in rows] == ["random", "heuristic:depth=3"]
    assert all(r["batched"] > 0 and r["single"] > 0 for r in rows)
    assert rows[1]["computes"] == "depth-3 own-move search"
    assert "random" in dc.format_costs(rows, 64).splitlines()[1]


def test_the_positions_are_real_tables_with_legal_moves():
    obs, masks = dc.sample_rows(100, seed=1)
    assert obs.shape[0] == masks.shape[0] == 100 and obs.dtype == masks.dtype
    assert (masks.sum(axis=1) >= 1).all()


def test_bad_arguments_are_named(capsys):
    for argv, says in ((["--rows", "0"], "argument --rows"), (["--agents", "nobody"], "unknown agent 'nobody'")):
        with pytest.raises(SystemExit) as stop:
            dc.main(argv)
        assert stop.value.code == 2
        assert says in capsys.readouterr().err
