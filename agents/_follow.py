"""The follow-up columns of ``agents.features`` (``ActionFeatures(follow=True)``): what a card laid
on a work pile lets the other work piles do next. A card or block from another work pile may build
on it (R4.3), and moving it may empty its pile (a space, R4.4) or expose a card that fits a
foundation (R4.2). Read off the layout after the move, which the engine's own ``play_own_move``
makes and ``legal_row`` judges: no rule is restated here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numba import njit

from nertz_env.actions import TO_WORK, WORK_SOURCE
from nertz_env.agents._kernels import NO_NERTZ, NO_NERTZ_LEN
from nertz_env.engine import fits_foundation, legal_row, play_own_move, stamp_compiled

FIRST_FOLLOW_COLUMN = 99  # after agents.features.IDENTITY_COLUMNS (checked there)
# fmt: off
(
    F_WORK_FOLLOWS,  # a card or block of another work pile may then move onto the moved card (R4.3)
    F_FOLLOW_EMPTIES,  # ... and one such move empties its pile (R4.4)
    F_FOLLOW_EXPOSES,  # ... and one such move exposes a card that fits a foundation now (R4.2)
) = range(FIRST_FOLLOW_COLUMN, FIRST_FOLLOW_COLUMN + 3)
# fmt: on
N_FOLLOW_FEATURES = FIRST_FOLLOW_COLUMN + 3
FOLLOW_COLUMNS = (F_WORK_FOLLOWS, F_FOLLOW_EMPTIES, F_FOLLOW_EXPOSES)


@njit(cache=True, inline="always")
def follow_features(f, src, dst, n, nertz_top, waste, waste_len, work, work_len, tops, cfg) -> None:
    """The ``FOLLOW_COLUMNS`` of a move of ``n`` cards from ``src`` onto work pile ``dst``."""
    after_work, after_len = work.copy(), work_len.copy()
    nertz, left = np.full(1, nertz_top, np.int64), np.ones(1, np.int64)  # the Nertz top as a pile of one
    waste_left = np.full(1, waste_len, np.int64)  # play_own_move takes the waste's card off a copy
    play_own_move(TO_WORK, src, dst, n, nertz, left, waste, waste_left, 0, after_work, after_len)
    any_empty = (after_len == 0).any()
    for j in range(after_len.shape[0]):
        if j == dst:
            continue
        for m in range(1, after_len[j] + 1):
            if not legal_row(TO_WORK, WORK_SOURCE + j, dst, m, -1, -1, after_work, after_len, tops, True, any_empty,
                             cfg, 0, 0, NO_NERTZ, NO_NERTZ_LEN):  # fmt: skip
                continue
            f[F_WORK_FOLLOWS] = 1.0
            if m == after_len[j]:
                f[F_FOLLOW_EMPTIES] = 1.0
            elif fits_foundation(after_work[j, after_len[j] - m - 1], tops):
                f[F_FOLLOW_EXPOSES] = 1.0


# An edit to the engine or to any agents module recompiles these kernels (they inline both).
stamp_compiled(globals(), Path(__file__).resolve().parent)
