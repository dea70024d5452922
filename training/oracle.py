"""Oracle guiding, for ``train_selfplay --oracle-policy true``.

The policy plays from its observation (R9); much of a hand turns on cards it cannot see: the
order of its own Nertz pile and stock, and the opponents'. With ``--oracle-policy true`` the
policy also sees them while it learns, then loses them: ``OracleInput`` adds ``weight x
W hidden`` to the first layer of the policy's observation summary (before its ReLU), where
``hidden`` is every seat's hidden cards as the central critic reads them
(``central_critic.HiddenCards``: the learner's own first, scaled to [0, 1]) and ``W`` is learned
with the network, from zeros. The weight is 0 while cloning (the teacher sees no hidden card),
1 when PPO starts, stays 1 over the first ``--oracle-hold`` of the PPO phase (default 0), then
fades linearly to 0 at ``--oracle-fade`` of it; the rest of the run learns without it (Suphx's
"oracle guiding", by fading the input's scale where Suphx drops its entries; ``--oracle-hold``
gives Suphx's order, an oracle agent trained at full weight before any fade). The rollouts and
the update of one PPO step use the same weight, so PPO's ratio compares like with like.

``W`` is not part of the policy: ``policy.pt`` is the network alone and plays, like every saved
policy, from the observation. A policy kept while the weight is above 0 plays without the input
it was leaning on, so only the policies kept after the fade are the method's result. The same
holds for the learner's snapshots in the opponent pool: they are plain networks, and play
without the input.

``--oracle-input`` chooses how ``W`` reads the hidden cards. ``positions`` (the first runs') gives
each card's place in its pile scaled to [0, 1], from which a linear map hardly tells which card
lies next. ``near`` gives, per seat and card, ten 0/1 entries that name the cards about to
matter: the three under the Nertz top (R2), the waste tops after the next three DRAWs and the
cards the next DRAW turns (R4.1, with the rules' ``stock_draw``), and the three under the waste
top.
"""

from __future__ import annotations

import numpy as np
import torch

from nertz_env.engine.constants import DECK_SIZE
from nertz_env.training.central_critic import HiddenCards

ENCODINGS = ("positions", "near")
NEAR_PER_CARD = 10  # the entries ``near_cards`` gives each card of each seat


def near_cards(hidden: torch.Tensor, players: int, stock_draw: int) -> torch.Tensor:
    """``[n, players * 10 * 52]`` 0/1 from ``hidden`` ``[n, players * 156]`` (each seat's
    ``nertz_order`` with 1 = bottom, ``stock_order`` with 1 = next to turn, ``waste_order`` with
    1 = top; 0 = not there): per seat, the cards 1, 2 and 3 below its Nertz top; the waste top
    after 1, 2 and 3 more DRAWs (the card at ``k x stock_draw`` in the stock); every card the next
    DRAW turns; the cards 1, 2 and 3 below its waste top."""
    order = hidden.reshape(len(hidden), players, 3, DECK_SIZE).long()
    nertz, stock, waste = order[:, :, 0], order[:, :, 1], order[:, :, 2]
    below_top = nertz.amax(dim=-1, keepdim=True) - nertz  # 0 on the top; only where nertz > 0
    entries = [(nertz > 0) & (below_top == k) for k in (1, 2, 3)]
    entries += [stock == k * stock_draw for k in (1, 2, 3)] + [(stock > 0) & (stock <= stock_draw)]
    entries += [waste == k for k in (2, 3, 4)]
    return torch.stack(entries, dim=2).reshape(len(hidden), -1).float()


class OracleInput(HiddenCards, torch.nn.Module):
    """The learned map ``W`` from the hidden cards, as ``encoding`` reads them, to the first layer
    (``[first_width, players * 156]`` for ``positions``, ``[first_width, players * 520]`` for
    ``near``), and where each learner seat's hidden cards lie (``HiddenCards``)."""

    def __init__(self, envs, learn_idx: np.ndarray, first_width: int, device, encoding: str = "positions",
                 stock_draw: int = 3):  # fmt: skip
        if encoding not in ENCODINGS:
            raise ValueError(f"oracle encoding {encoding!r}: accepted {', '.join(ENCODINGS)}")
        torch.nn.Module.__init__(self)
        HiddenCards.__init__(self, envs, learn_idx)
        self.encoding, self.players, self.stock_draw = encoding, envs.num_players, stock_draw
        inputs = self.width if encoding == "positions" else self.players * NEAR_PER_CARD * DECK_SIZE
        # zeros, not a random draw: the run's other draws stay those of a run without the flag
        self.weight = torch.nn.Parameter(torch.zeros((first_width, inputs), device=device))

    def encode(self, hidden: torch.Tensor) -> torch.Tensor:
        """What ``W`` reads of the rows of ``hidden`` ``[n, players * 156]`` (int8 card places)."""
        if self.encoding == "positions":
            return hidden.float() / DECK_SIZE
        return near_cards(hidden, self.players, self.stock_draw)

    def pre_add(self, hidden: torch.Tensor, weight: float) -> torch.Tensor:
        """``weight x W encode(hidden)``: what the oracle adds to the first layer of the rows of
        ``hidden`` ``[n, players * 156]`` (int8 card places, on the weight's device)."""
        return weight * torch.nn.functional.linear(self.encode(hidden), self.weight)


def oracle_weight(fade: float, cloning: bool, ppo_progress: float, hold: float = 0.0) -> float:
    """The oracle input's weight at an update: 0 while cloning, 1 while ``ppo_progress < hold``,
    then linearly down to 0 at ``ppo_progress == fade`` (``ppo_progress``: 0 at the first PPO
    update, 1 at the end of the run; ``0 <= hold < fade``)."""
    if cloning:
        return 0.0
    return min(1.0, max(0.0, 1.0 - (ppo_progress - hold) / (fade - hold)))
