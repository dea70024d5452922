"""The fixed baselines: ``random``, ``passive`` and ``greedy``.

They bracket the scripted field: ``random`` is the floor, ``passive`` plays only to the
foundations (and calls when it can, so its hands still end, R4.6), ``greedy`` follows the seeds'
advice as a fixed priority list (``agents._kernels.greedy_priority``). Only ``random`` uses its
seed; the other two are pure functions of the observation.
"""

from __future__ import annotations

import numpy as np

from nertz_env.agents import _kernels
from nertz_env.agents.base import Agent
from nertz_env.config import NertzConfig


class RandomAgent(Agent):
    """Uniform over the legal actions, from its own seeded generator."""

    name = "random"

    def __init__(self, config: NertzConfig | None = None, seed: int = 0):
        super().__init__(config, seed)

    def _choose(self, obs: np.ndarray, masks: np.ndarray, out: np.ndarray) -> None:
        # One uniform per row (row_uniforms): in row order from the generator, or from each row's key.
        args = (masks, self.row_uniforms(masks.shape[0]), out)
        self._kernel(_kernels, "choose_uniform", args)(*args)


class PassiveAgent(Agent):
    """Plays only to the foundations, otherwise draws; calls as soon as it may."""

    name = "passive"

    def _choose(self, obs: np.ndarray, masks: np.ndarray, out: np.ndarray) -> None:
        args = (obs, masks, self.table, self.offsets, False, out)
        self._kernel(_kernels, "choose_fixed", args)(*args)


class GreedyAgent(Agent):
    """The seeds' advice as a fixed priority list: call at once, the Nertz top first,
    foundations before work piles, draw when nothing else helps."""

    name = "greedy"

    def _choose(self, obs: np.ndarray, masks: np.ndarray, out: np.ndarray) -> None:
        args = (obs, masks, self.table, self.offsets, True, out)
        self._kernel(_kernels, "choose_fixed", args)(*args)
