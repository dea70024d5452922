"""The move-scoring network of ``agents.policy.build_scorer`` (``MoveScorer``) and the first layer
of its observation summary over sparse inputs.

An observation (R9) is a long int8 vector that is mostly zero, so the first linear layer sums the
weight rows of its nonzero entries (``embedding_bag``) instead of multiplying the whole vector; a
move's afterstate (``agents._afterstate``) changes a few entries more, and its first layer is that
of the observation plus the weight rows of the changed entries. torch is imported here; the agents
import this module only when a network is built (``agents.policy``), so the envs never need torch.
"""

from __future__ import annotations

import warnings
import weakref
from typing import Any

import numpy as np
import torch
from torch import nn

from nertz_env.actions import ActionCatalogue
from nertz_env.agents._afterstate import afterstate_changes
from nertz_env.agents._kernels import sparse_observations
from nertz_env.agents.features import ActionFeatures
from nertz_env.layout import ObservationLayout


def orthogonal(gain: float, *layers) -> None:
    """Orthogonal weights of ``gain`` and zero biases for the ``nn.Linear`` among ``layers``, in order."""
    for m in layers:
        if isinstance(m, nn.Linear):
            nn.init.orthogonal_(m.weight, gain)
            nn.init.zeros_(m.bias)


class SparseFirstLayer(torch.autograd.Function):
    """A linear layer over sparse inputs: the forward sums the weight rows of the nonzero entries
    (``embedding_bag``), the backward multiplies the transposed input, kept as CSR, by the output's
    gradient (the weight's gradient; the input takes none)."""

    @staticmethod
    def forward(ctx, weight_t, idx, vals, offsets, xt):
        ctx.xt = xt
        return torch.nn.functional.embedding_bag(
            idx, weight_t, offsets, mode="sum", per_sample_weights=vals, include_last_offset=True
        )

    @staticmethod
    def backward(ctx, grad):
        return torch.sparse.mm(ctx.xt, grad.contiguous()), None, None, None, None


def sparse_input(obs: np.ndarray, scale: np.ndarray, transposed: bool):
    """``(idx, vals, offsets, xt)``: the nonzero entries of ``obs[n, D]`` (int8) times ``scale``, row
    by row (``agents._kernels.sparse_observations``), and with ``transposed`` their transpose as a
    CSR tensor ``[D, n]`` (else None)."""
    obs = np.ascontiguousarray(obs)
    n, d = obs.shape
    nnz = int(np.count_nonzero(obs))
    idx, trow = np.empty(nnz, np.int64), np.empty(nnz, np.int64)
    vals, tval = np.empty(nnz, np.float32), np.empty(nnz, np.float32)
    offsets, crow = np.empty(n + 1, np.int64), np.empty(d + 1, np.int64)
    sparse_observations(obs, scale, idx, vals, offsets, crow, trow, tval)
    xt = None
    if transposed:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Sparse CSR tensor support is in beta", UserWarning)
            xt = torch.sparse_csr_tensor(torch.from_numpy(crow), torch.from_numpy(trow), torch.from_numpy(tval),
                                         size=(d, n), check_invariants=False)  # fmt: skip
    return torch.from_numpy(idx), torch.from_numpy(vals), torch.from_numpy(offsets), xt


def first_layer(first, scale, obs):
    """``first(obs * scale)``, before its activation; for int8 observations on the CPU it sums the
    weights of the nonzero entries only (``SparseFirstLayer``), the same function at a fraction of
    the cost."""
    if obs.device.type != "cpu" or obs.dtype != torch.int8:
        return first(obs.float() * scale)
    grad = torch.is_grad_enabled() and first.weight.requires_grad
    idx, vals, offsets, xt = sparse_input(obs.numpy(), scale.numpy(), grad)
    weight_t = first.weight.t().contiguous() if grad else _transposed(first.weight)
    return SparseFirstLayer.apply(weight_t, idx, vals, offsets, xt) + first.bias


def changed_first_layer(first, scale, idx: np.ndarray, val: np.ndarray, starts: np.ndarray):
    """``[K, width]``: the first layer's weights times the change of each of ``K`` observations,
    entries ``idx[starts[k]:starts[k + 1]]`` changed by ``val[...]`` (raw units, scaled here);
    added to the observation's own first layer, the afterstate's (the layer is linear)."""
    dev = first.weight.device
    idx_t = torch.from_numpy(idx).to(dev)
    grad = torch.is_grad_enabled() and first.weight.requires_grad
    weight_t = first.weight.t() if grad or dev.type != "cpu" else _transposed(first.weight)
    return torch.nn.functional.embedding_bag(
        idx_t, weight_t, torch.from_numpy(starts).to(dev), mode="sum",
        per_sample_weights=torch.from_numpy(val).to(dev) * scale[idx_t], include_last_offset=True,
    )  # fmt: skip


def legal_move_summary(moves, rows, n: int):
    """``[n, 2 * width]``: the mean and the maximum, entry by entry, of the ``[K, width]`` move vectors
    of each of ``n`` rows (``rows[k]``: the row of pair ``k``; a row without pairs reads 0), so each
    move's score may depend on which other moves are legal (``build_scorer(move_set=True)``)."""
    zeros = moves.new_zeros((n, moves.shape[1]))
    count = torch.bincount(rows, minlength=n).clamp(min=1).to(moves.dtype)
    mean = zeros.index_add(0, rows, moves) / count.unsqueeze(1)
    peak = zeros.scatter_reduce(0, rows.unsqueeze(1).expand_as(moves), moves, "amax", include_self=False)
    return torch.cat([mean, peak], dim=1)


_TRANSPOSED: dict[int, tuple[Any, int, Any]] = {}  # id(weight): (weakref to it, its version, weight.t())


def _transposed(weight):
    """``weight.t().contiguous()`` for calls without gradients (rollouts, opponents, evaluation),
    copied once per change of the weight instead of on every call: kept with the tensor's version
    counter, which every in-place change (an optimiser step, ``load_state_dict``) advances."""
    kept = _TRANSPOSED.get(id(weight))
    if kept is not None and kept[0]() is weight and kept[1] == weight._version:
        return kept[2]
    if len(_TRANSPOSED) >= 64:  # weights of networks long gone
        _TRANSPOSED.clear()
    weight_t = weight.detach().t().contiguous()
    _TRANSPOSED[id(weight)] = (weakref.ref(weight), weight._version, weight_t)
    return weight_t


class MoveScorer(nn.Module):
    """The move-scoring actor-critic of ``agents.policy.build_scorer`` (its arguments, in order)."""

    scale: torch.Tensor  # a buffer (register_buffer): 1 / the observation's high

    def __init__(self, config, hidden, action_hidden, lookahead, drop_features, cycle, opponent, identity, follow,
                 afterstate, move_set, race=False):  # fmt: skip
        super().__init__()
        layout = ObservationLayout(config)
        n_actions = len(ActionCatalogue(config))
        self.features = ActionFeatures(config, lookahead, drop_features, cycle, opponent, identity, follow, race)
        self.cycle, self.opponent, self.identity, self.follow = map(bool, (cycle, opponent, identity, follow))
        self.race = bool(race)
        self.lookahead = self.features.depth  # saved as the depth (0: none)
        self.drop_features = self.features.drop_features  # saved as the group names
        self.n_actions = n_actions
        high = np.maximum(layout.high.astype(np.float32), 1)
        self.register_buffer("scale", torch.as_tensor(1.0 / high, dtype=torch.float32))
        layers: list[nn.Module] = []
        size = layout.size
        for h in hidden:
            layers += [nn.Linear(size, h), nn.ReLU(inplace=True)]
            size = h
        self.body = nn.Sequential(*layers)
        self.value_head = nn.Linear(size, 1)
        self.state_in = nn.Linear(size, action_hidden)
        self.move_in = nn.Linear(self.features.width, action_hidden)
        self.embed = nn.Embedding(n_actions, action_hidden)
        self.move_mid = nn.Linear(action_hidden, action_hidden)
        self.move_out = nn.Linear(action_hidden, 1)
        orthogonal(np.sqrt(2), *self.body, self.state_in, self.move_in, self.move_mid)
        nn.init.normal_(self.embed.weight, std=0.1)
        orthogonal(0.01, self.move_out)
        orthogonal(1.0, self.value_head)
        self.afterstate = bool(afterstate)
        if self.afterstate:  # made last: a network without it draws the weights it drew before
            self.after_in = nn.Linear(size, action_hidden)
            orthogonal(np.sqrt(2), self.after_in)
        self.move_set = bool(move_set)
        if self.move_set:  # made last, for the same reason
            self.set_in = nn.Linear(2 * action_hidden, action_hidden)
            orthogonal(np.sqrt(2), self.set_in)

    def summary(self, obs, pre_add=None):
        """The observation summary ``body(obs * scale)`` (its first layer: ``first_layer``).
        ``pre_add`` ``[n, hidden[0]]``, when given, is added to the first layer before its ReLU
        (the trainer's oracle input, ``training.oracle``; never a saved policy's play)."""
        pre = first_layer(self.body[0], self.scale, obs)
        return self.body[1:](pre if pre_add is None else pre + pre_add)

    def after_summaries(self, obs, rows, actions, pre_add=None):
        """``(z, after)``: the observation summaries ``[n, width]`` and those of each pair's
        afterstate ``[K, width]``, whose first layer is the observation's plus the change."""
        pre = first_layer(self.body[0], self.scale, obs)
        if pre_add is not None:
            pre = pre + pre_add
        changes = afterstate_changes(obs.cpu().numpy(), rows.cpu().numpy(), actions.cpu().numpy(),
                                     self.features.table, self.features.offsets)  # fmt: skip
        after = self.body[1:](pre[rows] + changed_first_layer(self.body[0], self.scale, *changes))
        return self.body[1:](pre), after

    def pair_scores(self, obs, rows, actions, feats, pre_add=None, with_summary=False):
        """The logit of each (row, move) pair given ``[K]`` and the values ``[n]`` (``pre_add``:
        as ``summary``'s); with ``with_summary``, also the observation summaries ``[n, width]``
        (the trainer's auxiliary loss, ``training.aux_hidden``)."""
        if self.afterstate:
            z, after = self.after_summaries(obs, rows, actions, pre_add)
        else:
            z, after = self.summary(obs, pre_add), None
        move, embed = self.move_in(feats), self.embed(actions)
        h = self.state_in(z)[rows] + move + embed
        if after is not None:  # added last: the sum without it is the one before the option, bit for bit
            h = h + self.after_in(after)
        if self.move_set:
            h = h + self.set_in(legal_move_summary(torch.relu(move + embed), rows, len(z)))[rows]
        h = torch.relu(h)
        scores, value = self.move_out(torch.relu(self.move_mid(h))).squeeze(-1), self.value_head(z).squeeze(-1)
        return (scores, value, z) if with_summary else (scores, value)

    def score(self, obs, rows, actions, feats, pre_add=None):
        """Masked logits ``[n, N]`` (-1e8 off the pairs given) and values ``[n]``."""
        scores, value = self.pair_scores(obs, rows, actions, feats, pre_add)
        logits = torch.full((obs.shape[0], self.n_actions), -1e8, dtype=scores.dtype, device=scores.device)
        return logits.index_put((rows, actions), scores), value

    def forward(self, obs, mask):
        rows, actions, feats = self.features(obs.cpu().numpy(), mask.cpu().numpy())
        dev = obs.device
        return self.score(
            obs, torch.from_numpy(rows).to(dev), torch.from_numpy(actions).to(dev), torch.from_numpy(feats).to(dev)
        )
