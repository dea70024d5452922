"""``train_selfplay.schedule``: the phase, learning rate and teacher pull of each update, the one
schedule the trainer and the tools that measure it (``loss_gradients``, ``profile_selfplay``) share;
``open_trainer`` builds a trainer from flags, fresh or resumed, without a run directory."""

import re
from types import SimpleNamespace

import pytest

pytest.importorskip("torch", reason="the trainer needs torch (the training extra)")

from nertz_env.training.train_selfplay import anneal_factor, main, open_trainer, schedule  # noqa: E402

# A batch is 4 ticks x 5 learner seats (one self-play game, one mixed): 2 cloning updates of 6.
TINY = ["--num-envs", "2", "--num-steps", "4", "--lookahead-features", "false", "--total-steps", "120",
        "--bc-steps", "40", "--scripted", "greedy", "--eval-every", "0", "--progress", "false",
        "--tensorboard", "false"]  # fmt: skip


def trainer(anneal_lr: bool, lr_schedule: str = "linear") -> SimpleNamespace:
    args = SimpleNamespace(learning_rate=1e-3, bc_coef=0.1, anneal_lr=anneal_lr, lr_schedule=lr_schedule)
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


def test_a_cosine_anneal_follows_half_a_cosine_wave_while_the_pull_still_fades_linearly():
    """``--lr-schedule cosine``: (1 + cos(pi progress)) / 2 of the rate; above the linear rate in the
    first half of the PPO phase, equal at its middle, below it after. Cloning keeps the full rate."""
    t, linear = trainer(anneal_lr=True, lr_schedule="cosine"), trainer(anneal_lr=True)
    assert schedule(t, 2) == (True, 1e-3, 1.0)
    rates = {update: schedule(t, update)[1] for update in (3, 4, 5, 6)}  # progress 0, 1/4, 1/2, 3/4
    assert rates[3] == pytest.approx(1e-3)
    assert rates[4] == pytest.approx(1e-3 * (1 + 0.5**0.5) / 2) and rates[4] > schedule(linear, 4)[1]
    assert rates[5] == pytest.approx(schedule(linear, 5)[1]) == pytest.approx(5e-4)
    assert rates[6] == pytest.approx(1e-3 * (1 - 0.5**0.5) / 2) and rates[6] < schedule(linear, 6)[1]
    assert [schedule(t, u)[2] for u in (4, 6)] == pytest.approx([0.075, 0.025])


def test_a_schedule_without_an_anneal_is_refused_by_name(capsys):
    with pytest.raises(ValueError, match="--lr-schedule cosine: accepted only with --anneal-lr true"):
        open_trainer([*TINY, "--lr-schedule", "cosine", "--anneal-lr", "false"])
    with pytest.raises(SystemExit) as stop:  # argparse names the accepted shapes
        open_trainer([*TINY, "--lr-schedule", "step"], as_command=True)
    assert stop.value.code == 2
    said = capsys.readouterr().err
    assert re.search(r"argument --lr-schedule: invalid choice: 'step' \(choose from '?linear'?, '?cosine'?\)", said)
    with pytest.raises(ValueError, match="learning-rate schedule 'step': accepted linear, cosine"):
        anneal_factor("step", 0.5)  # the function itself, called past the flags' check


def test_open_trainer_starts_a_fresh_run_at_update_one_and_a_resumed_one_after_its_checkpoint(tmp_path):
    t, loop, buf, first = open_trainer(TINY)
    assert first == 1 and loop.global_step == 0 and t.bc_updates == 2
    run_dir = main([*TINY, "--run-dir", str(tmp_path / "run"), "--stop-after", "3"])
    t, loop, buf, first = open_trainer(["--resume", str(run_dir / "checkpoint.pt")])
    assert first == 4 and loop.global_step == 3 * t.batch_size
    assert schedule(t, first)[0] is False  # past the two cloning updates
    assert not (tmp_path / "nertz_v0__selfplay").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["run"]
