"""The trainer's opponent pool (``training.opponent_pool``): prioritised fictitious self-play draws
the members the learner wins least against more often, in proportion to ``(1 - w) ** power``;
the win shares follow the hands' results (R7: the top score wins, a tie splits it; R8: partners
share their team's), survive a resume exactly, and a uniform pool draws as runs before the flag."""

from __future__ import annotations

import re
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the trainer needs torch (the training extra)")

from conftest import scorer_nets  # noqa: E402

from nertz_env import NertzConfig  # noqa: E402
from nertz_env.training.opponent_pool import Opponents  # noqa: E402

SELFPLAY = "nertz_env.training.train_selfplay"
TINY = ["--num-envs", "8", "--num-steps", "16", "--eval-every", "0", "--progress", "false", "--snapshot-every", "2",
        "--bc-steps", "200", "--threads", "1", "--tensorboard", "false", "--lookahead-features", "false",
        "--scripted", "greedy", "heuristic", "--pool-size", "2", "--self-play-fraction", "0.25"]  # fmt: skip


def pool(sampling="pfsp", scripted=("greedy", "heuristic"), snapshots=0, config=None, power=2.0, rate=0.5, seed=0):
    args = SimpleNamespace(scripted=scripted, seed=0, pool_size=2, sampler="pairs", pool_sampling=sampling,
                           pfsp_power=power, pfsp_rate=rate)  # fmt: skip
    out = Opponents(args, config or NertzConfig(), np.random.default_rng(seed))
    for net in scorer_nets(snapshots) if snapshots else []:
        out.add(net)
    return out


def test_pfsp_weighs_each_member_by_how_little_the_learner_wins_against_it():
    p = pool(snapshots=2)
    p.win_shares[:] = [0.5, 0.25, 0.0, 1.0]
    hard = np.array([0.5**2, 0.75**2, 1.0, 0.0])
    np.testing.assert_allclose(p.weights(), hard / hard.sum())
    assert p.weights()[3] == 0.0  # a member always beaten is never drawn
    p.win_shares[:] = 1.0  # beaten by the learner everywhere: no preference left, so uniform
    np.testing.assert_allclose(p.weights(), np.full(4, 0.25))
    np.testing.assert_allclose(pool("uniform", snapshots=2).weights(), np.full(4, 0.25))


def test_pfsp_draws_follow_the_weights_and_repeat_under_a_seed():
    p = pool(snapshots=2, seed=11)
    p.win_shares[:] = [0.6, 0.1, 0.3, 0.25]
    drawn = p.draw(40_000)
    freq = np.bincount(drawn, minlength=4) / len(drawn)
    np.testing.assert_allclose(freq, p.weights(), atol=0.01)
    again = pool(snapshots=2, seed=11)
    again.win_shares[:] = p.win_shares
    np.testing.assert_array_equal(again.draw(40_000), drawn)


def test_a_uniform_pool_draws_as_runs_before_the_flag():
    p = pool("uniform", snapshots=2, seed=5)
    np.testing.assert_array_equal(p.draw(100), np.random.default_rng(5).integers(4, size=100))


def test_scripted_members_and_the_teacher_draw_from_streams_of_their_own():
    """Two ``random`` members of a run play their own moves, and neither they nor a drawing teacher
    draw the pool's numbers (seeded with the run's seed, all of them drew alike)."""
    from nertz_env.game import Game
    from nertz_env.training import train_selfplay
    from nertz_env.training.args import parse_given

    p = pool("uniform", scripted=("random", "random"), seed=0)  # the run's seed is 0, as the pool's generator's
    game = Game(NertzConfig())
    game.reset(seed=1)
    obs, masks = np.repeat(game.obs, 64, axis=0), np.repeat(game.masks, 64, axis=0)
    first, second = (member.act_batch(obs, masks) for member in p.scripted)
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(pool("uniform", scripted=("random", "random")).scripted[0].act_batch(obs, masks),
                                  first)  # a pure function of the run's seed  # fmt: skip
    args, _ = parse_given(train_selfplay.Args, ["--seed", "0", "--teacher", "random", "--num-envs", "2"])
    teacher = train_selfplay.build(args).teacher
    pools_numbers = np.random.default_rng(0).random(8)
    for agent in (teacher, *p.scripted):
        assert not np.array_equal(agent.rng.random(8), pools_numbers)


def test_record_moves_each_members_win_share_hand_by_hand():
    p = pool(rate=0.5)  # two scripted members, both at the even share 0.25 (4 players)
    p.record(np.array([0, 0, 1]), np.array([[30, 10, 5, 0], [2, 2, 9, 1], [4, 4, 1, 4]]))
    # member 0: a win (0.25 -> 0.625), then a loss (-> 0.3125); member 1: a three-way tie (-> 0.25 + 0.5 * (1/3 - 0.25))
    np.testing.assert_allclose(p.win_shares, [0.3125, 0.25 + 0.5 * (1 / 3 - 0.25)])


def test_partners_start_at_the_even_team_share_and_record_the_teams_result():
    p = pool(config=NertzConfig(partners=True), rate=1.0)  # R8: two teams of two
    np.testing.assert_allclose(p.win_shares, [0.5, 0.5])
    p.record(np.array([1]), np.array([[12, 20]]))  # the learner's team (team 0) loses
    np.testing.assert_allclose(p.win_shares, [0.5, 0.0])


def test_a_snapshot_enters_at_the_even_share_and_the_oldest_leaves_with_its_own():
    p = pool(snapshots=2)  # pool_size 2
    p.win_shares[:] = [0.1, 0.2, 0.3, 0.4]
    p.add(scorer_nets(1, 9)[0])
    assert len(p.snapshots) == 2 and len(p) == 4
    np.testing.assert_allclose(p.win_shares, [0.1, 0.2, 0.4, 0.25])  # the snapshot at 0.3 left


def test_the_summary_names_each_scripted_member_and_the_snapshots_share():
    p = pool(scripted=("greedy", "heuristic:depth=3"), snapshots=2)
    p.win_shares[:] = [0.5, 0.25, 0.0, 0.5]
    hard = np.array([0.25, 0.5625, 1.0, 0.25])
    assert p.summary() == pytest.approx({"win_share/0_greedy": 0.5, "win_share/1_heuristic_depth_3": 0.25,
                                         "win_share/snapshots_mean": 0.25,
                                         "draw_share/snapshots": 1.25 / hard.sum()})  # fmt: skip
    assert set(pool(snapshots=0).summary()) == {"win_share/0_greedy", "win_share/1_heuristic"}


def test_an_unknown_sampling_is_refused_by_name():
    with pytest.raises(ValueError, match="--pool-sampling best: accepted uniform, pfsp"):
        pool("best")


def run(*args, ok=True):
    res = subprocess.run([sys.executable, "-W", "ignore", "-m", SELFPLAY, *args], capture_output=True, text=True,
                         timeout=600)  # fmt: skip
    assert (res.returncode == 0) == ok, res.stderr[-3000:]
    return res


def test_a_pfsp_run_resumes_exactly_with_its_win_shares(tmp_path):
    common = [*TINY, "--pool-sampling", "pfsp", "--pfsp-rate", "0.2", "--total-steps", "4000", "--save-every", "3"]
    run(*common, "--run-dir", str(tmp_path / "a"))
    run(*common, "--run-dir", str(tmp_path / "b"), "--stop-after", "5")
    run("--resume", str(tmp_path / "b" / "checkpoint.pt"), "--progress", "false")
    a, b = (torch.load(tmp_path / d / "checkpoint.pt", weights_only=False) for d in "ab")
    assert all(torch.equal(a["net"][k], b["net"][k]) for k in a["net"])
    np.testing.assert_array_equal(a["pool_win_shares"], b["pool_win_shares"])
    np.testing.assert_array_equal(a["opponent"], b["opponent"])
    assert len(a["pool_win_shares"]) == 4 and not np.allclose(a["pool_win_shares"][:2], 0.25)  # hands were recorded
    a["pool_win_shares"] = np.zeros(3)  # a damaged checkpoint: the wrong number of members
    torch.save(a, tmp_path / "bad.pt")
    res = run("--resume", str(tmp_path / "bad.pt"), "--progress", "false", ok=False)
    assert "its contents do not fit this trainer" in res.stderr and "pool_win_shares" in res.stderr


BAD_PFSP = [("pfsp_rate", 0.0, "(0, 1]"), ("pfsp_rate", 1.5, "(0, 1]"), ("pfsp_power", -1.0, ">= 0"),
            ("pfsp_power", float("nan"), ">= 0")]  # fmt: skip


@pytest.mark.parametrize("name, value, accepted", BAD_PFSP)
def test_bad_pfsp_settings_are_refused_by_name(name, value, accepted):
    from nertz_env.training import train_selfplay

    with pytest.raises(ValueError, match=rf"--{name.replace('_', '-')} {value}: accepted .*{re.escape(accepted)}"):
        train_selfplay.check_args(train_selfplay.Args(pool_sampling="pfsp", **{name: value}))
