"""``train_selfplay --oracle-policy true``: the policy sees the hidden cards while it learns, through
an input that fades out (``training.oracle``), and saves a policy that plays without them."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from nertz_env.agents.policy import load_network  # noqa: E402
from nertz_env.training.oracle import oracle_weight  # noqa: E402
from nertz_env.training.selfplay_ppo import Batch, Rollout, advantages, collect, loss_terms, oracle_pre  # noqa: E402
from nertz_env.training.train_selfplay import apply_schedule, build, main, restore, start  # noqa: E402

SMALL = ["--num-envs", "4", "--num-steps", "8", "--eval-every", "0", "--progress", "false", "--threads", "1"]
SMALL += ["--lookahead-features", "false", "--scripted", "greedy", "--snapshot-every", "2", "--tensorboard", "false"]
ORACLE = ["--oracle-policy", "true", "--oracle-fade", "0.5"]


def trainer(tmp_path, *flags: str):
    args, _, _ = start(SMALL + ORACLE + ["--run-dir", str(tmp_path), *flags])
    t = build(args)
    return t, restore(t, None)[0]


def test_the_oracle_weight_is_0_while_cloning_then_fades_from_1_to_0():
    assert oracle_weight(0.5, cloning=True, ppo_progress=-0.5) == 0.0
    assert oracle_weight(0.5, cloning=False, ppo_progress=0.0) == 1.0
    assert oracle_weight(0.5, cloning=False, ppo_progress=0.25) == pytest.approx(0.5)
    assert oracle_weight(0.5, cloning=False, ppo_progress=0.5) == 0.0
    assert oracle_weight(0.5, cloning=False, ppo_progress=0.9) == 0.0
    assert oracle_weight(1.0, cloning=False, ppo_progress=0.75) == pytest.approx(0.25)


def test_the_trainer_sets_the_weight_of_each_update(tmp_path):
    """Eight updates of 80 decisions, two of them cloning: 0, 0, then 1, 2/3, 1/3 and 0 from the
    fourth PPO update on (the fade is half of the six PPO updates)."""
    t, _ = trainer(tmp_path, "--total-steps", "640", "--bc-steps", "160")
    assert t.num_updates == 8 and t.bc_updates == 2
    weights = []
    for update in range(1, 9):
        apply_schedule(t, update)
        weights.append(t.oracle_weight)
    np.testing.assert_allclose(weights, [0, 0, 1, 2 / 3, 1 / 3, 0, 0, 0], atol=1e-12)


def test_the_hidden_cards_move_the_policy_and_the_update_sees_what_the_rollout_saw(tmp_path):
    """With the oracle's map away from zero and its weight above 0, the rollout's moves are drawn
    from scores that depend on the hidden cards; the update recomputes the same log-probabilities
    (PPO's ratio is 1 before any step), which it would not without the hidden cards."""
    t, loop = trainer(tmp_path, "--total-steps", "640", "--bc-steps", "0")
    apply_schedule(t, 1)
    assert t.oracle_weight == 1.0
    with torch.no_grad():  # away from zeros, and from the near-even scores of a fresh network
        t.oracle.weight.normal_(0.0, 1.0)
        t.net.move_out.weight.normal_(0.0, 1.0)
    buf = Rollout.for_trainer(t)
    collect(t, buf, loop, bc_coef=0.0)
    assert buf.hidden.any()
    adv, ret = advantages(t, buf, loop)
    batch = Batch.of(t, buf, adv, ret, bc_coef=0.0)
    every_row = torch.arange(t.batch_size)
    stats = {"clipfracs": [], "agreement": []}
    loss_terms(t, batch, every_row, cloning=False, bc_coef=0.0, stats=stats)
    assert abs(stats["approx_kl"].item()) < 1e-6
    t.oracle_weight = 0.0  # the same rows scored without the hidden cards: other log-probabilities
    assert oracle_pre(t, batch.hidden) is None
    loss_terms(t, batch, every_row, cloning=False, bc_coef=0.0, stats=stats)
    assert stats["approx_kl"].item() > 1e-3


def test_the_map_learns_in_ppo_only_and_a_run_resumes_as_one_and_saves_a_plain_policy(tmp_path):
    """Cloning leaves the map at zeros (its weight is 0); PPO moves it. The map and its optimiser
    state are in the checkpoint, so a resumed run equals an uninterrupted one; ``policy.pt`` is the
    network alone."""
    common = SMALL + ORACLE + ["--total-steps", "800", "--bc-steps", "320", "--save-every", "1"]
    main(common + ["--run-dir", str(tmp_path / "a"), "--stop-after", "4"])
    cloned = torch.load(tmp_path / "a" / "checkpoint.pt", weights_only=False)
    assert cloned["update"] == 4 and not cloned["oracle"]["weight"].any()  # updates 1-4 clone
    main(["--resume", str(tmp_path / "a" / "checkpoint.pt"), "--progress", "false"])
    main(common + ["--run-dir", str(tmp_path / "b"), "--stop-after", "6"])
    main(["--resume", str(tmp_path / "b" / "checkpoint.pt"), "--progress", "false"])
    a = torch.load(tmp_path / "a" / "checkpoint.pt", weights_only=False)
    b = torch.load(tmp_path / "b" / "checkpoint.pt", weights_only=False)
    assert a["update"] == b["update"] == 10 and a["oracle"]["weight"].any()
    torch.testing.assert_close(b["oracle"]["weight"], a["oracle"]["weight"], rtol=0, atol=0)
    for name, weight in a["net"].items():
        torch.testing.assert_close(b["net"][name], weight, rtol=0, atol=0)
    _, _, blob = load_network(tmp_path / "a" / "policy.pt")
    assert set(blob["state_dict"]) == set(a["net"])


def test_a_bad_fade_is_refused_by_name(tmp_path):
    for fade in ("0", "1.5", "nan"):
        with pytest.raises(ValueError, match="--oracle-fade"):
            start(SMALL + ["--oracle-policy", "true", "--oracle-fade", fade, "--run-dir", str(tmp_path)])
