"""``train_selfplay --aux-hidden WEIGHT``: the observation summary also learns to predict the hidden
cards about to matter (``training.aux_hidden``); the saved policy is the network alone. The pull on
the shared layers and the exact resume are tested for both auxiliary heads in
``tests/test_aux_opponents.py``."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")

from nertz_env.training.oracle import NEAR_PER_CARD, near_cards  # noqa: E402
from nertz_env.training.selfplay_ppo import Batch, Rollout, advantages, collect, loss_terms, total_loss  # noqa: E402
from nertz_env.training.train_selfplay import build, restore, start  # noqa: E402

SMALL = ["--num-envs", "4", "--num-steps", "8", "--eval-every", "0", "--progress", "false", "--threads", "1"]
SMALL += ["--lookahead-features", "false", "--scripted", "greedy", "--snapshot-every", "2", "--tensorboard", "false"]


def trainer(tmp_path, *flags: str):
    args, _, _ = start(SMALL + ["--run-dir", str(tmp_path), "--total-steps", "640", *flags])
    t = build(args)
    return t, restore(t, None)[0]


def one_batch(t, loop):
    buf = Rollout.for_trainer(t)
    collect(t, buf, loop, bc_coef=0.0)
    adv, ret = advantages(t, buf, loop)
    return buf, Batch.of(t, buf, adv, ret, bc_coef=0.0)


def test_the_head_starts_at_zeros_and_the_network_draws_what_it_draws_without_the_flag(tmp_path):
    plain, _ = trainer(tmp_path / "a")
    aux, _ = trainer(tmp_path / "b", "--aux-hidden", "0.5")
    assert plain.aux is None and aux.aux.head.weight.shape == (4 * NEAR_PER_CARD * 52, 128)
    assert not aux.aux.head.weight.any() and not aux.aux.head.bias.any()
    for (name, weight), other in zip(plain.net.state_dict().items(), aux.net.state_dict().values()):
        torch.testing.assert_close(other, weight, rtol=0, atol=0, msg=name)


def test_the_loss_is_the_entries_cross_entropy_per_place_and_enters_the_total(tmp_path):
    """With the head at zeros every entry's logit is 0: the loss is 52 ln 2 per place (52 entries of
    ln 2 each, ten places per seat). With a random head it equals the cross-entropy worked by hand
    from ``near_cards`` of the rows' hidden cards, and the total loss adds ``WEIGHT`` x it."""
    t, loop = trainer(tmp_path, "--aux-hidden", "0.5", "--bc-steps", "0")
    buf, batch = one_batch(t, loop)
    assert buf.hidden is not None and buf.hidden.any()
    rows = torch.arange(t.batch_size)
    stats = {"clipfracs": [], "agreement": []}
    terms = loss_terms(t, batch, rows, cloning=False, bc_coef=0.0, stats=stats)
    assert stats["aux_loss"].item() == pytest.approx(52 * math.log(2), rel=1e-5)
    with torch.no_grad():
        t.aux.head.weight.normal_(0.0, 0.1)
        t.aux.head.bias.normal_(0.0, 1.0)
    terms = loss_terms(t, batch, rows, cloning=False, bc_coef=0.0, stats=stats)
    summary = t.net.summary(batch.obs)
    target = near_cards(batch.hidden, 4, t.config.stock_draw).numpy()
    logit = t.aux.head(summary).detach().numpy().astype(np.float64)
    by_hand = (np.logaddexp(0, logit) - target * logit).sum(axis=1).mean() / (4 * NEAR_PER_CARD)
    assert stats["aux_loss"].item() == pytest.approx(by_hand, rel=1e-4)
    torch.testing.assert_close(terms["aux"], 0.5 * stats["aux_loss"])
    without = {k: v for k, v in terms.items() if k != "aux"}
    torch.testing.assert_close(total_loss(terms), total_loss(without) + terms["aux"])


@pytest.mark.parametrize("value", ["-0.1", "nan", "inf"])
def test_a_bad_weight_is_refused_by_name(tmp_path, value):
    with pytest.raises(ValueError, match=f"--aux-hidden {value}: accepted a finite number >= 0"):
        start(SMALL + ["--aux-hidden", value, "--run-dir", str(tmp_path)])
