"""The ``nertz`` command line: a person plays by number or name; bad input never tracebacks."""

from __future__ import annotations

import subprocess
import sys

import pytest


def run(args, stdin=""):
    return subprocess.run(
        [sys.executable, "-m", "nertz_env.training.cli", *args],
        input=stdin, capture_output=True, text=True, timeout=300,
    )


def test_play_accepts_numbers_names_and_answers_bad_input_with_the_legal_moves():
    res = run(["play", "--players", "3", "--opponents", "greedy"], stdin="draw\n99\nfoo\n\n1\nq\n")
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    assert "'99' is not a legal move now" in res.stdout and "'foo' is not a legal move now" in res.stdout
    assert res.stdout.count("your moves:") >= 5 and "[1] draw" in res.stdout
    assert res.stdout.rstrip().endswith("bye")


def test_play_ends_cleanly_when_input_runs_out():
    res = run(["play", "--players", "2", "--opponents", "random"], stdin="draw\n")
    assert res.returncode == 0 and "Traceback" not in res.stderr


def test_play_reports_bad_options_without_a_traceback():
    res = run(["play", "--players", "9"])
    assert res.returncode == 2 and "invalid num_players=9" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.parametrize("fmt", ["html", "gif"])
def test_watch_saves_a_replay(tmp_path, fmt):
    out = tmp_path / f"hand.{fmt}"
    res = run(["watch", "--agents", "greedy", "greedy", "--quiet", "--every", "10", f"--{fmt}", str(out)])
    assert res.returncode == 0, res.stderr
    assert "final scores:" in res.stdout and out.stat().st_size > 1000
