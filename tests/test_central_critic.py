"""``train_selfplay --central-critic true``: advantages from a critic that also sees the hidden cards."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")

from nertz_env.agents.policy import load_network  # noqa: E402
from nertz_env.engine.constants import HIDDEN_SIZE  # noqa: E402
from nertz_env.training.central_critic import diagnostics, explained_variance  # noqa: E402
from nertz_env.training.central_critic import main as diagnostics_main  # noqa: E402
from nertz_env.training.selfplay_ppo import Rollout, advantages, collect  # noqa: E402
from nertz_env.training.train_selfplay import build, main, restore, start  # noqa: E402

SMALL = ["--num-envs", "4", "--num-steps", "8", "--eval-every", "0", "--progress", "false", "--threads", "1"]
SMALL += ["--lookahead-features", "false", "--scripted", "greedy", "--bc-steps", "80", "--snapshot-every", "2"]
CENTRAL = ["--central-critic", "true", "--tensorboard", "false"]


def test_each_learner_seat_sees_every_seats_hidden_cards_its_own_first(tmp_path):
    """R9 hides the Nertz piles, stocks and wastes; the critic's input holds them, egocentric like
    the observation: block k is the seat k after the learner's."""
    args, _, _ = start(SMALL + CENTRAL + ["--run-dir", str(tmp_path), "--self-play-fraction", "0.5",
                                          "--total-steps", "4096"])  # fmt: skip
    t = build(args)
    restore(t, None)
    for _ in range(5):  # a few ticks in, so wastes and stocks have moved
        t.envs.step(t.envs.sample_actions())
    hidden = t.critic.hidden_cards(t.envs).numpy()
    states, layout, players = t.envs.states(), t.envs.layout, t.envs.num_players
    assert hidden.shape == (t.seats.n_learn, players * HIDDEN_SIZE) and hidden.any()
    for row, flat in enumerate(t.seats.learn_idx):
        game, seat = divmod(int(flat), players)
        for k in range(players):
            q = (seat + k) % players
            for j, part in enumerate(("nertz_order", "stock_order", "waste_order")):
                block = hidden[row, k * HIDDEN_SIZE + j * 52 : k * HIDDEN_SIZE + (j + 1) * 52]
                np.testing.assert_array_equal(block, states[game, layout.state_slices[f"seat{q}.{part}"]])


def test_the_advantages_are_taken_over_the_central_critics_values(tmp_path):
    """GAE's returns minus its advantages are the values it used: the central critic's, not the
    network's value head."""
    args, _, _ = start(SMALL + CENTRAL + ["--run-dir", str(tmp_path), "--total-steps", "4096"])
    t = build(args)
    loop = restore(t, None)[0]
    buf = Rollout.for_trainer(t)
    collect(t, buf, loop, bc_coef=0.0)
    adv, ret = advantages(t, buf, loop)
    central = t.critic.values(t.net, buf.obs.reshape(t.batch_size, -1), buf.hidden.reshape(t.batch_size, -1))
    torch.testing.assert_close(ret - adv, central.reshape(ret.shape))
    assert not torch.allclose(ret - adv, buf.values)
    assert buf.hidden.any()


def test_a_central_critic_run_resumes_as_one_and_saves_a_plain_policy(tmp_path):
    """The critic and its optimiser are in the checkpoint, so a resumed run equals an uninterrupted
    one; the saved policy is an ordinary move scorer that plays from observations alone."""
    common = SMALL + CENTRAL + ["--total-steps", "320", "--save-every", "1"]
    main(common + ["--run-dir", str(tmp_path / "a")])
    main(common + ["--run-dir", str(tmp_path / "b"), "--stop-after", "2"])
    main(["--resume", str(tmp_path / "b" / "checkpoint.pt"), "--progress", "false"])
    a = torch.load(tmp_path / "a" / "checkpoint.pt", weights_only=False)
    b = torch.load(tmp_path / "b" / "checkpoint.pt", weights_only=False)
    assert a["update"] == b["update"] == 4 and a["args"]["central_critic"]
    for name, weight in a["net"].items():
        torch.testing.assert_close(b["net"][name], weight, rtol=0, atol=0)
    for name, weight in a["critic"]["model"].items():
        torch.testing.assert_close(b["critic"]["model"][name], weight, rtol=0, atol=0)
    net, _, blob = load_network(tmp_path / "a" / "policy.pt")
    assert set(blob["state_dict"]) == set(a["net"]) and not any("critic" in k for k in blob["state_dict"])


def test_without_the_flag_the_run_is_unchanged_and_an_old_checkpoint_resumes_without_it(tmp_path):
    """No critic is built (the seed's draws are as before the flag) and none is saved; a checkpoint
    written before the flag existed (no ``central_critic`` in its arguments) resumes without it."""
    common = SMALL + ["--total-steps", "128", "--tensorboard", "false"]
    main(common + ["--run-dir", str(tmp_path / "a")])
    saved = torch.load(tmp_path / "a" / "checkpoint.pt", weights_only=False)
    assert "critic" not in saved and saved["args"]["central_critic"] is False
    del saved["args"]["central_critic"]
    torch.save(saved, tmp_path / "a" / "checkpoint.pt")
    args, _, resume = start(["--resume", str(tmp_path / "a" / "checkpoint.pt"), "--progress", "false"])
    assert args.central_critic is False and build(args).critic is None
    fresh = build(start(common + ["--run-dir", str(tmp_path / "c")])[0]).net.state_dict()
    with_critic = build(start(common + CENTRAL + ["--run-dir", str(tmp_path / "d")])[0]).net.state_dict()
    assert all(torch.equal(fresh[k], with_critic[k]) for k in fresh)  # the critic is drawn after the network


def test_the_critic_keeps_its_own_learning_rate_while_the_policys_anneals(tmp_path):
    """``--critic-lr``: the hidden-card critic is fitted at that rate throughout; without it (0),
    at the policy's annealed rate. A rate below 0 or not finite is refused before anything runs."""
    for critic_lr, expected in (("0.002", 0.002), ("0", None)):
        run = tmp_path / critic_lr
        main(SMALL + CENTRAL + ["--total-steps", "400", "--critic-lr", critic_lr, "--run-dir", str(run)])
        saved = torch.load(run / "checkpoint.pt", weights_only=False)
        policy_lr = saved["optimizer"]["param_groups"][0]["lr"]
        critic_lr_used = saved["critic"]["optimizer"]["param_groups"][0]["lr"]
        assert policy_lr < 3e-4  # annealed over the PPO phase
        assert critic_lr_used == (expected if expected is not None else policy_lr)
    for bad in ("-0.1", "nan"):
        with pytest.raises(ValueError, match=f"--critic-lr {bad}: accepted a finite number >= 0"):
            start(SMALL + CENTRAL + ["--critic-lr", bad, "--run-dir", str(tmp_path / "bad")])
    assert not (tmp_path / "bad").exists()


def test_explained_variance_is_one_for_a_perfect_critic_and_zero_for_the_mean():
    returns = torch.tensor([1.0, -2.0, 3.0, 0.5])
    assert explained_variance(returns, returns) == 1.0
    assert explained_variance(torch.full((4,), float(returns.mean())), returns) == pytest.approx(0.0)
    assert np.isnan(explained_variance(returns, torch.ones(4)))


def test_the_diagnostics_read_a_runs_ppo_phase_from_its_log(tmp_path, capsys):
    """``python -m nertz_env.training.central_critic RUN``: both critics' explained variance, the KL and the
    clip fraction over the PPO phase (the updates after cloning), from the run's ``scalars.jsonl``
    (no TensorBoard needed), and from its TensorBoard log for a run made before that file."""
    run = ["--central-critic", "true", "--total-steps", "320", "--run-dir", str(tmp_path / "run")]
    main(SMALL + run + ["--tensorboard", "false"])
    figures = diagnostics(tmp_path / "run", window=2)
    assert figures["losses/clipfrac"]["updates"] == 3  # 4 updates, the first cloning
    assert figures["central/explained_central"]["updates"] == 3 and figures["losses/approx_kl"]["mean"] >= 0
    diagnostics_main([str(tmp_path / "run"), "--window", "2", "--out", str(tmp_path / "d.json")])
    assert "central/explained_network" in capsys.readouterr().out and (tmp_path / "d.json").is_file()
    pytest.importorskip("tensorboard")
    main(SMALL + run[:-1] + [str(tmp_path / "tb")])
    (tmp_path / "tb" / "scalars.jsonl").unlink()  # as a run from before the file
    from_tensorboard = diagnostics(tmp_path / "tb", window=2)  # the same run; TensorBoard keeps float32
    assert from_tensorboard.keys() == figures.keys()
    assert all(from_tensorboard[tag] == pytest.approx(figures[tag], rel=1e-6) for tag in figures)
    with pytest.raises(SystemExit) as stop:
        diagnostics_main([str(tmp_path)])  # no log there: a clear error, not a traceback
    assert stop.value.code == 2
    assert f"error: {tmp_path} holds neither scalars.jsonl nor a TensorBoard log" in capsys.readouterr().err


def test_the_diagnostics_refuse_an_out_file_they_could_not_write_before_reading_a_run(tmp_path, capsys):
    out = tmp_path / "no" / "such" / "d.json"  # was a traceback after every run was read
    with pytest.raises(SystemExit) as exit_info:
        diagnostics_main([str(tmp_path), "--out", str(out)])
    assert exit_info.value.code == 2
    assert f"argument --out: the folder '{out.parent}' of '{out}' does not exist" in capsys.readouterr().err


def test_the_diagnostics_refuse_a_window_below_one(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        diagnostics_main([str(tmp_path), "--window", "0"])
    assert exit_info.value.code == 2
    assert "argument --window: expected an integer >= 1, got '0'" in capsys.readouterr().err
