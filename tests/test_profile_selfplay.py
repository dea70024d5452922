"""``training.profile_selfplay`` times the trainer's own steps: every part of an update is counted
once, so the shares add up to the whole, and bad flags are refused."""

import pytest

pytest.importorskip("torch", reason="the trainer needs torch (the training extra)")

from nertz_env.training.profile_selfplay import PARTS, main, profile  # noqa: E402

TINY = ["--num-envs", "2", "--num-steps", "4", "--lookahead-features", "false", "--bc-steps", "0",
        "--bc-coef", "0", "--total-steps", "1000"]  # fmt: skip


def test_the_shares_of_an_update_add_up_to_the_whole():
    result = profile(TINY, updates=2)
    assert result["decisions_per_s"] > 0
    assert set(PARTS) <= set(result) and result["teacher"] < 0.01  # --bc-coef 0: no labels asked
    assert 0.5 < sum(result[k] for k in PARTS) <= 1.0 + 1e-9  # the rest is Python between the parts


def test_a_run_with_the_hidden_card_critic_is_profiled_with_its_fit(monkeypatch):
    """The critic's rollout buffer holds the hidden cards, and its fit is timed with the update."""
    from nertz_env.training.central_critic import CentralCritic

    fits = []
    real_fit = CentralCritic.fit
    monkeypatch.setattr(CentralCritic, "fit", lambda self, *a: fits.append(1) or real_fit(self, *a))
    result = profile([*TINY, "--central-critic", "true", "--scripted", "greedy"], updates=2)
    assert len(fits) == 3 and result["decisions_per_s"] > 0  # one warm-up and two timed updates
    assert 0.5 < sum(result[k] for k in PARTS) <= 1.0 + 1e-9


@pytest.mark.parametrize("flag", ["--updates", "--repeats"])
def test_bad_flags_are_refused(flag, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([flag, "0", "--", *TINY])
    assert exit_info.value.code == 2
    assert f"error: argument {flag}: expected an integer >= 1, got '0'" in capsys.readouterr().err


def test_repeats_and_json_record_every_rate(tmp_path, capsys):
    out = tmp_path / "profile.json"
    main(["--updates", "1", "--repeats", "2", "--json", str(out), "--", *TINY])
    import json

    record = json.loads(out.read_text())
    rates = record["results"]["this trainer"]["rates"]
    assert record["repeats"] == 2 and len(rates) == 2 and all(r > 0 for r in rates)
    assert record["results"]["this trainer"]["decisions_per_s"] == pytest.approx(sum(rates) / 2)
    assert "over 2]" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--repeats", "0", "--", *TINY])
    assert "error: argument --repeats: expected an integer >= 1, got '0'" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # refused before any profiling
        main(["--json", str(tmp_path / "no" / "such" / "dir" / "p.json"), "--", *TINY])
    assert f"argument --json: the folder '{tmp_path / 'no' / 'such' / 'dir'}' of " in capsys.readouterr().err


@pytest.mark.parametrize(
    ("peer", "extra", "label"),
    [("catalogue", ["--sampler", "catalogue"], "catalogue sampler"),
     ("afterstate", ["--afterstate", "false"], "without afterstates")],
)  # fmt: skip
def test_a_peer_times_the_same_updates_with_its_one_flag_changed(capsys, monkeypatch, peer, extra, label):
    from nertz_env.training import profile_selfplay

    seen = []
    monkeypatch.setattr(profile_selfplay, "profile", lambda argv, updates, dense, as_command: seen.append(list(argv)) or
                        {**dict.fromkeys(PARTS, 0.1), "decisions_per_s": 1000.0 * len(seen)})  # fmt: skip
    main(["--updates", "1", "--peer", peer, "--", *TINY])
    assert seen == [TINY, [*TINY, *extra]]
    out = capsys.readouterr().out
    assert f"{label}: 2,000 decisions/s" in out and "ratio: 0.50x" in out


def test_the_peer_flag_given_last_is_the_one_the_trainer_takes(tmp_path):
    from nertz_env.training.train_selfplay import start

    for last in ("false", "true"):
        flags = [*TINY, "--run-dir", str(tmp_path), "--afterstate", "true", "--afterstate", last]
        assert start(flags)[0].afterstate is (last == "true")


def test_a_run_is_profiled_from_its_checkpoint(tmp_path, monkeypatch):
    from nertz_env.training import train_selfplay

    run = tmp_path / "run"
    train_selfplay.main([*TINY, "--run-dir", str(run), "--eval-every", "0", "--tensorboard", "false",
                         "--progress", "false"])  # fmt: skip
    steps = []
    real = train_selfplay.restore

    def spy(t, resume):
        loop, first, evals = real(t, resume)
        steps.append(loop.global_step)
        return loop, first, evals

    monkeypatch.setattr(train_selfplay, "restore", spy)
    result = profile(["--resume", str(run / "checkpoint.pt")], updates=1)
    assert result["decisions_per_s"] > 0
    assert steps and steps[0] > 0  # the loop went on from the checkpoint, not from a fresh deal


def test_a_trainer_flag_out_of_range_is_one_line_and_nothing_is_written(capsys, tmp_path):
    out = tmp_path / "p.json"
    with pytest.raises(SystemExit) as exit_info:  # was a ValueError traceback from train_selfplay.start
        main(["--json", str(out), "--", *TINY, "--num-envs", "0"])
    assert exit_info.value.code == 2
    assert "error: --num-envs 0: accepted integers >= 1" in capsys.readouterr().err
    assert not out.exists()
