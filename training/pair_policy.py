"""The self-play policy over legal (row, move) pairs: the moves of a batch of observations are
drawn, and scored for the update, over each row's own legal moves only (``MoveScorer.pair_scores``),
never over the whole masked catalogue. ``train_selfplay``'s learner and its pool's snapshots draw
here (``--sampler pairs``, and ``catalogue`` for the draws of runs before that option)."""

from __future__ import annotations

import numpy as np
import torch


def pair_of(rows: np.ndarray, acts: np.ndarray, per_row: np.ndarray) -> np.ndarray:
    """For each row, the index of its pair (in the row-major ``rows``, ``acts``) whose action is
    ``per_row[row]``: every row's action is one of its legal pairs."""
    hit = np.flatnonzero(acts == per_row[rows])
    out = np.empty(len(per_row), np.int64)
    out[rows[hit]] = hit
    return out


def draw(net, sampler: str, obs: np.ndarray, rows: np.ndarray, acts: np.ndarray, feats: np.ndarray, device,
         learner: bool = True, pre_add=None, temperature: float = 1.0, weigh: bool = False):  # fmt: skip
    """``(moves, log-probabilities, values)`` of ``net``'s policy at each row of ``obs``, from the
    legal (row, move) pairs ``rows``, ``acts`` and their features ``feats`` (``learner=False``, an
    opponent's draw: the moves alone, the rest None). ``sampler`` (the trainer's ``--sampler``)
    ``"pairs"``: ``sample_pairs``, one draw per legal move; ``"catalogue"``: torch's
    ``Categorical`` over the whole masked catalogue, one draw per catalogue entry (the draws of
    every run before the option, so their files are reproduced bit for bit). Both draw from the
    same distribution. ``pre_add``: the oracle input of the learner's rows (``training.oracle``), or None.
    ``temperature`` (``--explore-temperature``, ``"pairs"`` only): the moves are drawn from the
    softmax of the scores divided by it, and their log-probabilities are still the policy's own.
    ``weigh`` (a learner's draw): a fourth result, each move's importance weight, its probability
    under the policy over its probability under that tempered draw (1 at ``temperature`` 1)."""
    with torch.no_grad():
        pairs = (torch.from_numpy(rows).to(device), torch.from_numpy(acts).to(device))
        inputs = (torch.from_numpy(obs).to(device), *pairs, torch.from_numpy(feats).to(device))
        if sampler == "catalogue":
            if temperature != 1.0:
                raise ValueError(f"temperature {temperature}: accepted only with the pairs sampler")
            logits, value = net.score(*inputs, pre_add)
            dist = torch.distributions.Categorical(logits=logits)
            action = dist.sample()
            if not learner:
                return action.cpu().numpy(), None, None
            return action.cpu().numpy(), dist.log_prob(action).cpu(), value.cpu()
        scores, value = net.pair_scores(*inputs, pre_add)
        tempered = scores if temperature == 1.0 else scores / temperature
        pair = sample_pairs(tempered, rows, len(obs))
        if not learner:
            return acts[pair], None, None
        logp, _ = pair_log_softmax(scores, pairs[0], len(obs))
        drawn = torch.from_numpy(pair).to(device)
        if not weigh:
            return acts[pair], logp[drawn].cpu(), value.cpu()
        behaviour = logp if temperature == 1.0 else pair_log_softmax(tempered, pairs[0], len(obs))[0]
        return acts[pair], logp[drawn].cpu(), value.cpu(), (logp[drawn] - behaviour[drawn]).exp().cpu()


def sample_pairs(scores: torch.Tensor, rows: np.ndarray, n: int) -> np.ndarray:
    """For each row ``0 .. n-1``, the index of one of its pairs drawn from the softmax of the
    row's ``scores`` (``rows`` ascending, every row holding at least one pair). The exponential
    race: with ``E ~ Exp(1)`` drawn per pair from torch's generator, the pair of largest
    ``exp(score) / E``, i.e. of largest ``score - log E``, wins with its softmax probability. One
    draw per legal move, where ``Categorical`` over the masked catalogue draws one per entry."""
    key = (scores - torch.empty_like(scores).exponential_().log()).cpu().numpy()
    return row_argmax(key, rows, n, "sample_pairs")


def row_argmax(values: np.ndarray, rows: np.ndarray, n: int, caller: str = "row_argmax") -> np.ndarray:
    """For each row ``0 .. n-1``, the index of its pair of largest ``values`` (``rows`` ascending,
    every row holding at least one pair, else a ``ValueError`` naming ``caller``); a tie keeps the
    row's first pair."""
    counts = np.bincount(rows, minlength=n)
    if len(counts) != n or not counts.all():
        raise ValueError(f"{caller}: {n - np.count_nonzero(counts[:n])} of {n} rows hold no legal move")
    top = np.maximum.reduceat(values, np.cumsum(counts) - counts)
    hit = np.flatnonzero(values == top[rows])
    first = np.ones(len(hit), np.bool_)  # a tie keeps the row's first pair
    first[1:] = rows[hit[1:]] != rows[hit[:-1]]
    return hit[first]


def pair_log_softmax(scores: torch.Tensor, rows: torch.Tensor, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The log-probability of each pair under its row's softmax over its own pairs, and each
    row's entropy ``[n]``."""
    top = torch.zeros(n, dtype=scores.dtype, device=scores.device)
    top = top.scatter_reduce_(0, rows, scores.detach(), "amax", include_self=False)
    shifted = scores - top[rows]
    total = torch.zeros(n, dtype=scores.dtype, device=scores.device).index_add(0, rows, shifted.exp())
    logp = shifted - total.log()[rows]
    entropy = -torch.zeros(n, dtype=scores.dtype, device=scores.device).index_add(0, rows, logp.exp() * logp)
    return logp, entropy
