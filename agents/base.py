"""The agent protocol: every player of the harness, scripted or trained, looks like this.

An agent is built for one ``NertzConfig`` (it must decode that config's observation layout and
action catalogue), is deterministic given its seed, and only ever chooses among the actions the
engine's mask marks legal: legality is the engine's (STYLE: one rules engine), an agent only ranks.

``act_batch`` is the fast path the harness uses: every row is an independent decision of some
player at some table, so an agent that keeps memory between its own moves cannot be batched this
way (none of the scripted agents does; ``reset`` exists for the ones that will).
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from nertz_env import engine, interim
from nertz_env.actions import ActionCatalogue
from nertz_env.check_agent_inputs import AgentInputCheck
from nertz_env.checks import check_seed
from nertz_env.config import NertzConfig
from nertz_env.game import Game
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


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def mix_keys(*words: np.ndarray) -> np.ndarray:
    """A uint64 hash of equal-shaped uint64 arrays, element by element (splitmix64 finalizer over
    each word in turn)."""
    with np.errstate(over="ignore"):
        z = np.zeros(np.shape(words[0]), np.uint64)
        for w in words:
            z = (z ^ np.asarray(w, np.uint64)) + _GOLDEN
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            z = z ^ (z >> np.uint64(31))
    return z


def uniforms_from_keys(keys: np.ndarray) -> np.ndarray:
    """Uniforms in [0, 1) from uint64 hashes (their top 53 bits)."""
    return (keys >> np.uint64(11)).astype(np.float64) * 2.0**-53


def sample_rows(probs: np.ndarray, masks: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """One legal action per row drawn from ``probs`` by inverse CDF with the given uniforms."""
    weights = np.where(masks != 0, np.asarray(probs, np.float64), 0.0)
    cdf = np.cumsum(weights, axis=1)
    picked = (cdf <= (uniforms * cdf[:, -1])[:, None]).sum(axis=1)
    last_legal = masks.shape[1] - 1 - np.argmax(masks[:, ::-1] != 0, axis=1)
    picked = np.minimum(picked, last_legal)
    zero = weights[np.arange(len(picked)), picked] == 0  # only where every weight is 0: first legal
    picked[zero] = np.argmax(masks[zero] != 0, axis=1)
    return picked.astype(np.int64)


class Agent(ABC):
    """A player: ``reset(seat)`` starts a hand, ``act`` / ``act_batch`` choose legal actions.

    Args:
        config: the rules the agent plays under; its observation and action spaces follow.
        seed: the only source of the agent's chance (agents without chance ignore it).
    """

    name = "agent"
    # Whether a first start may play this agent's kernels in plain Python while they compile in the
    # background (nertz_env.interim); the evaluation arena, which plays thousands of hands, says no.
    interim = True

    def __init__(self, config: NertzConfig | None = None, seed: int = 0):
        self.config = config if config is not None else NertzConfig()
        if not isinstance(self.config, NertzConfig):
            raise TypeError(f"config must be a NertzConfig, got {type(self.config).__name__}")
        self.seed = check_seed(seed, "agent seed", allow_none=False)
        self.catalogue = ActionCatalogue(self.config)
        self.table = self.catalogue.table.astype(np.int64)
        self.offsets = observation_offsets(self.config)
        self.cfg = self.config.packed
        layout = ObservationLayout(self.config)
        self.obs_size = layout.size
        self._check_inputs = AgentInputCheck(self.config, layout, self.catalogue.table)
        self.seat = 0
        self.rng = np.random.default_rng(self.seed)
        self._keys: np.ndarray | None = None
        self._kernel_modules: dict[str, Any] = {}  # chosen at the first decision (``_kernel``)

    def _kernel(self, module: ModuleType, name: str, args: Sequence[Any]) -> Any:
        """``module.name`` (one of this package's kernel modules), or while a first start compiles it
        in the background the plain-Python copy's, until the compile ends (``nertz_env.interim``).
        The module is chosen at the first call, with the kernel's arguments ``args``."""
        chosen = self._kernel_modules.get(module.__name__)
        if chosen is None:
            chosen = self._kernel_modules[module.__name__] = self._compiled_or_plain(module, name, args)
        return getattr(chosen, name)

    def _compiled_or_plain(self, module: ModuleType, name: str, args: Sequence[Any]) -> Any:
        if not self.interim:
            return module
        warm = functools.partial(_first_decision, type(self), self.config)
        cached = lambda: engine.is_cached(getattr(module, name), args)  # noqa: E731
        job = interim.background(f"{type(self).__name__}'s kernels", warm, cached)
        if job is None:
            return module
        plain = dict(zip(KERNEL_MODULES, engine.python_modules(KERNEL_MODULES)))[module.__name__]

        def switch() -> None:
            self._kernel_modules[module.__name__] = module

        return interim.InterimEngine(job, switch, plain=plain, compiled=module)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_kernel_modules"] = {}  # modules: chosen again at the copy's first decision
        return state

    def row_uniforms(self, n: int) -> np.ndarray:
        """One uniform in [0, 1) per row of the current ``act_batch``: a pure function of the
        agent's seed and the row's key when the caller gave ``keys`` (so a decision does not depend
        on which other rows share the batch), else drawn in row order from the agent's generator."""
        if self._keys is None:
            return self.rng.random(n)
        return uniforms_from_keys(mix_keys(np.full(n, self.seed % 2**64, np.uint64), self._keys))

    def reset(self, seat: int = 0) -> None:
        """Start a hand in ``seat`` (the observation is already egocentric; kept for agents that
        remember)."""
        self.seat = int(seat)

    def reseed(self, seed: int) -> None:
        """Restart the agent's chance from ``seed``, as if it had been built with it. The batched
        and single-seat envs call it on the agents of their fixed seats at a seeded ``reset``, so
        that the seed replays the whole episode, random opponents included."""
        self.seed = check_seed(seed, "agent seed", allow_none=False)
        self.rng = np.random.default_rng(self.seed)

    def chance_state(self) -> dict[str, Any]:
        """What the agent's next draws depend on (its generator's state), as a trainer's checkpoint
        keeps it: ``set_chance_state`` of it goes on drawing where the agent stopped."""
        return {"rng": self.rng.bit_generator.state}

    def set_chance_state(self, state: Mapping[str, Any]) -> None:
        self.rng.bit_generator.state = state["rng"]

    def act(self, observation: Mapping[str, Any]) -> int:
        """One decision from a PettingZoo-style ``{"observation", "action_mask"}`` dict."""
        if not isinstance(observation, Mapping) or not {"observation", "action_mask"} <= set(observation):
            raise TypeError("act takes a dict {'observation': int8[D], 'action_mask': int8[N]} (the env's observation)")
        obs, mask = np.asarray(observation["observation"]), np.asarray(observation["action_mask"])
        if obs.ndim != 1 or mask.ndim != 1:
            raise ValueError(f"act takes one observation [D] and one mask [N], got {obs.shape} and {mask.shape}")
        return int(self.act_batch(obs[None], mask[None])[0])

    def act_batch(
        self, observations: np.ndarray, action_masks: np.ndarray, keys: np.ndarray | None = None
    ) -> np.ndarray:
        """Actions ``int64[n]`` for ``n`` independent rows of observations and masks. ``keys``
        (uint64 ``[n]``, optional) names each decision (the arena: its hand, seat and tick); an
        agent with chance then draws for a row from its seed and that key alone."""
        obs, masks = self.checked_rows(observations, action_masks)
        return self._act_engine_rows(obs, masks, keys)

    def checked_rows(self, observations: Any, action_masks: Any) -> tuple[np.ndarray, np.ndarray]:
        """``observations [n, D]`` and ``action_masks [n, N]`` as the contiguous int8 rows the
        compiled kernels read, or an error naming what is wrong: the shapes of this agent's rules,
        whole numbers inside the observation space, masks of 0 and 1 that allow only moves the
        observation makes possible. Every public method that hands rows to compiled code checks them
        here first (``act_batch``, and the agents' ``scores``, ``calls``, ``search``...)."""
        return self._check_inputs.rows(observations, action_masks, self.name)

    def _act_engine_rows(self, obs: np.ndarray, masks: np.ndarray, keys: np.ndarray | None = None) -> np.ndarray:
        """``act_batch`` without its checks, for the harness's arena only: its rows are what the
        engine itself just wrote for this config (contiguous int8 of the right shapes). Anything
        from outside goes through ``act_batch``."""
        if keys is not None:
            keys = np.asarray(keys)
            if keys.dtype != np.uint64 or keys.shape != (obs.shape[0],):
                raise ValueError(f"keys must be uint64 shaped ({obs.shape[0]},), one per row; got {keys.dtype} "
                                 f"{keys.shape}")
        out = np.empty(obs.shape[0], dtype=np.int64)
        self._keys = keys
        try:
            self._choose(obs, masks, out)
        finally:
            self._keys = None
        return out

    @abstractmethod
    def _choose(self, obs: np.ndarray, masks: np.ndarray, out: np.ndarray) -> None:
        """Write one legal action per row into ``out`` (inputs are validated, contiguous int8)."""

    def __repr__(self) -> str:
        config = getattr(self, "config", None)
        players = config.num_players if config is not None else "?"
        return f"{type(self).__name__}(seed={getattr(self, 'seed', '?')}, players={players})"


# The agents' kernel modules, imported again together as plain Python while a first start compiles
# them (they import one another).
KERNEL_MODULES = ("nertz_env.agents._kernels", "nertz_env.agents._judge", "nertz_env.agents._search")


def _first_decision(cls: type[Agent], config: NertzConfig) -> None:
    """A decision of a ``cls`` agent on a freshly dealt table of ``config``: ``nertz_env.interim``
    compiles an agent's kernels so."""
    game = Game(config)
    game.reset(seed=0)
    cls(config).act_batch(game.obs, game.masks)
