"""An auxiliary loss on the shared layers, for ``train_selfplay --aux-hidden WEIGHT``.

The policy plays from its observation (R9); the cards that decide the next ticks are hidden: the
cards under each Nertz top (R2), those each stock turns next (R4.1) and those under each waste
top. With ``--aux-hidden WEIGHT`` the observation summary that feeds both the move scores and the
value (``MoveScorer.summary``) is also trained to predict them: ``HiddenCardsHead`` maps the
summary to one logit per entry of the oracle's ``near`` encoding (``training.oracle.near_cards``:
per seat and card, ten 0/1 entries naming the cards about to matter, the learner's own seat
first) and the loss adds ``WEIGHT`` x their binary cross-entropy, summed over the entries and
divided by the number of places they name (ten per seat), so each place weighs about one
cross-entropy over the cards it could hold.

The target is read from the hidden cards (``central_critic.HiddenCards``) while the run learns;
the head is not part of the policy: ``policy.pt`` is the network alone, plays from the
observation, and is the same kind of file as without the flag. What the loss can teach is what
the observation does tell of those cards: which cards are nowhere in sight (card counting), and
which an opponent's moves show it lacks.
"""

from __future__ import annotations

import numpy as np
import torch

from nertz_env.engine.constants import DECK_SIZE
from nertz_env.training.central_critic import HiddenCards
from nertz_env.training.oracle import NEAR_PER_CARD, near_cards


class HiddenCardsHead(HiddenCards, torch.nn.Module):
    """The auxiliary head ``summary -> logits [players * 10 * 52]`` (zeros at first; the layer's
    random start, zeroed at once, does take numbers from torch's generator, so the run's later
    draws differ from a run without the flag), and where each learner seat's hidden cards lie."""

    def __init__(self, envs, learn_idx: np.ndarray, summary_width: int, device, stock_draw: int):
        torch.nn.Module.__init__(self)
        HiddenCards.__init__(self, envs, learn_idx)
        self.players, self.stock_draw = envs.num_players, stock_draw
        self.head = torch.nn.Linear(summary_width, self.players * NEAR_PER_CARD * DECK_SIZE).to(device)
        torch.nn.init.zeros_(self.head.weight)
        torch.nn.init.zeros_(self.head.bias)

    def loss(self, summary: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
        """The auxiliary loss of summaries ``[n, width]`` against the rows' hidden cards ``hidden``
        ``[n, players * 156]`` (int8 card places): the entries' binary cross-entropy, summed over
        each row's entries, divided by the places named (``players * 10``), averaged over rows."""
        target = near_cards(hidden.to(summary.device), self.players, self.stock_draw)
        per_entry = torch.nn.functional.binary_cross_entropy_with_logits(self.head(summary), target, reduction="none")
        return per_entry.sum(dim=1).mean() / (self.players * NEAR_PER_CARD)
