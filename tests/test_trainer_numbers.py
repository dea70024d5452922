"""The PPO trainers refuse a number out of range (``training.args.NUMBER_RANGES``) or a bad rule
option (``training.args.rules_config``) before anything is built or written, with the flag, the value
and what is accepted; before these checks a negative clip or a discount above 1 trained silently,
and a NaN coefficient failed deep in the update."""

import math

import pytest

pytest.importorskip("torch", reason="the trainers need torch (the training extra)")

from nertz_env.training import selfplay_args, train_selfplay  # noqa: E402
from nertz_env.training.args import NUMBER_RANGES  # noqa: E402

NAN, INF = math.nan, math.inf
BAD = {
    "learning_rate": [0.0, -1e-3, NAN, INF],
    "gamma": [0.0, 1.01, -0.5, NAN],
    "gae_lambda": [-0.1, 1.1, NAN],
    "clip_coef": [0.0, -0.2, INF],
    "ent_coef": [-0.01, NAN, INF],
    "vf_coef": [-1.0, INF],
    "bc_coef": [-0.1, NAN],
    "max_grad_norm": [0.0, INF],
    "target_kl": [-1.0, NAN],
}
GOOD = {"learning_rate": [1e-6], "gamma": [1.0, 1e-3], "gae_lambda": [0.0, 1.0], "clip_coef": [1e-3],
        "ent_coef": [0.0], "vf_coef": [0.0], "bc_coef": [0.0], "max_grad_norm": [1e-3], "target_kl": [0.0]}  # fmt: skip


def test_every_number_of_the_self_play_trainer_is_in_the_table():
    assert set(BAD) <= set(NUMBER_RANGES) and set(BAD) == set(GOOD)
    assert set(BAD) <= {f.name for f in selfplay_args.Args.__dataclass_fields__.values()}


@pytest.mark.parametrize(("name", "value"), [(n, v) for n, vs in BAD.items() for v in vs])
def test_a_number_out_of_range_is_refused_with_its_flag_and_range(name, value):
    flag = name.replace("_", "-")
    with pytest.raises(ValueError, match=rf"^--{flag} {value}: accepted {NUMBER_RANGES[name][1][:12]}"):
        selfplay_args.check_args(selfplay_args.Args(**{name: value}))


@pytest.mark.parametrize(("name", "value"), [(n, v) for n, vs in GOOD.items() for v in vs])
def test_the_edges_of_each_range_are_accepted(name, value):
    selfplay_args.check_args(selfplay_args.Args(**{name: value}))


def test_the_trainer_refuses_before_writing_anything(tmp_path):
    run_dir = tmp_path / "run"
    with pytest.raises(ValueError, match=r"--gamma 1.5: accepted a number in \(0, 1\]"):
        train_selfplay.main(["--gamma", "1.5", "--scripted", "greedy", "--run-dir", str(run_dir)])
    assert not run_dir.exists()


def test_the_sb3_trainer_checks_the_numbers_it_has():
    train_sb3 = pytest.importorskip("nertz_env.training.train_sb3", reason="needs stable-baselines3")
    with pytest.raises(ValueError, match=r"--gamma 0.0: accepted a number in \(0, 1\]"):
        train_sb3.check_args(train_sb3.Args(gamma=0.0))
    with pytest.raises(ValueError, match="--ent-coef nan: accepted a finite number >= 0"):
        train_sb3.check_args(train_sb3.Args(ent_coef=NAN))
    train_sb3.check_args(train_sb3.Args(gamma=1.0))


@pytest.mark.parametrize(
    ("rules", "said"),
    [(("stock_draw",), "--rules stock_draw: rule options are key=value, got 'stock_draw'"),
     (("bogus=1",), "--rules bogus=1: unknown option(s) bogus; known options: aces_to_work"),
     (("work_piles=4", "stock_draw=7"), "--rules work_piles=4 stock_draw=7: invalid stock_draw=7: accepted 3 or 1"),
     (("stock_draw=1", "stock_draw=3"), "--rules stock_draw=1 stock_draw=3: rule option stock_draw is given twice")],
)  # fmt: skip
def test_a_bad_rule_option_is_refused_by_the_rules_flag(rules, said):
    """``training.args.rules_config``: before it, an unknown option was a ``TypeError`` traceback
    and ``train_sb3`` made its run directory before failing."""
    with pytest.raises(ValueError) as err:
        selfplay_args.check_args(selfplay_args.Args(rules=rules))
    assert str(err.value).startswith(said)


def test_the_rules_build_the_config_the_games_are_played_under():
    from nertz_env.config import NertzConfig
    from nertz_env.training.args import rules_config

    config = rules_config(3, "lead", ("stock_draw=1", "partners=false"))
    assert config == NertzConfig(num_players=3, reward="lead", stock_draw=1, partners=False)
    with pytest.raises(ValueError, match="num_players=9") as err:  # its own flag's error, not --rules'
        rules_config(9, "relative", ())
    assert "--rules" not in str(err.value)


def test_the_sb3_trainer_refuses_bad_rules_before_making_its_run_directory(tmp_path):
    train_sb3 = pytest.importorskip("nertz_env.training.train_sb3", reason="needs stable-baselines3")
    with pytest.raises(ValueError, match="--rules bogus=1: unknown option"):
        train_sb3.main(["--rules", "bogus=1", "--out-dir", str(tmp_path / "runs")])
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(("rule", "flag"), [("num_players=3", "--num-players"), ("reward=dense", "--reward")])
def test_a_rule_the_trainer_sets_by_its_own_flag_is_refused_in_rules(rule, flag):
    """Before, ``--rules num_players=3`` was a ``TypeError`` traceback (a keyword given twice)."""
    with pytest.raises(ValueError, match=rf"^--rules {rule}: {rule.split('=')[0]} is set by {flag}, not --rules"):
        selfplay_args.check_args(selfplay_args.Args(rules=(rule,)))


SIZES = [("seed", -1, "--seed -1: accepted an integer from 0 to 4294967295"),
         ("seed", 2**32, "--seed 4294967296: accepted an integer from 0 to 4294967295"),
         ("num_envs", 10**20, "--num-envs 100000000000000000000: accepted an integer from 1 to 65536"),
         ("hidden", (10**20,), r"--hidden \(100000000000000000000,\): accepted integers from 1 to 4096"),
         ("hidden", (64, 10**8), r"--hidden \(64, 100000000\): accepted integers from 1 to 4096")]  # fmt: skip


@pytest.mark.parametrize(("name", "value", "said"), SIZES)
def test_a_seed_or_size_the_trainers_cannot_take_is_refused_by_its_flag(name, value, said):
    """Before, a negative or huge seed failed in numpy ('expected non-negative integer', SB3's
    'Seed must be between ...' as a traceback) and a huge size in torch or numpy as a traceback."""
    with pytest.raises(ValueError, match="^" + said):
        selfplay_args.check_args(selfplay_args.Args(**{name: value}))
    train_sb3 = pytest.importorskip("nertz_env.training.train_sb3", reason="needs stable-baselines3")
    with pytest.raises(ValueError, match="^" + said):
        train_sb3.check_args(train_sb3.Args(**{name: value}))


def test_the_self_play_trainer_refuses_a_wide_action_layer():
    with pytest.raises(ValueError, match="^--action-hidden 100000: accepted integers from 1 to 4096"):
        selfplay_args.check_args(selfplay_args.Args(action_hidden=100_000))


def test_the_sb3_trainer_refuses_a_bad_opponent_before_its_run_directory(tmp_path):
    train_sb3 = pytest.importorskip("nertz_env.training.train_sb3", reason="needs stable-baselines3")
    with pytest.raises(ValueError, match="^--opponents bogus greedy greedy: unknown agent 'bogus'"):
        train_sb3.main(["--opponents", "bogus", "greedy", "greedy", "--out-dir", str(tmp_path / "runs")])
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("trainer", ["train_selfplay", "train_sb3"])
def test_an_out_dir_that_is_a_file_is_a_flag_error(tmp_path, trainer):
    """Before, making the run directory under a file was a ``NotADirectoryError`` traceback."""
    module = pytest.importorskip(f"nertz_env.training.{trainer}")
    (tmp_path / "taken").write_text("not a folder")
    with pytest.raises(ValueError, match=f"^cannot make the run directory {tmp_path / 'taken'}/nertz_v0__"):
        module.main(["--out-dir", str(tmp_path / "taken"), "--eval-every", "0"])


def test_the_sb3_trainer_refuses_opponents_it_would_not_seat(tmp_path):
    train_sb3 = pytest.importorskip("nertz_env.training.train_sb3", reason="needs stable-baselines3")
    with pytest.raises(ValueError, match="--opponents seats opponents in --mode single; --mode selfplay"):
        train_sb3.main(["--mode", "selfplay", "--opponents", "heuristic", "heuristic", "heuristic",
                        "--out-dir", str(tmp_path / "runs")])  # fmt: skip
    assert not (tmp_path / "runs").exists()
