"""The ladder (``training.ladder``): scripted players, shipped policies and a run's snapshots rated
on one OpenSkill scale per table size from duplicate deals; its record, plot and errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from nertz_env.training import ladder as ld


def _labels(record, players):
    """The entrants of one table size, best rated first."""
    return [record["entrants"][r["entrant"]]["label"] for r in record["tables"][str(players)]["ratings"]]


def _rating(record, players, label):
    return record["tables"][str(players)]["ratings"][_labels(record, players).index(label)]


@pytest.fixture(scope="module")
def scripted_ladder():
    entrants = ld.entrants_for(["random", "greedy", "heuristic"], shipped=False)
    return ld.ladder(entrants, players=(2, 3), deals_per_pair=20, seed=5)


def test_clearly_different_players_are_rated_in_their_order(scripted_ladder):
    """random far below greedy and heuristic at 2 and 3 players, each gap wider than two sigmas of
    both ratings; random wins next to nothing. (heuristic over greedy, 0.58 of hands at two
    players, needs more deals than a test plays.)"""
    for p in (2, 3):
        h, g, r = (_rating(scripted_ladder, p, x) for x in ("heuristic", "greedy", "random"))
        for better in (h, g):
            assert r["mu"] + 2 * (r["sigma"] + better["sigma"]) < better["mu"]
        assert r["win_share"] < 0.05 < min(h["win_share"], g["win_share"])
        assert _labels(scripted_ladder, p)[-1] == "random"


def test_deals_meet_each_pair_about_as_often_as_asked(scripted_ladder):
    # 3 entrants, 20 deals per pair: 3 pairs x 20 / 1 pair per 2-seat table; 3 x 20 / 3 at 3 seats
    assert scripted_ladder["tables"]["2"]["deals"] == 60 and scripted_ladder["tables"]["2"]["hands"] == 120
    assert scripted_ladder["tables"]["3"]["deals"] == 20 and scripted_ladder["tables"]["3"]["hands"] == 60
    hands = [r["hands"] for r in scripted_ladder["tables"]["2"]["ratings"]]
    assert sum(hands) == 240 and min(hands) > 0  # 120 hands x 2 seats, shared by a seeded draw


def test_the_same_seed_gives_the_same_ladder_and_another_seed_another():
    entrants = ld.entrants_for(["random", "greedy"], shipped=False)
    a, b = (ld.ladder(entrants, players=(2,), deals_per_pair=3, seed=1) for _ in range(2))
    c = ld.ladder(entrants, players=(2,), deals_per_pair=3, seed=2)
    assert a["tables"] == b["tables"]
    assert a["tables"] != c["tables"]


def test_the_record_round_trips_through_json(scripted_ladder, tmp_path):
    path = tmp_path / "ladder.json"
    ld.save_ladder(scripted_ladder, path)
    back = ld.load_ladder(path)
    assert back == json.loads(json.dumps(scripted_ladder))
    assert ld.format_ladder(back) == ld.format_ladder(scripted_ladder)
    text = ld.format_ladder(back).splitlines()
    assert text[2] == "2 players: 60 deals, 120 hands"
    assert [line.split()[0] for line in text[4:7]] == _labels(back, 2)  # best rated first


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):
        ld.entrants_for(["random", "nobody"], shipped=False)
    with pytest.raises(ValueError, match="3 players need at least 3 entrants"):
        ld.ladder(ld.entrants_for(["random", "greedy"], shipped=False), players=(3,))
    with pytest.raises(ValueError, match="deals_per_pair"):
        ld.ladder(ld.entrants_for(["random", "greedy"], shipped=False), players=(2,), deals_per_pair=0)


def test_a_record_file_is_checked(tmp_path):
    with pytest.raises(FileNotFoundError, match="no ladder record"):
        ld.load_ladder(tmp_path / "none.json")
    (tmp_path / "eval.json").write_text('{"agents": []}')
    with pytest.raises(ValueError, match="not a ladder record"):
        ld.load_ladder(tmp_path / "eval.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ValueError, match="not JSON"):
        ld.load_ladder(tmp_path / "bad.json")


def test_the_command_line_reports_bad_input_in_one_line(tmp_path):
    for argv, says in (
        (["--runs", str(tmp_path / "missing")], "no run directory"),
        (["--runs", str(tmp_path)], "--keep-policy-every) nor a policy.pt"),
        (["--scripted", "random", "nobody"], "unknown agent 'nobody'"),
        (["--players", "1"], "argument --players: expected an integer >= 2, got '1'"),
        (["--plot-only", str(tmp_path / "x.json")], "--plot-only needs --plot"),
    ):
        res = subprocess.run([sys.executable, "-m", "nertz_env.training.cli", "ladder", "--no-shipped", *argv],
                             capture_output=True, text=True, timeout=300)  # fmt: skip
        assert res.returncode == 2, (argv, res.stderr)
        assert says in res.stderr and res.stderr.count("\n") <= 3, res.stderr


def test_help_names_the_nertz_command(capsys):
    from nertz_env.training import cli

    with pytest.raises(SystemExit) as stop:
        cli.main(["ladder", "--help"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.startswith("usage: nertz ladder ")


def test_without_torch_the_scripted_players_still_make_a_ladder():
    """A plain install: the shipped policies sit out (said on stderr), --runs names the extra."""
    from tests.test_cli import _BLOCK

    def ladder_without_torch(*argv):
        return subprocess.run([sys.executable, "-c", _BLOCK.format(blocked=["torch", "matplotlib"]), "ladder", *argv],
                              capture_output=True, text=True, timeout=300)  # fmt: skip

    res = ladder_without_torch("--scripted", "random", "greedy", "--players", "2", "--deals-per-pair", "1", "--quiet")
    assert res.returncode == 0, res.stderr
    assert "the shipped policies sit out: they need torch" in res.stderr
    assert "ppo" not in res.stdout and "greedy" in res.stdout
    res = ladder_without_torch("--runs", ".")
    assert res.returncode == 2 and "--runs (trained policies) needs torch" in res.stderr
    res = ladder_without_torch("--plot", "x.png")
    assert res.returncode == 2 and "--plot needs matplotlib" in res.stderr


# Below: policies, which need the training extra.
torch = pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")


def _policy(path, decisions, players=4):
    from nertz_env import NertzConfig
    from nertz_env.agents.policy import build_scorer, save_policy

    cfg = NertzConfig(num_players=players)
    torch.manual_seed(decisions)
    net = build_scorer(cfg, (8,), 8, lookahead=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    return save_policy(path, net, cfg, (8,), extra={"global_step": decisions}, action_hidden=8)


def test_a_run_joins_by_its_snapshots_at_its_own_table_size(tmp_path):
    run = tmp_path / "run"
    for step in (300, 100, 200):
        _policy(run / "policies" / f"policy_{step:010d}.pt", step)
    _policy(run / "policy.pt", 300)  # the last snapshot again: counted once
    entrants = ld.entrants_for(["random", "greedy"], shipped=False, runs=[run])
    assert [e["decisions"] for e in entrants[2:]] == [100, 200, 300]
    assert [e["label"] for e in entrants[2:]] == ["run@100", "run@200", "run@300"]
    record = ld.ladder(entrants, players=(2, 4), deals_per_pair=1, seed=0)
    assert set(_labels(record, 2)) == {"random", "greedy"}  # 4-player policies sit only at tables of four
    assert set(_labels(record, 4)) == {"random", "greedy", "run@100", "run@200", "run@300"}


def test_a_snapshot_without_its_decisions_is_refused(tmp_path):
    from nertz_env import NertzConfig
    from nertz_env.agents.policy import build_scorer, save_policy

    cfg = NertzConfig()
    save_policy(tmp_path / "policy.pt", build_scorer(cfg, (8,), 8, lookahead=False), cfg, (8,), action_hidden=8)
    with pytest.raises(ValueError, match="does not record the decisions"):
        ld.run_entrants(tmp_path)


def test_the_plot_draws_rating_against_decisions(tmp_path):
    pytest.importorskip("matplotlib")
    run = tmp_path / "run"
    for step in (100, 200):
        _policy(run / "policies" / f"policy_{step:010d}.pt", step)
    record = ld.ladder(ld.entrants_for(["random", "greedy"], shipped=False, runs=[run]), players=(4,),
                       deals_per_pair=1, seed=0)  # fmt: skip
    fig = ld.plot_ladder(record, tmp_path / "ladder.png")
    assert (tmp_path / "ladder.png").stat().st_size > 1000
    (ax,) = fig.axes
    (line,) = ax.lines[:1]
    assert list(line.get_xdata()) == [100, 200]
    assert ax.get_xlabel() == "training decisions"


def test_the_trainer_keeps_policy_snapshots_named_by_decisions(tmp_path):
    args = ["--num-envs", "4", "--num-steps", "8", "--eval-every", "0", "--progress", "false", "--threads", "1",
            "--lookahead-features", "false", "--bc-steps", "160", "--total-steps", "400", "--keep-policy-every", "2",
            "--tensorboard", "false", "--run-dir", str(tmp_path)]  # fmt: skip
    res = subprocess.run([sys.executable, "-W", "ignore", "-m", "nertz_env.training.train_selfplay", *args],
                         capture_output=True, text=True, timeout=600)  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    kept = sorted((tmp_path / "policies").glob("*.pt"))
    assert len(kept) == 2  # updates 2 and 4 of 5
    entrants = ld.run_entrants(tmp_path)
    steps = [e["decisions"] for e in entrants]
    assert steps == [160, 320, 400]  # the two kept (80 decisions an update) and the last policy.pt
    assert [f"policy_{s:010d}.pt" for s in steps[:2]] == [p.name for p in kept]


def _damaged(record: dict, how: str) -> dict:
    record = json.loads(json.dumps(record))
    if how == "only the tag":
        return {"format": ld.FORMAT}
    if how == "tables a list":
        record["tables"] = [1, 2]
    elif how == "entrants short":
        record["entrants"] = record["entrants"][:1]
    elif how == "entrants strings":
        record["entrants"] = ["random", "greedy"]
    elif how == "rating without mu":
        del record["tables"]["2"]["ratings"][0]["mu"]
    return record


@pytest.mark.parametrize(
    ("how", "said"),
    [("only the tag", "missing 'seed', 'deals_per_pair', 'entrants', 'tables'"),
     ("tables a list", "'tables' is not an object of table sizes"),
     ("entrants short", "a rating of table '2' names no entrant from 0 to 0"),
     ("entrants strings", "'entrants' is not a non-empty list of entrants (objects)"),
     ("rating without mu", "at table '2' lacks mu, sigma, win_share, score or hands")],
)  # fmt: skip
def test_a_damaged_record_with_the_right_tag_is_named_in_one_line(scripted_ladder, tmp_path, capsys, how, said):
    """Before, such records gave a KeyError, TypeError or IndexError traceback (exit 1)."""
    path = tmp_path / "ladder.json"
    path.write_text(json.dumps(_damaged(scripted_ladder, how)))
    with pytest.raises(ValueError, match="not a ladder record") as info:
        ld.load_ladder(path)
    assert said in str(info.value)
    from nertz_env.training import cli

    pytest.importorskip("matplotlib", reason="--plot needs the training extra's matplotlib")
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        cli.main(["ladder", "--plot-only", str(path), "--plot", str(tmp_path / "p.png")])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and f"{path} is not a ladder record: " in err and said in err, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert not (tmp_path / "p.png").exists()
