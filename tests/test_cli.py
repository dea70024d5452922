"""The ``nertz`` command line: a person plays by number or name and is told what the bots did;
every argument is checked before work starts, and a mistake is one line with exit code 2."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import zipfile

import pytest
from conftest import needs_pillow

from nertz_env.training import cli


def run(args, stdin="", env=None):
    return subprocess.run(
        [sys.executable, "-m", "nertz_env.training.cli", *args],
        input=stdin, capture_output=True, text=True, timeout=300, env=env,
    )


def test_play_accepts_numbers_names_and_answers_bad_input_with_the_legal_moves():
    res = run(["play", "--players", "3", "--opponents", "greedy"], stdin="draw\n99\nfoo\n\n1\nq\n")
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    assert "'99' is not a legal move now" in res.stdout and "'foo' is not a legal move now" in res.stdout
    assert res.stdout.count("your moves:") >= 5 and "[1] draw" in res.stdout
    assert res.stdout.rstrip().endswith("bye")


def test_play_says_what_every_bot_did_each_tick_and_ends_with_the_ranking_and_the_winner():
    res = run(["play", "--players", "2", "--opponents", "greedy", "--seed", "4"], stdin="\n" * 3000)
    assert res.returncode == 0, res.stderr
    ticks = re.findall(r"tick (\d+):\n  you +(\S+)\n  bot1 \(greedy\) +(.+)$", res.stdout, re.M)
    assert len(ticks) > 10 and [int(t[0]) for t in ticks] == list(range(len(ticks)))
    assert all(t[1] == "wait" for t in ticks)  # Enter is wait
    bot = [t[2] for t in ticks]
    assert "draw" in bot and any(re.fullmatch(r"\S+>foundation [2-9TJQKA][CDHS].*", m) for m in bot)
    end = res.stdout[res.stdout.index("hand over after"):].splitlines()
    assert re.fullmatch(r"hand over after \d+ ticks: .+", end[0])
    assert re.fullmatch(r"  1\. (you|bot1 \(greedy\)) +score [+-]\d+  winner", end[1])
    assert end[-1] in ("winner: bot1 (greedy)", "winner: you", "tied for first: you, bot1 (greedy)")


def test_play_ends_cleanly_when_input_runs_out():
    res = run(["play", "--players", "2", "--opponents", "random"], stdin="draw\n")
    assert res.returncode == 0 and "Traceback" not in res.stderr


def test_ctrl_c_in_play_leaves_without_a_traceback():
    proc = subprocess.Popen(
        [sys.executable, "-m", "nertz_env.training.cli", "play", "--players", "2", "--opponents", "greedy"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a test runner's worker may ignore it
    )
    while "your moves:" not in proc.stdout.readline():
        assert proc.poll() is None, proc.stderr.read()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted; bye" in out
    assert "Traceback" not in err and "KeyboardInterrupt" not in err


def test_watch_prints_every_move_and_the_ranking():
    res = run(["watch", "--agents", "heuristic", "greedy", "greedy", "--delay", "0", "--seed", "2"])
    assert res.returncode == 0, res.stderr
    assert re.search(r"^  heuristic +\S+", res.stdout, re.M) and re.search(r"^  greedy#2 +\S+", res.stdout, re.M)
    assert re.search(r"^winner: |^tied for first: ", res.stdout, re.M)


@pytest.mark.parametrize("fmt", ["html", pytest.param("gif", marks=needs_pillow)])
def test_watch_saves_a_replay(tmp_path, fmt):
    out = tmp_path / f"hand.{fmt}"
    res = run(["watch", "--agents", "greedy", "greedy", "--quiet", "--every", "10", f"--{fmt}", str(out)])
    assert res.returncode == 0, res.stderr
    assert "winner" in res.stdout and out.stat().st_size > 1000


BAD = [
    (["eval", "--agents", "greedy", "greedy", "--hands", "0"], "--hands: expected an integer from 1 to 1000000"),
    (["eval", "--agents", "greedy", "greedy", "--hands", "-5"], "argument --hands"),
    (["eval", "--agents", "greedy", "greedy", "--batch-size", "0"], "argument --batch-size"),
    (["eval", "--agents", "greedy", "greedy", "--target-score", "0"], "invalid target_score=0"),
    (["eval", "--agents", "greedy", "greedy", "--max-match-hands", "0"], "invalid max_hands=0"),
    (["eval", "--agents", "greedy", "greedy", "--out", "no/such/folder/r.json"], "does not exist"),
    (["eval", "--agents", "greedy", "greedy", "--rules", "stock_draw=2"], "invalid stock_draw=2: accepted 3 or 1"),
    (["eval", "--agents", "greedy", "greedy", "--rules", "num_players=3"], "seats are --players"),
    (["eval", "--agents", "greedy", "nobody"], "unknown agent 'nobody'"),
    (["eval", "--agents", "policy:path=nope.pt", "greedy"], "no policy file at nope.pt"),
    (["eval", "--agents", "greedy", "greedy", "--rules", "episode=match", "--target-score", "50"], "episode=match"),
    (["tournament", "--agents", "greedy", "greedy", "random", "passive", "--target-score", "-5"], "target_score=-5"),
    (["tournament", "--agents", "greedy", "greedy", "random", "passive", "--rules", "num_players=3"], "tables seat"),
    (["tournament", "--agents", "greedy", "greedy", "random", "passive", "--rules", "episode=hand"], "--target-score"),
    (["tournament", "--agents", "greedy", "greedy", "random", "passive", "--out", "no/such/t.json"], "does not exist"),
    (["watch", "--every", "0"], "argument --every"),
    (["watch", "--gif", "out.png"], "argument --gif: 'out.png' must end in .gif"),
    (["watch", "--html", "no/such/hand.html"], "does not exist"),
    (["watch", "--delay", "-1"], "argument --delay"),
    (["play", "--players", "9"], "invalid num_players=9: accepted an integer from 2 to 8"),
    (["watch", "--agents", "heuristic"], "--agents (one seat per name): invalid num_players=1"),
    (["eval", "--agents", *["greedy"] * 9, "--hands", "2"],
     "--agents and --players (a table seats --players K, else one per --agents name; more names make a pool): "
     "invalid num_players=9"),
    (["tournament", "--agents", "heuristic"], "argument --agents: a tournament needs 2 entrants or more, got 1"),
    (["play", "--players", "3", "--opponents", "greedy", "random", "passive"], "need 1 or 2 --opponents"),
    (["play", "--match", "--target-score", "0"], "invalid target_score=0"),
    (["bench", "--repeats", "0"], "argument --repeats"),
    (["bench", "--seconds", "0"], "argument --seconds"),
    (["eval", "--agents", "greedy", "greedy", "--rules", "stock_draw=1", "stock_draw=3"], "stock_draw is given twice"),
    (["play", "--rules", "preset=nerds", "preset=standard"], "argument --rules: rule option preset is given twice"),
    (["watch", "--agents", "greedy", "heuristic:depth=1,depth=2"], "agent option depth is given twice"),
    (["play", "--players", "2", "--opponents", "heuristic:"], "'heuristic:' has no options after ':'"),
    (["eval", "--agents", "greedy", "greedy", "--hands", "99999999999999999999"], "from 1 to 1000000, got '9999"),
    (["eval", "--agents", "greedy", "greedy", "--batch-size", "99999999999999"], "argument --batch-size: expected an"
                                                                                  " integer from 1 to 65536"),
    (["eval", "--agents", "greedy", "greedy", "--target-score", "50"], "--target-score sets the target of a match"),
    (["eval", "--agents", "greedy", "greedy", "--max-match-hands", "5"], "--max-match-hands caps a match"),
    (["watch", "--delay", "1e10"], "argument --delay: expected a number from 0 to 3600, got '1e10'"),
    (["bench", "--batch-sizes", "99999999999999999999"], "argument --batch-sizes: expected an integer from 1 to 6"),
    (["bench", "--batch-sizes"], "argument --batch-sizes: expected at least one argument"),
    (["tournament", "--format", "ladder", "--agents", "greedy", "greedy", "random", "passive", "--rounds", "10000000"],
     "argument --rounds: expected an integer from 1 to 1000000"),
    (["ladder", "--deals-per-pair", "10000000"], "argument --deals-per-pair: expected an integer from 1 to 1000000"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
]


@pytest.mark.parametrize(("argv", "message"), BAD, ids=[" ".join(a) for a, _ in BAD])
def test_a_bad_argument_is_one_line_with_exit_code_2(capsys, argv, message):
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if not line.startswith("nertz-env:")]
    assert stop.value.code == 2
    assert len(lines) == 1 and lines[0].startswith(f"nertz{' ' + argv[0] if argv[0] != 'frobnicate' else ''}: error")
    assert message in lines[0]


def test_benchmark_refuses_more_deals_than_it_can_index(capsys):
    """Before, a huge --deals was an OverflowError traceback once the deals were laid out."""
    with pytest.raises(SystemExit) as stop:
        cli.main(["benchmark", "eval", "--task", "nertz-4p", "--agent", "greedy", "--deals", "99999999999999999999"])
    assert stop.value.code == 2
    assert capsys.readouterr().err.endswith(
        "nertz benchmark eval: error: argument --deals: expected an integer from 2 to 1000000, got '9999999999"
        "9999999999'\n"
    )


def test_a_file_that_is_not_a_policy_is_one_line(capsys, tmp_path):
    pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")
    fake = tmp_path / "notes.pt"
    fake.write_text("root:x:0:0:root:/root:/bin/bash\n")
    with pytest.raises(SystemExit) as stop:
        cli.main(["eval", "--agents", f"policy:path={fake}", "greedy"])
    assert stop.value.code == 2
    assert f"nertz eval: error: {fake} is not a policy file saved by this project" in capsys.readouterr().err


@pytest.mark.parametrize("damage", ["no config", "NaN weights", "empty zip", "a number as path"])
def test_a_damaged_policy_file_is_one_line_with_exit_code_2(capsys, tmp_path, damage):
    """Before, a loadable but damaged policy.pt (a key deleted, NaN weights) was a traceback or a policy
    that only waited, and an empty .zip an AssertionError from inside sb3."""
    torch = pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")
    from nertz_env.agents.policy import SHIPPED

    blob = torch.load(SHIPPED, weights_only=True)
    path, says = tmp_path / "p.pt", "p.pt is not a usable policy file: it lacks 'config'"
    if damage == "no config":
        del blob["config"]
        torch.save(blob, path)
    elif damage == "NaN weights":
        blob["state_dict"]["move_out.bias"][0] = float("nan")
        torch.save(blob, path)
        says = "p.pt is not a usable policy file: state_dict['move_out.bias'] holds 1 NaN or infinite value(s)"
    elif damage == "empty zip":
        pytest.importorskip("sb3_contrib")
        path, says = tmp_path / "p.zip", "p.zip is not a MaskablePPO policy saved by train_sb3.py"
        zipfile.ZipFile(path, "w").close()
    else:
        path, says = "5", "invalid path=5: accepted the path (a str or os.PathLike)"
    with pytest.raises(SystemExit) as stop:
        cli.main(["eval", "--agents", f"policy:path={path}", "greedy", "--hands", "5"])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if not line.startswith("nertz-env:")]
    assert stop.value.code == 2 and "Traceback" not in err
    assert len(lines) == 1 and lines[0].startswith("nertz eval: error: ") and says in lines[0]


@pytest.mark.parametrize("command", ["eval", "compare", "tournament", "bench", "play", "watch"])
def test_help_names_the_nertz_command(capsys, command):
    with pytest.raises(SystemExit) as stop:
        cli.main([command, "--help"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: nertz {command} ")


# A plain `pip install nertz-env` has no torch or Pillow: block their import in a subprocess.
_BLOCK = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Block())
import importlib.util
_find = importlib.util.find_spec
importlib.util.find_spec = lambda name, *a: None if name.split(".")[0] in {blocked!r} else _find(name, *a)
from nertz_env.training.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize(
    ("argv", "blocked", "hint"),
    [
        (["watch", "--gif", "hand.gif"], ["PIL"], "--gif needs PIL, which is not installed: pip install 'nertz-env[r"),
        (["train", "selfplay"], ["torch"], "training needs torch, which is not installed: pip install 'nertz-env[tr"),
        (["train", "sb3"], ["sb3_contrib"], "pip install 'nertz-env[training]'"),
        (["eval", "--agents", "ppo", "greedy", "greedy", "greedy"], ["torch"], "pip install 'nertz-env[training]'"),
        (["benchmark", "exploit", "--task", "nertz-4p", "--agent", "greedy"], ["torch"],
         "the exploitability proxy needs torch, which is not installed: pip install 'nertz-env[training]'"),
    ],
)
def test_a_missing_extra_is_named_in_one_line(tmp_path, argv, blocked, hint):
    res = subprocess.run(
        [sys.executable, "-c", _BLOCK.format(blocked=blocked), *argv], cwd=tmp_path,
        capture_output=True, text=True, timeout=300,
    )
    lines = [line for line in res.stderr.splitlines() if not line.startswith("nertz-env:")]
    assert res.returncode == 2 and len(lines) == 1 and hint in lines[0], res.stderr
    assert not (tmp_path / "hand.gif").exists()


def test_eval_and_tournament_run_without_torch_or_pillow():
    """The main job needs neither extra: a plain install plays it."""
    res = subprocess.run(
        [sys.executable, "-c", _BLOCK.format(blocked=["torch", "PIL", "matplotlib"]), "eval", "--agents", "heuristic",
         "greedy", "--hands", "3", "--quiet"], capture_output=True, text=True, timeout=300,
    )
    assert res.returncode == 0, res.stderr
    assert re.search(r"^heuristic ", res.stdout, re.M)


def test_the_python_entry_points_check_the_same_values():
    from nertz_env.training.evaluate import evaluate
    from nertz_env.training.tournament import tournament

    for kwargs, message in (({"hands": 0}, "invalid hands=0"), ({"batch_size": -1}, "invalid batch_size=-1"),
                            ({"target_score": 0}, "invalid target_score=0"),
                            ({"max_match_hands": 0}, "invalid max_hands=0")):
        with pytest.raises(ValueError, match=message):
            evaluate(["greedy", "greedy"], **kwargs)
    with pytest.raises(ValueError, match="invalid target_score=-5"):
        tournament(["greedy"] * 4, target_score=-5)
    with pytest.raises(ValueError, match="invalid rounds=0"):
        tournament(["greedy"] * 4, format="ladder", rounds=0)


def test_the_ranking_names_the_winners():
    from nertz_env.training.play import ranking

    lines = ranking([100, 100, 50], ["you", "bot1", "bot2"], "total", winners=[1])
    assert lines == ["  1. you   total +100", "  2. bot1  total +100  winner", "  3. bot2  total +50", "winner: bot1"]
    assert ranking([3, 7], ["a", "b"], winners=[])[-1] == "  2. a  score +3"  # a hand of a match: no winner


def test_play_a_match_reports_the_totals_and_the_match_winner():
    res = run(["play", "--players", "2", "--opponents", "greedy", "--match", "--target-score", "5"], stdin="\n" * 3000)
    assert res.returncode == 0, res.stderr
    assert re.search(r"^match over after \d+ hand\(s\), to 5 \(R8\):$", res.stdout, re.M)
    assert res.stdout.rstrip().splitlines()[-1] in ("winner: bot1 (greedy)", "winner: you")


def test_play_a_match_follows_the_rules_match_end():
    """R8 ``match_end="exceed"``: the match ends only once a total goes above the target, and the
    engine, not the front end, decides it (each hand is reported as it ends)."""
    res = run(["play", "--players", "2", "--opponents", "greedy", "--match", "--target-score", "3",
               "--rules", "match_end=exceed"], stdin="\n" * 6000)  # fmt: skip
    assert res.returncode == 0, res.stderr
    hands = re.findall(r"^hand (\d+) over after \d+ ticks: ", res.stdout, re.M)
    over = re.search(r"^match over after (\d+) hand\(s\), to 3 \(R8\):$", res.stdout, re.M)
    assert over and hands == [str(h) for h in range(1, int(over.group(1)) + 1)]
    table = res.stdout[over.end():]
    winner = re.search(r"^  \d\. .*total \+?(-?\d+)  winner$", table, re.M)
    assert winner and int(winner.group(1)) > 3


def test_target_score_without_a_match_is_an_error():
    res = run(["play", "--players", "2", "--opponents", "greedy", "--target-score", "5"])
    assert res.returncode == 2 and "--target-score sets the target of a match: add --match" in res.stderr
