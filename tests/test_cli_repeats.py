"""What the commands silently took before: a flag given twice (``--hands 2 --hands 3`` played 3),
a table size given twice to ``nertz ladder --players 2 2`` (its two ladders merged), a seed above
what the library takes (``nertz eval --seed 2**128`` ran), and ``python -m
nertz_env.training.ladder --help`` (and ``evaluate``, ``tournament``) named itself ``nertz ladder``."""

from __future__ import annotations

import subprocess
import sys

import pytest
from test_cli_flags import refused

from nertz_env.cli_checks import seed_number
from nertz_env.training import cli
from nertz_env.training.evaluate import evaluate
from nertz_env.training.ladder import ladder
from nertz_env.training.tournament import tournament

ONCE = "given twice (the second value would replace the first): give it once"


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["eval", "--agents", "random", "random", "--hands", "2", "--hands", "3"], "--hands"),
        (["eval", "--agents", "random", "random", "--seed", "1", "--seed", "1"], "--seed"),
        (["tournament", "--agents", "random", "random", "--format", "ladder", "--format", "elimination"], "--format"),
        (["ladder", "--deals-per-pair", "1", "--deals-per-pair", "2"], "--deals-per-pair"),
        (["play", "--players", "2", "--players", "3"], "--players"),
        (["watch", "--agents", "random", "random", "--every", "2", "--every", "3"], "--every"),
        (["compare", "a.json", "b.json", "--agent", "0", "--agent", "1"], "--agent"),
        (["benchmark", "eval", "--task", "nertz-2p", "--task", "nertz-4p", "--agent", "greedy"], "--task"),
    ],
)  # fmt: skip
def test_a_flag_given_twice_is_refused(capsys, argv, flag):
    assert refused(argv, capsys).endswith(f"error: argument {flag}: {ONCE}")


def test_a_trainers_flag_given_twice_still_takes_the_last(tmp_path):
    """The trainers' own tools put their flags first and the user's after (``open_trainer``)."""
    pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")
    from nertz_env.training.train_selfplay import start

    assert start(["--seed", "1", "--seed", "2", "--run-dir", str(tmp_path)])[0].seed == 2


def test_a_ladder_refuses_a_table_size_given_twice(capsys):
    says = "table size(s) 2 given twice in [2, 3, 2]: one ladder per table size, give each once"
    assert refused(["ladder", "--players", "2", "3", "2"], capsys) == f"nertz ladder: error: argument --players: {says}"
    with pytest.raises(ValueError, match=r"table size\(s\) 2, 4 given twice in \[2, 2, 4, 4\]"):
        ladder([{"spec": "random", "players": None}] * 4, players=[2, 2, 4, 4])


BIG = str(2**128)


@pytest.mark.parametrize(
    "argv",
    [["eval", "--agents", "random", "random"], ["tournament", "--agents", "random", "random"], ["ladder"], ["play"],
     ["watch"], ["eval", "--agents", "random", "random", "--seed", "-1"]],
)  # fmt: skip
def test_a_seed_above_what_the_library_takes_is_refused(capsys, argv):
    seed = argv[-1] if argv[-2:-1] == ["--seed"] else BIG
    argv = argv if argv[-2:-1] == ["--seed"] else [*argv, "--seed", BIG]
    says = f"argument --seed: expected an integer from 0 to 2**128 - 1, got '{seed}'"
    assert refused(argv, capsys) == f"nertz {argv[0]}: error: {says}"


def test_the_library_refuses_the_seeds_the_commands_refuse():
    assert seed_number(str(2**128 - 1)) == 2**128 - 1 and seed_number("0") == 0
    with pytest.raises(ValueError, match=r"seed must be an integer from 0 to 2\*\*128 - 1, got 3402"):
        evaluate(["random", "random"], hands=1, seed=2**128)
    with pytest.raises(ValueError, match=r"seed must be an integer from 0 to 2\*\*128 - 1, got 3402"):
        tournament(["random", "random"], seed=2**128)
    with pytest.raises(TypeError, match="seed must be an integer from 0 to 2"):
        evaluate(["random", "random"], hands=1, seed=1.5)


@pytest.mark.parametrize("module", ["ladder", "evaluate", "tournament"])
def test_a_harness_module_run_directly_names_itself(module):
    name = f"python -m nertz_env.training.{module}"
    ran = subprocess.run([sys.executable, "-m", f"nertz_env.training.{module}", "--help"], capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    assert ran.returncode == 0 and ran.stdout.startswith(f"usage: {name} "), ran.stdout[:200] + ran.stderr[-2000:]
    bad = subprocess.run([sys.executable, "-m", f"nertz_env.training.{module}", "--seed", "-1"], capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    lines = [line for line in bad.stderr.splitlines() if not line.startswith("nertz-env:")]
    says = "argument --seed: expected an integer from 0 to 2**128 - 1, got '-1'"
    assert bad.returncode == 2 and lines == [f"{name}: error: {says}"], bad.stderr


def test_the_nertz_front_end_keeps_its_own_name(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["ladder", "--help"])
    assert stop.value.code == 0 and capsys.readouterr().out.startswith("usage: nertz ladder ")
