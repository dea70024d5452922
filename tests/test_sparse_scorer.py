"""The trainer's fast paths compute the same functions as the plain ones: the observation summary's
sparse first layer (forward and weight gradient) against the dense matrix product, the update's
softmax over each row's legal pairs against the masked softmax over the whole catalogue, and the
rollout's draw over each row's legal pairs against that softmax's probabilities."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the trained policies need torch (the training extra)")

from nertz_env import NertzConfig  # noqa: E402
from nertz_env.agents._scorer import sparse_input  # noqa: E402
from nertz_env.agents.features import ActionFeatures  # noqa: E402
from nertz_env.agents.policy import build_scorer  # noqa: E402
from nertz_env.training.pair_policy import draw, pair_log_softmax, pair_of, sample_pairs  # noqa: E402
from nertz_env.vector import NertzVectorEnv  # noqa: E402


@pytest.fixture(scope="module")
def batch():
    env = NertzVectorEnv(8, seed=3)
    obs, masks = env.reset()
    rng = np.random.default_rng(3)
    for _ in range(20):  # a few random legal moves, so the piles differ from the deal
        legal = [np.flatnonzero(m) for m in masks.reshape(-1, masks.shape[-1])]
        actions = np.array([rng.choice(a) for a in legal]).reshape(8, -1)
        obs, masks, *_ = env.step(actions)
    obs, masks = obs.reshape(32, -1), masks.reshape(32, -1)
    rows, acts, feats = ActionFeatures(env.config, lookahead=False)(obs, masks)
    return env.config, obs, masks, rows, acts, feats


def test_sparse_input_lists_every_nonzero_entry_by_row_and_by_column(batch):
    _, obs, *_ = batch
    scale = np.linspace(0.5, 1.5, obs.shape[1]).astype(np.float32)
    idx, vals, offsets, xt = sparse_input(obs, scale, transposed=True)
    dense = np.zeros(obs.shape, np.float32)
    for i in range(len(obs)):
        dense[i, idx[offsets[i] : offsets[i + 1]].numpy()] = vals[offsets[i] : offsets[i + 1]].numpy()
    np.testing.assert_array_equal(dense, obs.astype(np.float32) * scale)
    np.testing.assert_array_equal(xt.to_dense().numpy(), dense.T)
    assert sparse_input(obs, scale, transposed=False)[3] is None


def test_sparse_first_layer_matches_the_dense_product_and_its_gradient(batch):
    config, obs, _, rows, acts, feats = batch
    torch.manual_seed(0)
    net = build_scorer(config, (32, 16), 8, lookahead=False)
    pairs = (torch.from_numpy(rows), torch.from_numpy(acts), torch.from_numpy(feats))
    grads = []
    for o in (torch.from_numpy(obs), torch.from_numpy(obs).float()):  # int8: sparse path; float: dense
        net.zero_grad()
        scores, value = net.pair_scores(o, *pairs)
        (scores.square().sum() + value.sum()).backward()
        grads.append((scores.detach(), value.detach(), net.body[0].weight.grad.clone(), net.body[0].bias.grad.clone()))
    for sparse, dense in zip(*grads):
        torch.testing.assert_close(sparse, dense, rtol=1e-5, atol=1e-5)
    assert grads[0][2].abs().sum() > 0


def test_pair_softmax_matches_the_masked_softmax_over_the_catalogue(batch):
    _, obs, masks, rows, acts, _ = batch
    scores = torch.randn(len(rows), dtype=torch.float64)
    logp, entropy = pair_log_softmax(scores, torch.from_numpy(rows), len(obs))
    logits = torch.full(masks.shape, -1e8, dtype=torch.float64)
    logits[rows, acts] = scores
    full = torch.log_softmax(logits, -1)
    torch.testing.assert_close(logp, full[rows, acts])
    probs = full.exp()
    torch.testing.assert_close(entropy, -(probs * full).where(torch.from_numpy(masks) != 0, 0.0).sum(-1))
    chosen = np.array([a[0] for a in np.split(acts, np.cumsum(np.bincount(rows, minlength=len(obs)))[:-1])])
    at = pair_of(rows, acts, chosen)
    np.testing.assert_array_equal(acts[at], chosen)
    np.testing.assert_array_equal(rows[at], np.arange(len(obs)))


def test_the_kept_transposed_weight_follows_every_change_of_the_weight():
    """No-grad calls reuse the first layer's transposed copy only while the weight is unchanged."""
    from nertz_env.agents._scorer import _transposed

    net = build_scorer(NertzConfig(num_players=2), lookahead=False)
    w = net.body[0].weight
    first = _transposed(w)
    assert _transposed(w) is first  # unchanged: the same copy
    optimizer = torch.optim.Adam(net.parameters(), lr=0.1)
    net.body[0].weight.sum().backward()
    optimizer.step()
    after_step = _transposed(w)
    assert after_step is not first and torch.equal(after_step, w.detach().t().contiguous())
    other = build_scorer(NertzConfig(num_players=2), lookahead=False)
    net.load_state_dict(other.state_dict())
    assert torch.equal(_transposed(w), other.body[0].weight.detach().t().contiguous())


def test_sample_pairs_draws_each_legal_move_with_its_softmax_probability():
    """Rows of 3, 1 and 5 legal moves, each repeated 20,000 times in one call: every move's count
    matches its probability (chi-square per row kind, torch seeded), and every row gets one of its
    own pairs."""
    stats = pytest.importorskip("scipy.stats", reason="the chi-square test needs scipy")
    kinds = [torch.tensor([0.5, -1.0, 2.0]), torch.tensor([0.3]), torch.tensor([1.0, 1.0, -2.0, 0.0, 3.0])]
    reps = 20_000
    scores = torch.cat(kinds).repeat(reps)
    sizes = np.tile([len(k) for k in kinds], reps)
    rows = np.repeat(np.arange(len(sizes)), sizes)
    torch.manual_seed(0)
    pair = sample_pairs(scores, rows, len(sizes))
    np.testing.assert_array_equal(rows[pair], np.arange(len(sizes)))
    within = (pair - (np.cumsum(sizes) - sizes)).reshape(reps, len(kinds))
    for k, kind in enumerate(kinds):
        counts = np.bincount(within[:, k], minlength=len(kind))
        expected = torch.softmax(kind.double(), 0).numpy() * reps
        if len(kind) == 1:
            assert counts[0] == reps
            continue
        assert stats.chisquare(counts, expected).pvalue > 1e-3, (counts, expected)


@pytest.mark.parametrize("rows, n, empty", [([0, 0, 2, 2], 3, 1), ([0, 1], 4, 2)])
def test_sample_pairs_refuses_a_row_without_a_legal_move(rows, n, empty):
    with pytest.raises(ValueError, match=f"{empty} of {n} rows hold no legal move"):
        sample_pairs(torch.zeros(len(rows)), np.array(rows), n)


def test_both_samplers_draw_legal_moves_and_catalogue_draws_as_categorical_did(batch):
    """``draw``'s ``catalogue`` sampler is torch's ``Categorical`` over the masked catalogue, draw
    for draw (what runs before ``--sampler`` trained with); ``pairs`` draws legal moves only and
    reports their log-softmax over the row's pairs and the same values."""
    config, obs, masks, rows, acts, feats = batch
    net = build_scorer(config, (16,), 8, lookahead=False)
    inputs = [torch.from_numpy(x) for x in (obs, rows, acts, feats)]
    torch.manual_seed(5)
    with torch.no_grad():
        logits, value = net.score(*inputs)
        dist = torch.distributions.Categorical(logits=logits)
        expected = dist.sample()
    torch.manual_seed(5)
    moves, logprob, values = draw(net, "catalogue", obs, rows, acts, feats, "cpu")
    np.testing.assert_array_equal(moves, expected.numpy())
    assert torch.equal(logprob, dist.log_prob(expected)) and torch.equal(values, value)
    moves, logprob, values = draw(net, "pairs", obs, rows, acts, feats, "cpu")
    assert masks[np.arange(len(obs)), moves].all() and torch.equal(values, value)
    assert draw(net, "pairs", obs, rows, acts, feats, "cpu", learner=False)[1:] == (None, None)
    with torch.no_grad():
        scores, _ = net.pair_scores(*inputs)
        logp, _ = pair_log_softmax(scores, inputs[1], len(obs))
    torch.testing.assert_close(logprob, logp[torch.from_numpy(pair_of(rows, acts, moves))])
