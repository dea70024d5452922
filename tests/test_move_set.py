"""The legal-move summary of ``build_scorer(move_set=True)``: each move's score also reads the
mean and the maximum of every legal move's layer in its row (``agents._scorer.legal_move_summary``),
so it depends on which other moves are legal; a network without the flag scores each move alone
and draws the weights it drew before the flag. Policies save, load and refuse as the other input
flags do."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the trained policies need torch (the training extra)")

from conftest import make_deck, new_game  # noqa: E402

from nertz_env import agents  # noqa: E402
from nertz_env.agents._scorer import legal_move_summary  # noqa: E402
from nertz_env.agents.policy import build_scorer, load_network, save_policy  # noqa: E402
from nertz_env.config import NertzConfig  # noqa: E402

CONFIG = NertzConfig(num_players=2, nertz_pile_size=3, collision="seat", stall_ticks=10_000)
ME = make_deck(["KD", "5C", "AH"], ["9S", "7C", "4D", "QC"], ["3D", "2S", "8H"])
RIVAL = make_deck(["KS", "QS", "2H"], ["TS", "9C", "8S", "7S"])


def test_the_summary_is_each_rows_mean_and_maximum_and_zero_for_a_row_without_moves():
    gen = torch.Generator().manual_seed(3)
    moves = torch.rand(9, 4, generator=gen, dtype=torch.float64)
    rows = torch.tensor([0, 0, 0, 2, 2, 3, 3, 3, 3])
    summary = legal_move_summary(moves, rows, 5)
    assert summary.shape == (5, 8)
    for r in range(5):
        held = moves[rows == r]
        expected = torch.cat([held.mean(0), held.max(0).values]) if len(held) else torch.zeros(8, dtype=moves.dtype)
        torch.testing.assert_close(summary[r], expected)
    torch.autograd.gradcheck(lambda m: legal_move_summary(m, rows, 5), (moves.clone().requires_grad_(),))


def _pairs(game):
    obs, masks = game.obs[:1], game.masks[:1]
    net_inputs = build_scorer(CONFIG, (16,), 8, lookahead=False).features(obs, masks)
    return torch.from_numpy(obs), *(torch.from_numpy(x) for x in net_inputs)


@pytest.mark.parametrize("move_set", [False, True])
def test_a_moves_score_depends_on_the_other_legal_moves_only_with_the_summary(move_set):
    torch.manual_seed(0)
    net = build_scorer(CONFIG, (16,), 8, lookahead=False, move_set=move_set)
    obs, rows, acts, feats = _pairs(new_game(CONFIG, [ME, RIVAL]))
    assert len(acts) >= 3  # WAIT, DRAW and card moves on this table (R4)
    with torch.no_grad():
        full = net.pair_scores(obs, rows, acts, feats)[0]
        fewer = net.pair_scores(obs, rows[:-1], acts[:-1], feats[:-1])[0]  # the last legal move taken away
    changed = not torch.equal(full[:-1], fewer)
    assert changed is move_set


def test_without_the_flag_the_network_draws_the_weights_it_drew_before_and_the_flag_adds_its_layer_last():
    torch.manual_seed(7)
    plain = build_scorer(CONFIG, (16,), 8, lookahead=False).state_dict()
    torch.manual_seed(7)
    with_set = build_scorer(CONFIG, (16,), 8, lookahead=False, move_set=True).state_dict()
    assert set(with_set) - set(plain) == {"set_in.weight", "set_in.bias"}
    assert with_set["set_in.weight"].shape == (8, 16)
    for name, weight in plain.items():
        assert torch.equal(weight, with_set[name]), name


def test_a_move_set_policy_trains_saves_loads_and_is_refused_as_a_start_without_it(tmp_path):
    from training.init_policy import start_from

    net = build_scorer(CONFIG, (16,), 8, lookahead=False, move_set=True)
    obs, rows, acts, feats = _pairs(new_game(CONFIG, [ME, RIVAL]))
    (net.pair_scores(obs, rows, acts, feats)[0] ** 2).sum().backward()
    assert net.set_in.weight.grad.abs().sum() > 0  # the summary is learned
    save_policy(tmp_path / "p.pt", net, CONFIG, (16,), action_hidden=8)
    loaded, _, blob = load_network(tmp_path / "p.pt")
    assert blob["move_set"] is True and loaded.move_set
    game = new_game(CONFIG, [ME, RIVAL])
    with torch.no_grad():
        o, m = torch.from_numpy(game.obs), torch.from_numpy(game.masks)
        assert torch.equal(net(o, m)[0], loaded(o, m)[0])
    plain = build_scorer(CONFIG, (16,), 8, lookahead=False)
    with pytest.raises(ValueError, match="move set True"):
        start_from(plain, str(tmp_path / "p.pt"), CONFIG)
    player = agents.make("policy", path=str(tmp_path / "p.pt"), config=CONFIG)
    moves = player.act_batch(game.obs, game.masks)
    assert all(game.masks[p, moves[p]] for p in range(2))
    assert np.array_equal(moves, player.act_batch(game.obs, game.masks))
