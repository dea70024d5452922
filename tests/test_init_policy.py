"""``train_selfplay --init-policy``: a run that starts from a saved policy's weights (a clone, then PPO)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")

import shutil  # noqa: E402

from nertz_env.agents.policy import SHIPPED, load_network  # noqa: E402
from nertz_env.training.train_selfplay import build, main, restore, start  # noqa: E402

SMALL = ["--num-envs", "4", "--total-steps", "4096", "--eval-every", "0", "--progress", "false"]


def on_cpu(state: dict) -> dict:
    """A network's weights on the CPU, to compare with a policy file's wherever the run trained
    (``--device auto`` is the GPU where torch sees one)."""
    return {name: weight.cpu() for name, weight in state.items()}


LIKE_PPO = ["--lookahead-features", "true", "--lookahead-depth", "1", "--opponent-features", "true"]  # ppo's flags


def test_a_run_starts_from_the_weights_of_the_policy_it_is_given(tmp_path):
    args, _, _ = start(SMALL + ["--run-dir", str(tmp_path), *LIKE_PPO, "--init-policy", str(SHIPPED)])
    trainer = build(args)
    saved = load_network(SHIPPED)[0].state_dict()
    mine = on_cpu(trainer.net.state_dict())
    assert saved.keys() == mine.keys()
    for name, weight in saved.items():
        torch.testing.assert_close(mine[name], weight, rtol=0, atol=0)
    fresh = on_cpu(build(start(SMALL + ["--run-dir", str(tmp_path), *LIKE_PPO])[0]).net.state_dict())
    assert any(not torch.equal(fresh[k], saved[k]) for k in saved)  # without the flag: the seed's own init


def test_a_policy_of_another_shape_is_refused_with_its_flags(tmp_path):
    args, _, _ = start(SMALL + ["--run-dir", str(tmp_path), "--lookahead-features", "false", "--hidden", "64", "64",
                                "--init-policy", str(SHIPPED)])  # fmt: skip
    with pytest.raises(ValueError, match=r"--hidden 128 128 --action-hidden 64, look-ahead depth 1"):
        build(args)


def test_a_resumed_run_takes_its_weights_from_the_checkpoint_not_the_init_policy(tmp_path):
    """The initial weights matter at the start only: a resume reads the checkpoint and never the
    --init-policy file, which may since have moved."""
    init = tmp_path / "init.pt"
    shutil.copyfile(SHIPPED, init)
    run_dir = tmp_path / "run"
    main(SMALL + ["--run-dir", str(run_dir), *LIKE_PPO, "--init-policy", str(init), "--tensorboard", "false"])
    init.unlink()
    args, _, resume = start(["--resume", str(run_dir / "checkpoint.pt"), "--progress", "false"])
    assert args.init_policy == str(init)
    trainer = build(args)  # reading the removed file would raise here
    restore(trainer, resume)
    mine = on_cpu(trainer.net.state_dict())
    for name, weight in on_cpu(resume["net"]).items():
        torch.testing.assert_close(mine[name], weight, rtol=0, atol=0)


def test_a_run_with_the_cycle_columns_trains_resumes_and_refuses_a_policy_without_them(tmp_path):
    """``--cycle-features true``: the saved policy and the pool's snapshots read the stock-cycle
    columns (``agents.features.CYCLE_COLUMNS``); the shipped policy, which does not, is refused."""
    from nertz_env.agents.features import N_CYCLE_FEATURES

    cycle = ["--lookahead-features", "false", "--cycle-features", "true"]
    with pytest.raises(ValueError, match=r"look-ahead depth 1, dropped features \[\], cycle features False"):
        build(start(SMALL + ["--run-dir", str(tmp_path / "a"), *cycle, "--init-policy", str(SHIPPED)])[0])
    run_dir = tmp_path / "run"
    main(SMALL + ["--run-dir", str(run_dir), *cycle, "--tensorboard", "false", "--snapshot-every", "1"])
    net, _, blob = load_network(run_dir / "policy.pt")
    assert blob["cycle"] is True and net.move_in.in_features == N_CYCLE_FEATURES
    args, _, resume = start(["--resume", str(run_dir / "checkpoint.pt"), "--progress", "false"])
    trainer = build(args)
    restore(trainer, resume)
    assert args.cycle_features and trainer.net.cycle and trainer.pool.snapshots
    assert all(s.cycle for s in trainer.pool.snapshots)
