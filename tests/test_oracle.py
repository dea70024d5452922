"""``train_selfplay --oracle-policy true``: the policy sees the hidden cards while it learns, through
an input that fades out (``training.oracle``), and saves a policy that plays without them."""

from __future__ import annotations

import re

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")

from nertz_env.actions import ACTION_DRAW  # noqa: E402
from nertz_env.agents.policy import load_network  # noqa: E402
from nertz_env.training.central_critic import HiddenCards  # noqa: E402
from nertz_env.training.oracle import NEAR_PER_CARD, OracleInput, near_cards, oracle_weight  # noqa: E402
from nertz_env.training.selfplay_ppo import Batch, Rollout, advantages, collect, loss_terms, oracle_pre  # noqa: E402
from nertz_env.training.train_selfplay import apply_schedule, build, main, restore, start  # noqa: E402
from nertz_env.vector import NertzVectorEnv  # noqa: E402

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


def test_a_hold_keeps_the_weight_at_1_then_fades_to_0_at_the_fade():
    """``--oracle-hold 0.5 --oracle-fade 0.9``: Suphx's order, full weight over half the PPO phase,
    then 1 to 0 between 0.5 and 0.9 of it."""
    assert oracle_weight(0.9, cloning=True, ppo_progress=-0.1, hold=0.5) == 0.0
    for progress in (0.0, 0.25, 0.5):
        assert oracle_weight(0.9, cloning=False, ppo_progress=progress, hold=0.5) == 1.0
    assert oracle_weight(0.9, cloning=False, ppo_progress=0.6, hold=0.5) == pytest.approx(0.75)
    assert oracle_weight(0.9, cloning=False, ppo_progress=0.8, hold=0.5) == pytest.approx(0.25)
    assert oracle_weight(0.9, cloning=False, ppo_progress=0.9, hold=0.5) == 0.0
    assert oracle_weight(0.9, cloning=False, ppo_progress=1.0, hold=0.5) == 0.0


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


def test_the_trainer_holds_the_weight_before_the_fade(tmp_path):
    """Ten updates, two cloning; ``--oracle-hold 0.5 --oracle-fade 0.75``: 1 over the first four of
    the eight PPO updates, then 1/2 at the fifth (progress 4/8 to 6/8) and 0 from the sixth on."""
    t, _ = trainer(tmp_path, "--total-steps", "800", "--bc-steps", "160", "--oracle-hold", "0.5",
                   "--oracle-fade", "0.75")  # fmt: skip
    assert t.num_updates == 10 and t.bc_updates == 2
    weights = []
    for update in range(1, 11):
        apply_schedule(t, update)
        weights.append(t.oracle_weight)
    np.testing.assert_allclose(weights, [0, 0, 1, 1, 1, 1, 1, 0.5, 0, 0], atol=1e-12)


@pytest.mark.parametrize("encoding, per_seat", [("positions", 156), ("near", 520)])
def test_the_hidden_cards_move_the_policy_and_the_update_sees_what_the_rollout_saw(tmp_path, encoding, per_seat):
    """With the oracle's map away from zero and its weight above 0, the rollout's moves are drawn
    from scores that depend on the hidden cards; the update recomputes the same log-probabilities
    (PPO's ratio is 1 before any step), which it would not without the hidden cards. Either
    ``--oracle-input`` reads them (``near``: 10 entries per seat and card)."""
    t, loop = trainer(tmp_path, "--total-steps", "640", "--bc-steps", "0", "--oracle-input", encoding)
    apply_schedule(t, 1)
    assert t.oracle_weight == 1.0 and t.oracle.weight.shape == (128, 4 * per_seat)
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


def test_a_hold_not_below_the_fade_is_refused_by_name(tmp_path):
    for hold in ("-0.1", "0.5", "0.7", "nan"):
        with pytest.raises(ValueError, match="--oracle-hold"):
            start(SMALL + ORACLE + ["--oracle-hold", hold, "--run-dir", str(tmp_path)])
    with pytest.raises(ValueError, match="--oracle-hold 0.25: accepted only with --oracle-policy true"):
        start(SMALL + ["--oracle-hold", "0.25", "--run-dir", str(tmp_path)])


def test_the_oracle_flags_away_from_their_defaults_are_refused_without_the_oracle(tmp_path):
    """They would shape nothing: each is refused by name, not silently accepted."""
    for flag, value in (("--oracle-fade", "0.9"), ("--oracle-input", "near")):
        with pytest.raises(ValueError, match=f"{flag} {value}: accepted only with --oracle-policy true"):
            start(SMALL + [flag, value, "--run-dir", str(tmp_path)])
    args, _, _ = start(SMALL + ["--oracle-fade", "0.5", "--oracle-input", "positions", "--run-dir", str(tmp_path)])
    assert (args.oracle_fade, args.oracle_input) == (0.5, "positions")  # the defaults, as before


def test_the_near_entries_name_the_cards_the_next_moves_show():
    """``--oracle-input near``, checked against play (R2, R4.1): where a seat's Nertz pile loses its
    top, the new top is the card named 1 below it; where a seat DRAWs 3 from a stock of 3 or more,
    the new waste top is the card named for the first DRAW, every card named as turned next is in
    the waste, and the card named for the second DRAW is named for the first after it; where the
    waste loses its top without a DRAW, the new top is the card named 1 below it."""
    envs = NertzVectorEnv(8, num_players=4)
    _, masks = envs.reset(seed=11)
    rows = np.arange(8 * 4)
    reader, slices = HiddenCards(envs, rows), envs.layout.state_slices
    checked = {"nertz": 0, "draw": 0, "waste": 0}
    rng = np.random.default_rng(5)
    for _ in range(120):
        before_state = envs.states().copy()
        before = near_cards(reader.hidden_cards(envs), 4, 3).reshape(32, 4, NEAR_PER_CARD, 52)[:, 0].numpy()
        actions = envs.sample_actions()
        if rng.random() < 0.5:  # more DRAWs than a uniform draw over the legal moves gives
            actions[masks[..., ACTION_DRAW] > 0] = ACTION_DRAW
        _, masks, *_ = envs.step(actions)
        after_state = envs.states()
        after = near_cards(reader.hidden_cards(envs), 4, 3).reshape(32, 4, NEAR_PER_CARD, 52)[:, 0].numpy()
        for row in rows:
            game, seat = divmod(int(row), 4)
            count = {k: (int(before_state[game, slices[f"seat{seat}.{k}"]][0]),
                         int(after_state[game, slices[f"seat{seat}.{k}"]][0]))
                     for k in ("nertz_count", "stock_count", "waste_count")}  # fmt: skip
            top = {k: np.flatnonzero(after_state[game, slices[f"seat{seat}.{k}"]]) for k in ("nertz_top", "waste_top")}
            nertz, stock, waste = count["nertz_count"], count["stock_count"], count["waste_count"]
            if nertz[1] == nertz[0] - 1 >= 1:
                np.testing.assert_array_equal(top["nertz_top"], np.flatnonzero(before[row, 0]))
                checked["nertz"] += 1
            if actions[game, seat] == ACTION_DRAW and stock[0] >= 6 and stock[1] == stock[0] - 3:
                np.testing.assert_array_equal(top["waste_top"], np.flatnonzero(before[row, 3]))
                assert (after_state[game, slices[f"seat{seat}.waste_order"]][before[row, 6] > 0] > 0).all()
                np.testing.assert_array_equal(after[row, 3], before[row, 4])
                checked["draw"] += 1
            if actions[game, seat] != ACTION_DRAW and waste[1] == waste[0] - 1 >= 1:
                np.testing.assert_array_equal(top["waste_top"], np.flatnonzero(before[row, 7]))
                checked["waste"] += 1
    assert min(checked.values()) >= 3, checked


def test_an_unknown_oracle_encoding_is_refused_by_name(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        start(SMALL + ["--oracle-policy", "true", "--oracle-input", "cards", "--run-dir", str(tmp_path)])
    assert stop.value.code == 2
    refusal = capsys.readouterr().err  # quoted or not, by Python release
    assert re.search(r"argument --oracle-input: invalid choice: 'cards' \(choose from '?positions'?, '?near'?\)",
                     refusal)
    envs = NertzVectorEnv(1, num_players=4)
    with pytest.raises(ValueError, match="oracle encoding 'cards': accepted positions, near"):
        OracleInput(envs, np.arange(4), 8, "cpu", "cards")


def test_the_diagnostic_measures_how_far_the_policy_leans_on_the_hidden_cards(tmp_path, capsys):
    """``oracle_diagnostics``: a map of zeros changes nothing (KL 0, the same likeliest move
    everywhere, the same value); a large random map moves the policy; a checkpoint taken while
    cloning, where the oracle's weight is 0, is refused by name."""
    from nertz_env.training.oracle_diagnostics import lean
    from nertz_env.training.oracle_diagnostics import main as diagnose

    common = SMALL + ORACLE + ["--total-steps", "800", "--bc-steps", "160", "--save-every", "1"]
    main(common + ["--run-dir", str(tmp_path / "cloning"), "--stop-after", "1"])
    with pytest.raises(SystemExit) as refused:
        diagnose([str(tmp_path / "cloning" / "checkpoint.pt")])
    assert refused.value.code == 2 and "weight at update 2 is 0 (cloning)" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:  # before any rollout is played
        diagnose([str(tmp_path / "cloning" / "checkpoint.pt"), "--json", str(tmp_path / "no" / "lean.json")])
    assert refused.value.code == 2 and "does not exist" in capsys.readouterr().err
    main(common + ["--run-dir", str(tmp_path / "ppo"), "--stop-after", "3"])
    saved = torch.load(tmp_path / "ppo" / "checkpoint.pt", weights_only=False)
    saved["net"]["move_out.weight"].normal_(0.0, 1.0)  # away from the near-even scores of a fresh network
    for name, scale in (("zeros", 0.0), ("random", 1.0)):
        saved["oracle"]["weight"] = torch.randn_like(saved["oracle"]["weight"]) * scale
        torch.save(saved, tmp_path / f"{name}.pt")
    zeros, moved = lean(str(tmp_path / "zeros.pt")), lean(str(tmp_path / "random.pt"))
    # update 4: the second of 8 PPO updates, with the weight fading over 4
    assert zeros["update"] == 4 and zeros["oracle_weight"] == pytest.approx(0.75)
    assert zeros["kl_mean"] == 0.0 and zeros["same_likeliest_move"] == 1.0
    assert zeros["value_explains_with"] == zeros["value_explains_without"]
    assert moved["kl_mean"] > 1e-3 and moved["value_explains_with"] != moved["value_explains_without"]
    assert diagnose([str(tmp_path / "zeros.pt"), "--json", str(tmp_path / "lean.json")]) == 0
    assert '"kl_mean": 0.0' in (tmp_path / "lean.json").read_text()


def test_the_run_logs_each_updates_oracle_weight(tmp_path):
    """TensorBoard's ``charts/oracle_weight``: 0 while cloning, then the fade (ten updates, two cloning,
    a fade over four of the eight PPO updates)."""
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run = ["--tensorboard", "true", "--total-steps", "800", "--bc-steps", "160", "--run-dir", str(tmp_path)]
    main(SMALL + ORACLE + run)
    log = EventAccumulator(str(next(tmp_path.glob("events.out.tfevents.*"))), size_guidance={"scalars": 0})
    log.Reload()
    weights = [e.value for e in log.Scalars("charts/oracle_weight")]
    np.testing.assert_allclose(weights, [0, 0, 1, 0.75, 0.5, 0.25, 0, 0, 0, 0], atol=1e-6)
