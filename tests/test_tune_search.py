"""training.tune_search: CMA-ES over the heuristic's weights, checkpointed each generation."""

import json

import pytest

pytest.importorskip("cma", reason="tune_search needs the cma package (the training extra)")

from nertz_env import agents  # noqa: E402
from nertz_env.agents.heuristic import DEFAULTS  # noqa: E402
from nertz_env.training import tune_search  # noqa: E402


def test_a_point_of_the_search_space_is_a_heuristic_spec():
    x = [2.0 if k != "gamma" else 0.8 for k in tune_search.TUNED]
    weights = tune_search.weights_of(x)
    assert weights["empty"] == 2 * DEFAULTS["empty"] and weights["gamma"] == 0.8
    agent = agents.make_spec(tune_search.spec_of(weights))
    assert agent.options["depth"] == 3 and agent.options["nertz_found"] == 2 * DEFAULTS["nertz_found"]


def test_generations_are_checkpointed_and_resume_goes_on(tmp_path, capsys):
    """The resumed run plays generation 1 only, from the saved strategy: it ends as a run of two
    generations uninterrupted (a run started afresh would too, but would play generation 0 again)."""
    run = tmp_path / "tune"
    flags = ["--popsize", "2", "--deals", "1", "--seed", "3"]
    assert tune_search.main([*flags, "--run-dir", str(run), "--generations", "1"]) == 0
    first = json.loads((run / "history.json").read_text())
    assert len(first) == 1 and len(first[0]["scores"]) == 2
    capsys.readouterr()
    assert tune_search.main([*flags, "--run-dir", str(run), "--generations", "2", "--resume"]) == 0
    said = capsys.readouterr().out
    assert "generation 1: " in said and "generation 0: " not in said and "learned weights" in said
    history = json.loads((run / "history.json").read_text())
    assert history[0] == first[0] and len(history) == 2 and history[1]["deal_seed"] == 3001
    best = json.loads((run / "best.json").read_text())
    assert best["generations"] == 2 and agents.make_spec(best["spec"]).options["depth"] == 3
    whole = tmp_path / "whole"
    assert tune_search.main([*flags, "--run-dir", str(whole), "--generations", "2"]) == 0
    assert json.loads((whole / "history.json").read_text()) == history
    assert json.loads((whole / "best.json").read_text()) == best


def test_bad_flags_are_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        tune_search.main(["--run-dir", str(tmp_path), "--sigma", "0"])
    assert "--sigma 0" in capsys.readouterr().err
    with pytest.raises(SystemExit, match=r"--resume: no .*none/state\.pkl to go on from \(run without --resume first"):
        tune_search.main(["--run-dir", str(tmp_path / "none"), "--resume"])
