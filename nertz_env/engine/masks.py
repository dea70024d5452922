"""Legal-action masks (R4) of every player of a game, over the action catalogue.

``legal_masks`` is ``core.legal_mask`` for every player at once, on the table at the start of the
tick (R3). In general it asks the same ``core.legal_row`` about every catalogue row that could be
legal. The standard game (the standard catalogue, and every option of R3, R4.3, R4.4 and R4.8 at
its default; decided once per call) takes a specialised path instead, per source and target:
each source card is judged once against each destination, with the same R4 helpers
(``builds_on``, ``fits_foundation``), and writes the row it decides; of a work pile's blocks
only the one whose bottom card has the rank to build on a target is judged (a work pile is a
run, R4.3). ``tests/test_vector.py`` holds the two paths equal.
"""

from __future__ import annotations

import numpy as np
from numba import carray, njit

from nertz_env.engine.constants import (
    BLOCKS_ANY,
    C_ACES_TO_WORK,
    C_BLOCKS,
    C_BUILDS,
    C_FILL_ANY,
    C_FILL_WASTE,
    C_NERTZ_TO_WORK,
    C_PLAYERS,
    C_TURN_BASED,
    C_WORK,
    CALL,
    DRAW,
    MAX_WORK,
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
from nertz_env.engine.core import (
    builds_on,
    builds_on_ranked,
    fits_foundation,
    legal_onto_nertz,
    legal_onto_work,
    legal_under,
    legal_without_card,
    moved_card,
    moves_take_time,
    rank,
    red,
    waits_only,
)
from nertz_env.engine.state import RUNNING
from nertz_env.engine.views import raw, raw_state, stack_int64

# The columns of a plan (``mask_plan``): a run of catalogue rows, and on every row the standard
# layout's figures (0 if the catalogue is another).
PLAN_FIRST, PLAN_KIND, PLAN_SOURCE, PLAN_DEST, PLAN_N, PLAN_COUNT, PLAN_STANDARD_WORK, PLAN_STANDARD_UNDER = range(8)
PLAN_COLUMNS = 8


def standard_layout(table: np.ndarray) -> tuple[int, bool]:
    """``(work piles, has UNDER rows)`` if ``table`` is the standard catalogue (``ActionCatalogue``
    without R4.8 rows, with or without slide-under), else ``(0, False)``."""
    n_work = int((table[:, T_KIND] == TO_FOUNDATION).sum()) - 2
    if n_work < 1:
        return 0, False
    blocks = [(TO_WORK, WORK_SOURCE + i, j, n) for i in range(n_work) for j in range(n_work) if i != j
              for n in range(1, 14)]  # fmt: skip
    for under in (False, True):
        rows = [(WAIT, 0, 0, 0), (DRAW, 0, 0, 0), (CALL, 0, 0, 0)]
        rows += [(TO_FOUNDATION, src, 0, 1) for src in range(WORK_SOURCE + n_work)]
        for kind in (TO_WORK, UNDER) if under else (TO_WORK,):
            rows += [(kind, src, j, 1) for src in (NERTZ, WASTE) for j in range(n_work)]
        standard = np.array(rows + blocks, np.int64)
        if table.shape == standard.shape and (table == standard).all():
            return n_work, under
    return 0, False


def mask_plan(table: np.ndarray) -> np.ndarray:
    """The catalogue ``table`` as runs for ``legal_masks``: one row ``(first, kind, source,
    destination, n, count, standard work piles, standard under)`` per run of catalogue rows
    ``first .. first + count - 1``. A run is one row, or the moves of blocks of ``n, n + 1, ...``
    cards between the same two work piles. The last two columns are ``standard_layout(table)`` on
    every row."""
    plan = _runs(table)
    plan[:, PLAN_STANDARD_WORK], plan[:, PLAN_STANDARD_UNDER] = standard_layout(table)
    return plan


def _runs(table: np.ndarray) -> np.ndarray:
    """The runs of ``mask_plan``, its first six columns (plain Python: once per game or batch, and
    a first start compiles nothing before it knows whether to: ``nertz_env.interim``)."""
    rows = table[:, [T_KIND, T_SOURCE, T_DEST, T_COUNT]].tolist()
    plan = np.zeros((len(rows), PLAN_COLUMNS), np.int16)
    g, a = 0, 0
    while a < len(rows):
        kind, src, dst, n = rows[a]
        count = 1
        if kind == TO_WORK and src >= WORK_SOURCE:
            while a + count < len(rows) and rows[a + count][:2] == [kind, src]:
                if rows[a + count][2:] != [dst, n + count]:
                    break
                count += 1
        plan[g, :6] = a, kind, src, dst, n, count
        g += 1
        a += count
    return plan[:g].copy()


@njit(cache=True, inline="always")
def _standard_game(cfg, plan) -> bool:
    """The standard catalogue (``mask_plan``) and every option its fast path leaves out at its
    default: no R3 timing, R4.3 blocks and aces as standard, R4.4 any card fills a space, no R4.8."""
    return (
        plan.shape[0] > 0 and plan[0, PLAN_STANDARD_WORK] == cfg[C_WORK]
        and cfg[C_TURN_BASED] == 0 and not moves_take_time(cfg) and cfg[C_BUILDS] == 0
        and cfg[C_BLOCKS] == BLOCKS_ANY and cfg[C_ACES_TO_WORK] != 0 and cfg[C_FILL_ANY] != 0
        and cfg[C_FILL_WASTE] != 0 and cfg[C_NERTZ_TO_WORK] != 0
    )  # fmt: skip


@njit(cache=True, inline="always")
def legal_masks(s, b, cfg, table, plan, out):
    """Every player's mask of game ``b`` over the catalogue ``table`` into ``out[P, N]`` (int8):
    row ``p`` equals ``core.legal_mask(s, b, p, ...)``. ``plan`` is ``mask_plan(table)``: the
    standard game goes per source and target (``_standard_mask``), any other asks ``legal_row``
    about the rows of the plan's runs that could be legal (``_plan_mask``). A
    ``legal_masks_span`` of one game."""
    legal_masks_span(s, b, cfg, table, plan, out.reshape((1, out.shape[0], out.shape[1])))


@njit(cache=True)
def legal_masks_span(s, first, cfg, table, plan, masks):
    """``legal_masks`` of each game ``first + i`` of a run of games into ``masks[i]`` (``[P, N]``):
    one call per run, as ``tick.step_span``."""
    s = raw_state(s)
    cfg, table, plan, masks = raw(cfg), raw(table), raw(plan), raw(masks)
    for i in range(masks.shape[0]):
        _masks_one(s, first + i, cfg, table, plan, masks[i])


@njit(cache=True, inline="always")
def _masks_one(s, b, cfg, table, plan, out):
    """``legal_masks``'s body, on ``raw`` views."""
    n_players = cfg[C_PLAYERS]
    n_actions = table.shape[0]
    if s.ended[b] != RUNNING:
        for p in range(n_players):
            for a in range(n_actions):
                out[p, a] = table[a, T_KIND] == WAIT
        return
    standard = _standard_game(cfg, plan)
    under = plan[0, PLAN_STANDARD_UNDER] != 0
    for p in range(n_players):
        mask = out[p]
        if waits_only(s, b, p, cfg):  # R3 timing options: off turn, or a move in the air
            for a in range(n_actions):
                mask[a] = table[a, T_KIND] == WAIT
            continue
        for a in range(n_actions):
            mask[a] = 0
        if standard:
            _standard_mask(s, b, p, cfg[C_WORK], under, mask)
        else:
            _plan_mask(s, b, p, cfg, plan, mask)


# The rows of ``_pile_tops``'s scratch: per work pile its height and its top card's rank and colour.
PILE_HEIGHT, PILE_RANK, PILE_RED = range(3)
PILE_ROWS = 3
PILE_SCRATCH = PILE_ROWS * MAX_WORK  # int64 slots on the stack


@njit(cache=True, inline="always")
def _standard_mask(s, b, p, n_work, under, mask):
    """Player ``p``'s mask in the standard game (``_standard_game``) into ``mask`` (zero), row by
    row of the standard catalogue: every source card judged against each destination once, the
    work piles by their tops' ranks and colours, read once (``_pile_tops``)."""
    tops = s.foundation_tops[b]
    k = s.nertz_len[b, p]
    nertz_top = np.int64(s.nertz[b, p, k - 1]) if k > 0 else np.int64(-1)
    k = s.waste_len[b, p]
    waste_top = np.int64(s.waste[b, p, k - 1]) if k > 0 else np.int64(-1)
    work, work_len = s.work[b, p], s.work_len[b, p]
    piles = carray(stack_int64(PILE_SCRATCH), (PILE_ROWS, MAX_WORK))
    any_empty = _pile_tops(work, work_len, n_work, piles)
    mask[0] = True  # R4.7 WAIT
    mask[1] = s.stock_len[b, p] > 0 or k > 0  # R4.1 DRAW
    mask[2] = nertz_top < 0  # R4.6 CALL
    first = 3  # R4.2: the Nertz top, the waste top, each work pile's top to a foundation
    if nertz_top >= 0:
        mask[first] = fits_foundation(nertz_top, tops)
    if waste_top >= 0:
        mask[first + 1] = fits_foundation(waste_top, tops)
    for i in range(n_work):
        h = np.int64(work_len[i])
        if h > 0:
            mask[first + 2 + i] = fits_foundation(work[i, h - 1], tops)
    onto = first + 2 + n_work  # R4.3, R4.4: the Nertz top, then the waste top, onto each work pile
    slide = onto + 2 * n_work  # R4.5: under each work pile, when a space is open
    # no card: a rank no top is one above, so it builds on nothing
    nertz_rank, nertz_red = (rank(nertz_top), red(nertz_top)) if nertz_top >= 0 else (np.int64(-2), False)
    waste_rank, waste_red = (rank(waste_top), red(waste_top)) if waste_top >= 0 else (np.int64(-2), False)
    for j in range(n_work):
        if piles[PILE_HEIGHT, j] == 0:
            mask[onto + j] = nertz_top >= 0
            mask[onto + n_work + j] = waste_top >= 0
            continue
        top_rank, top_red = piles[PILE_RANK, j], piles[PILE_RED, j]
        mask[onto + j] = builds_on_ranked(nertz_rank, nertz_red, top_rank, top_red)
        mask[onto + n_work + j] = builds_on_ranked(waste_rank, waste_red, top_rank, top_red)
        if under and any_empty:
            mask[slide + j] = nertz_top >= 0 and builds_on(work[j, 0], nertz_top)
            mask[slide + n_work + j] = waste_top >= 0 and builds_on(work[j, 0], waste_top)
    _standard_blocks(piles, n_work, slide + 2 * n_work if under else slide, mask)


@njit(cache=True, inline="always")
def _pile_tops(work, work_len, n_work, piles) -> bool:
    """Each work pile's height, top rank and top colour (0 and 0 for a space) into ``piles``
    (``PILE_ROWS`` by at least ``n_work``); returns whether a pile is a space."""
    if n_work > MAX_WORK:
        raise ValueError("a player has at most 6 work piles")
    any_empty = False
    for i in range(n_work):
        h = np.int64(work_len[i])
        top = np.int64(work[i, h - 1]) if h > 0 else np.int64(-1)
        piles[PILE_HEIGHT, i] = h
        piles[PILE_RANK, i] = rank(top) if h > 0 else 0
        piles[PILE_RED, i] = red(top) if h > 0 else 0
        any_empty = any_empty or h == 0
    return any_empty


@njit(cache=True, inline="always")
def _standard_blocks(piles, n_work, first, mask):
    """R4.3, R4.4: blocks of ``n = 1 .. held`` cards from work pile ``i`` onto pile ``j != i``, 13
    rows per pair from ``first``: onto a space any block, else the block whose bottom builds on.
    A work pile is a run (R4.3: built down by one rank in alternating colours; the rules keep it
    so and ``checks.check_table`` refuses a restored table that is not), so the card ``t`` below
    the exposed one is ``t`` ranks above it, its colour flipped ``t`` times: of the blocks of a
    pile, only the one whose bottom is one rank below the target's top can build on it, and
    ``builds_on_ranked`` judges that one from the exposed card's rank and colour (``piles``,
    ``_pile_tops``). Written without a branch on the cards: the pair's row ``t`` (or its first,
    with False) is written either way."""
    a = first
    for i in range(n_work):
        held, low, low_red = piles[PILE_HEIGHT, i], piles[PILE_RANK, i], piles[PILE_RED, i]
        for j in range(n_work):
            if j == i:
                continue
            if piles[PILE_HEIGHT, j] == 0:
                for t in range(held):
                    mask[a + t] = True
            else:
                t = piles[PILE_RANK, j] - 1 - low  # the block of t + 1 cards has a bottom one rank below
                fits = (t >= 0) & (t < held)
                bottom_red = low_red ^ (t & 1)
                legal = fits & builds_on_ranked(low + t, bottom_red, piles[PILE_RANK, j], piles[PILE_RED, j])
                mask[a + (t if fits else 0)] = legal
            a += 13


@njit(cache=True, inline="always")
def _plan_mask(s, b, p, cfg, plan, mask):
    """Player ``p``'s mask into ``mask`` (zero): ``legal_row`` asked about every catalogue row of
    the plan's runs that could be legal (a run of block moves only about the blocks the source
    pile holds)."""
    n_work = cfg[C_WORK]
    tops = s.foundation_tops[b]
    nertz, nertz_len = s.nertz, s.nertz_len  # the targets of R4.8 (whole: raw, so no view is made)
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
        # legal_row's parts (core): each kind's run calls its own part, so each part compiles once
        # here rather than the whole legal_row once per kind. One legal_row call for every row
        # instead ran the games with options at 0.89-0.94x (benchmarks/results/
        # compare_single_legal_row_vs_ae3ae3b.json): the branch by kind per row costs more.
        if kind == TO_WORK and src >= WORK_SOURCE:
            held = np.int64(work_len[src - WORK_SOURCE])
            for t in range(min(np.int64(plan[g, 5]), held - n + 1)):
                card = moved_card(src, n + t, nertz_top, waste_top, work, work_len)
                mask[a + t] = card >= 0 and legal_onto_work(card, src, dst, n + t, work, work_len, cfg)
        elif kind == TO_WORK:
            card = moved_card(src, n, nertz_top, waste_top, work, work_len)
            mask[a] = card >= 0 and legal_onto_work(card, src, dst, n, work, work_len, cfg)
        elif kind == TO_FOUNDATION:
            card = moved_card(src, n, nertz_top, waste_top, work, work_len)
            mask[a] = card >= 0 and fits_foundation(card, tops)
        elif kind == UNDER:
            card = moved_card(src, n, nertz_top, waste_top, work, work_len)
            mask[a] = card >= 0 and legal_under(card, src, dst, work, work_len, any_empty, cfg)
        elif kind == TO_NERTZ:
            card = moved_card(src, n, nertz_top, waste_top, work, work_len)
            mask[a] = card >= 0 and legal_onto_nertz(card, dst, cfg, b, p, nertz, nertz_len)
        else:
            mask[a] = legal_without_card(kind, can_draw, nertz_top)
