"""The race columns of ``agents.features`` (``ActionFeatures(race=True)``): how near the cards a
move touches are to the foundations, and what a foundation move does to the opponents' Nertz
piles, the race R5 ends. Anyone may play on any foundation (R4.2), so a card laid there may let an
opponent's Nertz top follow it, or take the one slot that top needed (R6); and a card on a work
pile that is ranks away from its foundation waits there. Read off the observation (R9) with the
engine's own foundation rule (``fits_foundation``): no rule is restated here.
"""

from __future__ import annotations

from pathlib import Path

from numba import njit

from nertz_env.actions import TO_FOUNDATION
from nertz_env.agents._follow import N_FOLLOW_FEATURES
from nertz_env.agents._kernels import read_top
from nertz_env.agents.base import O_NERTZ_COUNT, O_NERTZ_TOP
from nertz_env.engine import fits_foundation, rank, stamp_compiled

FIRST_RACE_COLUMN = N_FOLLOW_FEATURES  # after agents._follow's FOLLOW_COLUMNS
# fmt: off
(
    F_NEAR,  # the card moved: 1 if it fits a foundation now (R4.2), 1/13 less per rank still to go up
    F_EXPOSED_NEAR,  # the same of the card the move uncovers, on the foundations after it (0: none)
    F_FEEDS_NERTZ,  # a foundation move: opponents whose Nertz top fits only after it
    F_TAKES_NERTZ_SLOT,  # a foundation move: opponents whose Nertz top is the same card and no longer fits
    F_RIVALS_READY,  # the row: opponents whose Nertz top fits a foundation now
    F_RIVAL_NERTZ_LEFT,  # the row: the fewest cards left in an opponent's Nertz pile
) = range(FIRST_RACE_COLUMN, FIRST_RACE_COLUMN + 6)
# fmt: on
N_RACE_FEATURES = FIRST_RACE_COLUMN + 6
RACE_COLUMNS = tuple(range(FIRST_RACE_COLUMN, N_RACE_FEATURES))


@njit(cache=True, inline="always")
def nearness(card, tops) -> float:
    """1 - (ranks to go up before ``card`` fits a foundation of ``tops``) / 13, over its suit's
    piles with a lower top and a new pile from its ace (R4.2): above 0 for every card, 0 for none (-1)."""
    if card < 0:
        return 0.0
    r = rank(card)
    if fits_foundation(card, tops):
        return 1.0
    gap = r - 1  # its suit's ace starts a new pile, then every rank below it
    for t in range(1, r - 1):
        if tops[card // 13, t] > 0:
            gap = min(gap, r - 1 - t)
    return 1.0 - gap / 13.0


@njit(cache=True, inline="always")
def read_rivals(o, off, n_players, block, tops, rival_tops) -> tuple[int, int]:
    """``rival_tops[q - 1]``: opponent ``q``'s Nertz top (-1: empty); returns how many fit a
    foundation now and the fewest cards left in an opponent's Nertz pile."""
    ready, fewest = 0, 52
    for q in range(1, n_players):
        base = q * block
        rival_tops[q - 1] = read_top(o, base + off[O_NERTZ_TOP])
        ready += rival_tops[q - 1] >= 0 and fits_foundation(rival_tops[q - 1], tops)
        fewest = min(fewest, o[base + off[O_NERTZ_COUNT]])
    return ready, fewest


@njit(cache=True, inline="always")
def race_features(f, kind, card, exposed, tops, after, rival_tops, n_rivals, ready, fewest) -> None:
    """The ``RACE_COLUMNS`` of a move of ``card`` (-1: none) that uncovers ``exposed`` (-1: none),
    ``after``: the foundation tops once it has landed."""
    f[F_RIVALS_READY] = min(ready, 3) / 3.0
    f[F_RIVAL_NERTZ_LEFT] = fewest / 13.0
    f[F_NEAR] = nearness(card, tops)
    f[F_EXPOSED_NEAR] = nearness(exposed, after)
    if kind != TO_FOUNDATION:
        return
    feeds, takes = 0, 0
    for q in range(n_rivals):
        c = rival_tops[q]
        if c >= 0 and c == card + 1 and rank(card) < 13 and not fits_foundation(c, tops):
            feeds += 1
        if c == card and not fits_foundation(c, after):
            takes += 1
    f[F_FEEDS_NERTZ] = min(feeds, 3) / 3.0
    f[F_TAKES_NERTZ_SLOT] = min(takes, 3) / 3.0


# An edit to the engine or to any agents module recompiles these kernels (they inline both).
stamp_compiled(globals(), Path(__file__).resolve().parent)
