"""The trainers: tiny-budget smoke runs, exact resume, checkpoints as agents, masked sampling."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")
pytest.importorskip("sb3_contrib")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_resume import eval_steps  # noqa: E402

from nertz_env import NertzConfig, agents  # noqa: E402
from nertz_env.agents.features import ActionFeatures  # noqa: E402
from nertz_env.agents.policy import build_network, build_scorer, load_network, save_policy  # noqa: E402
from nertz_env.game import Game  # noqa: E402
from nertz_env.vector import NertzVectorEnv  # noqa: E402

TINY = ["--num-envs", "4", "--num-steps", "8", "--eval-every", "0", "--progress", "false", "--snapshot-every", "2"]
TINY += ["--bc-steps", "200", "--threads", "1"]  # two updates of cloning, then PPO


def run(module, *args):
    res = subprocess.run(
        [sys.executable, "-W", "ignore", "-m", module, *args], capture_output=True, text=True, timeout=600
    )
    assert res.returncode == 0, res.stderr[-3000:]
    return res


def assert_plays_legally(agent, seed):
    """One decision per seat on a fresh deal, each one legal under the engine's mask."""
    game = Game(agent.config)
    game.reset(seed=seed)
    a = agent.act_batch(game.obs, game.masks)
    assert all(game.masks[p, a[p]] for p in range(agent.config.num_players))


def params(path):
    return torch.load(path, weights_only=False)["state_dict"]


def test_selfplay_smoke_writes_checkpoint_logs_and_a_loadable_policy(tmp_path):
    run(
        "nertz_env.training.train_selfplay",
        *TINY,
        "--total-steps",
        "400",
        "--save-every",
        "2",
        "--run-dir",
        str(tmp_path),
        "--eval-every",
        "3",
        "--eval-deals",
        "2",
    )
    for name in ("checkpoint.pt", "policy.pt", "config.json", "evals.jsonl"):
        assert (tmp_path / name).stat().st_size > 0
    assert list(tmp_path.glob("events.out.tfevents.*"))
    assert_plays_legally(agents.make("policy", path=str(tmp_path / "policy.pt")), seed=0)
    command = torch.load(tmp_path / "policy.pt", weights_only=False)["extra"]["command"]  # the command, no machine path
    assert command.startswith("python -m nertz_env.training.train_selfplay --") and f"--run-dir {tmp_path} " in command


def test_selfplay_resume_matches_an_uninterrupted_run(tmp_path):
    common = [*TINY, "--total-steps", "800", "--save-every", "3", "--tensorboard", "false"]
    run("nertz_env.training.train_selfplay", *common, "--run-dir", str(tmp_path / "a"))
    run("nertz_env.training.train_selfplay", *common, "--run-dir", str(tmp_path / "b"), "--stop-after", "4")
    step_before = torch.load(tmp_path / "b" / "checkpoint.pt", weights_only=False)["global_step"]
    run("nertz_env.training.train_selfplay", "--resume", str(tmp_path / "b" / "checkpoint.pt"), "--progress", "false")
    a, b = params(tmp_path / "a" / "policy.pt"), params(tmp_path / "b" / "policy.pt")
    assert all(torch.equal(a[k], b[k]) for k in a)
    done = torch.load(tmp_path / "b" / "checkpoint.pt", weights_only=False)["global_step"]
    assert 0 < step_before < done == torch.load(tmp_path / "a" / "checkpoint.pt", weights_only=False)["global_step"]


@pytest.mark.parametrize("mode", ["single", "selfplay"])
def test_sb3_smoke_and_resume(tmp_path, mode):
    """Either mode: a run stopped half-way and resumed ends with the weights of the run that went on
    (before, only ``single`` was resumed; ``selfplay`` pickles the batched env's tables instead). In
    ``single`` the resumed run's evaluations (at each rollout's start) begin at the checkpoint's next
    one: a run started over from the same seed would print the first again, and end the same."""
    total = "512" if mode == "single" else "1024"
    every, evals_a, evals_resumed = ("128", [128, 256, 384], [256, 384]) if mode == "single" else ("0", [], [])
    common = [
        "--mode",
        mode,
        "--num-envs",
        "2",
        "--n-steps",
        "64",
        "--batch-size",
        "64",
        "--eval-every",
        every,
        "--eval-deals",
        "2",
        "--progress",
        "false",
        "--total-steps",
        total,
    ]
    a = run("nertz_env.training.train_sb3", *common, "--out-dir", str(tmp_path / "a"))
    run_a = next((tmp_path / "a").iterdir())
    assert (run_a / "checkpoint.zip").exists() and (run_a / "policy.zip").exists()
    assert list(run_a.rglob("events.out.tfevents.*"))
    half = [c if c != total else str(int(total) // 2) for c in common]
    run("nertz_env.training.train_sb3", *half, "--out-dir", str(tmp_path / "b"))
    run_b = next((tmp_path / "b").iterdir())
    from sb3_contrib import MaskablePPO

    assert MaskablePPO.load(run_b / "checkpoint.zip").num_timesteps == int(total) // 2
    resumed = run("nertz_env.training.train_sb3", "--resume", str(run_b / "checkpoint.zip"), "--total-steps", total,
                  "--progress", "false")  # fmt: skip
    assert MaskablePPO.load(run_b / "checkpoint.zip").num_timesteps == int(total)
    assert eval_steps(a.stdout) == evals_a and eval_steps(resumed.stdout) == evals_resumed
    assert (run_a / "evals.jsonl").read_text() == (run_b / "evals.jsonl").read_text()
    pa = MaskablePPO.load(run_a / "policy.zip").policy.state_dict()
    pb = MaskablePPO.load(run_b / "policy.zip").policy.state_dict()
    assert pa.keys() == pb.keys() and all(torch.equal(pa[k], pb[k]) for k in pa)
    assert_plays_legally(agents.make("policy", path=str(run_a / "policy.zip")), seed=1)


def test_policy_save_load_round_trip_gives_identical_actions(tmp_path):
    cfg = NertzConfig()
    net = build_scorer(cfg, (32, 32), 16)
    torch.nn.init.normal_(net.move_out.weight, std=1.0)  # a net whose choices differ from move to move
    save_policy(tmp_path / "p.pt", net, cfg, (32, 32), action_hidden=16)
    loaded, cfg2, blob = load_network(tmp_path / "p.pt")
    assert cfg2 == cfg and blob["format"] == "nertz-selfplay-v2"
    env = NertzVectorEnv(16, seed=4)
    obs, masks = env.reset()
    for _ in range(20):
        obs, masks, *_ = env.step(env.sample_actions())
    o, m = torch.from_numpy(obs.reshape(64, -1)), torch.from_numpy(masks.reshape(64, -1))
    with torch.no_grad():
        la, va = net(o, m)
        lb, vb = loaded(o, m)
    assert torch.equal(la, lb) and torch.equal(va, vb)
    agent_a = agents.make("policy", path=str(tmp_path / "p.pt"))
    agent_b = agents.make("policy", path=str(tmp_path / "p.pt"))
    assert (agent_a.act_batch(o.numpy(), m.numpy()) == agent_b.act_batch(o.numpy(), m.numpy())).all()
    assert (agent_a.act_batch(o.numpy(), m.numpy()) == la.argmax(-1).numpy()).all()


def test_the_flat_mlp_format_v1_still_loads_and_plays(tmp_path):
    cfg = NertzConfig()
    game = Game(cfg)
    net = build_network(game.layout.size, len(game.catalogue), game.layout.high.astype(np.float32), (32, 32))
    save_policy(tmp_path / "p.pt", net, cfg, (32, 32))
    loaded, cfg2, blob = load_network(tmp_path / "p.pt")
    assert cfg2 == cfg and blob["format"] == "nertz-selfplay-v1"
    for seed in range(5):
        game.reset(seed=seed)
        with torch.no_grad():
            la, _ = net(torch.from_numpy(game.obs), torch.from_numpy(game.masks))
            lb, _ = loaded(torch.from_numpy(game.obs), torch.from_numpy(game.masks))
        assert torch.equal(la.argmax(-1), lb.argmax(-1))
    assert_plays_legally(agents.make("policy", path=str(tmp_path / "p.pt")), seed=3)


_SCORER = build_scorer(NertzConfig(), (16,), 8)
torch.nn.init.normal_(_SCORER.move_out.weight, std=3.0)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(0, 60))
def test_move_scorer_never_samples_an_illegal_action(seed, ticks):
    """Only the legal moves get a score; every other logit is -1e8, so sampling and argmax stay
    inside the mask on real tables of any age."""
    env = NertzVectorEnv(8, seed=seed)
    obs, masks = env.reset()
    for _ in range(ticks):
        obs, masks, *_ = env.step(env.sample_actions())
    o, m = obs.reshape(32, -1), masks.reshape(32, -1)
    torch.manual_seed(seed)
    with torch.no_grad():
        logits, _ = _SCORER(torch.from_numpy(o), torch.from_numpy(m))
        sampled = torch.distributions.Categorical(logits=logits).sample().numpy()
    rows = np.arange(32)
    assert m[rows, sampled].all() and m[rows, logits.argmax(-1).numpy()].all()
    assert ((logits > -1e7).numpy() == (m != 0)).all()


_NET = build_network(64, 30, np.ones(64, np.float32), (16,))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1), st.floats(0.02, 0.9))
def test_masked_policy_never_samples_an_illegal_action(seed, density):
    """Illegal logits are masked to -1e8: sampling and argmax stay inside the mask."""
    rng = np.random.default_rng(seed)
    masks = (rng.random((256, 30)) < density).astype(np.int8)
    masks[np.arange(256), rng.integers(30, size=256)] = 1
    obs = rng.integers(0, 2, (256, 64)).astype(np.int8)
    torch.manual_seed(seed)
    with torch.no_grad():
        logits, _ = _NET(torch.from_numpy(obs), torch.from_numpy(masks))
        sampled = torch.distributions.Categorical(logits=logits).sample().numpy()
        greedy = logits.argmax(-1).numpy()
    rows = np.arange(256)
    assert masks[rows, sampled].all() and masks[rows, greedy].all()


def test_shipped_policy_loads_by_name():
    from nertz_env.agents.policy import SHIPPED

    if not SHIPPED.exists():
        pytest.skip("no shipped policy in this checkout")
    assert_plays_legally(agents.make("ppo"), seed=2)



@pytest.mark.parametrize("lookahead, depth", [(False, 0), (True, 2), (3, 3)])
def test_a_policy_keeps_its_lookahead_depth_through_a_save(tmp_path, lookahead, depth):
    cfg = NertzConfig()
    net = build_scorer(cfg, (32, 32), 16, lookahead=lookahead)
    save_policy(tmp_path / "p.pt", net, cfg, (32, 32), action_hidden=16)
    loaded, _, blob = load_network(tmp_path / "p.pt")
    assert blob["lookahead"] == depth and loaded.features.depth == depth
    assert loaded.features.lookahead is (depth > 0)


def test_files_from_before_the_depth_setting_read_as_the_default_depth(tmp_path):
    cfg = NertzConfig()
    net = build_scorer(cfg, (32, 32), 16)
    save_policy(tmp_path / "p.pt", net, cfg, (32, 32), action_hidden=16)
    blob = torch.load(tmp_path / "p.pt", weights_only=False)
    for old, depth in ((True, 2), (False, 0)):
        blob["lookahead"] = old
        torch.save(blob, tmp_path / "old.pt")
        assert load_network(tmp_path / "old.pt")[0].features.depth == depth


def test_a_policy_trained_with_a_group_dropped_plays_with_it_dropped(tmp_path):
    """``--drop-features card``: both phases (two cloning updates, then PPO) and the saved policy
    see those columns at zero, and ``--resume`` keeps them."""
    from nertz_env.agents.features import N_FEATURES, feature_columns

    common = [*TINY, "--lookahead-features", "false", "--total-steps", "400", "--save-every", "2", "--seed", "3",
              "--tensorboard", "false", "--drop-features", "card", "--run-dir", str(tmp_path)]  # fmt: skip
    run("nertz_env.training.train_selfplay", *common, "--stop-after", "3")
    assert torch.load(tmp_path / "checkpoint.pt", weights_only=False)["args"]["drop_features"] == ("card",)
    run("nertz_env.training.train_selfplay", "--resume", str(tmp_path / "checkpoint.pt"), "--progress", "false")
    blob = torch.load(tmp_path / "policy.pt", weights_only=False)
    assert blob["drop_features"] == ["card"] and blob["extra"]["global_step"] == 400
    agent = agents.make("policy", path=str(tmp_path / "policy.pt"))
    assert agent.drop_features == ("card",) and agent.lookahead == 0
    env = NertzVectorEnv(8, seed=2, num_players=4)
    obs, masks = env.reset()
    for _ in range(20):
        obs, masks, *_ = env.step(env.sample_actions())
    o, m = obs.reshape(32, -1), masks.reshape(32, -1)
    dropped = list(feature_columns("card"))
    kept = [c for c in range(N_FEATURES) if c not in dropped]
    feats, full = agent._net.features(o, m)[2], ActionFeatures(agent.config, lookahead=False)(o, m)[2]
    assert (feats[:, dropped] == 0).all() and np.abs(full[:, dropped]).sum() > 0
    assert (feats[:, kept] == full[:, kept]).all() and np.abs(feats[:, kept]).sum() > 0
    # The first layer's weights of a zeroed column get no gradient in either phase: they stay as
    # initialised (the trainer seeds torch, then builds the network first, on one thread), while the
    # others learn.
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        torch.manual_seed(3)
        init = build_scorer(NertzConfig(num_players=4, reward="relative"), (128, 128), 64, False, ("card",))
    finally:
        torch.set_num_threads(threads)
    trained = blob["state_dict"]["move_in.weight"]
    assert torch.equal(trained[:, dropped], init.move_in.weight.detach()[:, dropped])
    assert not torch.equal(trained[:, kept], init.move_in.weight.detach()[:, kept])
    assert_plays_legally(agent, seed=4)


def test_an_unknown_feature_group_is_refused_by_the_trainer(capsys):
    from nertz_env.training import train_selfplay

    with pytest.raises(SystemExit) as exit_info:
        train_selfplay.main(["--drop-features", "cards"])
    assert exit_info.value.code == 2
    said = capsys.readouterr().err
    assert re.search(r"--drop-features: invalid choice: 'cards' \(choose from .*kind.*card.*table", said)
    args = train_selfplay.Args(drop_features=("card", "cards"))
    with pytest.raises(ValueError, match="--drop-features card cards: unknown feature group 'cards': accepted kind"):
        train_selfplay.check_args(args)


def test_policy_files_keep_their_dropped_groups_and_older_ones_drop_none(tmp_path):
    cfg = NertzConfig()
    save_policy(tmp_path / "p.pt", build_scorer(cfg, (16,), 8, False, ("nertz", "card")), cfg, (16,), action_hidden=8)
    loaded, _, blob = load_network(tmp_path / "p.pt")
    assert blob["drop_features"] == ["nertz", "card"] and loaded.features.drop_features == ("nertz", "card")
    del blob["drop_features"]  # a file written before the setting existed
    torch.save(blob, tmp_path / "old.pt")
    agent = agents.make("policy", path=str(tmp_path / "old.pt"))
    assert agent.drop_features == () and agent._net.features.dropped_columns == []
    game = Game(cfg)
    game.reset(seed=1)
    expected = ActionFeatures(cfg, lookahead=False)(game.obs, game.masks)[2]
    assert (agent._net.features(game.obs, game.masks)[2] == expected).all()
    with pytest.raises(ValueError, match="unknown feature group 'cards'"):
        build_scorer(cfg, (16,), 8, False, ("cards",))


def test_win_advantage_pays_the_top_seat_and_splits_ties():
    from nertz_env.training.selfplay_ppo import win_advantage

    done = np.array([True, False, True])
    scores = np.array([[10, 3, 10, -2], [40, 0, 0, 0], [-5, 7, 1, 0]], np.int32)
    got = win_advantage({"done": done, "scores": scores, "team_scores": scores}, np.flatnonzero(done), 4)
    assert got.tolist() == [[0.25, -0.25, 0.25, -0.25], [0.0] * 4, [-0.25, 0.75, -0.25, -0.25]]
    # R8 partners: seats p and p + P/2 share their team's win
    teams = np.array([[9, 4], [0, 0], [3, 3]], np.int32)
    got = win_advantage({"done": done, "scores": scores, "team_scores": teams}, np.flatnonzero(done), 4)
    assert got.tolist() == [[0.5, -0.5, 0.5, -0.5], [0.0] * 4, [0.0] * 4]


def test_win_advantage_agrees_with_the_evaluations_win_shares_on_played_hands():
    from nertz_env.training.selfplay_ppo import win_advantage
    from nertz_env.training.stats import win_shares

    env = NertzVectorEnv(num_envs=8, num_players=3, max_cycles=60)
    env.reset(seed=5)
    seen = 0
    for _ in range(200):
        env.step(env.sample_actions())
        episode = env.infos["episode"]
        ended = np.flatnonzero(episode["done"])
        got = win_advantage(episode, ended, 3)
        for g in range(8):
            want = [w - 1 / 3 for w in win_shares(episode["scores"][g].tolist())] if g in ended else [0.0] * 3
            assert got[g].tolist() == pytest.approx(want)
        seen += len(ended)
    assert seen >= 8


def test_the_win_and_nertz_bonuses_change_what_the_trainer_learns(tmp_path):
    common = [*TINY, "--total-steps", "400", "--tensorboard", "false", "--rules", "max_cycles=6", "--seed", "3"]
    run("nertz_env.training.train_selfplay", *common, "--run-dir", str(tmp_path / "plain"))
    run("nertz_env.training.train_selfplay", *common, "--run-dir", str(tmp_path / "win"), "--win-bonus", "5")
    plain, win = params(tmp_path / "plain" / "policy.pt"), params(tmp_path / "win" / "policy.pt")
    assert not all(torch.equal(plain[k], win[k]) for k in plain)
    assert '"win_bonus": 5.0' in (tmp_path / "win" / "config.json").read_text()
    run("nertz_env.training.train_selfplay", *common, "--run-dir", str(tmp_path / "race"), "--nertz-bonus", "2")
    race = params(tmp_path / "race" / "policy.pt")
    assert not all(torch.equal(plain[k], race[k]) for k in plain)


def test_nertz_cards_out_sums_over_a_hand_to_the_cards_that_left_the_pile():
    """What ``--nertz-bonus`` pays, summed over a hand, is the pile's size less the cards R7 counts
    as left at the end (a hand's last step reads its ``final_observation``, not the new deal)."""
    from nertz_env.agents.base import O_NERTZ_COUNT, observation_offsets
    from nertz_env.training.selfplay_ppo import nertz_cards_out

    env = NertzVectorEnv(num_envs=6, num_players=3, nertz_pile_size=5, max_cycles=40)
    column = int(observation_offsets(env.config)[O_NERTZ_COUNT])
    obs, _ = env.reset(seed=11)
    total, checked = np.zeros((6, 3), np.int64), 0
    for _ in range(300):
        before = obs[..., column].astype(np.int64)
        obs, _, _, _, _, infos = env.step(env.sample_actions())
        total += nertz_cards_out(before, obs, infos, column)
        for g in np.flatnonzero(infos["episode"]["done"]):
            left = infos["final_observation"][g, :, column]
            assert total[g].tolist() == (5 - left).tolist()
            checked += int((left < 5).sum())
            total[g] = 0
    assert (total >= 0).all() and checked >= 6  # hands ended with cards gone from their piles


@pytest.mark.parametrize("name", ["win_bonus", "nertz_bonus"])
@pytest.mark.parametrize("bonus", [-1.0, float("nan"), float("inf")])
def test_a_bad_win_or_nertz_bonus_is_refused(name, bonus):
    from nertz_env.training import train_selfplay

    flag = name.replace("_", "-")
    with pytest.raises(ValueError, match=rf"--{flag} .*: accepted a finite number >= 0"):
        train_selfplay.check_args(train_selfplay.Args(**{name: bonus}))


@pytest.mark.parametrize("greedy", [True, False])
def test_a_policy_can_leave_the_call_to_the_heuristics_rule(tmp_path, greedy):
    """``call="ahead"``: CALL (R4.6) exactly where it is legal and the heuristic's rule calls,
    never elsewhere; every other decision is the network's own, among the moves that are not CALL."""
    from nertz_env.actions import ACTION_CALL

    cfg = NertzConfig(nertz_pile_size=4)  # Nertz piles empty often: CALL is legal in many rows
    net = build_scorer(cfg, (16,), 8)
    torch.nn.init.normal_(net.move_out.weight, std=0.5)
    save_policy(tmp_path / "p.pt", net, cfg, (16,), action_hidden=8)
    ruled = agents.make("policy", path=str(tmp_path / "p.pt"), config=cfg, call="ahead", greedy=greedy)
    plain = agents.make("policy", path=str(tmp_path / "p.pt"), config=cfg, greedy=greedy)
    judge = agents.make("heuristic", config=cfg, depth=1, call="ahead")
    env = NertzVectorEnv(32, seed=0, nertz_pile_size=4)
    obs, masks = env.reset()
    called = declined = 0
    for _ in range(120):
        o, m = obs.reshape(-1, env.obs_dim), masks.reshape(-1, env.num_actions)
        mine, theirs, rule = ruled.act_batch(o, m), plain.act_batch(o, m), judge.act_batch(o, m)
        can = m[:, ACTION_CALL] != 0
        assert ((mine == ACTION_CALL) == (can & (rule == ACTION_CALL))).all()
        assert m[np.arange(len(mine)), mine].all()
        if greedy:  # without CALL legal the network alone decides
            assert (mine[~can] == theirs[~can]).all()
        called += int((can & (rule == ACTION_CALL)).sum())
        declined += int((can & (rule != ACTION_CALL)).sum())
        obs, masks, *_ = env.step(env.sample_actions())
    assert called > 0 and declined > 0
    with pytest.raises(ValueError, match=r"call='later' for p.pt: accepted policy, ahead, safe, now \(.pt only\)"):
        agents.make("policy", path=str(tmp_path / "p.pt"), config=cfg, call="later")
