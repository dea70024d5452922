"""The opponent pool's snapshots of the policy, scored in one pass.

A rollout tick asks each snapshot in the pool for the moves of the few games it holds (a dozen
rows or so). At that size a call costs its number of torch operations, not its arithmetic, so
``StackedSnapshots`` stacks the weights of every snapshot and scores all their rows in one pass:
each snapshot's rows (and their legal moves) laid out in a block of their own, every layer one
batched matrix product over the snapshots. Each snapshot's scores are those of its own network
(``agents.policy.build_scorer``'s ``pair_scores``) up to float rounding (``tests/test_snapshots.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from nertz_env.agents._scorer import MoveScorer, sparse_input


def _stacked(layers: Sequence[torch.nn.Linear]) -> tuple[torch.Tensor, torch.Tensor]:
    """``(weight [K, in, out], bias [K, 1, out])`` of ``K`` linear layers of one shape."""
    weight = torch.stack([layer.weight.detach().t() for layer in layers])
    return weight, torch.stack([layer.bias.detach() for layer in layers]).unsqueeze(1)


class StackedSnapshots:
    """The move scores of several ``build_scorer`` networks of one shape, in one pass."""

    @staticmethod
    def stacks(net: torch.nn.Module) -> bool:
        """Whether this computes ``net``'s scores: not those of a network that also reads each
        move's afterstate or the legal-move summary (``build_scorer(afterstate=True)``,
        ``move_set=True``), whose layers it does not stack."""
        return not (getattr(net, "afterstate", False) or getattr(net, "move_set", False))

    def __init__(self, nets: Sequence[MoveScorer]):
        if not nets:
            raise ValueError("StackedSnapshots needs at least one network")
        if not all(self.stacks(net) for net in nets):
            raise ValueError(
                "StackedSnapshots cannot stack networks that read afterstates or the move set: score them one by one"
            )
        self.nets = list(nets)
        self.features = nets[0].features  # every snapshot is a copy of one trainer's network
        linears = [[m for m in net.body if isinstance(m, torch.nn.Linear)] for net in nets]
        firsts = [layers[0] for layers in linears]
        self.obs_dim = firsts[0].in_features
        self.first_t = torch.cat([f.weight.detach().t() for f in firsts]).contiguous()  # [K * D, width]
        self.first_bias = torch.stack([f.bias.detach() for f in firsts])
        self.hidden = [_stacked([layers[i] for layers in linears]) for i in range(1, len(linears[0]))]
        self.state_in, self.move_in, self.move_mid, self.move_out = (
            _stacked([getattr(net, name) for net in nets]) for name in ("state_in", "move_in", "move_mid", "move_out")
        )
        self.embed = torch.cat([net.embed.weight.detach() for net in nets])  # [K * n_actions, A]
        self.n_actions = nets[0].embed.num_embeddings
        self.scale = nets[0].scale.cpu().numpy()
        self.device = self.embed.device

    def pair_scores(self, obs: np.ndarray, who: np.ndarray, rows: np.ndarray, acts: np.ndarray,
                    feats: np.ndarray) -> torch.Tensor:  # fmt: skip
        """The score of each (row, move) pair (``rows``, ``acts``, ``feats``) under the network
        ``who[row]`` (an index into the stacked networks) of its row of ``obs``. Each network's
        rows, and their pairs, are laid out in a block of its own, padded to the largest block,
        so every layer is one batched product over the networks."""
        dev, k = self.device, len(self.nets)
        pair_who = who[rows]
        row_place, row_block = _places(who, k)
        pair_place, pair_block = _places(pair_who, k)
        idx, vals, offsets = sparse_input(obs, self.scale, False)[:3]
        own = torch.from_numpy(np.repeat(who, np.diff(offsets.numpy())) * self.obs_dim)  # each entry's network
        row_place_t, pair_place_t = torch.from_numpy(row_place).to(dev), torch.from_numpy(pair_place).to(dev)
        with torch.no_grad():
            z = torch.nn.functional.embedding_bag(
                (idx + own).to(dev), self.first_t, offsets.to(dev), mode="sum", per_sample_weights=vals.to(dev),
                include_last_offset=True,
            )  # fmt: skip
            z = torch.relu(z + self.first_bias[torch.from_numpy(who).to(dev)])
            z = _blocks(z, row_place_t, k, row_block)
            for weight, bias in self.hidden:
                z = torch.relu(torch.baddbmm(bias, z, weight))
            state = torch.baddbmm(self.state_in[1], z, self.state_in[0]).flatten(0, 1)  # [K * block, A]
            embedded = self.embed[torch.from_numpy(pair_who * self.n_actions + acts).to(dev)]
            h = _blocks(state[row_place_t[torch.from_numpy(rows).to(dev)]] + embedded, pair_place_t, k, pair_block)
            moves = _blocks(torch.from_numpy(feats).to(dev), pair_place_t, k, pair_block)
            h = torch.relu(torch.baddbmm(h + self.move_in[1], moves, self.move_in[0]))
            h = torch.relu(torch.baddbmm(self.move_mid[1], h, self.move_mid[0]))
            scores = torch.baddbmm(self.move_out[1], h, self.move_out[0]).flatten()  # [K * block]
            return scores[pair_place_t]


def _places(who: np.ndarray, k: int) -> tuple[np.ndarray, int]:
    """Each item's place in a ``[k, block]`` layout, network ``who[i]``'s items in order in its
    row of it, and ``block``, the most items of any one network."""
    counts = np.bincount(who, minlength=k)
    order = np.argsort(who, kind="stable")
    block = max(int(counts.max()), 1)
    place = np.empty(len(who), np.int64)
    place[order] = np.arange(len(who)) - np.repeat(np.cumsum(counts) - counts, counts) + who[order] * block
    return place, block


def _blocks(x: torch.Tensor, place: torch.Tensor, k: int, block: int) -> torch.Tensor:
    """``x [n, F]`` laid out as ``[k, block, F]``, item ``i`` at ``place[i]``, zeros elsewhere."""
    out = x.new_zeros(k * block, x.shape[1])
    out[place] = x
    return out.view(k, block, x.shape[1])
