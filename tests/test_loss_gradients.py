"""``training.loss_gradients`` measures each weighted term of the trainer's loss: the terms add up
to the loss the update steps on, each norm scales with its coefficient, and bad flags are refused."""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the trainer needs torch (the training extra)")

from nertz_env.training import train_selfplay  # noqa: E402
from nertz_env.training.loss_gradients import TERMS, main, measure, minibatch_norms  # noqa: E402
from nertz_env.training.selfplay_ppo import Batch, Rollout, advantages, collect, loss_terms  # noqa: E402

TINY = ["--num-envs", "2", "--num-steps", "4", "--lookahead-features", "false", "--bc-steps", "0",
        "--total-steps", "1000", "--scripted", "greedy", "--teacher", "greedy"]  # fmt: skip


def _batch(flags):
    args, _, resume = train_selfplay.start(["--tensorboard", "false", "--progress", "false", *flags])
    t = train_selfplay.build(args)
    loop, _, _ = train_selfplay.restore(t, resume)
    buf = Rollout.for_trainer(t)
    collect(t, buf, loop, args.bc_coef)
    adv, ret = advantages(t, buf, loop)
    return t, Batch.of(t, buf, adv, ret, args.bc_coef), args.bc_coef


def test_the_total_is_the_gradient_of_the_loss_the_update_steps_on():
    t, batch, bc_coef = _batch(TINY)
    rows = torch.arange(t.batch_size)
    norms = minibatch_norms(t, batch, rows, cloning=False, bc_coef=bc_coef)
    assert {f"{k}_network" for k in TERMS} <= set(norms)
    # The update's own sum, backpropagated by hand.
    t.net.zero_grad()
    terms = loss_terms(t, batch, rows, False, bc_coef, {"clipfracs": [], "agreement": []})
    (terms["value"] + terms["teacher"] + terms["policy"] - terms["entropy"]).backward()
    by_hand = float(torch.sqrt(sum((p.grad.double() ** 2).sum() for p in t.net.parameters() if p.grad is not None)))
    assert norms["total_network"] == pytest.approx(by_hand, rel=1e-6)
    assert norms["value_summary"] <= norms["value_network"] + 1e-12
    assert norms["teacher_network"] > 0 and norms["policy_network"] > 0


def test_each_term_scales_with_its_coefficient():
    low, high = (measure([*TINY, "--vf-coef", str(c), "--bc-coef", str(b), "--seed", "3"], updates=1)
                 for c, b in ((0.5, 0.1), (1.0, 0.3)))  # fmt: skip
    assert high["value_network"] == pytest.approx(2 * low["value_network"], rel=1e-6)
    assert high["teacher_network"] == pytest.approx(3 * low["teacher_network"], rel=1e-6)
    assert high["policy_network"] == pytest.approx(low["policy_network"], rel=1e-6)  # the same rollout


def test_a_cloning_update_has_no_policy_term_and_the_json_is_written(tmp_path, capsys):
    out = tmp_path / "g.json"
    result = main(["--updates", "1", "--json", str(out), "--", *TINY, "--bc-steps", "1000"])  # the last flag holds
    assert "policy_network" not in result and result["teacher_network"] > 0
    record = json.loads(out.read_text())
    assert record["median"] == result and record["updates"] == 1
    assert 0 < result["kept"] <= 1 and np.isfinite(result["total_network"])
    assert "teacher" in capsys.readouterr().out


def test_bad_flags_are_refused(capsys, tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        main(["--updates", "0", "--", *TINY])
    assert exit_info.value.code == 2
    assert "error: argument --updates: expected an integer >= 1, got '0'" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # refused before anything is measured
        main(["--json", str(tmp_path / "no" / "such" / "g.json"), "--", *TINY])
    assert f"argument --json: the folder '{tmp_path / 'no' / 'such'}' of " in capsys.readouterr().err


def test_a_trainer_flag_out_of_range_is_one_line_and_nothing_is_written(capsys, tmp_path):
    out = tmp_path / "g.json"
    with pytest.raises(SystemExit) as exit_info:  # was a ValueError traceback from train_selfplay.start
        main(["--json", str(out), "--", *TINY, "--gamma", "2"])
    assert exit_info.value.code == 2
    assert "error: --gamma 2.0: accepted a number in (0, 1]" in capsys.readouterr().err
    assert not out.exists()
