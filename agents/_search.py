"""The compiled core of the ``heuristic`` agent: a short look-ahead inside the viewer's own layout.

The viewer's layout is fully known to them (R9): the Nertz top, the work piles, the waste in
order, the stock once turned through, and the foundation tops. The search plays up to ``depth``
of the viewer's own moves on a copy of that layout and scores where they lead; the opponents are
taken to stand still. Legality deeper in the search is the engine's own ``legal_row`` applied to
the copy (one rules engine); the root moves are those of the mask. A card revealed from the Nertz
pile is unknown, and so ends what the search can say about the Nertz pile.

Positions are stored per search depth ``d`` in arrays ``[d, ...]`` so a child is a copy of its
parent plus one move; no object is created per node.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nertz_env.actions import (
    ACTION_CALL,
    ACTION_DRAW,
    ACTION_WAIT,
    CALL,
    DRAW,
    NERTZ,
    TO_FOUNDATION,
    TO_NERTZ,
    TO_WORK,
    UNDER,
    WAIT,
    WASTE,
    WORK_SOURCE,
)
from nertz_env.agents._judge import cycle_useful, race_cards, should_call
from nertz_env.agents._kernels import NO_NERTZ, NO_NERTZ_LEN, read_stock, read_top, read_tops, read_waste, read_work
from nertz_env.agents.base import (
    O_BLOCK,
    O_FOUNDATION,
    O_FOUNDATION_TOPS,
    O_NERTZ_COUNT,
    O_NERTZ_TOP,
    O_PLAYERS,
    O_SINCE_PROGRESS,
    O_STOCK_COUNT,
    O_WORK0,
    O_WORK_PILES,
)
from nertz_env.config import C_DRAW, C_PENALTY
from nertz_env.engine.core import legal_row, rank

UNKNOWN = -2  # a Nertz card turned up inside the search: there, but not known yet

# Weights of ``params`` (see ``agents.heuristic.HeuristicAgent`` for their meaning and defaults).
(
    P_DEPTH, P_EMPTY, P_NERTZ_FOUND, P_NERTZ_WORK, P_NERTZ_UNKNOWN, P_FOUND_READY, P_RACE, P_DRAW, P_STEP,
    P_GAMMA, P_OUT, P_WASTE_WORK, P_STUCK, P_CALL, P_BUILD,
) = range(15)
N_PARAMS = 15
MAX_DEPTH = 4


@njit(cache=True, inline="always")
def _waste_top(waste, wsl) -> int:
    return waste[wsl - 1] if wsl > 0 else -1


@njit(cache=True, inline="always")
def _is_legal(a, table, d, nt, wk, wl, tp, waste, wsl, cfg) -> bool:
    """The engine's R4 check of row ``a`` on the position at depth ``d``."""
    top = nt[d] if nt[d] >= 0 else -1
    any_empty = False
    for j in range(wl.shape[1]):
        if wl[d, j] == 0:
            any_empty = True
    return legal_row(
        table[a, 0], table[a, 1], table[a, 2], table[a, 3], top, _waste_top(waste, wsl[d]), wk[d], wl[d], tp[d],
        True, any_empty, cfg, 0, 0, NO_NERTZ, NO_NERTZ_LEN,
    )


@njit(cache=True)
def _apply(a, table, d, nt, nc, wk, wl, tp, waste, wsl, fd):
    """Position ``d + 1`` = position ``d`` after the legal move ``a`` (its effect only)."""
    e = d + 1
    nt[e], nc[e], wsl[e], fd[e] = nt[d], nc[d], wsl[d], fd[d]
    wk[e, :, :] = wk[d, :, :]
    wl[e, :] = wl[d, :]
    tp[e, :, :] = tp[d, :, :]
    kind, src, dst, n = table[a, 0], table[a, 1], table[a, 2], table[a, 3]
    if src == NERTZ:
        card = nt[d]
        nc[e] -= 1
        nt[e] = UNKNOWN if nc[e] > 0 else -1
    elif src == WASTE:
        card = waste[wsl[d] - 1]
        wsl[e] -= 1
    else:
        i = src - WORK_SOURCE
        card = wk[d, i, wl[d, i] - n]
    if kind == TO_FOUNDATION:
        r = rank(card)
        suit = card // 13
        if r > 1:
            tp[e, suit, r - 1] -= 1
        tp[e, suit, r] += 1
        fd[e] += 1
        if src >= WORK_SOURCE:
            wl[e, src - WORK_SOURCE] -= 1
    elif kind == TO_NERTZ:  # R4.8: the card leaves the viewer's layout for another's Nertz pile
        if src >= WORK_SOURCE:
            wl[e, src - WORK_SOURCE] -= 1
    elif kind == UNDER:
        h = wl[d, dst]
        for t in range(h, 0, -1):
            wk[e, dst, t] = wk[d, dst, t - 1]
        wk[e, dst, 0] = card
        wl[e, dst] = h + 1
    elif src >= WORK_SOURCE:
        i = src - WORK_SOURCE
        h, hi = wl[d, dst], wl[d, i]
        for t in range(n):
            wk[e, dst, h + t] = wk[d, i, hi - n + t]
        wl[e, i] = hi - n
        wl[e, dst] = h + n
    else:
        wk[e, dst, wl[d, dst]] = card
        wl[e, dst] += 1


@njit(cache=True)
def _evaluate(d, params, table, rows_eval, n_nertz, nt, nc, wk, wl, tp, waste, wsl, fd, cfg, penalty) -> float:
    """The R7 score of position ``d`` plus what it promises: an empty Nertz pile (the call), empty
    work piles while Nertz cards remain, a Nertz top that can move next, cards ready for the
    foundations. ``rows_eval``: the Nertz top to a foundation, its ``n_nertz`` moves onto or under
    a work pile, then the other foundation moves (one loop, so one copy of the engine's check)."""
    v = float(fd[d] - penalty * nc[d])
    nertz_done = nc[d] == 0 or nt[d] < 0
    if nc[d] == 0:
        v += params[P_OUT]
    else:
        for j in range(wl.shape[1]):
            if wl[d, j] == 0:
                v += params[P_EMPTY]
        if nt[d] == UNKNOWN:
            v += params[P_NERTZ_UNKNOWN]
    for i in range(rows_eval.shape[0]):
        a = rows_eval[i]
        nertz = i <= n_nertz
        if nertz and (nertz_done or (table[a, 0] == TO_WORK and wl[d, table[a, 2]] == 0)):
            continue  # a space counts as a space, not as a place for this Nertz card
        if _is_legal(a, table, d, nt, wk, wl, tp, waste, wsl, cfg):
            if not nertz:
                v += params[P_FOUND_READY]
            else:
                v += params[P_NERTZ_FOUND] if i == 0 else params[P_NERTZ_WORK]
                nertz_done = True
    return v


@njit(cache=True, inline="always")
def _next_move(k, d, rows_single, ww_row, wl) -> tuple[int, int]:
    """The ``k``-th candidate move at depth ``d`` and the next ``k``; ``(-1, k)`` when done.
    Single-card moves first, then work-to-work blocks the source pile holds."""
    n_single, n_work = rows_single.shape[0], wl.shape[1]
    while k < n_single + n_work * n_work * 13:
        if k < n_single:
            return rows_single[k], k + 1
        m = k - n_single
        i, j, n = m // (n_work * 13), (m // 13) % n_work, m % 13 + 1
        k += 1
        if i == j or n > wl[d, i]:
            continue
        if wl[d, j] == 0 and n == wl[d, i]:
            continue  # a whole pile into a space changes nothing
        return ww_row[i, j, n], k
    return -1, k


@njit(cache=True)
def _search(depth, params, table, rows_single, ww_row, rows_eval, n_nertz,
            nt, nc, wk, wl, tp, waste, wsl, fd, cfg, penalty, best, here, cursor) -> float:
    """The best value reachable from position 1 within ``depth - 1`` more own moves
    (iterative depth-first). What a later move adds is discounted by ``P_GAMMA`` and each move
    costs ``P_STEP``, so a gain sooner beats the same gain later."""
    d = 1
    here[1] = _evaluate(1, params, table, rows_eval, n_nertz, nt, nc, wk, wl, tp, waste, wsl, fd, cfg, penalty)
    best[1] = here[1]
    cursor[1] = 0
    while True:
        if d < depth:
            a, cursor[d] = _next_move(cursor[d], d, rows_single, ww_row, wl)
            while a >= 0 and not _is_legal(a, table, d, nt, wk, wl, tp, waste, wsl, cfg):
                a, cursor[d] = _next_move(cursor[d], d, rows_single, ww_row, wl)
            if a >= 0:
                _apply(a, table, d, nt, nc, wk, wl, tp, waste, wsl, fd)
                d += 1
                here[d] = _evaluate(d, params, table, rows_eval, n_nertz, nt, nc, wk, wl, tp, waste, wsl, fd,
                                    cfg, penalty)
                best[d] = here[d]
                cursor[d] = 0
                continue
        if d == 1:
            return best[1]
        d -= 1
        v = here[d] + params[P_GAMMA] * (best[d + 1] - here[d]) - params[P_STEP]
        if v > best[d]:
            best[d] = v


@njit(cache=True, inline="always")
def _nertz_top_moves(o, off, q, n_players, block, n_work, opp_work, opp_len, tops, cfg, table, rows_eval,
                     n_nertz) -> bool:
    """Whether player ``q`` (seat relative to the viewer) can play their Nertz top now: by the
    engine's R4 check of ``rows_eval``'s Nertz rows (to a foundation, onto, under or into their
    work piles) on their public layout, or onto another Nertz top (R4.8). A build onto a pile whose
    owner plays from it in the same tick does not land, and a player who can play their Nertz top
    usually does."""
    base = q * block
    c = read_top(o, base + off[O_NERTZ_TOP])
    if c < 0:
        return False
    read_work(o, base + off[O_WORK0], n_work, opp_work, opp_len)
    any_empty = False
    for j in range(n_work):
        if opp_len[j] == 0:
            any_empty = True
    for i in range(n_nertz + 1):
        a = rows_eval[i]
        if legal_row(table[a, 0], table[a, 1], table[a, 2], table[a, 3], c, -1, opp_work, opp_len, tops, True,
                     any_empty, cfg, 0, 0, NO_NERTZ, NO_NERTZ_LEN):
            return True
    for p in range(n_players):  # R4.8 builds: the engine's check needs the piles, the view has the tops
        t = read_top(o, p * block + off[O_NERTZ_TOP]) if p != q else -1
        if t >= 0 and t // 13 == c // 13 and abs(rank(t) - rank(c)) == 1:
            return True
    return False


@njit(cache=True)
def score_moves(obs, masks, table, off, cfg, params, rows_single, ww_row, rows_eval, n_nertz, values, call):
    """The look-ahead value of every legal move of every row (``values[row, a]``, -inf for the
    illegal ones and for a whole pile moved into a space, which changes nothing): WAIT keeps the
    value of the table as it is, DRAW is worth ``draw`` more, any other move what ``depth`` own
    moves from it lead to. ``call[row]``: ``should_call`` says call (CALL is legal, R4.6)."""
    n_work, n_players, block = off[O_WORK_PILES], off[O_PLAYERS], off[O_BLOCK]
    depth = min(int(params[P_DEPTH]), MAX_DEPTH)
    penalty = cfg[C_PENALTY]
    e = MAX_DEPTH + 1
    nt = np.zeros(e, np.int64)
    nc = np.zeros(e, np.int64)
    wsl = np.zeros(e, np.int64)
    fd = np.zeros(e, np.int64)
    wk = np.zeros((e, n_work, 13), np.int64)
    wl = np.zeros((e, n_work), np.int64)
    tp = np.zeros((e, 4, 14), np.int64)
    waste = np.zeros(52, np.int64)
    opp_work = np.zeros((n_work, 13), np.int64)
    opp_len = np.zeros(n_work, np.int64)
    contested = np.zeros(52, np.int64)
    best_at = np.zeros(e, np.float64)
    here_at = np.zeros(e, np.float64)
    cursor = np.zeros(e, np.int64)
    stock = np.zeros(52, np.int64)
    n_draw = cfg[C_DRAW]
    for row in range(obs.shape[0]):
        o, mask = obs[row], masks[row]
        values[row, :] = -np.inf
        nt[0] = read_top(o, off[O_NERTZ_TOP])
        nc[0] = o[off[O_NERTZ_COUNT]]
        wsl[0] = read_waste(o, off, waste)
        read_work(o, off[O_WORK0], n_work, wk[0], wl[0])
        read_tops(o, off[O_FOUNDATION_TOPS], tp[0])
        found = 0
        for c in range(52):
            found += o[off[O_FOUNDATION] + c]
        fd[0] = found
        # What the stock will show from here on, when the viewer knows it (R9 memory).
        k = 0 if o[off[O_STOCK_COUNT]] == 0 else read_stock(o, off, stock)
        useful_now = cycle_useful(waste, wsl[0], stock, k, n_draw, nt[0], tp[0]) if k >= 0 else -1
        stuck = useful_now == 0 or o[off[O_SINCE_PROGRESS]] >= params[P_STUCK]

        race_cards(o, off, n_players, block, n_work, opp_work, opp_len, contested)

        call[row] = mask[ACTION_CALL] != 0 and should_call(  # CALL is legal: the Nertz pile is empty (R4.6)
            o, off, n_players, block, n_work, opp_work, opp_len, tp[0], cfg, table, rows_eval, n_nertz, fd[0],
            int(params[P_CALL]),
        )

        # Standing still keeps the value of the table as it is; DRAW is worth a little more, and a
        # move must beat both (so no move that gains nothing, even with nothing left to turn).
        root = _evaluate(0, params, table, rows_eval, n_nertz, nt, nc, wk, wl, tp, waste, wsl, fd, cfg, penalty)
        values[row, ACTION_WAIT] = root
        if mask[ACTION_DRAW] != 0:
            values[row, ACTION_DRAW] = root + params[P_DRAW]
        for a in range(table.shape[0]):
            kind = table[a, 0]
            if mask[a] == 0 or kind in (WAIT, DRAW, CALL):
                continue
            src, dst, n = table[a, 1], table[a, 2], table[a, 3]
            if kind == TO_NERTZ and _nertz_top_moves(
                o, off, dst, n_players, block, n_work, opp_work, opp_len, tp[0], cfg, table, rows_eval, n_nertz
            ):
                continue  # a build its owner would most likely block by playing from the pile (R4.8)
            if src >= WORK_SOURCE and kind == TO_WORK and wl[0, dst] == 0 and n == wl[0, src - WORK_SOURCE]:
                continue  # a whole pile into a space changes nothing
            _apply(a, table, 0, nt, nc, wk, wl, tp, waste, wsl, fd)
            v = _search(depth, params, table, rows_single, ww_row, rows_eval, n_nertz,
                        nt, nc, wk, wl, tp, waste, wsl, fd, cfg, penalty, best_at, here_at, cursor) - params[P_STEP]
            if kind == TO_FOUNDATION:
                if src == NERTZ:
                    card = nt[0]
                elif src == WASTE:
                    card = waste[wsl[0] - 1]
                else:
                    card = wk[0, src - WORK_SOURCE, wl[0, src - WORK_SOURCE] - 1]
                if rank(card) > 1 and contested[card] > 0:
                    v += params[P_RACE]
            elif kind == TO_NERTZ:
                # R4.8: the card leaves the viewer's layout (the search sees what that opens) and
                # weighs on another player's Nertz pile (their penalty, R7, and a later call), the
                # more the fewer cards they have left; the search does not play their layout.
                left = o[dst * block + off[O_NERTZ_COUNT]]
                v += params[P_BUILD] * (1.0 + (13 - min(left, 13)) / 13.0)
            elif src == WASTE and stuck:  # a dead cycle: take a card out to shift the next pass
                v += params[P_WASTE_WORK]
            values[row, a] = v


@njit(cache=True)
def choose_heuristic(obs, masks, table, off, cfg, params, rows_single, ww_row, rows_eval, n_nertz, out):
    """One action per row: the call when ``should_call`` says so, else the legal move whose
    look-ahead value is highest, if it beats turning the stock (and that beats standing still)."""
    values = np.empty((obs.shape[0], table.shape[0]), np.float64)
    call = np.zeros(obs.shape[0], np.bool_)
    score_moves(obs, masks, table, off, cfg, params, rows_single, ww_row, rows_eval, n_nertz, values, call)
    pick_moves(values, call, masks, table, out)


@njit(cache=True, inline="always")
def pick_moves(values, call, masks, table, out):
    """``choose_heuristic``'s choice from ``score_moves``' values and calls (one per row)."""
    for row in range(values.shape[0]):
        if call[row]:
            out[row] = ACTION_CALL
            continue
        best, best_v = ACTION_WAIT, values[row, ACTION_WAIT]
        if masks[row, ACTION_DRAW] != 0:
            best, best_v = ACTION_DRAW, values[row, ACTION_DRAW]
        for a in range(table.shape[0]):
            if table[a, 0] in (WAIT, DRAW, CALL):
                continue
            if values[row, a] > best_v:
                best, best_v = a, values[row, a]
        out[row] = best
