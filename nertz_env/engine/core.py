"""The rules of RULES.md R2 to R4 as compiled functions over one game ``b`` of a batch: the cards,
the deal (R2) and which moves are legal (R4). ``nertz_env.engine.tick`` plays a tick with them.

Everything is decided on the state at the start of a tick (R3): ``legal_row`` (the one statement
of R4) and ``legal_mask`` read it. No Python object is created per card or per move.

Timing options (R3): with ``turn_based`` only the seat on turn (``tick % P``, seat 0 first) may do
anything but WAIT; with ``move_ticks`` a player whose move is in the air may only WAIT.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nertz_env.engine.constants import (
    BLOCKS_NONE,
    BLOCKS_WHOLE,
    C_ACES_TO_WORK,
    C_BLOCKS,
    C_BUILDS,
    C_FILL_ANY,
    C_FILL_WASTE,
    C_NERTZ,
    C_NERTZ_TO_WORK,
    C_PENALTY,
    C_PLAYERS,
    C_TICKS,
    C_TICKS_END,
    C_TURN_BASED,
    C_WORK,
    CALL,
    DRAW,
    NERTZ,
    T_COUNT,
    T_DEST,
    T_KIND,
    T_SOURCE,
    TO_FOUNDATION,
    TO_NERTZ,
    TO_WORK,
    UNDER,
    WAIT,
    WASTE,
    WORK_SOURCE,
)
from nertz_env.engine.rng import below
from nertz_env.engine.state import (
    AIR_TICKS,
    RUNNING,
)


@njit(cache=True, inline="always")
def rank(card) -> int:
    return card % 13 + 1


@njit(cache=True, inline="always")
def red(card) -> bool:
    suit = card // 13
    return suit == 1 or suit == 2


@njit(cache=True, inline="always")
def builds_on(card, onto) -> bool:
    """``card`` may lie on ``onto`` in a work pile: one rank lower, opposite colour (R4.3)."""
    return builds_on_ranked(rank(card), red(card), rank(onto), red(onto))


@njit(cache=True, inline="always")
def builds_on_ranked(card_rank, card_red, onto_rank, onto_red) -> bool:
    """``builds_on`` from the two cards' ranks and colours (R4.3), for callers that know them
    without the cards (the masks' work piles, whose tops they read once)."""
    return (card_rank == onto_rank - 1) & (card_red != onto_red)


@njit(cache=True, inline="always")
def fits_foundation(card, tops) -> bool:
    """``card`` may go to a foundation (R4.2): an ace starts a pile, any other card goes onto a
    pile of its suit whose top is one rank lower (``tops[suit, r]``: piles with rank ``r`` on top)."""
    r = rank(card)
    return r == 1 or tops[card // 13, r - 1] > 0


@njit(cache=True, inline="always")
def builds_on_nertz(card, top) -> bool:
    """``card`` may be built onto another player's Nertz ``top`` (R4.8): same suit, one rank
    above or below."""
    gap = rank(card) - rank(top)
    return top // 13 == card // 13 and (gap == 1 or gap == -1)


@njit(cache=True, inline="always")
def r7_score(on_foundations, nertz_left, called, penalty, bonus) -> int:
    """R7: a point per card on the foundations, minus ``penalty`` per card left in the Nertz pile,
    plus ``bonus`` for a call."""
    return on_foundations - penalty * nertz_left + (bonus if called else 0)


@njit(cache=True, inline="always")
def partner_of(seat, n_players) -> int:
    """R8 partners sit opposite: seat ``p`` plays with seat ``p + P/2`` (and back)."""
    half = n_players // 2
    return seat + half if seat < half else seat - half


# ---------------------------------------------------------------------------------------------
# The deal (R2)


@njit(cache=True)
def deal(s, b, decks, cfg):
    """Deal game ``b`` from ``decks[p]``: each player's 52 cards in R10 order (top of deck first)."""
    n_players, n_nertz, n_work = cfg[C_PLAYERS], cfg[C_NERTZ], cfg[C_WORK]
    for p in range(n_players):
        for k in range(n_nertz):  # the first dealt lies at the bottom
            s.nertz[b, p, k] = decks[p, k]
        s.nertz_len[b, p] = n_nertz
        for j in range(n_work):
            s.work[b, p, j, 0] = decks[p, n_nertz + j]
            s.work_len[b, p, j] = 1
        rest = 52 - n_nertz - n_work
        for k in range(rest):  # the first of the rest is the top of the stock
            s.stock[b, p, rest - 1 - k] = decks[p, n_nertz + n_work + k]
        s.stock_len[b, p] = rest
        s.waste_len[b, p] = 0
        s.stock_known[b, p] = False
        s.on_foundations[b, p] = 0
        s.called[b, p] = False
        s.collision[b, p] = False
        s.won_race[b, p] = False
        s.illegal[b, p] = False
        for k in range(4):  # move_ticks: nothing in the air
            s.air[b, p, k] = 0
        s.score[b, p] = -cfg[C_PENALTY] * n_nertz
        if cfg[C_BUILDS] != 0:  # R4.8: every dealt card starts with its owner (R1)
            for k in range(n_nertz):
                s.nertz_owner[b, p, k] = p
            for j in range(n_work):
                s.work_owner[b, p, j, 0] = p
    s.foundation_len[b, :] = 0
    s.n_foundations[b] = 0
    s.foundation_tops[b, :, :] = 0
    s.tick[b] = 0
    s.since_progress[b] = 0
    s.rotations[b] = 0
    s.stall_cycle[b] = 0  # R5: measured on this table when its first tick starts
    s.ended[b] = RUNNING


@njit(cache=True)
def dealt_decks(s, b, cfg, decks):
    """The inverse of ``deal`` on a freshly dealt game ``b``: each player's 52 cards in R10 order
    (top of deck first) into ``decks[P, 52]``."""
    n_nertz, n_work = cfg[C_NERTZ], cfg[C_WORK]
    for p in range(cfg[C_PLAYERS]):
        for k in range(n_nertz):
            decks[p, k] = s.nertz[b, p, k]
        for j in range(n_work):
            decks[p, n_nertz + j] = s.work[b, p, j, 0]
        rest = 52 - n_nertz - n_work
        for k in range(rest):
            decks[p, n_nertz + n_work + k] = s.stock[b, p, rest - 1 - k]


@njit(cache=True)
def shuffle_deal(s, b, cfg):
    """Shuffle every player's deck from game ``b``'s own stream, then deal (R2)."""
    n_players = cfg[C_PLAYERS]
    decks = np.empty((n_players, 52), np.int8)
    for p in range(n_players):
        for k in range(52):
            decks[p, k] = k
        for k in range(51, 0, -1):
            j = below(s.rng, b, k + 1)
            t = decks[p, k]
            decks[p, k] = decks[p, j]
            decks[p, j] = t
    deal(s, b, decks, cfg)


# ---------------------------------------------------------------------------------------------
# Legal moves (R4), on the state at the start of the tick (R3)


@njit(cache=True, inline="always")
def source_card(s, b, p, src, n) -> int:
    """The moving card (the first card of a block of ``n``) of a source, or -1 if it has none."""
    if src == NERTZ:
        k = s.nertz_len[b, p]
        return s.nertz[b, p, k - 1] if k > 0 else -1
    if src == WASTE:
        k = s.waste_len[b, p]
        return s.waste[b, p, k - 1] if k > 0 else -1
    i = src - WORK_SOURCE
    k = s.work_len[b, p, i]
    return s.work[b, p, i, k - n] if k >= n else -1


@njit(cache=True, inline="always")
def source_owner(s, b, p, src, n) -> int:
    """The owner seat of the moving card (R1): with ``nertz_builds`` (R4.8) a Nertz or work pile
    may hold another player's card. Read before the card leaves its source."""
    if src == NERTZ:
        return s.nertz_owner[b, p, s.nertz_len[b, p] - 1]
    if src == WASTE:
        return p
    i = src - WORK_SOURCE
    return s.work_owner[b, p, i, s.work_len[b, p, i] - n]


@njit(cache=True, inline="always")
def block_allowed(n, held, cfg) -> bool:
    """R4.3 ``block_moves``: a block of ``n`` cards may leave a work pile of ``held``: any block,
    only the whole pile (``"whole"``), or only the exposed card (``"none"``)."""
    if cfg[C_BLOCKS] == BLOCKS_WHOLE:
        return n == held
    if cfg[C_BLOCKS] == BLOCKS_NONE:
        return n == 1
    return True


@njit(cache=True, inline="always")
def legal_row(
    kind, src, dst, n, nertz_top, waste_top, work, work_len, tops, can_draw, any_empty, cfg, b, seat, nertz, nertz_len
) -> bool:
    """The legality of one catalogue row for one player, from that player's view of the table:
    ``nertz_top``/``waste_top`` (-1 if empty), their ``work`` piles and ``work_len``, and the
    foundation ``tops`` table; for R4.8 the game ``b``, the player's ``seat`` and the state's Nertz
    piles (``nertz[B, P, 52]``, ``nertz_len[B, P]``, whole: a view per call would cost more than
    the rule). The single statement of R4: the tick, the masks and the agents' look-ahead call it."""
    if kind < TO_FOUNDATION:  # WAIT, DRAW, CALL (constants: the kinds that carry no card come first)
        return legal_without_card(kind, can_draw, nertz_top)
    card = moved_card(src, n, nertz_top, waste_top, work, work_len)
    if card < 0:
        return False
    if kind == TO_FOUNDATION:  # R4.2
        return fits_foundation(card, tops)
    if kind == TO_WORK:
        return legal_onto_work(card, src, dst, n, work, work_len, cfg)
    if kind == UNDER:
        return legal_under(card, src, dst, work, work_len, any_empty, cfg)
    if kind == TO_NERTZ:
        return legal_onto_nertz(card, dst, cfg, b, seat, nertz, nertz_len)
    return False


# legal_row's parts, one rule each: the masks' row-by-row path (masks._plan_mask) calls the part
# of a run's kind directly, so that it compiles one copy of each part instead of one copy of the
# whole legal_row per kind.
@njit(cache=True, inline="always")
def legal_without_card(kind, can_draw, nertz_top) -> bool:
    """The moves that carry no card: WAIT (R4.7), DRAW (R4.1) and CALL (R4.6); False for others."""
    if kind == WAIT:
        return True
    if kind == DRAW:
        return can_draw
    if kind == CALL:
        return nertz_top < 0
    return False


@njit(cache=True, inline="always")
def moved_card(src, n, nertz_top, waste_top, work, work_len):
    """The card a move of ``n`` cards from ``src`` takes (the block's bottom card), -1 if none."""
    if src == NERTZ:
        return nertz_top
    if src == WASTE:
        return waste_top
    k = work_len[src - WORK_SOURCE]
    return np.int64(work[src - WORK_SOURCE, k - n]) if k >= n else np.int64(-1)


@njit(cache=True, inline="always")
def legal_onto_work(card, src, dst, n, work, work_len, cfg) -> bool:
    """R4.3, R4.4: ``card`` (the bottom of ``n`` cards from ``src``) onto work pile ``dst``."""
    if src >= WORK_SOURCE and src - WORK_SOURCE == dst:
        return False
    if src >= WORK_SOURCE and not block_allowed(n, work_len[src - WORK_SOURCE], cfg):  # R4.3 block_moves
        return False
    if cfg[C_ACES_TO_WORK] == 0 and rank(card) == 1:  # R4.3 aces_to_work=False: aces only to a foundation
        return False
    k = work_len[dst]
    if k == 0:  # R4.4: any card or block; fill_empty_from="nertz": the Nertz top, "nertz_or_waste": not a work card
        return src == NERTZ or cfg[C_FILL_ANY] != 0 or (src == WASTE and cfg[C_FILL_WASTE] != 0)
    if src == NERTZ and cfg[C_NERTZ_TO_WORK] == 0:  # R4.3, Snerts
        return False
    return builds_on(card, work[dst, k - 1])  # R4.3


@njit(cache=True, inline="always")
def legal_under(card, src, dst, work, work_len, any_empty, cfg) -> bool:
    """R4.5: ``card`` under work pile ``dst``, a shortcut through an empty pile, so only what may
    fill one."""
    if src == WASTE and cfg[C_FILL_WASTE] == 0:
        return False
    if work_len[dst] == 0 or not any_empty:
        return False
    return builds_on(work[dst, 0], card)


@njit(cache=True, inline="always")
def legal_onto_nertz(card, dst, cfg, b, seat, nertz, nertz_len) -> bool:
    """R4.8: ``card`` onto the Nertz top of the player ``dst`` seats on from ``seat``, same suit,
    one rank apart."""
    n_players = cfg[C_PLAYERS]
    if cfg[C_BUILDS] == 0 or dst < 1 or dst >= n_players:
        return False
    target = (seat + dst) % n_players
    k = nertz_len[b, target]
    if k == 0 or k >= nertz.shape[2]:  # an empty pile has no top; a full one (52) has no slot
        return False
    return builds_on_nertz(card, nertz[b, target, k - 1])


@njit(cache=True, inline="always")
def player_view(s, b, p, n_work):
    k = s.nertz_len[b, p]
    nertz_top = np.int64(s.nertz[b, p, k - 1]) if k > 0 else np.int64(-1)
    k = s.waste_len[b, p]
    waste_top = np.int64(s.waste[b, p, k - 1]) if k > 0 else np.int64(-1)
    work_len = s.work_len[b, p]
    any_empty = False
    for j in range(n_work):
        if work_len[j] == 0:
            any_empty = True
    can_draw = s.stock_len[b, p] > 0 or s.waste_len[b, p] > 0
    return nertz_top, waste_top, s.work[b, p], work_len, s.foundation_tops[b], can_draw, any_empty


@njit(cache=True, inline="always")
def moves_take_time(cfg) -> bool:
    """Option ``move_ticks``: some kind of move takes more than one tick."""
    for k in range(C_TICKS + 1, C_TICKS_END):  # noqa: SIM110 - a loop numba compiles
        if cfg[k] > 1:
            return True
    return False


@njit(cache=True, inline="always")
def waits_only(s, b, p, cfg) -> bool:
    """Only WAIT is legal for ``p`` now: it is another seat's turn (R3 ``turn_based``: seat
    ``tick % P`` is on turn, seat 0 first), or ``p``'s move is in the air (``move_ticks``)."""
    if s.air[b, p, AIR_TICKS] > 0:
        return True
    return cfg[C_TURN_BASED] != 0 and s.tick[b] % cfg[C_PLAYERS] != p


@njit(cache=True)
def legal_mask(s, b, p, cfg, table, out):
    """Write player ``p``'s mask over the catalogue ``table`` into ``out`` (int8)."""
    if s.ended[b] != RUNNING or waits_only(s, b, p, cfg):
        for a in range(table.shape[0]):
            out[a] = table[a, T_KIND] == WAIT
        return
    nertz_top, waste_top, work, work_len, tops, can_draw, any_empty = player_view(s, b, p, cfg[C_WORK])
    for a in range(table.shape[0]):
        out[a] = legal_row(
            table[a, T_KIND], table[a, T_SOURCE], table[a, T_DEST], table[a, T_COUNT], nertz_top, waste_top, work,
            work_len, tops,
            can_draw, any_empty, cfg, b, p, s.nertz, s.nertz_len,
        )  # fmt: skip
