"""``train_selfplay --relabel``: the update learns from each minibatch's tables relabelled by one of
the game's symmetries (the order of the learner's work piles, R2/R10; of the opponents, R6), while
the rollouts play the tables as dealt."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")

from conftest import mid_hand  # noqa: E402
from test_aux_hidden import one_batch, trainer  # noqa: E402

from nertz_env import NertzConfig, agents  # noqa: E402
from nertz_env.agents.policy import build_scorer  # noqa: E402
from nertz_env.training import symmetries as sym  # noqa: E402
from nertz_env.training.selfplay_args import Args, check_args  # noqa: E402
from nertz_env.training.selfplay_ppo import loss_terms  # noqa: E402

FEATURES = ["--lookahead-features", "true", "--lookahead-depth", "1", "--opponent-features", "true"]


def test_a_moves_features_are_the_same_on_every_relabelled_table():
    """The update relabels observations and move indices only: each move's features (its effect,
    the look-ahead's value, the opponents' columns) must not depend on the piles' numbers or the
    opponents' order. ``ppo``'s feature function, and one with every optional feature group, on 64
    mid-hand tables, pair by pair."""
    obs, masks = mid_hand(num_envs=64)
    obs, masks = obs.reshape(-1, obs.shape[-1]), masks.reshape(-1, masks.shape[-1])
    every_group = build_scorer(NertzConfig(), lookahead=1, cycle=True, opponent=True, identity=True, follow=True,
                               race=True).features  # fmt: skip
    for features in (agents.make("ppo")._net.features, every_group):
        rows, acts, feats = features(obs, masks)
        assert feats.shape[1] > 40 and len(rows) > 3 * len(obs)  # several legal moves a table
        for group in ("work", "opponents"):
            for view in sym.views(NertzConfig(), group):
                moved_rows, moved_acts, moved_feats = features(*sym.relabelled(view, obs, masks))
                at = {(int(r), int(a)): k for k, (r, a) in enumerate(zip(moved_rows, moved_acts))}
                match = np.array([at[(int(r), int(view.actions[a]))] for r, a in zip(rows, acts)])
                np.testing.assert_array_equal(moved_feats[match], feats, err_msg=view.name)


def test_each_draw_is_one_relabelling_of_each_group_composed():
    relabel = sym.Relabeller(NertzConfig(), "all")
    torch.manual_seed(0)
    drawn = [relabel.draw() for _ in range(40)]
    size, moves = drawn[0][0].numel(), drawn[0][1].size
    for columns, actions in drawn:
        assert sorted(columns.tolist()) == list(range(size)) and sorted(actions.tolist()) == list(range(moves))
    assert len({tuple(c.tolist()) for c, _ in drawn}) > 20  # of 24 x 6
    work, opponents = sym.views(NertzConfig(), "work")[5], sym.views(NertzConfig(), "opponents")[3]
    obs, masks = mid_hand(num_envs=2)
    obs, masks = obs.reshape(-1, obs.shape[-1]), masks.reshape(-1, masks.shape[-1])
    both = sym.relabelled(opponents, *sym.relabelled(work, obs, masks))
    relabel.groups = [[work], [opponents]]
    columns, actions = relabel.draw()
    assert (obs[:, columns.numpy()] == both[0]).all() and (both[1][:, actions] == masks).all()
    with pytest.raises(ValueError, match="unknown relabelling 'suits': accepted work, opponents or all"):
        sym.Relabeller(NertzConfig(), "suits")


def test_the_rollouts_are_the_tables_as_played_and_the_update_sees_them_relabelled(tmp_path):
    plain, plain_loop = trainer(tmp_path / "a", *FEATURES)
    plain_buf, plain_batch = one_batch(plain, plain_loop)
    moved, moved_loop = trainer(tmp_path / "b", *FEATURES, "--relabel", "all")
    moved_buf, moved_batch = one_batch(moved, moved_loop)
    torch.testing.assert_close(moved_buf.actions, plain_buf.actions, rtol=0, atol=0)  # no draw before the update
    torch.testing.assert_close(moved_buf.obs, plain_buf.obs, rtol=0, atol=0)
    rows = torch.arange(plain.batch_size)

    def terms(t, batch):
        return loss_terms(t, batch, rows, cloning=False, bc_coef=0.0, stats={"clipfracs": [], "agreement": []})

    identity = moved.relabel.groups[0][0]
    moved.relabel.draw = lambda: (torch.from_numpy(identity.columns), identity.actions)
    for name, value in terms(plain, plain_batch).items():  # relabelled by the identity: the same loss, bit for bit
        torch.testing.assert_close(terms(moved, moved_batch)[name], value, rtol=0, atol=0, msg=name)
    swap = sym.views(NertzConfig(), "work")[6]  # another order of the work piles: another table to the network
    moved.relabel.draw = lambda: (torch.from_numpy(swap.columns), swap.actions)
    assert terms(moved, moved_batch)["policy"] != terms(plain, plain_batch)["policy"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [({"aux_hidden": 0.5}, "accepted only without --aux-hidden"),
     ({"central_critic": True, "oracle_policy": True}, "accepted only without --central-critic and --oracle-policy"),
     ({"rules": ("collision=seat",)}, "the opponents are alike only under collision='random'")],
)
def test_relabel_is_refused_where_what_it_relabels_is_not_a_symmetry(flags, message):
    with pytest.raises(ValueError, match=f"--relabel all: {message}"):
        check_args(Args(relabel="all", **flags))
    check_args(Args(relabel="work", rules=flags.get("rules", ())))  # the work piles stay alike under R6's seat order
