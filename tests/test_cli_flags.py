"""Flags that would be silently dropped or change nothing are refused, each in one line on stderr
with exit code 2 that names the flag and why: a list flag given twice (``--rules``, ``--agents``:
the second list replaced the first), a trainer's bad flag (it printed the whole usage), a bare
``nertz train`` (it started a default run of 8 M steps), a resumed budget below what the
checkpoint has trained, a folder given to ``--resume``, and flags whose switch is off."""

from __future__ import annotations

import dataclasses
import pickle
import subprocess
import sys
import zipfile

import pytest
from conftest import needs_torch

from nertz_env.training import cli


def refused(argv, capsys, main=cli.main) -> str:
    """The one line ``main(argv)`` writes on stderr, after checking it exits with status 2."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if not line.startswith("nertz-env:")]
    assert stop.value.code == 2 and len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


TWICE = "given twice (the second list would replace the first): give all its values after one"


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["eval", "--agents", "random", "random", "--hands", "1", "--rules", "stock_draw=1", "--rules",
          "nertz_penalty=3"], "--rules"),
        (["eval", "--agents", "random", "--agents", "random", "random", "--hands", "1"], "--agents"),
        (["tournament", "--agents", "random", "random", "random", "random", "--rules", "stock_draw=1", "--rules",
          "stock_draw=3"], "--rules"),
        (["watch", "--agents", "random", "random", "--agents", "greedy", "greedy"], "--agents"),
        (["watch", "--agents", "random", "random", "--rules", "stock_draw=1", "--rules", "nertz_penalty=3"], "--rules"),
        (["play", "--players", "2", "--opponents", "random", "--opponents", "greedy"], "--opponents"),
        (["play", "--rules", "stock_draw=1", "--rules", "nertz_penalty=3"], "--rules"),
        (["bench", "--batch-sizes", "64", "--batch-sizes", "128"], "--batch-sizes"),
    ],
)  # fmt: skip
def test_a_list_flag_given_twice_is_refused(capsys, argv, flag):
    line = refused(argv, capsys)
    assert line.endswith(f"error: argument {flag}: {TWICE} {flag}")


def test_a_trainers_list_flag_given_twice_is_refused(capsys):
    pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")
    line = refused(["train", "selfplay", "--rules", "stock_draw=1", "--rules", "nertz_penalty=3"], capsys)
    assert line == f"nertz train selfplay: error: argument --rules: {TWICE} --rules"
    line = refused(["train", "selfplay", "--scripted", "greedy", "--scripted", "heuristic"], capsys)
    assert line == f"nertz train selfplay: error: argument --scripted: {TWICE} --scripted"


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["train", "selfplay", "--seed", "abc"], "train selfplay: error: argument --seed: invalid int value: 'abc'"),
        (["train", "selfplay", "--total-steps", "1e6"], "argument --total-steps: invalid int value: '1e6'"),
        (["train", "sb3", "--bogus"], "nertz train sb3: error: unrecognized arguments: --bogus"),
    ],
)
def test_a_trainers_bad_flag_is_one_line_not_the_usage(capsys, argv, says):
    pytest.importorskip("sb3_contrib")
    assert says in refused(argv, capsys)


def test_the_trainer_module_run_directly_reports_a_bad_flag_in_one_line():
    pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")
    res = subprocess.run([sys.executable, "-m", "nertz_env.training.train_selfplay", "--total-steps", "1e6"],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    lines = [line for line in res.stderr.splitlines() if not line.startswith("nertz-env:")]
    assert res.returncode == 2 and lines == [
        "train_selfplay.py: error: argument --total-steps: invalid int value: '1e6'"
    ], res.stderr


@pytest.mark.parametrize(("argv", "got"), [(["train"], ""), (["train", "bogus"], ", got 'bogus'"),
                                           (["train", "--total-steps", "5"], ", got '--total-steps'")])  # fmt: skip
def test_nertz_train_needs_the_trainers_name(capsys, argv, got):
    line = refused(argv, capsys)
    assert line == f"nertz train: error: name the trainer first: selfplay or sb3 (e.g. nertz train selfplay " \
                   f"--total-steps 200000){got}"


def test_nertz_train_help_lists_the_trainers(capsys):
    assert cli.main(["train", "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: nertz train {selfplay,sb3}") and "\n  selfplay " in out and "\n  sb3 " in out


@needs_torch
def test_a_trainers_help_gives_every_flags_default(capsys):
    """The reward a trainer learns from is not the env's default (``relative``, not ``dense``):
    ``--help`` says so (before, the parser that finds the flags given answered ``--help``, with
    no defaults)."""
    from nertz_env.training import args
    from nertz_env.training.selfplay_args import Args

    with pytest.raises(SystemExit) as stop:
        args.parse_given(Args, ["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert stop.value.code == 0
    assert "reward mode of the env: dense, sparse, relative, lead (default: relative)" in out
    assert "discount factor (default: 0.995)" in out and "(default: 8000000)" in out


def test_the_commands_help_gives_the_defaults_worth_saying(capsys):
    """``nertz eval --help``: a default that is a value is shown (0 included); None and text that
    already says its default are left as they are."""
    from nertz_env.training import evaluate

    with pytest.raises(SystemExit):
        evaluate.main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "(default: 2000)" in out and "the races (R6) and the agents (default: 0)" in out
    assert "--players PLAYERS seats per table; default one per agent, fewer makes a pool --" in out
    assert "(default: None)" not in out and "(default: False)" not in out


def _selfplay_checkpoint(path, done, total):
    """A file ``train_selfplay.start`` reads as a checkpoint: its arguments and counters (the
    budget and the folder are checked before the rest is used)."""
    torch = pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")
    from nertz_env.training.selfplay_args import REQUIRED, Args

    blob = {key: None for key in REQUIRED}
    blob.update(args=dataclasses.asdict(Args(total_steps=total)), global_step=done, update=3)
    torch.save(blob, path)


def test_resuming_below_the_decisions_already_trained_is_refused(tmp_path, capsys):
    ckpt = tmp_path / "checkpoint.pt"
    _selfplay_checkpoint(ckpt, 30720, 81920)
    line = refused(["train", "selfplay", "--resume", str(ckpt), "--total-steps", "20480"], capsys)
    assert line == (f"nertz train selfplay: error: --total-steps 20480 is below the 30720 decisions {ckpt} has already "
                    "trained (its run's --total-steps: 81920): give at least 30720, or leave --total-steps out to "
                    "keep 81920")  # fmt: skip
    assert not (tmp_path / "config.json").exists()


@needs_torch
def test_resuming_with_a_budget_short_of_the_next_update_is_refused(tmp_path, capsys):
    """A budget at or above the decisions trained that does not reach one more whole batch would
    train nothing: refused, naming the smallest budget that trains."""
    from nertz_env.training.selfplay_args import Args
    from nertz_env.training.selfplay_ppo import Seats

    ckpt = tmp_path / "checkpoint.pt"
    _selfplay_checkpoint(ckpt, 30720, 81920)  # 3 updates done
    batch = Seats.update_decisions(Args())
    for total in (30720, 4 * batch - 1):
        line = refused(["train", "selfplay", "--resume", str(ckpt), "--total-steps", str(total)], capsys)
        assert line == (f"nertz train selfplay: error: --total-steps {total} trains nothing after the 30720 decisions "
                        f"{ckpt} has already trained: its next update (a whole batch) ends at {4 * batch} "
                        f"decisions; give at least {4 * batch}")  # fmt: skip
    assert not (tmp_path / "config.json").exists()


@needs_torch  # without it the trainer says so first
def test_resume_from_a_folder_names_the_checkpoint_inside(tmp_path, capsys):
    line = refused(["train", "selfplay", "--resume", str(tmp_path)], capsys)
    assert line.endswith(f"--resume {tmp_path}: a folder, not a checkpoint file; give a run's checkpoint.pt (this "
                         "folder holds none)")  # fmt: skip
    _selfplay_checkpoint(tmp_path / "checkpoint.pt", 10240, 81920)
    line = refused(["train", "selfplay", "--resume", str(tmp_path)], capsys)
    assert line.endswith(f"--resume {tmp_path}: a folder, not a checkpoint file; give {tmp_path / 'checkpoint.pt'}")


def test_sb3_resume_below_its_trained_steps_or_from_a_folder_is_refused(tmp_path, capsys):
    pytest.importorskip("sb3_contrib")
    from nertz_env.training.train_sb3 import STATE, Args

    state = {"args": dataclasses.asdict(Args(total_steps=500)), "num_timesteps": 512, "next_eval": 0, "evals": []}
    with zipfile.ZipFile(tmp_path / "checkpoint.zip", "w") as zf:
        zf.writestr(STATE, pickle.dumps(state))
    line = refused(["train", "sb3", "--resume", str(tmp_path / "checkpoint.zip"), "--total-steps", "256"], capsys)
    assert "--total-steps 256 is below the 512 decisions" in line and "--total-steps: 500)" in line
    line = refused(["train", "sb3", "--resume", str(tmp_path)], capsys)
    assert line.endswith(f"a folder, not a checkpoint file; give {tmp_path / 'checkpoint.zip'}")


def test_torchrl_resume_below_its_trained_steps_is_refused(tmp_path, capsys):
    """TorchRL's trainer rounds its budget up to whole rollouts, so a budget below the steps
    trained ran no rollout and wrote the checkpoint back with the lower budget, without a word."""
    torch = pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")
    pytest.importorskip("torchrl", reason="needs torchrl: nertz-env[torchrl]")
    from nertz_env.training import train_torchrl

    state = {"args": dataclasses.asdict(train_torchrl.Args(total_steps=500)), "actor": {}, "critic": {},
             "optimizer": {}, "steps": 640, "torch_rng": None}  # fmt: skip
    torch.save(state, tmp_path / "checkpoint.pt")
    argv = ["--resume", str(tmp_path / "checkpoint.pt"), "--total-steps", "320"]
    line = refused(argv, capsys, main=lambda a: train_torchrl.main(a, as_command=True))
    assert "--total-steps 320 is below the 640 decisions" in line and "--total-steps: 500)" in line
    assert not (tmp_path / "config.json").exists()


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--pfsp-power", "2"], "--pfsp-power 2.0: accepted only with --pool-sampling pfsp (the draws it weighs)"),
        (["--critic-lr", "0.001"], "--critic-lr 0.001: accepted only with --central-critic true (the critic it fits)"),
        (["--critic-lr", "0"], "--critic-lr 0.0: accepted only with --central-critic true"),  # given, though default
    ],
)
def test_a_trainer_flag_whose_switch_is_off_is_refused(tmp_path, capsys, flags, says):
    pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")
    line = refused(["train", "selfplay", *flags, "--run-dir", str(tmp_path / "run")], capsys)
    assert line.startswith(f"nertz train selfplay: error: {says}")
    assert not (tmp_path / "run").exists()


def test_the_same_flags_with_their_switch_on_are_accepted():
    pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")
    from nertz_env.training.train_selfplay import start

    args, _, _ = start(["--pool-sampling", "pfsp", "--pfsp-power", "3", "--run-dir", "unused"])
    assert args.pfsp_power == 3.0
    args, _, _ = start(["--central-critic", "true", "--critic-lr", "0.001", "--run-dir", "unused"])
    assert args.critic_lr == 0.001
    assert start(["--pfsp-rate", "0.1", "--run-dir", "unused"])[0].pfsp_rate == 0.1  # a uniform run records at it


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["tournament", "--format", "elimination", "--agents", "random", "random", "random", "random", "--rounds",
          "3"], "argument --rounds: sets the tables each entrant plays in --format ladder; --format elimination"),
        (["watch", "--every", "5"], "argument --every: keeps every n-th tick of the --gif or --html file"),
        (["watch", "--quiet", "--delay", "0"], "argument --delay: paces the table printed each tick, which --quiet"),
        (["bench", "--doors-only", "--no-doors"], "argument --no-doors: not allowed with argument --doors-only"),
        (["bench", "--quick", "--repeats", "5"], "argument --repeats: not allowed with --quick (it sets 2 repeats"),
        (["bench", "--quick", "--seconds", "1"], "argument --seconds: not allowed with --quick"),
        (["bench", "--doors-only", "--threads", "1"], "argument --threads: not allowed with --doors-only"),
        (["bench", "--doors-only", "--batch-sizes", "64"], "argument --batch-sizes: not allowed with --doors-only"),
        (["bench", "--doors-only", "--no-compile"], "argument --no-compile: not allowed with --doors-only"),
        (["bench", "--no-doors", "--door-batch", "64"], "argument --door-batch: not allowed with --no-doors"),
    ],
)  # fmt: skip
def test_a_flag_that_would_change_nothing_is_refused(capsys, argv, says):
    line = refused(argv, capsys)
    assert line.startswith(f"nertz {argv[0]}: error: {says}")


def test_the_exploit_benchmark_names_its_own_steps_flag(capsys):
    pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")
    line = refused(["benchmark", "exploit", "--task", "nertz-2p", "--agent", "random", "--steps", "10"], capsys)
    assert line == ("nertz benchmark exploit: error: --steps 10: accepted an integer >= 1024 (one update of the best "
                    "responder: 32 ticks x 32 learner seats)")  # fmt: skip
    assert "--total-steps" not in line
