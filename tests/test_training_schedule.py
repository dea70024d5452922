"""``train_selfplay.schedule``: the phase, learning rate and teacher pull of each update, the one
schedule the trainer and the tools that measure it (``loss_gradients``, ``profile_selfplay``) share;
``open_trainer`` builds a trainer from flags, fresh or resumed, without a run directory."""

from types import SimpleNamespace

import pytest

pytest.importorskip("torch", reason="the trainer needs torch (the training extra)")

from nertz_env.training.train_selfplay import main, open_trainer, schedule  # noqa: E402

# A batch is 4 ticks x 5 learner seats (one self-play game, one mixed): 2 cloning updates of 6.
TINY = ["--num-envs", "2", "--num-steps", "4", "--lookahead-features", "false", "--total-steps", "120",
        "--bc-steps", "40", "--scripted", "greedy", "--eval-every", "0", "--progress", "false",
        "--tensorboard", "false"]  # fmt: skip


def trainer(anneal_lr: bool) -> SimpleNamespace:
    args = SimpleNamespace(learning_rate=1e-3, bc_coef=0.1, anneal_lr=anneal_lr)
    return SimpleNamespace(args=args, bc_updates=2, num_updates=6)


def test_cloning_comes_first_at_full_pull_and_the_full_rate():
    t = trainer(anneal_lr=True)
    assert schedule(t, 1) == (True, 1e-3, 1.0)
    assert schedule(t, 2) == (True, 1e-3, 1.0)


def test_the_ppo_phase_anneals_the_rate_and_fades_the_pull_from_bc_coef():
    t = trainer(anneal_lr=True)
    for update, progress in ((3, 0.0), (4, 0.25), (6, 0.75)):  # 4 PPO updates: progress 0, 1/4, 2/4, 3/4
        cloning, lr, pull = schedule(t, update)
        assert not cloning
        assert lr == pytest.approx(1e-3 * (1 - progress)) and pull == pytest.approx(0.1 * (1 - progress))


def test_without_annealing_the_rate_stays_while_the_pull_still_fades():
    cloning, lr, pull = schedule(trainer(anneal_lr=False), 6)
    assert (cloning, lr) == (False, 1e-3) and pull == pytest.approx(0.025)


def test_open_trainer_starts_a_fresh_run_at_update_one_and_a_resumed_one_after_its_checkpoint(tmp_path):
    t, loop, buf, first = open_trainer(TINY)
    assert first == 1 and loop.global_step == 0 and t.bc_updates == 2
    run_dir = main([*TINY, "--run-dir", str(tmp_path / "run"), "--stop-after", "3"])
    t, loop, buf, first = open_trainer(["--resume", str(run_dir / "checkpoint.pt")])
    assert first == 4 and loop.global_step == 3 * t.batch_size
    assert schedule(t, first)[0] is False  # past the two cloning updates
    assert not (tmp_path / "nertz_v0__selfplay").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["run"]
