"""The PPO trainers refuse a number out of range (``training.args.NUMBER_RANGES``) before anything
is built or written, with the flag, the value and what is accepted; before this check a negative
clip or a discount above 1 trained silently, and a NaN coefficient failed deep in the update."""

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
