"""The afterstate of each legal move: the entries of the viewer's observation (R9) that the move
changes, and by how much, so a network can read the layout a move leads to with the same weights
it reads the layout with (``agents.policy.build_scorer(afterstate=True)``).

The move's effect is the engine's: ``play_own_move`` takes the card (or block) off its source and
lays it on a work pile, and ``lay_on_foundation_tops`` lays a foundation card (R4.2-R4.5). What the
viewer sees afterwards is read back from the piles: the Nertz top leaves (the card under it is not
known until it turns up), the waste top and the viewer's memory of the waste order shift (R9), the
work piles hold other cards, a foundation card marks the viewer's ``foundation`` part and the
shared ``foundation_tops``. A move whose outcome the viewer cannot see (WAIT, DRAW, CALL) changes
nothing here; nor do the progress counters (R5), which the engine keeps per tick.

>>> idx, val, starts = afterstate_changes(obs, rows, actions, table, observation_offsets(config))  # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numba import njit

from nertz_env.actions import CALL, DRAW, NERTZ, TO_FOUNDATION, WAIT, WASTE
from nertz_env.agents._kernels import read_top, read_tops, read_waste, read_work
from nertz_env.agents.base import (
    O_FOUNDATION,
    O_FOUNDATION_TOPS,
    O_NERTZ_COUNT,
    O_NERTZ_TOP,
    O_WASTE_COUNT,
    O_WASTE_ORDER,
    O_WASTE_TOP,
    O_WORK0,
    O_WORK_PILES,
)
from nertz_env.engine import lay_on_foundation_tops, play_own_move, stamp_compiled
from nertz_env.engine.constants import T_COUNT, T_DEST, T_KIND, T_SOURCE

# At most this many entries change per move: the whole waste order (52), its top and count (3),
# two work piles (26), the Nertz top and count (2), the foundation mark and two foundation tops (3).
MAX_CHANGES = 86


@njit(cache=True, inline="always")
def _emit(idx, val, m, at, by) -> int:
    idx[m] = at
    val[m] = by
    return m + 1


@njit(cache=True, inline="always")
def _work_changes(off, work, work_len, after, after_len, mark, idx, val, m) -> int:
    """The ``work{j}`` entries that differ between the piles before and after."""
    for j in range(work_len.shape[0]):
        for h in range(work_len[j]):
            mark[work[j, h]] -= 1
        for h in range(after_len[j]):
            mark[after[j, h]] += 1
        for pile, height in ((work, work_len[j]), (after, after_len[j])):
            for h in range(height):
                c = pile[j, h]
                if mark[c] != 0:
                    m = _emit(idx, val, m, off[O_WORK0] + 52 * j + c, mark[c])
                    mark[c] = 0
    return m


@njit(cache=True, inline="always")
def _source_changes(off, src, card, waste, w, idx, val, m) -> int:
    """The Nertz or waste entries a card leaving its source changes (a work pile's: ``_work_changes``)."""
    if src == NERTZ:
        m = _emit(idx, val, m, off[O_NERTZ_TOP] + card, -1)
        m = _emit(idx, val, m, off[O_NERTZ_COUNT], -1)
    elif src == WASTE:
        m = _emit(idx, val, m, off[O_WASTE_TOP] + card, -1)
        if w > 1:
            m = _emit(idx, val, m, off[O_WASTE_TOP] + waste[w - 2], 1)
        m = _emit(idx, val, m, off[O_WASTE_COUNT], -1)
        for h in range(w):  # 1 = the top: every card moves up one place, the top's goes to 0
            m = _emit(idx, val, m, off[O_WASTE_ORDER] + waste[h], -1)
    return m


@njit(cache=True)
def fill_afterstate_changes(obs, rows, actions, table, off, idx, val, starts) -> int:
    """Pair ``k`` (move ``actions[k]`` of row ``rows[k]``, legal there) changes the entries
    ``idx[starts[k]:starts[k + 1]]`` of its row by ``val[...]`` (raw observation units). A row's
    piles are read once for each run of its pairs, so pairs grouped by row (``np.nonzero``'s order)
    read each row once."""
    n_work = off[O_WORK_PILES]
    work, work_len = np.zeros((n_work, 13), np.int64), np.zeros(n_work, np.int64)
    after, after_len = np.zeros((n_work, 13), np.int64), np.zeros(n_work, np.int64)
    tops, after_tops = np.zeros((4, 14), np.int64), np.zeros((4, 14), np.int64)
    waste, waste_len = np.zeros(52, np.int64), np.zeros(1, np.int64)
    nertz, nertz_len = np.zeros(1, np.int64), np.zeros(1, np.int64)
    mark = np.zeros(52, np.int64)
    m, last = 0, -1
    for k in range(rows.shape[0]):
        starts[k] = m
        row, a = rows[k], actions[k]
        o = obs[row]
        if row != last:
            last = row
            nertz[0] = read_top(o, off[O_NERTZ_TOP])
            w = read_waste(o, off, waste)
            read_work(o, off[O_WORK0], n_work, work, work_len)
            read_tops(o, off[O_FOUNDATION_TOPS], tops)
        kind, src = table[a, T_KIND], table[a, T_SOURCE]
        if kind in (WAIT, DRAW, CALL):
            continue
        after[:, :], after_len[:] = work, work_len
        nertz_len[0], waste_len[0] = 1 if nertz[0] >= 0 else 0, w
        card = play_own_move(kind, src, table[a, T_DEST], table[a, T_COUNT], nertz, nertz_len, waste, waste_len, 0,
                             after, after_len)  # fmt: skip
        m = _source_changes(off, src, card, waste, w, idx, val, m)
        m = _work_changes(off, work, work_len, after, after_len, mark, idx, val, m)
        if kind == TO_FOUNDATION:
            m = _emit(idx, val, m, off[O_FOUNDATION] + card, 1)
            after_tops[:, :] = tops
            lay_on_foundation_tops(after_tops, card)
            for suit in range(4):
                for r in range(1, 14):
                    if after_tops[suit, r] != tops[suit, r]:
                        m = _emit(idx, val, m, off[O_FOUNDATION_TOPS] + suit * 13 + r - 1,
                                  after_tops[suit, r] - tops[suit, r])  # fmt: skip
    starts[rows.shape[0]] = m
    return m


def afterstate_changes(obs, rows, actions, table, off) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(idx, val, starts)``: pair ``k`` changes observation entries ``idx[starts[k]:starts[k+1]]``
    of row ``rows[k]`` by ``val[...]`` (``fill_afterstate_changes``)."""
    n = len(rows)
    idx, val = np.empty(n * MAX_CHANGES, np.int64), np.empty(n * MAX_CHANGES, np.float32)
    starts = np.empty(n + 1, np.int64)
    m = fill_afterstate_changes(np.ascontiguousarray(obs, np.int8), np.ascontiguousarray(rows, np.int64),
                                np.ascontiguousarray(actions, np.int64), table, off, idx, val, starts)  # fmt: skip
    return idx[:m], val[:m], starts


# An edit to the engine or to any agents module recompiles these kernels (they inline both).
stamp_compiled(globals(), Path(__file__).resolve().parent)
