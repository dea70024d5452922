"""``train_selfplay --aux-opponents WEIGHT``: the observation summary also learns to predict the group
of each opponent's move on the same tick (``training.aux_opponents``); the saved policy is the
network alone."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")

from test_aux_hidden import SMALL as HIDDEN_SMALL  # noqa: E402
from test_aux_hidden import one_batch  # noqa: E402
from test_aux_hidden import trainer as hidden_trainer  # noqa: E402

from nertz_env.agents.policy import load_network  # noqa: E402
from nertz_env.training.move_offsets import MOVE_GROUPS, move_groups  # noqa: E402
from nertz_env.training.selfplay_ppo import loss_terms, total_loss  # noqa: E402
from nertz_env.training.train_selfplay import main, start  # noqa: E402

SELF_PLAY = ["--self-play-fraction", "0.5"]  # two self-play games (every seat learns) and two against the pool
SMALL = HIDDEN_SMALL + SELF_PLAY


def trainer(tmp_path, *flags: str):
    return hidden_trainer(tmp_path, *SELF_PLAY, *flags)


def test_the_head_starts_at_zeros_and_the_run_draws_what_it_draws_without_the_flag(tmp_path):
    """Each trainer is built and rolls out in turn (both draw from torch's global generator)."""
    plain, plain_loop = trainer(tmp_path / "a")
    plain_buf, _ = one_batch(plain, plain_loop)
    aux, aux_loop = trainer(tmp_path / "b", "--aux-opponents", "0.5")
    aux_buf, _ = one_batch(aux, aux_loop)
    assert plain.aux_opponents is None and aux.aux_opponents.head.weight.shape == (3 * len(MOVE_GROUPS), 128)
    assert not aux.aux_opponents.head.weight.any() and not aux.aux_opponents.head.bias.any()
    for (name, weight), other in zip(plain.net.state_dict().items(), aux.net.state_dict().values()):
        torch.testing.assert_close(other, weight, rtol=0, atol=0, msg=name)
    assert plain_buf.opponent_moves is None and aux_buf.opponent_moves.shape == (8, aux.seats.n_learn, 3)
    torch.testing.assert_close(aux_buf.actions, plain_buf.actions, rtol=0, atol=0)
    torch.testing.assert_close(aux_buf.rewards, plain_buf.rewards, rtol=0, atol=0)


def test_the_targets_are_the_groups_of_the_other_seats_moves_in_the_observations_order(tmp_path):
    """For a learner at seat ``s`` of game ``g``, opponent ``k`` (1 .. 3) is seat ``(s + k) % 4``
    (R9's egocentric order), and its target is the group of that seat's move in the joint action."""
    t, _ = trainer(tmp_path, "--aux-opponents", "1.0")
    groups = move_groups(t.envs.catalogue)
    rng = np.random.default_rng(7)
    actions = rng.integers(0, t.envs.num_actions, size=(4, 4))
    got = t.aux_opponents.targets(actions).numpy()
    assert got.dtype == np.int8 and got.shape == (t.seats.n_learn, 3) == (2 * 4 + 2, 3)
    for row, flat in enumerate(t.seats.learn_idx):
        game, seat = divmod(int(flat), 4)
        expected = [MOVE_GROUPS.index(groups[actions[game, (seat + k) % 4]]) for k in (1, 2, 3)]
        assert got[row].tolist() == expected, (game, seat)
    wait_draw_call = [groups.index(name) for name in ("wait", "draw", "call")]
    assert [MOVE_GROUPS[i] for i in t.aux_opponents.group_of[wait_draw_call]] == ["wait", "draw", "call"]


def test_the_loss_is_the_groups_cross_entropy_and_enters_the_total(tmp_path):
    """At the head's zeros every group is as likely: the loss is ln(groups). With a random head it
    equals the cross-entropy worked by hand from the rollout's targets, and the total loss adds
    ``WEIGHT`` x it."""
    t, loop = trainer(tmp_path, "--aux-opponents", "0.5", "--bc-steps", "0")
    buf, batch = one_batch(t, loop)
    assert buf.opponent_moves.any()
    rows = torch.arange(t.batch_size)
    stats = {"clipfracs": [], "agreement": []}
    loss_terms(t, batch, rows, cloning=False, bc_coef=0.0, stats=stats)
    assert stats["aux_opponents_loss"].item() == pytest.approx(math.log(len(MOVE_GROUPS)), rel=1e-6)
    with torch.no_grad():
        t.aux_opponents.head.weight.normal_(0.0, 0.1)
        t.aux_opponents.head.bias.normal_(0.0, 1.0)
    terms = loss_terms(t, batch, rows, cloning=False, bc_coef=0.0, stats=stats)
    logit = t.aux_opponents.head(t.net.summary(batch.obs)).detach().numpy().astype(np.float64)
    logit = logit.reshape(t.batch_size, 3, len(MOVE_GROUPS))
    target = batch.opponent_moves.numpy().astype(np.int64)
    chosen = np.take_along_axis(logit, target[..., None], axis=2)[..., 0]
    by_hand = (np.log(np.exp(logit).sum(axis=2)) - chosen).mean()
    assert stats["aux_opponents_loss"].item() == pytest.approx(by_hand, rel=1e-5)
    torch.testing.assert_close(terms["aux_opponents"], 0.5 * stats["aux_opponents_loss"])
    without = {k: v for k, v in terms.items() if k != "aux_opponents"}
    torch.testing.assert_close(total_loss(terms), total_loss(without) + terms["aux_opponents"])


HEADS = ["aux", "aux_opponents"]  # --aux-hidden's head (``Trainer.aux``, its term and checkpoint entry), and this one's


def flag_of(head: str) -> str:
    return "--aux-hidden" if head == "aux" else "--aux-opponents"


@pytest.mark.parametrize("head", HEADS)
def test_the_loss_pulls_the_shared_layers_and_the_head_learns(tmp_path, head):
    """Each auxiliary term alone gives the observation summary's layers a gradient once its head is
    away from zeros, none to the move scores; a few steps on it alone halve it."""
    t, loop = trainer(tmp_path, flag_of(head), "1.0", "--bc-steps", "0")
    _, batch = one_batch(t, loop)
    rows = torch.arange(t.batch_size)
    losses = []
    optimizer = torch.optim.Adam(t.parameters(), lr=1e-2)
    for _ in range(30):
        terms = loss_terms(t, batch, rows, cloning=False, bc_coef=0.0, stats={"clipfracs": [], "agreement": []})
        optimizer.zero_grad()
        terms[head].backward()
        losses.append(terms[head].item())
        optimizer.step()
    assert t.net.body[0].weight.grad.abs().sum() > 0
    assert t.net.move_out.weight.grad is None or not t.net.move_out.weight.grad.any()
    assert losses[-1] < 0.5 * losses[0]


@pytest.mark.parametrize("head", HEADS)
def test_a_run_resumes_as_one_and_saves_a_plain_policy(tmp_path, head):
    """Each head and its optimiser state are in the checkpoint, so a resumed run equals an
    uninterrupted one; ``policy.pt`` is the network alone."""
    common = SMALL + [flag_of(head), "0.25", "--total-steps", "640", "--bc-steps", "160", "--save-every", "1"]
    main(common + ["--run-dir", str(tmp_path / "a")])
    main(common + ["--run-dir", str(tmp_path / "b"), "--stop-after", "5"])
    main(["--resume", str(tmp_path / "b" / "checkpoint.pt"), "--progress", "false"])
    a = torch.load(tmp_path / "a" / "checkpoint.pt", weights_only=False)
    b = torch.load(tmp_path / "b" / "checkpoint.pt", weights_only=False)
    assert a["update"] == b["update"] and a[head]["head.weight"].any()
    for part in (head, "net"):
        for name, weight in a[part].items():
            torch.testing.assert_close(b[part][name], weight, rtol=0, atol=0, msg=f"{part}.{name}")
    _, _, blob = load_network(tmp_path / "a" / "policy.pt")
    assert set(blob["state_dict"]) == set(a["net"])


@pytest.mark.parametrize("value", ["-0.1", "nan", "inf"])
def test_a_bad_weight_is_refused_by_name(tmp_path, value):
    with pytest.raises(ValueError, match=f"--aux-opponents {value}: accepted a finite number >= 0"):
        start(SMALL + ["--aux-opponents", value, "--run-dir", str(tmp_path)])
