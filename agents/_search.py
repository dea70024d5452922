"""The compiled core of the ``heuristic`` agent: a short look-ahead inside the viewer's own layout.

The viewer's layout is fully known to them (R9): the Nertz top, the work piles, the waste in
order, the stock once turned through, and the foundation tops. The search plays up to ``depth``
of the viewer's own moves on a copy of that layout and scores where they lead; the opponents are
taken to stand still. One rules engine: legality deeper in the search is the engine's
``legal_row`` applied to the copy, and a move's effect is the engine's ``play_own_move`` and
``lay_on_foundation_tops``, the functions the tick applies; the root moves are those of the mask.
A card revealed from the Nertz pile is unknown (``UNKNOWN``), and so ends what the search can say
about the Nertz pile.

Positions are stored per search depth ``d`` in arrays ``[d, ...]`` so a child is a copy of its
parent plus one move; no object is created per node. The Nertz pile is one array for all depths
(the known top over unknown cards; no own move adds to it), so a depth keeps only its length.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np
from numba import njit

from nertz_env.actions import (
    ACTION_CALL,
    ACTION_DRAW,
    ACTION_WAIT,
    CALL,
    DRAW,
    TO_FOUNDATION,
    TO_NERTZ,
    TO_WORK,
    WAIT,
    WASTE,
    WORK_SOURCE,
)
from nertz_env.agents._judge import cycle_useful, race_cards, should_call
from nertz_env.agents._kernels import (
    NO_NERTZ,
    NO_NERTZ_LEN,
    read_on_foundations,
    read_stock,
    read_top,
    read_tops,
    read_waste,
    read_work,
)
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
from nertz_env.config import C_DRAW, C_PENALTY, is_int
from nertz_env.engine import (
    builds_on_nertz,
    lay_on_foundation_tops,
    legal_row,
    play_own_move,
    r7_score,
    rank,
    raw,
    stamp_compiled,
)
from nertz_env.engine.constants import T_COUNT, T_DEST, T_KIND, T_SOURCE

UNKNOWN = -2  # a Nertz card turned up inside the search: there, but not known yet

# Weights of ``params`` (see ``agents.heuristic.HeuristicAgent`` for their meaning and defaults).
(
    P_DEPTH, P_EMPTY, P_NERTZ_FOUND, P_NERTZ_WORK, P_NERTZ_UNKNOWN, P_FOUND_READY, P_RACE, P_DRAW, P_STEP,
    P_GAMMA, P_OUT, P_WASTE_WORK, P_STUCK, P_CALL, P_BUILD,
) = range(15)
N_PARAMS = 15
MAX_DEPTH = 4


class Position(NamedTuple):
    """The viewer's layout at each search depth ``d`` (arrays indexed by ``d`` first)."""

    nertz: np.ndarray  # [52]: the Nertz pile, the known top over UNKNOWN cards (the same at every depth)
    nertz_len: np.ndarray  # [depth]
    work: np.ndarray  # [depth, W, 13]
    work_len: np.ndarray  # [depth, W]
    tops: np.ndarray  # [depth, 4, 14]: the foundation tops (piles of suit s with rank r on top)
    waste: np.ndarray  # [52]: the waste, bottom first (the same at every depth)
    waste_len: np.ndarray  # [depth]
    on_foundations: np.ndarray  # [depth]: the viewer's cards on foundations (R7)


@njit(cache=True)
def _new_position(n_work, depths):
    return Position(
        np.zeros(52, np.int64), np.zeros(depths, np.int64), np.zeros((depths, n_work, 13), np.int64),
        np.zeros((depths, n_work), np.int64), np.zeros((depths, 4, 14), np.int64), np.zeros(52, np.int64),
        np.zeros(depths, np.int64), np.zeros(depths, np.int64),
    )  # fmt: skip


@njit(cache=True, inline="always")
def _top(pile, height) -> int:
    """The top card of a pile of ``height`` cards, or -1 (``UNKNOWN`` if it is not known yet)."""
    return pile[height - 1] if height > 0 else -1


@njit(cache=True, inline="always")
def _is_legal(a, table, d, pos, cfg) -> bool:
    """The engine's R4 check of row ``a`` on the position at depth ``d`` (an unknown Nertz top
    cannot move)."""
    work_len = raw(pos.work_len)  # views without reference counts: the caller keeps ``pos`` alive
    any_empty = False
    for j in range(work_len.shape[1]):
        if work_len[d, j] == 0:
            any_empty = True
    return legal_row(
        table[a, T_KIND], table[a, T_SOURCE], table[a, T_DEST], table[a, T_COUNT],
        max(_top(pos.nertz, pos.nertz_len[d]), -1), _top(pos.waste, pos.waste_len[d]), raw(pos.work)[d],
        work_len[d], raw(pos.tops)[d], True, any_empty, cfg, 0, 0, NO_NERTZ, NO_NERTZ_LEN,
    )  # fmt: skip


@njit(cache=True)
def _apply(a, table, d, pos) -> int:
    """Position ``d + 1`` = position ``d`` after the legal move ``a``, by the engine's effects of
    the move (R4); returns the card it moves."""
    e = d + 1
    # Views without reference counts (``engine.raw``): the caller keeps ``pos`` alive.
    work, work_len, tops = raw(pos.work), raw(pos.work_len), raw(pos.tops)
    pos.nertz_len[e], pos.waste_len[e] = pos.nertz_len[d], pos.waste_len[d]
    pos.on_foundations[e] = pos.on_foundations[d]
    work[e, :, :] = work[d, :, :]
    work_len[e, :] = work_len[d, :]
    tops[e, :, :] = tops[d, :, :]
    kind = table[a, T_KIND]
    card = play_own_move(
        kind, table[a, T_SOURCE], table[a, T_DEST], table[a, T_COUNT], raw(pos.nertz), raw(pos.nertz_len),
        raw(pos.waste), raw(pos.waste_len), e, work[e], work_len[e],
    )  # fmt: skip
    if kind == TO_FOUNDATION:
        lay_on_foundation_tops(tops[e], card)
        pos.on_foundations[e] += 1
    return card


@njit(cache=True)
def _evaluate(d, params, table, rows_eval, n_nertz, pos, cfg) -> float:
    """The R7 score of position ``d`` plus what it promises: an empty Nertz pile (the call), empty
    work piles while Nertz cards remain, a Nertz top that can move next, cards ready for the
    foundations. ``rows_eval``: the Nertz top to a foundation, its ``n_nertz`` moves onto or under
    a work pile, then the other foundation moves (one loop, so one copy of the engine's check)."""
    nertz_len, work_len = pos.nertz_len[d], pos.work_len
    v = float(r7_score(pos.on_foundations[d], nertz_len, False, cfg[C_PENALTY], 0))
    nertz_top = _top(pos.nertz, nertz_len)
    nertz_done = nertz_len == 0 or nertz_top < 0
    if nertz_len == 0:
        v += params[P_OUT]
    else:
        for j in range(work_len.shape[1]):
            if work_len[d, j] == 0:
                v += params[P_EMPTY]
        if nertz_top == UNKNOWN:
            v += params[P_NERTZ_UNKNOWN]
    for i in range(rows_eval.shape[0]):
        a = rows_eval[i]
        from_nertz = i <= n_nertz
        if from_nertz and (nertz_done or (table[a, T_KIND] == TO_WORK and work_len[d, table[a, T_DEST]] == 0)):
            continue  # a space counts as a space, not as a place for this Nertz card
        if _is_legal(a, table, d, pos, cfg):
            if not from_nertz:
                v += params[P_FOUND_READY]
            else:
                v += params[P_NERTZ_FOUND] if i == 0 else params[P_NERTZ_WORK]
                nertz_done = True
    return v


@njit(cache=True, inline="always")
def _next_move(k, d, work_len, rows_single, ww_row) -> tuple[int, int]:
    """The ``k``-th candidate move at depth ``d`` (work piles of ``work_len[d]``) and the next
    ``k``; ``(-1, k)`` when done. Single-card moves first, then work-to-work blocks the source
    pile holds."""
    n_single, n_work = rows_single.shape[0], work_len.shape[1]
    while k < n_single + n_work * n_work * 13:
        if k < n_single:
            return rows_single[k], k + 1
        m = k - n_single
        i, j, n = m // (n_work * 13), (m // 13) % n_work, m % 13 + 1
        k += 1
        if i == j or n > work_len[d, i]:
            continue
        if work_len[d, j] == 0 and n == work_len[d, i]:
            continue  # a whole pile into a space changes nothing
        return ww_row[i, j, n], k
    return -1, k


@njit(cache=True)
def _search(depth, params, table, rows_single, ww_row, rows_eval, n_nertz, pos, cfg, best, here, cursor) -> float:
    """The best value reachable from position 1 within ``depth - 1`` more own moves
    (iterative depth-first). What a later move adds is discounted by ``P_GAMMA`` and each move
    costs ``P_STEP``, so a gain sooner beats the same gain later."""
    d = np.int64(1)  # int64, not the literal 1: _apply and _evaluate compile once for every depth
    here[1] = _evaluate(d, params, table, rows_eval, n_nertz, pos, cfg)
    best[1] = here[1]
    cursor[1] = 0
    while True:
        if d < depth:
            a, cursor[d] = _next_move(cursor[d], d, pos.work_len, rows_single, ww_row)
            while a >= 0 and not _is_legal(a, table, d, pos, cfg):
                a, cursor[d] = _next_move(cursor[d], d, pos.work_len, rows_single, ww_row)
            if a >= 0:
                _apply(a, table, d, pos)
                d += 1
                here[d] = _evaluate(d, params, table, rows_eval, n_nertz, pos, cfg)
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
        if legal_row(table[a, T_KIND], table[a, T_SOURCE], table[a, T_DEST], table[a, T_COUNT], c, -1, opp_work,
                     opp_len, tops, True, any_empty, cfg, 0, 0, NO_NERTZ, NO_NERTZ_LEN):
            return True
    for p in range(n_players):  # R4.8 builds: the engine's check needs the piles, the view has the tops
        top = read_top(o, p * block + off[O_NERTZ_TOP]) if p != q else -1
        if top >= 0 and builds_on_nertz(c, top):
            return True
    return False


@njit(cache=True, inline="always")
def _read_position(o, off, pos):
    """Position 0: the viewer's layout as the observation shows it (R9), the Nertz pile as its
    known top over unknown cards."""
    n_nertz = min(np.int64(o[off[O_NERTZ_COUNT]]), 52)
    pos.nertz[:] = UNKNOWN
    pos.nertz_len[0] = n_nertz
    if n_nertz > 0:
        pos.nertz[n_nertz - 1] = read_top(o, off[O_NERTZ_TOP])
    pos.waste_len[0] = read_waste(o, off, pos.waste)
    read_work(o, off[O_WORK0], off[O_WORK_PILES], pos.work[0], pos.work_len[0])
    read_tops(o, off[O_FOUNDATION_TOPS], pos.tops[0])
    pos.on_foundations[0] = read_on_foundations(o, off[O_FOUNDATION])


@njit(cache=True, inline="always")
def _move_bonus(o, off, a, table, card, pos, params, contested, stuck) -> float:
    """What the search cannot see of move ``a`` (carrying ``card``): a race for a foundation card
    (R6), a build's weight on another player's Nertz pile (R4.8), a card taken out of a dead
    stock cycle."""
    kind, src, dst = table[a, T_KIND], table[a, T_SOURCE], table[a, T_DEST]
    if kind == TO_FOUNDATION:
        return params[P_RACE] if rank(card) > 1 and contested[card] > 0 else 0.0
    if kind == TO_NERTZ:
        # R4.8: the card leaves the viewer's layout (the search sees what that opens) and weighs
        # on another player's Nertz pile (their penalty, R7, and a later call), the more the fewer
        # cards they have left; the search does not play their layout.
        left = o[dst * off[O_BLOCK] + off[O_NERTZ_COUNT]]
        return params[P_BUILD] * (1.0 + (13 - min(left, 13)) / 13.0)
    if src == WASTE and stuck:  # a dead cycle: take a card out to shift the next pass
        return params[P_WASTE_WORK]
    return 0.0


@njit(cache=True)
def score_moves(obs, masks, table, off, cfg, params, rows_single, ww_row, rows_eval, n_nertz, values, call):
    """The look-ahead value of every legal move of every row (``values[row, a]``, -inf for the
    illegal ones and for a whole pile moved into a space, which changes nothing): WAIT keeps the
    value of the table as it is, DRAW is worth ``draw`` more, any other move what ``depth`` own
    moves from it lead to. ``call[row]``: ``should_call`` says call (CALL is legal, R4.6)."""
    n_work, n_players, block = off[O_WORK_PILES], off[O_PLAYERS], off[O_BLOCK]
    depth = min(int(params[P_DEPTH]), MAX_DEPTH)
    pos = _new_position(n_work, MAX_DEPTH + 1)
    opp_work = np.zeros((n_work, 13), np.int64)
    opp_len = np.zeros(n_work, np.int64)
    contested = np.zeros(52, np.int64)
    best = np.zeros(MAX_DEPTH + 1, np.float64)
    here = np.zeros(MAX_DEPTH + 1, np.float64)
    cursor = np.zeros(MAX_DEPTH + 1, np.int64)
    stock = np.zeros(52, np.int64)
    for row in range(obs.shape[0]):
        o, mask = obs[row], masks[row]
        values[row, :] = -np.inf
        _read_position(o, off, pos)
        # What the stock will show from here on, when the viewer knows it (R9 memory).
        k = 0 if o[off[O_STOCK_COUNT]] == 0 else read_stock(o, off, stock)
        nertz_top = _top(pos.nertz, pos.nertz_len[0])
        useful_now = -1
        if k >= 0:
            useful_now = cycle_useful(pos.waste, pos.waste_len[0], stock, k, cfg[C_DRAW], nertz_top, pos.tops[0])
        stuck = useful_now == 0 or o[off[O_SINCE_PROGRESS]] >= params[P_STUCK]
        race_cards(o, off, n_players, block, n_work, opp_work, opp_len, contested)
        call[row] = mask[ACTION_CALL] != 0 and should_call(  # CALL is legal: the Nertz pile is empty (R4.6)
            o, off, n_players, block, n_work, opp_work, opp_len, pos.tops[0], cfg, table, rows_eval, n_nertz,
            pos.on_foundations[0], int(params[P_CALL]),
        )  # fmt: skip
        # Standing still keeps the value of the table as it is; DRAW is worth a little more, and a
        # move must beat both (so no move that gains nothing, even with nothing left to turn).
        root = _evaluate(np.int64(0), params, table, rows_eval, n_nertz, pos, cfg)
        values[row, ACTION_WAIT] = root
        if mask[ACTION_DRAW] != 0:
            values[row, ACTION_DRAW] = root + params[P_DRAW]
        for a in range(table.shape[0]):
            kind, src, dst, n = table[a, T_KIND], table[a, T_SOURCE], table[a, T_DEST], table[a, T_COUNT]
            if mask[a] == 0 or kind in (WAIT, DRAW, CALL):
                continue
            if kind == TO_NERTZ and _nertz_top_moves(
                o, off, dst, n_players, block, n_work, opp_work, opp_len, pos.tops[0], cfg, table, rows_eval, n_nertz
            ):
                continue  # a build its owner would most likely block by playing from the pile (R4.8)
            root_len = pos.work_len[0]
            if src >= WORK_SOURCE and kind == TO_WORK and root_len[dst] == 0 and n == root_len[src - WORK_SOURCE]:
                continue  # a whole pile into a space changes nothing
            card = _apply(a, table, np.int64(0), pos)
            v = _search(depth, params, table, rows_single, ww_row, rows_eval, n_nertz, pos, cfg, best, here, cursor)
            values[row, a] = v - params[P_STEP] + _move_bonus(o, off, a, table, card, pos, params, contested, stuck)


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
            if table[a, T_KIND] in (WAIT, DRAW, CALL):
                continue
            if values[row, a] > best_v:
                best, best_v = a, values[row, a]
        out[row] = best


def lookahead_depth(lookahead: bool | int | None, default: int) -> int:
    """The search depth a ``lookahead`` setting means: ``True`` (or ``None``, files written before
    the setting existed) the ``heuristic``'s default, ``False`` 0, an integer itself."""
    if lookahead is None or lookahead is True:
        return default
    if lookahead is False:
        return 0
    if not is_int(lookahead) or not 0 <= lookahead <= MAX_DEPTH:
        raise ValueError(f"invalid lookahead={lookahead!r}: accepted a bool or a depth from 0 to {MAX_DEPTH}")
    return int(lookahead)


# An edit to the engine or to any agents module recompiles these kernels (they inline both).
stamp_compiled(globals(), Path(__file__).resolve().parent)
