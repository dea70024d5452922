"""Legal-action masks (R4) of every player of a game, over the action catalogue.

``legal_masks`` is ``core.legal_mask`` for every player at once: it asks the same
``core.legal_row`` about every catalogue row that could be legal, on the table at the start of the
tick (R3).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nertz_env.engine.constants import (
    C_PLAYERS,
    C_WORK,
    T_COUNT,
    T_DEST,
    T_KIND,
    T_SOURCE,
    TO_FOUNDATION,
    TO_NERTZ,
    TO_WORK,
    UNDER,
    WAIT,
    WORK_SOURCE,
)
from nertz_env.engine.core import legal_row, waits_only
from nertz_env.engine.state import RUNNING
from nertz_env.engine.views import raw, raw_state


@njit(cache=True)
def mask_plan(table):
    """The catalogue ``table`` as runs for ``legal_masks``: one row ``(first, kind, source,
    destination, n, count)`` per run of catalogue rows ``first .. first + count - 1``. A run is one
    row, or the moves of blocks of ``n, n + 1, ...`` cards between the same two work piles."""
    n_rows = table.shape[0]
    plan = np.empty((n_rows, 6), np.int16)
    g, a = 0, 0
    while a < n_rows:
        kind, src, dst, n = table[a, T_KIND], table[a, T_SOURCE], table[a, T_DEST], table[a, T_COUNT]
        count = 1
        if kind == TO_WORK and src >= WORK_SOURCE:
            while a + count < n_rows and table[a + count, 0] == kind and table[a + count, 1] == src:
                if table[a + count, 2] != dst or table[a + count, 3] != n + count:
                    break
                count += 1
        plan[g, 0], plan[g, 1], plan[g, 2], plan[g, 3], plan[g, 4], plan[g, 5] = a, kind, src, dst, n, count
        g += 1
        a += count
    return plan[:g].copy()


@njit(cache=True)
def legal_masks(s, b, cfg, table, plan, out):
    """Every player's mask of game ``b`` over the catalogue ``table`` into ``out[P, N]`` (int8):
    row ``p`` equals ``core.legal_mask(s, b, p, ...)``, asked of the same ``core.legal_row``.
    ``plan`` is ``mask_plan(table)``: a run of block moves is asked only about the blocks the
    source pile holds (the others have no card to move)."""
    s = raw_state(s)
    cfg, table, plan, out = raw(cfg), raw(table), raw(plan), raw(out)
    n_players, n_work = cfg[C_PLAYERS], cfg[C_WORK]
    n_actions = table.shape[0]
    if s.ended[b] != RUNNING:
        for p in range(n_players):
            for a in range(n_actions):
                out[p, a] = table[a, T_KIND] == WAIT
        return
    tops = s.foundation_tops[b]
    nertz, nertz_len = s.nertz, s.nertz_len  # the targets of R4.8 (whole: raw, so no view is made)
    for p in range(n_players):
        mask = out[p]
        if waits_only(s, b, p, cfg):  # R3 timing options: off turn, or a move in the air
            for a in range(n_actions):
                mask[a] = table[a, T_KIND] == WAIT
            continue
        for a in range(n_actions):
            mask[a] = 0
        k = s.nertz_len[b, p]
        nertz_top = np.int64(s.nertz[b, p, k - 1]) if k > 0 else np.int64(-1)  # the Nertz top, -1 if none
        k = s.waste_len[b, p]
        waste_top = np.int64(s.waste[b, p, k - 1]) if k > 0 else np.int64(-1)
        work, work_len = s.work[b, p], s.work_len[b, p]
        any_empty = False
        for j in range(n_work):
            if work_len[j] == 0:
                any_empty = True
        can_draw = s.stock_len[b, p] > 0 or k > 0
        for g in range(plan.shape[0]):
            a, kind, n = np.int64(plan[g, 0]), plan[g, 1], np.int64(plan[g, 4])
            src, dst = np.int64(plan[g, 2]), np.int64(plan[g, 3])
            # The kind is a constant where it is known, so each inlined copy of legal_row keeps
            # only its own branch.
            if kind == TO_WORK and src >= WORK_SOURCE:
                held = np.int64(work_len[src - WORK_SOURCE])
                for t in range(min(np.int64(plan[g, 5]), held - n + 1)):
                    mask[a + t] = legal_row(
                        TO_WORK, src, dst, n + t, nertz_top, waste_top, work, work_len, tops, can_draw, any_empty, cfg,
                        b, p, nertz, nertz_len,
                    )  # fmt: skip
            elif kind == TO_WORK:
                mask[a] = legal_row(
                    TO_WORK, src, dst, n, nertz_top, waste_top, work, work_len, tops, can_draw, any_empty, cfg, b, p,
                    nertz, nertz_len
                )
            elif kind == TO_FOUNDATION:
                mask[a] = legal_row(
                    TO_FOUNDATION, src, dst, n, nertz_top, waste_top, work, work_len, tops, can_draw, any_empty, cfg,
                    b, p, nertz, nertz_len,
                )  # fmt: skip
            elif kind == UNDER:
                mask[a] = legal_row(
                    UNDER, src, dst, n, nertz_top, waste_top, work, work_len, tops, can_draw, any_empty, cfg, b, p,
                    nertz, nertz_len
                )
            elif kind == TO_NERTZ:
                mask[a] = legal_row(
                    TO_NERTZ, src, dst, n, nertz_top, waste_top, work, work_len, tops, can_draw, any_empty, cfg,
                    b, p, nertz, nertz_len,
                )  # fmt: skip
            else:
                mask[a] = legal_row(
                    kind, src, dst, n, nertz_top, waste_top, work, work_len, tops, can_draw, any_empty, cfg, b, p,
                    nertz, nertz_len
                )
