"""The effects of the moves of R4, stated once: what a move does to one player's layout, to the
foundation tops and to the stock. The tick (``nertz_env.engine.tick``) applies them to each
player's part of the full table; the agents' look-ahead applies the same functions to its copy of
one player's view, where the cards under the Nertz top are unknown.

A player's layout is passed as arrays: ``nertz`` (that player's Nertz pile, bottom first),
``waste`` (bottom first), ``work[W, 13]`` and ``work_len[W]``; the Nertz and waste lengths are
``nertz_len[i]`` and ``waste_len[i]`` of arrays the caller indexes (the tick: by seat; the
look-ahead: by search depth), so that the functions can change them in place.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nertz_env.engine.constants import NERTZ, TO_WORK, UNDER, WASTE, WORK_SOURCE
from nertz_env.engine.core import rank


@njit(cache=True, inline="always")
def play_own_move(kind, src, dst, n, nertz, nertz_len, waste, waste_len, i, work, work_len) -> int:
    """R4: the moving card (the first of a block of ``n``) leaves its source. Onto a work pile
    (R4.3, R4.4) it is laid on top, and a block of ``n`` cards from another work pile keeps its
    order; under a work pile (R4.5) it becomes the pile's bottom card. A card bound for a
    foundation (R4.2) or another player's Nertz pile (R4.8) only leaves: the caller lays it there.
    The move must be legal (R4). Returns the moving card."""
    if src == NERTZ:
        card = nertz[nertz_len[i] - 1]
    elif src == WASTE:
        card = waste[waste_len[i] - 1]
    else:
        card = work[src - WORK_SOURCE, work_len[src - WORK_SOURCE] - n]
    if kind == TO_WORK and src >= WORK_SOURCE:
        pile = src - WORK_SOURCE
        height, held = work_len[dst], work_len[pile]
        for t in range(n):
            work[dst, height + t] = work[pile, held - n + t]
        work_len[pile] = held - n
        work_len[dst] = height + n
        return card
    if src == NERTZ:
        nertz_len[i] -= 1
    elif src == WASTE:
        waste_len[i] -= 1
    else:
        work_len[src - WORK_SOURCE] -= 1
    if kind == TO_WORK:
        work[dst, work_len[dst]] = card
        work_len[dst] += 1
    elif kind == UNDER:
        height = work_len[dst]
        for t in range(height, 0, -1):
            work[dst, t] = work[dst, t - 1]
        work[dst, 0] = card
        work_len[dst] = height + 1
    return card


@njit(cache=True, inline="always")
def lay_on_foundation_tops(tops, card):
    """R4.2: ``card`` goes onto a foundation pile of its suit whose top is one rank lower (an ace
    starts a pile); ``tops[suit, r]`` counts the piles of that suit with rank ``r`` on top."""
    r = rank(card)
    if r > 1:
        tops[card // 13, r - 1] -= 1
    tops[card // 13, r] += 1


@njit(cache=True, inline="always")
def draw(stock, stock_len, waste, waste_len, stock_known, p, n_draw):
    """R4.1: turn up to ``n_draw`` cards one by one from player ``p``'s stock onto their waste, or
    turn the waste over into a new stock (the owner has then seen every card of it, R9)."""
    k = stock_len[p]
    if k > 0:
        m = min(n_draw, k)
        w = waste_len[p]
        for t in range(m):
            waste[p, w + t] = stock[p, k - 1 - t]
        stock_len[p] = k - m
        waste_len[p] = w + m
    else:
        w = waste_len[p]
        for t in range(w):
            stock[p, t] = waste[p, w - 1 - t]
        stock_len[p] = w
        waste_len[p] = 0
        stock_known[p] = True


@njit(cache=True)
def rotate_stock(stock, stock_len, waste, waste_len, p):
    """R5 stall rule: player ``p``'s waste turned over goes under the stock, then the top card
    goes to the bottom."""
    k, w = stock_len[p], waste_len[p]
    n = k + w
    if n == 0:
        return
    cards = np.empty(n, np.int8)
    for t in range(w):
        cards[t] = waste[p, w - 1 - t]
    for t in range(k):
        cards[w + t] = stock[p, t]
    stock[p, 0] = cards[n - 1]
    for t in range(n - 1):
        stock[p, t + 1] = cards[t]
    stock_len[p] = n
    waste_len[p] = 0
