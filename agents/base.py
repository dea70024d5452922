"""The agent protocol: every player of the harness, scripted or trained, looks like this.

An agent is built for one ``NertzConfig`` (it must decode that config's observation layout and
action catalogue), is deterministic given its seed, and only ever chooses among the actions the
engine's mask marks legal: legality is the engine's (STYLE: one rules engine), an agent only ranks.

``act_batch`` is the fast path the harness uses: every row is an independent decision of some
player at some table, so an agent that keeps memory between its own moves cannot be batched this
way (none of the scripted agents does; ``reset`` exists for the ones that will).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

import numpy as np

from nertz_env.actions import ActionCatalogue
from nertz_env.config import NertzConfig
from nertz_env.layout import ObservationLayout

# Positions in the offsets vector the compiled kernels read (``observation_offsets``; numba bakes
# them into the kernels, whose caches an edit here invalidates: ``engine.stamp_compiled``).
(
    O_NERTZ_TOP, O_WORK0, O_WASTE_TOP, O_FOUNDATION, O_NERTZ_COUNT, O_STOCK_COUNT, O_WASTE_COUNT, O_CALLED,
    O_WASTE_ORDER, O_STOCK_ORDER, O_STOCK_KNOWN, O_FOUNDATION_TOPS, O_SINCE_PROGRESS, O_BLOCK, O_PLAYERS,
    O_WORK_PILES,
) = range(16)


def observation_offsets(config: NertzConfig) -> np.ndarray:
    """Where the kernels find each named part of an observation, read from ``ObservationLayout``
    by name so that a change of layout reaches the agents. Opponent ``k``'s parts lie at
    ``k * block`` plus the viewer's offset (the layout is egocentric, R9)."""
    layout = ObservationLayout(config)
    s = layout.slices
    w = config.work_piles
    for j in range(w):  # the kernels address work pile j as work0 + 52 * j
        assert s[f"self.work{j}"].start == s["self.work0"].start + 52 * j
    for k in range(1, config.num_players):
        assert s[f"opp{k}.nertz_top"].start == k * layout.block_size
    names = (
        "self.nertz_top", "self.work0", "self.waste_top", "self.foundation", "self.nertz_count",
        "self.stock_count", "self.waste_count", "self.called", "own_waste_order", "own_stock_order",
        "own_stock_known", "foundation_tops", "since_progress",
    )
    off = [s[n].start for n in names] + [layout.block_size, config.num_players, w]
    out = np.array(off, dtype=np.int64)
    out.setflags(write=False)
    return out


class Agent(ABC):
    """A player: ``reset(seat)`` starts a hand, ``act`` / ``act_batch`` choose legal actions.

    Args:
        config: the rules the agent plays under; its observation and action spaces follow.
        seed: the only source of the agent's chance (agents without chance ignore it).
    """

    name = "agent"

    def __init__(self, config: NertzConfig | None = None, seed: int = 0):
        self.config = config if config is not None else NertzConfig()
        self.seed = int(seed)
        self.catalogue = ActionCatalogue(self.config)
        self.table = self.catalogue.table.astype(np.int64)
        self.offsets = observation_offsets(self.config)
        self.cfg = self.config.packed
        self.obs_size = ObservationLayout(self.config).size
        self.seat = 0

    def reset(self, seat: int = 0) -> None:
        """Start a hand in ``seat`` (the observation is already egocentric; kept for agents that
        remember)."""
        self.seat = int(seat)

    def act(self, observation: Mapping[str, Any]) -> int:
        """One decision from a PettingZoo-style ``{"observation", "action_mask"}`` dict."""
        obs = np.asarray(observation["observation"], dtype=np.int8)[None]
        mask = np.asarray(observation["action_mask"], dtype=np.int8)[None]
        return int(self.act_batch(obs, mask)[0])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """Actions ``int64[n]`` for ``n`` independent rows of observations and masks."""
        obs = np.ascontiguousarray(observations, dtype=np.int8)
        masks = np.ascontiguousarray(action_masks, dtype=np.int8)
        if obs.ndim != 2 or masks.ndim != 2 or obs.shape[0] != masks.shape[0]:
            raise ValueError(f"act_batch takes observations [n, D] and masks [n, N], got {obs.shape}, {masks.shape}")
        if obs.shape[1] != self.obs_size or masks.shape[1] != len(self.catalogue):
            raise ValueError(
                f"{self.name} was built for observations of size {self.obs_size} and {len(self.catalogue)} "
                f"actions ({self.config.num_players} players, {self.config.work_piles} work piles), "
                f"got {obs.shape[1]} and {masks.shape[1]}: build it with the env's config"
            )
        if not masks.any(axis=1).all():
            raise ValueError("every action mask needs a legal action (WAIT is always legal, R4.7)")
        out = np.empty(obs.shape[0], dtype=np.int64)
        self._choose(obs, masks, out)
        return out

    @abstractmethod
    def _choose(self, obs: np.ndarray, masks: np.ndarray, out: np.ndarray) -> None:
        """Write one legal action per row into ``out`` (inputs are validated, contiguous int8)."""

    def __repr__(self) -> str:
        config = getattr(self, "config", None)
        players = config.num_players if config is not None else "?"
        return f"{type(self).__name__}(seed={getattr(self, 'seed', '?')}, players={players})"
