"""Compiled pieces the scripted agents share: reading the viewer's own layout out of an observation
(R9) and the batch loops of the fixed-priority players.

Every kernel takes a batch of observations ``obs[n, D]``, masks ``masks[n, N]``, the action table
``[N, 4]`` (kind, source, destination, count) and the offsets of ``agents.base.observation_offsets``,
and writes one action per row. A kernel only ranks the rows its mask marks legal.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numba import njit

from nertz_env.actions import CALL, DRAW, NERTZ, TO_FOUNDATION, TO_NERTZ, TO_WORK, UNDER, WAIT, WASTE, WORK_SOURCE
from nertz_env.agents.base import (
    O_BLOCK,
    O_NERTZ_COUNT,
    O_STOCK_KNOWN,
    O_STOCK_ORDER,
    O_WASTE_COUNT,
    O_WASTE_ORDER,
    O_WORK0,
    O_WORK_PILES,
)
from nertz_env.engine import stamp_compiled
from nertz_env.engine.constants import T_COUNT, T_DEST, T_KIND, T_SOURCE

# Every player's Nertz pile as empty (up to 8 players): what a look-ahead inside the viewer's own
# layout hands the engine's ``legal_row`` for the targets of R4.8, so it never finds a build there.
NO_NERTZ = np.zeros((1, 8, 52), np.int8)
NO_NERTZ.setflags(write=False)
NO_NERTZ_LEN = np.zeros((1, 8), np.int16)
NO_NERTZ_LEN.setflags(write=False)


@njit(cache=True)
def read_top(obs, start) -> int:
    """The card of a one-hot 52-slot part (Nertz top, waste top), or -1 if it is empty."""
    for c in range(52):
        if obs[start + c] != 0:
            return c
    return -1


@njit(cache=True, inline="always")
def read_on_foundations(obs, start) -> int:
    """The cards a seat has put on foundations (R7), from its 52-slot foundation part."""
    found = 0
    for c in range(52):
        found += obs[start + c]
    return found


@njit(cache=True)
def read_work(obs, start, n_work, work, work_len):
    """The work piles bottom to top. A pile is built down in rank (R4.3, R4.5), so its cards in
    falling rank order are its order."""
    for j in range(n_work):
        o = start + 52 * j
        k = 0
        for r in range(13, 0, -1):
            for suit in range(4):
                c = suit * 13 + r - 1
                if obs[o + c] != 0:
                    work[j, k] = c
                    k += 1
        work_len[j] = k


@njit(cache=True)
def read_tops(obs, start, tops):
    """``tops[suit, r]``: foundation piles of that suit with rank ``r`` on top (the engine's form)."""
    for suit in range(4):
        tops[suit, 0] = 0
        for r in range(1, 14):
            tops[suit, r] = obs[start + suit * 13 + r - 1]


@njit(cache=True)
def read_waste(obs, off, waste) -> int:
    """The viewer's waste bottom to top from their memory (R9: 1 = the top); returns its size."""
    w = obs[off[O_WASTE_COUNT]]
    start = off[O_WASTE_ORDER]
    for c in range(52):
        v = obs[start + c]
        if v > 0:
            waste[w - v] = c
    return w


@njit(cache=True)
def read_stock(obs, off, stock) -> int:
    """The viewer's stock in turning order (``stock[0]`` is next), or -1 when not yet known."""
    if obs[off[O_STOCK_KNOWN]] == 0:
        return -1
    start = off[O_STOCK_ORDER]
    k = 0
    for c in range(52):
        v = obs[start + c]
        if v > 0:
            stock[v - 1] = c
            k += 1
    return k


# ---------------------------------------------------------------------------------------------
# Uniform choice


@njit(cache=True)
def choose_uniform(masks, u, out):
    """The ``floor(u * L)``-th of the ``L`` legal actions of each row."""
    for i in range(masks.shape[0]):
        count = 0
        for a in range(masks.shape[1]):
            count += masks[i, a] != 0
        k = min(int(u[i] * count), count - 1)
        for a in range(masks.shape[1]):
            if masks[i, a] != 0:
                if k == 0:
                    out[i] = a
                    break
                k -= 1


# ---------------------------------------------------------------------------------------------
# Fixed priorities: the legal action of highest priority, the first in the catalogue on a tie.


# The priorities, highest first: the fixed players pick the legal move of highest priority.
CALL_NOW = 100
NERTZ_TO_FOUNDATION, NERTZ_ONTO_WORK, NERTZ_INTO_SPACE = 90, 80, 75
OTHER_TO_FOUNDATION, WASTE_ONTO_NERTZ, WASTE_ONTO_WORK, WHOLE_PILE_ONTO_PILE = 60, 50, 40, 30
TURN_STOCK, STAND_STILL, NEVER = 10, 0, -1


@njit(cache=True, inline="always")
def passive_priority(kind, src) -> int:
    """Foundations only (the Nertz top first), otherwise turn the stock; call when it can."""
    if kind == CALL:
        return CALL_NOW
    if kind == TO_FOUNDATION:
        return NERTZ_TO_FOUNDATION if src == NERTZ else OTHER_TO_FOUNDATION
    if kind == DRAW:
        return TURN_STOCK
    return STAND_STILL if kind == WAIT else NEVER


@njit(cache=True, inline="always")
def greedy_priority(kind, src, dst, n, work_len) -> int:
    """The seeds' advice as a fixed order: call at once; the Nertz top first (foundation, then a
    work pile, then a space); other cards to foundations before work piles; move a whole work pile
    onto another to open a space; draw when nothing else helps. With R4.8: a waste card onto an
    opponent's Nertz top, before a waste card onto a work pile."""
    if kind == CALL:
        return CALL_NOW
    if src == NERTZ:
        if kind == TO_FOUNDATION:
            return NERTZ_TO_FOUNDATION
        if kind == UNDER or (kind == TO_WORK and work_len[dst] > 0):
            return NERTZ_ONTO_WORK
        if kind == TO_WORK:
            return NERTZ_INTO_SPACE
    if kind == TO_FOUNDATION:
        return OTHER_TO_FOUNDATION
    if kind == TO_NERTZ:  # R4.8: a waste card on an opponent's Nertz pile costs them a penalty (R7)
        return WASTE_ONTO_NERTZ if src == WASTE else NEVER  # only from the waste: no card can go back, so no loops
    if src == WASTE and (kind == UNDER or (kind == TO_WORK and work_len[dst] > 0)):
        return WASTE_ONTO_WORK
    if kind == TO_WORK and src >= WORK_SOURCE and n == work_len[src - WORK_SOURCE] and work_len[dst] > 0:
        return WHOLE_PILE_ONTO_PILE  # only whole piles onto non-empty ones: the number of piles falls, so no loops
    if kind == DRAW:
        return TURN_STOCK
    return STAND_STILL if kind == WAIT else NEVER


@njit(cache=True)
def choose_fixed(obs, masks, table, off, greedy, out):
    n_work = off[O_WORK_PILES]
    work = np.zeros((n_work, 13), np.int64)
    work_len = np.zeros(n_work, np.int64)
    for i in range(obs.shape[0]):
        if greedy:
            read_work(obs[i], off[O_WORK0], n_work, work, work_len)
        best, best_p = -1, -(10**9)
        for a in range(table.shape[0]):
            if masks[i, a] == 0:
                continue
            if greedy:
                kind, src, dst, n = table[a, T_KIND], table[a, T_SOURCE], table[a, T_DEST], table[a, T_COUNT]
                p = greedy_priority(kind, src, dst, n, work_len) * 64
                if table[a, T_KIND] == TO_NERTZ:  # R4.8: onto the opponent nearest to calling (fewest Nertz cards)
                    p += 52 - np.int64(obs[i, table[a, T_DEST] * off[O_BLOCK] + off[O_NERTZ_COUNT]])  # int8 widened
            else:
                p = passive_priority(table[a, T_KIND], table[a, T_SOURCE])
            if p > best_p:
                best, best_p = a, p
        out[i] = best


@njit(cache=True)
def sparse_observations(obs, scale, idx, vals, offsets, crow, trow, tval):
    """The nonzero entries of a batch of observations ``obs[n, D]``, scaled by ``scale[D]``, for a
    first layer that sums only the weights of what is on the table (an observation is mostly
    zeros). Row-major: entries ``offsets[i]:offsets[i + 1]`` of ``idx`` (columns) and ``vals`` are
    row ``i``'s. Column-major, the transpose as CSR (``crow[D + 1]``, ``trow``, ``tval``): the
    same entries grouped by column, for the weight gradient. Sized by ``np.count_nonzero(obs)``."""
    n, d = obs.shape
    crow[:] = 0
    k = 0
    for i in range(n):
        offsets[i] = k
        for j in range(d):
            if obs[i, j] != 0:
                idx[k] = j
                vals[k] = obs[i, j] * scale[j]
                crow[j + 1] += 1
                k += 1
    offsets[n] = k
    for j in range(d):
        crow[j + 1] += crow[j]
    fill = crow[:d].copy()
    for i in range(n):
        for k in range(offsets[i], offsets[i + 1]):
            j = idx[k]
            trow[fill[j]] = i
            tval[fill[j]] = vals[k]
            fill[j] += 1


# An edit to the engine or to any agents module recompiles these kernels (they inline both).
stamp_compiled(globals(), Path(__file__).resolve().parent)
