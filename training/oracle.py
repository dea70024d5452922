"""Oracle guiding, for ``train_selfplay --oracle-policy true``.

The policy plays from its observation (R9); much of a hand turns on cards it cannot see: the
order of its own Nertz pile and stock, and the opponents'. With ``--oracle-policy true`` the
policy also sees them while it learns, then loses them: ``OracleInput`` adds ``weight x
W hidden`` to the first layer of the policy's observation summary (before its ReLU), where
``hidden`` is every seat's hidden cards as the central critic reads them
(``central_critic.HiddenCards``: the learner's own first, scaled to [0, 1]) and ``W`` is learned
with the network, from zeros. The weight is 0 while cloning (the teacher sees no hidden card),
1 when PPO starts, and fades linearly to 0 over the first ``--oracle-fade`` of the PPO phase;
the rest of the run learns without it (Suphx's "oracle guiding", by fading the input's scale
where Suphx drops its entries). The rollouts and the update of one PPO step use the same weight,
so PPO's ratio compares like with like.

``W`` is not part of the policy: ``policy.pt`` is the network alone and plays, like every saved
policy, from the observation. A policy kept while the weight is above 0 plays without the input
it was leaning on, so only the policies kept after the fade are the method's result. The same
holds for the learner's snapshots in the opponent pool: they are plain networks, and play
without the input.
"""

from __future__ import annotations

import numpy as np
import torch

from nertz_env.engine.constants import DECK_SIZE
from nertz_env.training.central_critic import HiddenCards


class OracleInput(HiddenCards, torch.nn.Module):
    """The learned map ``W`` ``[first_width, players * 156]`` from the hidden cards to the first
    layer, and where each learner seat's hidden cards lie (``HiddenCards``)."""

    def __init__(self, envs, learn_idx: np.ndarray, first_width: int, device):
        torch.nn.Module.__init__(self)
        HiddenCards.__init__(self, envs, learn_idx)
        # zeros, not a random draw: the run's other draws stay those of a run without the flag
        self.weight = torch.nn.Parameter(torch.zeros((first_width, self.width), device=device))

    def pre_add(self, hidden: torch.Tensor, weight: float) -> torch.Tensor:
        """``weight x W hidden``: what the oracle adds to the first layer of the rows of ``hidden``
        ``[n, players * 156]`` (int8 card codes, on the weight's device)."""
        return weight * torch.nn.functional.linear(hidden.float() / DECK_SIZE, self.weight)


def oracle_weight(fade: float, cloning: bool, ppo_progress: float) -> float:
    """The oracle input's weight at an update: 0 while cloning, then ``1 - ppo_progress / fade``
    down to 0 (``ppo_progress``: 0 at the first PPO update, 1 at the end of the run)."""
    return 0.0 if cloning else max(0.0, 1.0 - ppo_progress / fade)
