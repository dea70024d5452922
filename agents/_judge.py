"""What the heuristic reads from the rest of the table (R9: all of it public, plus the viewer's
memory of their own stock): the opponents' scores and reach, the races for foundation cards, when
to call, and what the stock will show in the coming passes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numba import njit

from nertz_env.actions import ACTION_WAIT, DRAW
from nertz_env.agents._kernels import NO_NERTZ, NO_NERTZ_LEN, read_on_foundations, read_top, read_tops, read_work
from nertz_env.agents.base import (
    O_BLOCK,
    O_CALLED,
    O_FOUNDATION,
    O_FOUNDATION_TOPS,
    O_NERTZ_COUNT,
    O_NERTZ_TOP,
    O_PLAYERS,
    O_WASTE_TOP,
    O_WORK0,
    O_WORK_PILES,
)
from nertz_env.config import C_BONUS, C_PENALTY
from nertz_env.engine import builds_on, fits_foundation, legal_row, r7_score, stamp_compiled
from nertz_env.engine.constants import T_COUNT, T_DEST, T_KIND, T_SOURCE

CALL_NOW, CALL_SAFE, CALL_AHEAD = 0, 1, 2


@njit(cache=True)
def race_cards(o, off, n_players, block, n_work, opp_work, opp_len, contested):
    """``contested[c]``: opponents who could put their own card ``c`` on a foundation pile now,
    the same pile one of the viewer's ``c`` would need (R6: first come, first served)."""
    contested[:] = 0
    for q in range(1, n_players):
        base = q * block
        for part in (off[O_NERTZ_TOP], off[O_WASTE_TOP]):
            c = read_top(o, base + part)
            if c >= 0:
                contested[c] += 1
        read_work(o, base + off[O_WORK0], n_work, opp_work, opp_len)
        for j in range(n_work):
            if opp_len[j] > 0:
                contested[opp_work[j, opp_len[j] - 1]] += 1


@njit(cache=True, inline="always")
def public_score(o, base, off, cfg) -> float:
    """The R7 score of the seat whose block starts at ``base``, as the table shows it (R9)."""
    found = read_on_foundations(o, base + off[O_FOUNDATION])
    return r7_score(found, o[base + off[O_NERTZ_COUNT]], o[base + off[O_CALLED]] != 0, cfg[C_PENALTY], cfg[C_BONUS])


@njit(cache=True, inline="always")
def score_lead(o, off, n_players, block, cfg) -> float:
    """The viewer's R7 score as the table shows it, minus the best opponent's."""
    best_opp, mine = -1e9, 0.0
    for q in range(n_players):
        s = public_score(o, q * block, off, cfg)
        if q == 0:
            mine = s
        elif s > best_opp:
            best_opp = s
    return mine - best_opp


@njit(cache=True, inline="always")
def soon_playable(c, contested, tops) -> bool:
    """``c`` (-1: none) does not fit a foundation now but will once an opponent plays their own
    card one rank below it, which fits now (``contested``: ``race_cards``; R4.2, anyone may play
    on any foundation): a card to keep in reach rather than cover."""
    if c < 0 or c % 13 == 0 or fits_foundation(c, tops):
        return False
    return contested[c - 1] > 0 and fits_foundation(c - 1, tops)


@njit(cache=True)
def wait_for_opponents(obs, off, table, out) -> None:
    """Where ``out[row]`` is a DRAW that would cover a ``soon_playable`` waste top (one an
    opponent's next foundation play frees), WAIT instead (R4.7): the heuristic's ``wait="soon"``."""
    n_work = off[O_WORK_PILES]
    opp_work, opp_len = np.zeros((n_work, 13), np.int64), np.zeros(n_work, np.int64)
    contested, tops = np.zeros(52, np.int64), np.zeros((4, 14), np.int64)
    for row in range(obs.shape[0]):
        o = obs[row]
        waste_top = read_top(o, off[O_WASTE_TOP]) if table[out[row], T_KIND] == DRAW else -1
        if waste_top < 0:
            continue
        read_tops(o, off[O_FOUNDATION_TOPS], tops)
        race_cards(o, off, off[O_PLAYERS], off[O_BLOCK], n_work, opp_work, opp_len, contested)
        if soon_playable(waste_top, contested, tops):
            out[row] = ACTION_WAIT


@njit(cache=True, inline="always")
def soon_in_reach(nertz_top, waste_top, work, work_len, contested, tops) -> int:
    """How many of the viewer's cards in reach (Nertz top, waste top, exposed work cards) are
    ``soon_playable``."""
    n = soon_playable(nertz_top, contested, tops) + soon_playable(waste_top, contested, tops)
    for j in range(work_len.shape[0]):
        if work_len[j] > 0:
            n += soon_playable(work[j, work_len[j] - 1], contested, tops)
    return n


@njit(cache=True, inline="always")
def useful(c, nertz_top, tops) -> bool:
    """A card worth turning up: it goes to a foundation now, or the Nertz top builds on it."""
    return fits_foundation(c, tops) or (nertz_top >= 0 and builds_on(nertz_top, c))


@njit(cache=True)
def cycle_useful(waste, w, stock, k, n_draw, nertz_top, tops) -> int:
    """Useful cards that will show on the waste top (R4.1: every ``n_draw``-th card turned) in
    the rest of this pass through the stock and in the next one, if nothing else is played.
    The next pass turns the waste from its bottom, then what is left of the stock now."""
    count = 0
    for t in range(k):
        if (t % n_draw == n_draw - 1 or t == k - 1) and useful(stock[t], nertz_top, tops):
            count += 1
    n = w + k
    for t in range(n):
        if t % n_draw == n_draw - 1 or t == n - 1:
            c = waste[t] if t < w else stock[t - w]
            if useful(c, nertz_top, tops):
                count += 1
    return count


@njit(cache=True)
def opponent_view(obs, base, off, n_work, work, work_len, tops, cfg, table, rows_eval, n_nertz):
    """An opponent's R7 score and the most they can add in one tick, from what is public (R9):
    their Nertz top to a foundation, or elsewhere, or any card to a foundation, or a call.
    ``rows_eval``: the Nertz top to a foundation, its ``n_nertz`` other moves, the other
    foundation moves."""
    penalty, bonus = cfg[C_PENALTY], cfg[C_BONUS]
    n_left = obs[base + off[O_NERTZ_COUNT]]
    called = obs[base + off[O_CALLED]]
    score = public_score(obs, base, off, cfg)
    read_work(obs, base + off[O_WORK0], n_work, work, work_len)
    nertz_top = read_top(obs, base + off[O_NERTZ_TOP])
    waste_top = read_top(obs, base + off[O_WASTE_TOP])
    any_empty = False
    for j in range(n_work):
        if work_len[j] == 0:
            any_empty = True
    if n_left == 0:  # one action a tick: a call or a card
        return score, max(1, 0 if called else bonus)
    gain = 0
    for i in range(rows_eval.shape[0]):
        a = rows_eval[i]
        if legal_row(table[a, T_KIND], table[a, T_SOURCE], table[a, T_DEST], table[a, T_COUNT], nertz_top, waste_top,
                     work, work_len, tops, True, any_empty, cfg, 0, 0, NO_NERTZ, NO_NERTZ_LEN):
            gain = max(gain, penalty + 1 if i == 0 else penalty if i <= n_nertz else 1)
    return score, gain


@njit(cache=True)
def should_call(o, off, n_players, block, n_work, opp_work, opp_len, tops, cfg, table, rows_eval, n_nertz,
                found, mode) -> bool:
    """R4.6 makes calling a choice, for a viewer whose Nertz pile is empty. ``mode`` 0 (CALL_NOW):
    call at once. 2 (CALL_AHEAD): call when strictly ahead of every opponent; calling behind
    loses the hand, while playing on cannot lower a score whose Nertz pile is empty (R7).
    1 (CALL_SAFE): as 2, but keep playing while the lead is safe: no opponent can close it in
    this tick and the next, in which the call would come."""
    if mode == CALL_NOW:
        return True
    mine = found + cfg[C_BONUS]
    ahead, safe = True, True
    for q in range(1, n_players):
        score, gain = opponent_view(o, q * block, off, n_work, opp_work, opp_len, tops, cfg, table, rows_eval,
                                    n_nertz)
        lead = mine - score
        ahead = ahead and lead > 0
        safe = safe and lead > gain + cfg[C_PENALTY] + 1 + cfg[C_BONUS]
    return ahead and (mode == CALL_AHEAD or not safe)


# An edit to the engine or to any agents module recompiles these kernels (they inline both).
stamp_compiled(globals(), Path(__file__).resolve().parent)
