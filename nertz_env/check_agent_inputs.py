"""The check of every observation and action mask handed to an agent, a move-feature builder or a
determinisation (``AgentInputCheck``): shapes, types and values before any compiled code reads them.

Its compiled half (``agent_input_scan.scan_agent_inputs``) finds the first row a table cannot show;
this half checks shapes and types and words the refusal: a ``ValueError`` (``TypeError`` for a
type that holds no whole numbers) naming the row, the part of the observation (``ObservationLayout``
names) and what is accepted, with the rule it comes from.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nertz_env import agent_input_scan as scan
from nertz_env.cards import SUITS, card_name
from nertz_env.checks import check_masks, check_observations
from nertz_env.config import NertzConfig
from nertz_env.config_values import is_int_dtype

# The viewer's memory parts (R9): the cards of its waste and, once turned through, its stock.
_MEMORY = ("own_waste_order", "own_stock_order")


def check_numbers(what: str, a: np.ndarray) -> None:
    """Integer, bool or float arrays of whole numbers (``observation_dtype="float32"`` envs give
    floats); anything else is refused, not cast."""
    if is_int_dtype(a.dtype) or a.dtype == np.bool_:  # not timedelta64, a numpy 'integer'
        return
    if a.dtype.kind != "f":
        raise TypeError(f"{what} must be arrays of whole numbers (int8, or float32 as observation_dtype='float32' "
                        f"gives them), got {a.dtype}")
    whole = np.isfinite(a) & (a == np.floor(a))
    if not whole.all():
        index = tuple(int(i) for i in np.argwhere(~whole)[0])
        raise ValueError(f"{what} at {index} is {float(a[index])}: accepted whole numbers (as an env gives them)")


class AgentInputCheck:
    """What the agents' compiled kernels assume of an observation and its mask, for a batch
    ``obs[n, D]``, ``masks[n, N]`` of one config (R9 observation, R10 catalogue): values inside
    the observation space and masks of 0 and 1 with a legal action; in every block at most one
    Nertz top and one waste top, each shown exactly when its pile holds cards, and every work pile
    a run built down in alternating colours (R4.3, so at most 13 cards); the viewer's waste memory
    numbering the waste's cards (its top the waste top) and, once ``own_stock_known``, its stock
    memory the stock's; each card of a deck in one place and each deck's 52 cards counted (R1;
    with R4.8 builds the table's); ``foundation_tops`` the piles the foundation parts show (R4.2);
    and each move the mask allows has its source card and room at its destination."""

    def __init__(self, config: NertzConfig, layout: Any, table: np.ndarray):
        from nertz_env.actions import NERTZ, TO_FOUNDATION, TO_WORK, UNDER, WAIT, WASTE, WORK_SOURCE

        assert (NERTZ, WASTE, WORK_SOURCE, TO_FOUNDATION, TO_WORK, UNDER) == (0, 1, 2, 3, 4, 5)  # the scan's codes
        assert table[0, 0] == WAIT  # ``observations`` checks rows with a mask of WAIT alone
        self.config, self.layout, self.high = config, layout, layout.high
        s, w = layout.slices, config.work_piles
        for j in range(w):  # the scan addresses block q's work pile j as q * block + work0 + 52 * j
            assert s[f"self.work{j}"].start == s["self.work0"].start + scan.DECK * j
        for q in range(1, config.num_players):
            assert s[f"opp{q}.nertz_top"].start == q * layout.block_size
        names = ("self.nertz_top", "self.work0", "self.waste_top", "self.foundation", "self.nertz_count",
                 "self.stock_count", "self.waste_count", "own_waste_order", "own_stock_order", "own_stock_known",
                 "foundation_tops")  # fmt: skip
        sizes = [layout.block_size, config.num_players, w, int(config.nertz_builds)]
        self.parts = np.array(sizes + [s[n].start for n in names], np.int64)
        self.args = (self.high, self.parts, np.ascontiguousarray(table, np.int64))
        self.n_actions = len(table)
        self.names = _index_names(layout)

    def __call__(self, obs: np.ndarray, masks: np.ndarray) -> None:
        """Check contiguous int8 rows of this config's shapes (``rows`` makes them so)."""
        code, row, index = scan.scan_agent_inputs(obs, masks, *self.args)
        if code == scan.BAD_VALUE:  # the rows before ``row`` hold no such value: the batch's first is named
            check_observations(obs, self.high, self.names)
        if code != 0:
            raise ValueError(self._refusal(code, row, index, obs[row], masks[row]))

    def rows(self, observations: Any, action_masks: Any, who: str) -> tuple[np.ndarray, np.ndarray]:
        """``observations [n, D]`` and ``action_masks [n, N]`` as the contiguous int8 rows the
        compiled kernels read, or an error naming what is wrong (``who``: what was built for this
        config, named in the error): the shapes of this config, whole numbers inside the
        observation space (not cast into range), and all that ``__call__`` checks."""
        obs, masks = np.asarray(observations), np.asarray(action_masks)
        for what, a in (("observations", obs), ("action masks", masks)):
            check_numbers(what, a)
        if obs.ndim != 2 or masks.ndim != 2 or obs.shape[0] != masks.shape[0]:
            raise ValueError(f"{who} takes observations [n, D] and masks [n, N], got {obs.shape}, {masks.shape}")
        if obs.shape[1] != self.layout.size or masks.shape[1] != self.n_actions:
            raise ValueError(
                f"{who} was built for observations of size {self.layout.size} and {self.n_actions} actions "
                f"({self.config.num_players} players, {self.config.work_piles} work piles), got {obs.shape[1]} and "
                f"{masks.shape[1]}: build it with the env's config"
            )
        if obs.dtype != np.int8:  # values outside int8 must not be cast silently into range
            check_observations(obs, self.high, self.names)
        if masks.dtype != np.int8:
            check_masks(masks)
        obs = np.ascontiguousarray(obs, dtype=np.int8)
        masks = np.ascontiguousarray(masks, dtype=np.int8)
        self(obs, masks)  # the kernels index arrays with what they read from these
        return obs, masks

    def observations(self, observations: Any, who: str) -> np.ndarray:
        """``rows`` for observations alone (as contiguous int8 ``[n, D]``), checked with masks that
        allow only WAIT (R4.7), which every table allows."""
        obs = np.asarray(observations)
        masks = np.zeros((obs.shape[0] if obs.ndim == 2 else 0, self.n_actions), np.int8)
        masks[:, 0] = 1
        return self.rows(obs, masks, who)[0]

    def _refusal(self, code: int, row: int, index: int, o: np.ndarray, m: np.ndarray) -> str:
        if code == scan.BAD_MASK:
            return f"action mask row {row}, action {index} is {int(m[index])}; masks hold 0 or 1"
        if code == scan.NO_LEGAL:
            return f"action mask row {row} allows nothing; WAIT is always legal (R4.7)"
        if code in (scan.NO_SOURCE, scan.NO_ROOM):
            why = "no card to move" if code == scan.NO_SOURCE else "no room at its destination (13 cards)"
            return (f"action mask row {row} allows action {index} but its observation has {why}: pass the mask "
                    "the env gave with that observation")  # fmt: skip
        part = self.names[index]
        fixed = {scan.TWO_TOPS: "holds more than one card (a pile has one top)",
                 scan.NOT_A_RUN: "is not a work pile built down by one rank in alternating colours (R4.3)",
                 scan.BAD_WASTE: "does not number the waste's cards 1..waste_count, each once (R9 memory)",
                 scan.WASTE_TOP: "is not the card own_waste_order numbers 1; accepted: the waste top is the top of the "
                            "viewer's memory of its waste (R9)"}  # fmt: skip
        if code in (scan.CARD_COUNT, scan.TABLE_COUNT):
            what = self._count_why(o, part.split(".")[0] if code == scan.CARD_COUNT else None)
        else:
            what = f"{part} {fixed[code] if code in fixed else self._why(code, index, o)}"
        return f"observation row {row}: {what}; pass observations from an env of the agent's config"

    def _why(self, code: int, index: int, o: np.ndarray) -> str:
        """What is wrong with the part at ``index`` of the row ``o``, and what is accepted."""
        v, s, part = self.layout.view, self.layout.slices, self.names[index]
        if code == scan.BAD_STOCK:
            if int(v(o, "own_stock_known")[0]) == 0:
                return ("numbers cards but own_stock_known is 0; accepted: all 0 until the viewer has turned "
                        "through its stock (R9 memory)")  # fmt: skip
            return (f"does not number the stock's cards 1..stock_count ({int(v(o, 'self.stock_count')[0])}), each "
                    "once, though own_stock_known is 1 (R9 memory)")  # fmt: skip
        if code == scan.TOP_COUNT:
            count = part.replace("_top", "_count")
            return (f"shows {int(np.count_nonzero(o[s[part]]))} cards but {count} is {int(v(o, count)[0])}; "
                    "accepted: a pile's top card shown exactly when it holds cards (R9)")  # fmt: skip
        if code == scan.CARD_TWICE:
            card, block = index - s[part].start, "self" if part in _MEMORY else part.split(".")[0]
            places = [name for name in self._places(block) if name != part and o[s[name].start + card] != 0]
            if part in _MEMORY:  # the top of the waste memory is the waste top
                places = [name for name in places if name != "self.waste_top"]
            return (f"shows {card_name(card)} of {block}'s deck, which also lies in {places[0]}; accepted: each card "
                    "of a deck in one place (R1)")  # fmt: skip
        card = index - s["foundation_tops"].start
        suit, rank, p = card // 13, card % 13, self.config.num_players
        tops = v(o, "foundation_tops").astype(np.int64).reshape(4, 13)
        if code == scan.TOPS_OVER:
            return (f"counts {int(tops[suit].sum())} foundation piles of suit {SUITS[suit]}; accepted at most {p}, "
                    f"one per ace of the {p} decks (R4.2)")  # fmt: skip
        assert code == scan.TOPS_DIFFER, code
        shown = sum(int(v(o, f"{b}.foundation")[card]) for b in self._blocks())
        return (f"counts {int(tops[suit, rank:].sum())} piles of suit {SUITS[suit]} reaching {card_name(card)} but "
                f"the players' foundation parts show {shown} {card_name(card)}; accepted: foundation_tops as the "
                "foundation parts give them (R4.2: a pile holds its suit from the ace up)")  # fmt: skip

    def _count_why(self, o: np.ndarray, block: str | None) -> str:
        """The counts of ``block`` (None: the whole table, R4.8) that do not add up to its cards."""
        def counts(b: str) -> dict[str, int]:
            v = self.layout.view
            work = sum(int(np.count_nonzero(v(o, f"{b}.work{j}"))) for j in range(self.config.work_piles))
            return {"nertz_count": int(v(o, f"{b}.nertz_count")[0]), "work piles": work,
                    "stock_count": int(v(o, f"{b}.stock_count")[0]), "waste_count": int(v(o, f"{b}.waste_count")[0]),
                    "foundation": int(np.count_nonzero(v(o, f"{b}.foundation")))}  # fmt: skip

        if block is None:
            total = sum(sum(counts(b).values()) for b in self._blocks())
            return (f"the players' counts (nertz_count, work piles, stock_count, waste_count and foundation of every "
                    f"block) hold {total} cards; accepted the {self.config.num_players} decks' "
                    f"{scan.DECK * self.config.num_players}, each card in one place (R1)")  # fmt: skip
        c = counts(block)
        if self.config.nertz_builds:
            own = c["stock_count"] + c["waste_count"] + c["foundation"]
            return (f"{block}'s stock_count {c['stock_count']} + waste_count {c['waste_count']} + foundation "
                    f"{c['foundation']} hold {own} cards of its deck; accepted at most its {scan.DECK} (R1)")
        said = " + ".join(f"{name} {n}" for name, n in c.items())
        return (f"{block}'s piles hold {sum(c.values())} cards ({said}); accepted: its deck's {scan.DECK}, each card "
                "in one place (R1)")  # fmt: skip

    def _blocks(self) -> list[str]:
        return ["self"] + [f"opp{q}" for q in range(1, self.config.num_players)]

    def _places(self, block: str) -> list[str]:
        """The card parts of ``block`` (the viewer's with its memory), in the scan's order."""
        parts = [f"{block}.foundation", f"{block}.waste_top"] + ([*_MEMORY] if block == "self" else [])
        return parts + [f"{block}.nertz_top"] + [f"{block}.work{j}" for j in range(self.config.work_piles)]


def _index_names(layout: Any) -> list[str]:
    names = [""] * layout.size
    for name, sl in layout.slices.items():
        for i in range(*sl.indices(layout.size)):
            names[i] = name
    return names
