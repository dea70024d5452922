"""The strongest scripted player: a short look-ahead inside its own layout (``agents._search``).

Each tick it tries every legal move of the mask, follows it with up to ``depth - 1`` more of its
own moves on a copy of its layout (the opponents are taken to stand still), and scores the best
place each can lead to:

* the R7 score: a Nertz card moved is worth ``1 + nertz_penalty`` on a foundation and
  ``nertz_penalty`` elsewhere, any other card on a foundation 1; ``out`` more once the Nertz
  pile is empty (the call is then in hand);
* ``empty`` per empty work pile while Nertz cards remain (room for any Nertz card, kings first);
* ``nertz_found`` / ``nertz_work`` when the Nertz top can go to a foundation / onto or under a
  work pile next, ``nertz_unknown`` for a Nertz card freshly turned inside the search;
* ``found_ready`` per other card that could go to a foundation next.

What a later move adds is discounted by ``gamma`` and every move costs ``step``, so a gain sooner
beats the same gain later (a Nertz card before a foundation card it does not need). A move must
beat ``draw``, worth ``draw`` above standing still: a move that gains nothing loses to turning
the stock, which also rules out shuffling a block back and forth between work piles (each move
would have to raise the same score strictly).

At the root two facts of the rest of the table count: ``race`` is added to a foundation move an
opponent could also make now (R6: first come, first served), and ``waste_work`` to a move from the
waste when the viewer's stock cycle is dead (it remembers the stock, R9, and no card it will show
in this pass or the next is of use) or no one has made progress for ``stuck`` ticks (R5): taking a
card out of the waste changes which cards the next pass shows.

With ``nertz_builds`` (R4.8) a build onto another player's Nertz top is scored like any move
(what the card leaving the layout opens up) plus ``build``, scaled from 1x to 2x as the target's
Nertz pile runs out; a build onto a pile whose owner can play their Nertz top now is not tried,
as that move would block it (two such players would otherwise block each other tick after tick).

Calling (R4.6) follows ``call``: ``"ahead"`` (the default: call when strictly ahead of every
opponent, else play on, which cannot lower an empty-pile score), ``"now"``, or ``"safe"`` (as
``ahead``, but play on while no opponent can close the lead before the call lands; it scores more
per hand but lets the opponents score more too, and loses more matches to 100).

``wait="soon"`` (default ``"never"``) plays WAIT (R4.7) in place of a DRAW that would cover a waste
top an opponent's next foundation play would free (``_judge.wait_for_opponents``): the one rule
here that reads what the opponents are about to do rather than the viewer's own moves.

The defaults were tuned with ``training.evaluate`` against ``greedy`` at 2- and 4-player tables.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from nertz_env.actions import ACTION_CALL, NERTZ, TO_FOUNDATION, TO_WORK, UNDER, WASTE, WORK_SOURCE
from nertz_env.agents import _judge, _search
from nertz_env.agents.base import Agent
from nertz_env.config import NertzConfig, is_int
from nertz_env.config_values import is_real

CALL_MODES = {"now": _judge.CALL_NOW, "safe": _judge.CALL_SAFE, "ahead": _judge.CALL_AHEAD}

DEFAULTS: dict[str, Any] = {
    "depth": 2,
    "empty": 1.0,
    "nertz_found": 1.5,
    "nertz_work": 1.0,
    "nertz_unknown": 0.6,
    "found_ready": 0.4,
    "race": 0.5,
    "draw": 0.05,
    "step": 0.02,
    "gamma": 0.9,
    "out": 4.0,
    "waste_work": 0.1,
    "stuck": 5,
    "call": "ahead",
    "build": 0.5,
}

# The weights' accepted ranges, where narrower than any finite number: a discount, and ticks (R5).
_WEIGHT_RANGES = {"gamma": (0.0, 1.0, "a number from 0 to 1"), "stuck": (0.0, math.inf, "a finite number >= 0")}


def _check_weight(key: str, value: Any) -> None:
    """Refuse, by name, a weight that is not a finite number in its range (it goes to compiled code)."""
    low, high, accepted = _WEIGHT_RANGES.get(key, (-math.inf, math.inf, "a finite number"))
    number = is_real(value)
    if not (number and math.isfinite(value) and low <= value <= high):
        raise ValueError(f"invalid {key}={value!r}: accepted {accepted}")


_PARAM_INDEX = {
    "depth": _search.P_DEPTH, "empty": _search.P_EMPTY, "nertz_found": _search.P_NERTZ_FOUND,
    "nertz_work": _search.P_NERTZ_WORK, "nertz_unknown": _search.P_NERTZ_UNKNOWN,
    "found_ready": _search.P_FOUND_READY, "race": _search.P_RACE, "draw": _search.P_DRAW,
    "step": _search.P_STEP, "gamma": _search.P_GAMMA, "out": _search.P_OUT, "waste_work": _search.P_WASTE_WORK,
    "stuck": _search.P_STUCK, "call": _search.P_CALL, "build": _search.P_BUILD,
}


class HeuristicAgent(Agent):
    """Look-ahead player; every weight of ``DEFAULTS`` can be overridden by keyword."""

    name = "heuristic"

    def __init__(self, config: NertzConfig | None = None, seed: int = 0, wait: str = "never", **options: Any):
        super().__init__(config, seed)
        if not isinstance(wait, str) or wait not in ("never", "soon"):  # not a list or an array equal to one
            raise ValueError(f"invalid wait={wait!r}: accepted never, soon")
        self.wait = wait
        unknown = sorted(set(options) - set(DEFAULTS))
        if unknown:
            raise ValueError(f"unknown heuristic option(s) {', '.join(unknown)}; known: wait, {', '.join(DEFAULTS)}")
        self.options = {**DEFAULTS, **options}
        if not isinstance(self.options["call"], str) or self.options["call"] not in CALL_MODES:  # ["ahead"]: no key
            raise ValueError(f"invalid call={self.options['call']!r}: accepted {', '.join(CALL_MODES)}")
        depth = self.options["depth"]
        if not is_int(depth) or not 1 <= depth <= _search.MAX_DEPTH:
            raise ValueError(f"invalid depth={depth!r}: accepted an integer from 1 to {_search.MAX_DEPTH} (not a bool)")
        self.options["depth"] = int(depth)
        for key in DEFAULTS.keys() - {"depth", "call"}:
            _check_weight(key, self.options[key])
        self.params = np.zeros(_search.N_PARAMS, np.float64)
        for key, value in self.options.items():
            self.params[_PARAM_INDEX[key]] = CALL_MODES[value] if key == "call" else float(value)
        self._rows = _search_rows(self.table, self.config.work_piles)

    def _choose(self, obs: np.ndarray, masks: np.ndarray, out: np.ndarray) -> None:
        args: tuple[Any, ...] = (obs, masks, self.table, self.offsets, self.cfg, self.params, *self._rows, out)
        self._kernel(_search, "choose_heuristic", args)(*args)
        if self.wait == "soon":
            args = (obs, self.offsets, self.table, out)
            self._kernel(_judge, "wait_for_opponents", args)(*args)

    def calls(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """bool ``[n]``: the rows (checked as ``act_batch`` checks them) where CALL is legal (R4.6)
        and this player's ``call`` rule calls; its own choice is CALL exactly there."""
        return self._calls(*self.checked_rows(obs, masks))

    def _calls(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``calls`` of engine rows (int8, as ``_choose`` takes them)."""
        calls = masks[:, ACTION_CALL] != 0
        if calls.any():
            picks = np.empty(int(calls.sum()), np.int64)
            self._choose(obs[calls], masks[calls], picks)
            calls[calls] = picks == ACTION_CALL
        return calls

    def __repr__(self) -> str:
        changed = {k: v for k, v in self.options.items() if DEFAULTS[k] != v} | (
            {"wait": self.wait} if self.wait != "never" else {}
        )
        return f"HeuristicAgent(players={self.config.num_players}{''.join(f', {k}={v!r}' for k, v in changed.items())})"


def _search_rows(table: np.ndarray, n_work: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Catalogue rows grouped for the search: single-card moves, work-to-work moves by
    ``[i, j, n]``, and the rows an evaluation checks (the Nertz top to a foundation, its moves
    onto or under a work pile, the other foundation moves) with the number of the middle ones."""
    single, found, nertz = [], [], []
    ww = np.zeros((n_work, n_work, 14), np.int64)
    for a, (kind, src, dst, n) in enumerate(table.tolist()):
        if kind == TO_FOUNDATION:
            single.append(a)
            found.append(a)
        elif kind in (TO_WORK, UNDER) and src in (NERTZ, WASTE):
            single.append(a)
            if src == NERTZ:
                nertz.append(a)
        elif kind == TO_WORK and src >= WORK_SOURCE:
            ww[src - WORK_SOURCE, dst, n] = a
    assert table[found[0], 1] == NERTZ
    rows = np.array(found[:1] + nertz + found[1:], np.int64)
    return np.array(single, np.int64), ww, rows, len(nertz)
