"""An auxiliary loss on the shared layers, for ``train_selfplay --aux-opponents WEIGHT``.

Every seat moves at once (R3): while the learner chooses, each opponent chooses too, from the same
table and its own hidden cards. With ``--aux-opponents WEIGHT`` the observation summary that feeds
both the move scores and the value (``MoveScorer.summary``) is also trained to predict the group
of the move each opponent makes on the same tick (``training.move_offsets.MOVE_GROUPS``: ``wait``,
``draw``, ``call``, or ``SOURCE>DESTINATION`` such as ``waste>work``; R4). ``OpponentMovesHead``
maps the summary to one logit per (opponent, group), the opponents in the observation's order
(seat ``(s + k) % P`` for ``k = 1 .. P - 1``, R9; with R8 partners one of them is the partner),
and the loss adds ``WEIGHT`` x the groups' cross-entropy, averaged over those seats and the rows.

The target is read from the tick's joint action while the run learns (a scripted or pool
opponent's move, or, in a self-play game, the learner's own move at that seat); the head is not
part of the policy: ``policy.pt`` is the network alone, plays from the observation, and is the same
kind of file as without the flag.
"""

from __future__ import annotations

import numpy as np
import torch

from nertz_env.actions import ActionCatalogue
from nertz_env.training.move_offsets import MOVE_GROUPS, move_groups


class OpponentMovesHead(torch.nn.Module):
    """The auxiliary head ``summary -> logits [P - 1, groups]`` (zeros at first, and built without
    a draw from torch's generator, so a run with the flag draws the same moves as the same run
    without it until the head's first update), and each learner seat's targets."""

    def __init__(self, catalogue: ActionCatalogue, num_players: int, learn_idx: np.ndarray, summary_width: int,
                 device) -> None:  # fmt: skip
        super().__init__()
        self.players, self.groups = num_players, len(MOVE_GROUPS)
        self.group_of = np.array([MOVE_GROUPS.index(g) for g in move_groups(catalogue)], np.int8)
        game, seat = np.divmod(np.asarray(learn_idx, np.int64), num_players)
        others = (seat[:, None] + np.arange(1, num_players)) % num_players  # the observation's order
        self.flat_others = game[:, None] * num_players + others  # [n_learn, P - 1] into actions.reshape(-1)
        with torch.random.fork_rng(devices=[]):  # the layer's random start, zeroed next, draws nothing of the run's
            self.head = torch.nn.Linear(summary_width, (num_players - 1) * self.groups).to(device)
        torch.nn.init.zeros_(self.head.weight)
        torch.nn.init.zeros_(self.head.bias)

    def targets(self, actions: np.ndarray) -> torch.Tensor:
        """``[n_learn, P - 1]`` int8: the group of each opponent's move in the joint action
        ``actions`` ``[num_envs, P]`` (catalogue indices) of one tick, for each learner seat."""
        return torch.from_numpy(self.group_of[np.asarray(actions).reshape(-1)[self.flat_others]])

    def loss(self, summary: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """The auxiliary loss of summaries ``[n, width]`` against the rows' targets ``[n, P - 1]``:
        the cross-entropy over the groups, averaged over the opponents and the rows."""
        logits = self.head(summary).reshape(-1, self.groups)
        return torch.nn.functional.cross_entropy(logits, targets.reshape(-1).long().to(summary.device))
