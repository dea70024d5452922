"""``training.symmetries``: the relabellings of a table that leave its play unchanged (the order of
a player's work piles, R2/R10; of the opponents under R6's random races), checked against the
engine's own table, and the policy averaged over them."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")

from nertz_env import NertzConfig, agents  # noqa: E402
from nertz_env.actions import ActionCatalogue  # noqa: E402
from nertz_env.agents.policy import SHIPPED_POLICIES  # noqa: E402
from nertz_env.game import Game  # noqa: E402
from nertz_env.training import symmetries as sym  # noqa: E402
from nertz_env.vector import sample_legal  # noqa: E402

PPO = str(SHIPPED_POLICIES["ppo"][0])


def _tables(config: NertzConfig, seeds=range(6), ticks=30):
    """Games of ``config`` after ``ticks`` ticks of random legal play."""
    for seed in seeds:
        game = Game(config)
        game.reset(seed=seed)
        for t in range(ticks):
            if game.ended:
                break
            game.step(sample_legal(game.masks, seed * 1000 + t))
        yield game


@pytest.mark.parametrize("config", [NertzConfig(), NertzConfig(num_players=3, work_piles=5, nertz_builds=True)])
def test_a_work_pile_relabelling_is_the_engines_table_with_its_piles_reordered(config):
    """Reorder seat 0's work piles in the engine's own table (R2): its observation and legal moves
    are the view's relabelling of the table's, move by move (R4, R10)."""
    for game in _tables(config, seeds=range(3)):
        obs, masks = game.obs[:1].copy(), game.masks[:1].copy()
        assert masks.sum() > 1
        for view in sym.views(config, "work"):
            order = [int(c) for c in view.name[len("work"):]]
            state = game.get_state()
            for pile in (state.work, state.work_len, state.work_owner):
                pile[0, 0] = pile[0, 0, order].copy()
            moved = Game(config)
            moved.set_state(state)
            want_obs, want_masks = sym.relabelled(view, obs, masks)
            np.testing.assert_array_equal(moved.obs[:1], want_obs, err_msg=view.name)
            np.testing.assert_array_equal(moved.masks[:1], want_masks, err_msg=view.name)
    assert len(sym.views(config, "work")) == {4: 24, 5: 120}[config.work_piles]


def test_the_views_name_moves_by_their_relabelled_piles_and_seats():
    config = NertzConfig(nertz_builds=True)
    names = ActionCatalogue(config).names
    swap = next(v for v in sym.views(config, "work") if v.name == "work1023")  # piles 0 and 1 trade places
    moved = {names[a]: names[swap.actions[a]] for a in range(len(names))}
    assert moved["work0>foundation"] == "work1>foundation" and moved["waste>under1"] == "waste>under0"
    assert moved["work1>work2:3"] == "work0>work2:3" and moved["nertz>work0"] == "nertz>work1"
    assert moved["draw"] == "draw" and moved["work1>nertz@2"] == "work0>nertz@2"
    turn = next(v for v in sym.views(config, "opponents") if v.name == "opponents231")
    seat = {names[a]: names[turn.actions[a]] for a in range(len(names))}
    assert seat["waste>nertz@1"] == "waste>nertz@3" and seat["waste>nertz@2"] == "waste>nertz@1"  # R4.8
    block = sym.ObservationLayout(config).block_size
    assert (turn.columns[block : 2 * block] == np.arange(2 * block, 3 * block)).all()  # opponent 1 reads seat 2
    assert [len(sym.views(config, g)) for g in sym.GROUPS] == [24, 4, 6]
    for group in sym.GROUPS:  # each view a relabelling: one-to-one, and the identity first
        for view in sym.views(config, group):
            assert sorted(view.actions) == list(range(len(names)))
            assert sorted(view.columns) == list(range(view.columns.size))
        first = sym.views(config, group)[0]
        assert (first.actions == np.arange(len(names))).all() and (first.columns == np.arange(first.columns.size)).all()


def test_opponents_are_alike_only_under_random_races_without_partners():
    for config in (NertzConfig(collision="seat"), NertzConfig(partners=True), NertzConfig(speed=(1, 2, 1, 1)),
                   NertzConfig(turn_based=True)):  # fmt: skip
        with pytest.raises(ValueError, match="the opponents are alike only under collision='random'"):
            sym.views(config, "opponents")
    with pytest.raises(ValueError, match="unknown group 'suits': accepted work, work-cycle, opponents"):
        sym.views(NertzConfig(), "suits")


def test_the_symmetrised_policy_plays_legal_moves_and_the_identity_alone_plays_as_the_policy():
    game = next(_tables(NertzConfig(), seeds=[4], ticks=20))
    obs, masks = game.obs.copy(), game.masks.copy()
    plain = agents.make("ppo").act_batch(obs, masks)
    identity = sym.views(NertzConfig(), "work")[:1]
    np.testing.assert_array_equal(sym.SymmetrisedPolicy(PPO, identity).act_batch(obs, masks), plain)
    averaged = sym.SymmetrisedPolicy(PPO, sym.views(NertzConfig(), "opponents"))
    chosen = averaged.act_batch(obs, masks)
    assert masks[np.arange(len(chosen)), chosen].all()
    assert repr(averaged) == f"symmetrised-policy(path={PPO}, views=6)"


def test_the_screen_pairs_each_group_with_the_policy(tmp_path, capsys):
    out = tmp_path / "s.json"
    assert sym.main(["--policy", PPO, "--groups", "work-cycle", "--hands", "3", "--games", "2",
                     "--opponents", "greedy", "greedy", "greedy", "--json", str(out)]) == 0  # fmt: skip
    record = json.loads(out.read_text())
    (row,) = record["rows"]
    assert row["group"] == "work-cycle" and row["views"] == 4 and row["agreement"]["work0123"] == 1.0
    assert all(0 <= share <= 1 for share in row["agreement"].values()) and record["tables"] > 0
    assert row["win_share_diff_ci"][0] <= row["win_share_diff"] <= row["win_share_diff_ci"][1]
    assert "work-cycle    4 views  agreement" in capsys.readouterr().out
    assert sym.main(["--table", f"one={out}", f"two={out}"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0] == "| averaged over | one | two |" and table[3].startswith("| `work-cycle` (4 views) | ")
    diff, (low, high) = row["win_share_diff"], row["win_share_diff_ci"]
    lowest = min(row["agreement"].values())
    assert table[3].endswith(f"| {diff:+.4f} [{low:+.4f}, {high:+.4f}]; {lowest:.3f} |")
    with pytest.raises(SystemExit):
        sym.main(["--table", f"one={out}", "--policy", PPO])  # a table prints kept records only
    assert "error: --table prints kept records; it takes no --policy or --json" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        sym.main(["--policy", PPO, "--groups", "suits"])
    choices = r"\(choose from '?work'?, '?work-cycle'?, '?opponents'?\)"  # quoted or not, by Python release
    assert re.search(rf"argument --groups: invalid choice: 'suits' {choices}", capsys.readouterr().err)
