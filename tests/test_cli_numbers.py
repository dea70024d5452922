"""Commands outside the two PPO trainers (``tests/test_trainer_numbers.py``) refuse a number out of
range, NaN or inf by its flag and the values accepted, in one line with exit status 2, before any
work starts or anything is written. Before these checks ``benchmarks.soak`` played for a negative
or NaN ``--minutes`` and wrote its report, ``benchmarks.rllib_sampling`` started on 0 runners,
``nertz bench --threads`` above numba's threads failed with a traceback after the first rows were
measured, and ``train_rllib`` handed a NaN learning rate to RLlib."""

from __future__ import annotations

import importlib.util

import numba
import pytest

from nertz_env.benchmarks import rllib_sampling, soak, throughput
from nertz_env.training import train_rllib

AT_LEAST_1, AT_LEAST_0 = "expected an integer >= 1", "expected an integer >= 0"


def _refused(main, argv, capsys) -> str:
    """The one line ``main(argv)`` ends with: exit status 2, ``prog: error: ...``, no traceback."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ": error: " in err and "Traceback" not in err
    return err


@pytest.mark.parametrize(
    ("flag", "value", "accepted"),
    [("--minutes", "-1", "expected a number > 0"), ("--minutes", "0", "expected a number > 0"),
     ("--minutes", "nan", "expected a number > 0"), ("--minutes", "inf", "expected a number > 0"),
     ("--sample", "-2", "expected a number >= 0"), ("--sample", "nan", "expected a number >= 0"),
     ("--ticks", "0", AT_LEAST_1), ("--seed", "-1", AT_LEAST_0)],
)  # fmt: skip
def test_the_soak_refuses_a_number_out_of_range_before_it_plays(flag, value, accepted, capsys, tmp_path):
    out = tmp_path / "soak.json"
    err = _refused(soak.main, [flag, value, "--json", str(out)], capsys)
    assert f"argument {flag}: {accepted}, got '{value}'" in err
    assert not out.exists()


def test_the_soak_refuses_a_report_it_could_not_write_before_it_plays(capsys, tmp_path):
    out = tmp_path / "no" / "soak.json"
    assert "argument --json: the folder" in _refused(soak.main, ["--json", str(out)], capsys)


@pytest.mark.parametrize(
    ("flag", "value"), [("--runners", "0"), ("--repeats", "0"), ("--ticks", "-5"), ("--envs-per-runner", "0")]
)
def test_the_rllib_sampling_refuses_a_count_below_one(flag, value, capsys):
    err = _refused(rllib_sampling.main, [flag, value], capsys)
    assert f"argument {flag}: {AT_LEAST_1}, got '{value}'" in err


@pytest.mark.skipif(importlib.util.find_spec("ray") is not None, reason="ray is installed")
def test_the_rllib_sampling_without_ray_names_the_extra(capsys):
    assert "pip install 'nertz-env[rllib]'" in _refused(rllib_sampling.main, ["--repeats", "1"], capsys)


def test_bench_refuses_more_threads_than_numba_has_before_measuring(capsys, tmp_path):
    most, out = numba.config.NUMBA_NUM_THREADS, tmp_path / "bench.json"
    err = _refused(throughput.main, ["--threads", str(most + 1), "--json", str(out)], capsys)
    assert f"argument --threads: expected an integer from 1 to {most} (numba's threads), got {most + 1}" in err
    assert not out.exists()


BAD_RLLIB = [("--learning-rate", "nan", "accepted a finite number > 0"),
             ("--learning-rate", "0", "accepted a finite number > 0"),
             ("--ent-coef", "-0.01", "accepted a finite number >= 0"),
             ("--ent-coef", "inf", "accepted a finite number >= 0"),
             ("--iterations", "0", "accepted an integer >= 1"), ("--num-epochs", "0", "accepted an integer >= 1"),
             ("--train-batch-size", "-1", "accepted an integer >= 1"),
             ("--minibatch-size", "0", "accepted an integer >= 1"),
             ("--num-envs-per-env-runner", "0", "accepted an integer >= 1"),
             ("--num-env-runners", "-1", "accepted an integer >= 0"), ("--seed", "-1", "accepted an integer >= 0"),
             ("--eval-deals", "-2", "accepted an integer >= 0"),
             ("--hidden", "256 0", "accepted layer sizes >= 1")]  # fmt: skip


@pytest.mark.parametrize(("flag", "value", "accepted"), BAD_RLLIB)
def test_train_rllib_refuses_a_number_out_of_range_before_ray_or_a_run_directory(flag, value, accepted, tmp_path):
    runs = tmp_path / "runs"
    with pytest.raises(ValueError, match=rf"^{flag} \S.*: {accepted}$"):
        train_rllib.main([flag, *value.split(), "--out-dir", str(runs)])
    assert not runs.exists()


def test_train_rllib_on_the_command_line_is_one_line(capsys, tmp_path):
    main = lambda argv: train_rllib.main(argv, as_command=True)  # noqa: E731
    err = _refused(main, ["--learning-rate", "nan", "--out-dir", str(tmp_path / "runs")], capsys)
    assert "error: --learning-rate nan: accepted a finite number > 0" in err
    assert not (tmp_path / "runs").exists()
    err = _refused(main, ["--rules", "stock_draw", "--out-dir", str(tmp_path / "runs")], capsys)
    assert "rule options are key=value, got 'stock_draw'" in err  # was SystemExit(1), without the prog
