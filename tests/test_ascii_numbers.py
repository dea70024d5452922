"""Numbers on command lines and in specs are ASCII digits. Python's ``int`` and ``float`` also read
other scripts' digits and underscores, so ``heuristic:depth=３`` built a depth-3 agent, ``depth=1_0``
read 10, and ``nertz eval --hands ５``, ``--hands 1_0``, ``--rules stock_draw=１`` and ``--matches
--target-score ５0`` all ran. Each is refused now, naming the value; ASCII numbers read as before."""

from __future__ import annotations

import dataclasses

import pytest

from nertz_env import agents
from nertz_env.cli_checks import at_least, number_from
from nertz_env.options import ascii_float, ascii_int, parse_value
from nertz_env.training import args as trainer_args
from nertz_env.training import cli

ODD = ["３", "٣", "1_0", "５0", "１.5", "1_0.5"]  # fullwidth, Arabic-Indic, underscores


@pytest.mark.parametrize("text", ODD)
def test_other_scripts_digits_and_underscores_are_no_numbers(text):
    assert parse_value(text) == text  # the option's own check refuses the string by name
    for read in (ascii_int, ascii_float):
        with pytest.raises(ValueError, match="in ASCII digits"):
            read(text)


def test_ascii_numbers_read_as_python_reads_them():
    cases = {"5": 5, "-7": -7, "+3": 3, "007": 7, "0.5": 0.5, "1e-3": 0.001, "-2.5E2": -250.0, "true": True,
             "None": None, "word": "word"}  # fmt: skip
    for text, value in cases.items():
        assert parse_value(text) == value and type(parse_value(text)) is type(value)
    assert parse_value("inf") == float("inf") and parse_value("nan") != parse_value("nan")  # refused where used
    assert at_least(1)("12") == 12 and number_from(0)("1e-3") == 0.001


@pytest.mark.parametrize("spec", ["heuristic:depth=３", "heuristic:depth=٣", "heuristic:depth=1_0"])
def test_a_spec_number_in_other_digits_is_refused_by_name(spec):
    value = spec.partition("=")[2]
    with pytest.raises(ValueError, match=f"invalid depth='{value}': accepted an integer from 1 to"):
        agents.make_spec(spec)


@pytest.mark.parametrize("spec", ["rollout:candidates=٣", "rollout:samples=１6"])
def test_rollout_counts_given_as_text_are_ascii_digits(spec):
    key, _, value = spec.partition(":")[2].partition("=")
    with pytest.raises(ValueError, match=f"rollout: invalid {key}='{value}'"):
        agents.make_spec(spec)
    with pytest.raises(ValueError, match="rollout: invalid margin='٣'"):
        agents.make("rollout", margin="٣")


def refused(argv, capsys) -> str:
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    return err.strip()


HINT = "(numbers are written in ASCII digits 0-9, without '_')"


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["eval", "--hands", "５"], f"argument --hands: expected an integer from 1 to 1000000, got '５' {HINT}"),
        (["eval", "--hands", "1_0"], f"argument --hands: expected an integer from 1 to 1000000, got '1_0' {HINT}"),
        (["eval", "--rules", "stock_draw=１"], "argument --rules: invalid stock_draw='１': accepted 3 or 1"),
        (["eval", "--matches", "--target-score", "５0"],
         f"argument --target-score: expected an integer, got '５0' {HINT}"),
        (["eval", "--matches", "--max-match-hands", "1_0"], "argument --max-match-hands: expected an integer, got"),
        (["tournament", "--target-score", "٣"], "argument --target-score: expected an integer, got '٣'"),
        (["tournament", "--max-match-hands", "x"], "argument --max-match-hands: expected an integer, got 'x'"),
    ],
)  # fmt: skip
def test_the_commands_refuse_other_digits_by_flag(argv, says, capsys):
    prog = f"nertz {argv[0]}"
    assert refused([argv[0], "--agents", "random", "random", *argv[1:]], capsys).startswith(f"{prog}: error: {says}")


def test_play_and_watch_read_ascii_digits(capsys):
    assert "argument --target-score: expected an integer, got '５0'" in refused(
        ["play", "--match", "--target-score", "５0"], capsys)
    assert f"argument --delay: expected a number from 0 to 3600, got '0_5' {HINT}" in refused(
        ["watch", "--delay", "0_5"], capsys)


@dataclasses.dataclass
class Flags:
    seed: int = 1
    lr: float = 0.5
    widths: tuple[int, ...] = (4,)


@pytest.mark.parametrize(("argv", "says"), [(["--seed", "３"], "argument --seed: invalid int value: '３'"),
                                            (["--lr", "1_0.5"], "argument --lr: invalid float value: '1_0.5'"),
                                            (["--widths", "4", "٣"], "argument --widths: invalid int value: '٣'")])
def test_a_trainers_number_flags_read_ascii_digits(argv, says, capsys):
    with pytest.raises(SystemExit) as stop:
        trainer_args.parse(Flags, argv)
    assert stop.value.code == 2 and says in capsys.readouterr().err
    assert trainer_args.parse(Flags, ["--seed", "3", "--lr", "1e-3", "--widths", "2", "8"]) == Flags(3, 0.001, (2, 8))


def test_the_terminal_player_reads_a_move_number_in_ascii_digits():
    from nertz_env import nertz_v0
    from nertz_env.training import play

    env = nertz_v0.parallel_env(num_players=2)
    obs = env.reset(seed=0)[0]["player_0"]
    said, answers = [], iter(["١", "q"])  # Arabic-Indic one: DRAW's number, legal, but not written in ASCII
    assert play.choose(env, obs, said.append, lambda _: next(answers)) is None
    assert "'١' is not a legal move now; choose one of the moves listed" in said
    answers = iter(["1"])
    assert play.choose(env, obs, said.append, lambda _: next(answers)) == 1
