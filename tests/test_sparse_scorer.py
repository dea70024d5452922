"""The trainer's fast paths compute the same functions as the plain ones: the observation summary's
sparse first layer (forward and weight gradient) against the dense matrix product, and the update's
softmax over each row's legal pairs against the masked softmax over the whole catalogue."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the trained policies need torch (the training extra)")

from nertz_env import NertzConfig  # noqa: E402
from nertz_env.agents.features import ActionFeatures  # noqa: E402
from nertz_env.agents.policy import build_scorer, sparse_input  # noqa: E402
from nertz_env.training.selfplay_ppo import _pair_log_softmax, _pair_of  # noqa: E402
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
    logp, entropy = _pair_log_softmax(scores, torch.from_numpy(rows), len(obs))
    logits = torch.full(masks.shape, -1e8, dtype=torch.float64)
    logits[rows, acts] = scores
    full = torch.log_softmax(logits, -1)
    torch.testing.assert_close(logp, full[rows, acts])
    probs = full.exp()
    torch.testing.assert_close(entropy, -(probs * full).where(torch.from_numpy(masks) != 0, 0.0).sum(-1))
    chosen = np.array([a[0] for a in np.split(acts, np.cumsum(np.bincount(rows, minlength=len(obs)))[:-1])])
    at = _pair_of(rows, acts, chosen)
    np.testing.assert_array_equal(acts[at], chosen)
    np.testing.assert_array_equal(rows[at], np.arange(len(obs)))


def test_the_kept_transposed_weight_follows_every_change_of_the_weight():
    """No-grad calls reuse the first layer's transposed copy only while the weight is unchanged."""
    from nertz_env.agents.policy import _transposed

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
