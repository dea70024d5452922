"""The opponent pool plays its snapshots in one pass (``training.snapshots.StackedSnapshots``):
each snapshot's scores are its own network's, whichever rows the others hold, and the pool's
moves are legal, the scripted seats' are the scripted agents' own, and the ``catalogue``
sampler draws exactly what one call per opponent drew."""

from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the trainer needs torch (the training extra)")

from conftest import mid_hand, scorer_nets  # noqa: E402

from nertz_env import NertzConfig, agents  # noqa: E402
from nertz_env.training.opponent_pool import Opponents  # noqa: E402
from nertz_env.training.snapshots import StackedSnapshots  # noqa: E402


@pytest.fixture(scope="module")
def tables():
    return mid_hand()  # [12, 4, ...]


@pytest.mark.parametrize("k, who_seed", [(1, 0), (3, 1), (4, 2)])
def test_each_snapshot_scores_its_rows_as_its_own_network(tables, k, who_seed):
    obs, masks = (x.reshape(-1, x.shape[-1]) for x in tables)
    nets = scorer_nets(k, who_seed)
    who = np.random.default_rng(who_seed).integers(k, size=len(obs))
    if k > 2:
        who[who == 1] = 0  # a network that holds no row this tick
    stacked = StackedSnapshots(nets)
    rows, acts, feats = stacked.features(obs, masks)
    scores = stacked.pair_scores(obs, who, rows, acts, feats)
    for i, net in enumerate(nets):
        with torch.no_grad():
            own, _ = net.pair_scores(*(torch.from_numpy(x) for x in (obs, rows, acts, feats)))
        mine = torch.from_numpy(who[rows] == i)
        torch.testing.assert_close(scores[mine], own[mine], rtol=1e-5, atol=1e-5)


def test_an_empty_stack_is_refused():
    with pytest.raises(ValueError, match="at least one network"):
        StackedSnapshots([])


def _pool(sampler: str, nets) -> Opponents:
    args = SimpleNamespace(scripted=("greedy",), seed=0, pool_size=len(nets), sampler=sampler)
    pool = Opponents(args, NertzConfig(), np.random.default_rng(0))
    for net in nets:
        pool.add(net)
    return pool


def test_the_pool_plays_legal_moves_and_its_scripted_seats_play_their_agent(tables):
    obs, masks = tables[0][:, 1:], tables[1][:, 1:]
    pool = _pool("pairs", scorer_nets(3))
    opponent = np.array([0, 1, 2, 3, 1, 0, 3, 3, 2, 1, 0, 2])
    torch.manual_seed(0)
    moves = pool.act_games(opponent, obs, masks, "cpu")
    assert moves.shape == (12, 3)
    assert all(masks[g, s, moves[g, s]] for g in range(12) for s in range(3))
    held = opponent == 0
    o, m = obs[held].reshape(-1, obs.shape[-1]), masks[held].reshape(-1, masks.shape[-1])
    np.testing.assert_array_equal(moves[held].reshape(-1), agents.make("greedy").act_batch(o, m))
    assert pool._stacked.nets == pool.snapshots
    pool.add(scorer_nets(1, 9)[0])  # the pool changed: the next pass stacks the new snapshots
    pool.act_games(opponent, obs, masks, "cpu")
    assert pool._stacked.nets == pool.snapshots and len(pool.snapshots) == 3


def test_the_catalogue_sampler_draws_as_one_call_per_opponent(tables):
    """What the trainer drew before the pairs sampler: one call per opponent in order, each
    snapshot's moves from torch's Categorical over the catalogue."""
    obs, masks = tables[0][:, 1:], tables[1][:, 1:]
    nets = scorer_nets(2)
    pool = _pool("catalogue", nets)
    opponent = np.array([2, 1, 0, 2, 2, 1, 0, 1, 2, 0, 1, 2])
    torch.manual_seed(3)
    moves = pool.act_games(opponent, obs, masks, "cpu")
    torch.manual_seed(3)
    expected = np.empty_like(moves)
    for who in np.unique(opponent):
        held = opponent == who
        o, m = obs[held].reshape(-1, obs.shape[-1]), masks[held].reshape(-1, masks.shape[-1])
        if who == 0:
            expected[held] = agents.make("greedy").act_batch(o, m).reshape(-1, 3)
            continue
        with torch.no_grad():
            logits, _ = pool.snapshots[who - 1](torch.from_numpy(o), torch.from_numpy(m))
        expected[held] = torch.distributions.Categorical(logits=logits).sample().numpy().reshape(-1, 3)
    np.testing.assert_array_equal(moves, expected)


@pytest.mark.parametrize("flag", ["afterstate", "move_set"])
def test_snapshots_that_read_afterstates_or_the_move_set_are_refused_by_the_stack_and_played_one_by_one(tables, flag):
    from nertz_env.agents.policy import build_scorer

    obs, masks = tables[0][:, 1:], tables[1][:, 1:]
    torch.manual_seed(0)
    nets = [build_scorer(NertzConfig(), (32, 16), 8, lookahead=False, **{flag: True}).eval() for _ in range(2)]
    with pytest.raises(ValueError, match="afterstates or the move set"):
        StackedSnapshots(nets)
    pool = _pool("pairs", nets)
    opponent = np.array([2, 1, 0, 2, 2, 1, 0, 1, 2, 0, 1, 2])
    torch.manual_seed(5)
    moves = pool.act_games(opponent, obs, masks, "cpu")
    assert pool._stacked is None and all(masks[g, s, moves[g, s]] for g in range(12) for s in range(3))
    torch.manual_seed(5)
    for who in np.unique(opponent):  # one call per opponent, in order: each snapshot's own network
        held = opponent == who
        o, m = obs[held].reshape(-1, obs.shape[-1]), masks[held].reshape(-1, masks.shape[-1])
        np.testing.assert_array_equal(moves[held].reshape(-1), pool.act(int(who), o, m, "cpu"))
