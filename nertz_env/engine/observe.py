"""What each player sees (R9), and the full table for centralized critics.

An observation is one flat int8 vector, egocentric: the viewer's block first, then the other
players in seat order after the viewer. Its parts, in order, are named in ``constants`` (the
block, the viewer's memory, the shared table) and ``nertz_env.layout.ObservationLayout`` names
every slice from the same constants.

Speed: these functions run once per game per tick, so they read the table through ``raw`` views
(no reference counting) and write each observation row once: row 0 is built, then copied into
the other viewers' rows with the blocks rotated.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nertz_env.engine.constants import (
    BLOCK_CARD_PARTS_AFTER_WORK,
    BLOCK_CARD_PARTS_BEFORE_WORK,
    BLOCK_COUNTS,
    C_PLAYERS,
    C_TURN_BASED,
    C_WORK,
    DECK_SIZE,
    HIDDEN_NERTZ,
    HIDDEN_SIZE,
    HIDDEN_STOCK,
    HIDDEN_WASTE,
    INT8_MAX,
    MEMORY_SIZE,
    MEMORY_STOCK,
    MEMORY_STOCK_KNOWN,
    MEMORY_WASTE,
    SHARED_ROTATIONS,
    SHARED_SINCE_PROGRESS,
    SHARED_SIZE,
    SHARED_TOPS,
)
from nertz_env.engine.core import moves_take_time
from nertz_env.engine.match import tails_size, write_tails
from nertz_env.engine.state import AIR_CARD, AIR_KIND, AIR_TICKS
from nertz_env.engine.views import raw, raw_state

# ---------------------------------------------------------------------------------------------
# Offsets


@njit(cache=True, inline="always")
def block_size(n_work) -> int:
    """Per player: Nertz top, work piles, waste top, on-foundation (a card each) and the counts."""
    return DECK_SIZE * (BLOCK_CARD_PARTS_BEFORE_WORK + n_work + BLOCK_CARD_PARTS_AFTER_WORK) + BLOCK_COUNTS


@njit(cache=True, inline="always")
def memory_offset(n_players, n_work) -> int:
    return n_players * block_size(n_work)


@njit(cache=True, inline="always")
def global_offset(n_players, n_work) -> int:
    return memory_offset(n_players, n_work) + MEMORY_SIZE


@njit(cache=True, inline="always")
def timing_size(cfg) -> int:
    """The timing section at the end of observations and state vectors, present only with its
    options: who is on turn (``turn_based``, one flag per seat), then per player the ticks until
    their move in the air lands, its kind and its card + 1 (``move_ticks``)."""
    n = cfg[C_PLAYERS]
    return (n if cfg[C_TURN_BASED] != 0 else 0) + (3 * n if moves_take_time(cfg) else 0)


# ---------------------------------------------------------------------------------------------
# Observations (R9)


@njit(cache=True, inline="always")
def _zero(dst):
    for i in range(dst.shape[0]):  # indices from a range: no wraparound test, so one memset
        dst[i] = 0


@njit(cache=True, inline="always")
def _copy(dst, src):
    for i in range(dst.shape[0]):
        dst[i] = src[i]


@njit(cache=True, inline="always")
def _public_blocks(s, b, cfg, out):
    """Write every player's public block (R9) in seat order from ``out[0]`` (already zero)."""
    n_players, n_work = cfg[C_PLAYERS], cfg[C_WORK]
    blk = block_size(n_work)
    waste_top_part = DECK_SIZE * (BLOCK_CARD_PARTS_BEFORE_WORK + n_work)
    counts_part = blk - BLOCK_COUNTS
    nertz, nertz_len, work, work_len = s.nertz[b], s.nertz_len[b], s.work[b], s.work_len[b]
    waste, waste_len, stock_len, called = s.waste[b], s.waste_len[b], s.stock_len[b], s.called[b]
    for p in range(n_players):
        o = p * blk
        k = nertz_len[p]
        if k > 0:
            out[o + nertz[p, k - 1]] = 1
        for j in range(n_work):
            oj = o + DECK_SIZE * (BLOCK_CARD_PARTS_BEFORE_WORK + j)
            for h in range(work_len[p, j]):
                out[oj + work[p, j, h]] = 1
        k = waste_len[p]
        if k > 0:
            out[o + waste_top_part + waste[p, k - 1]] = 1
        c = o + counts_part
        out[c] = nertz_len[p]
        out[c + 1] = stock_len[p]
        out[c + 2] = k
        out[c + 3] = called[p]
    found, found_len = s.foundations[b], s.foundation_len[b]
    of = waste_top_part + DECK_SIZE  # the foundation part
    for f in range(s.n_foundations[b]):
        for h in range(found_len[f]):
            g = np.int64(found[f, h])
            out[(g // DECK_SIZE) * blk + of + g % DECK_SIZE] = 1  # R1: in the owner's block


@njit(cache=True, inline="always")
def _globals(s, b, out, o):
    tops = s.foundation_tops[b]
    for suit in range(4):
        for r in range(1, 14):
            out[o + SHARED_TOPS + suit * 13 + r - 1] = tops[suit, r]
    out[o + SHARED_SINCE_PROGRESS] = min(s.since_progress[b], INT8_MAX)
    out[o + SHARED_ROTATIONS] = min(s.rotations[b], INT8_MAX)


@njit(cache=True, inline="always")
def _timing(s, b, cfg, v, out, o):
    """The timing section (``timing_size``) from seat ``v`` on, at ``out[o:]``: entry ``q`` of each
    part is about seat ``(v + q) % P`` (egocentric for a viewer, seat order for ``v = 0``)."""
    n = cfg[C_PLAYERS]
    if cfg[C_TURN_BASED] != 0:  # R3: the seat on turn
        turn = s.tick[b] % n
        for q in range(n):
            out[o + q] = (v + q) % n == turn
        o += n
    if moves_take_time(cfg):  # each player's move in the air: public, the card is face up
        for q in range(n):
            p = (v + q) % n
            t = s.air[b, p, AIR_TICKS]
            out[o + q] = t
            out[o + n + q] = s.air[b, p, AIR_KIND] if t > 0 else 0
            out[o + 2 * n + q] = s.air[b, p, AIR_CARD] + 1 if t > 0 else 0


@njit(cache=True, inline="always")
def observe_game(s, b, cfg, out):
    """Write the observation of every player of game ``b`` into ``out[P, D]`` (an
    ``observe_span`` of one game)."""
    observe_span(s, b, cfg, out.reshape((1, out.shape[0], out.shape[1])))


@njit(cache=True)
def observe_span(s, first, cfg, obs):
    """Write the observations of each game ``first + i`` of a run of games into ``obs[i]``
    (``[P, D]``): one call per run, as ``tick.step_span``."""
    s = raw_state(s)
    obs = raw(obs)
    for i in range(obs.shape[0]):
        _observe_one(s, first + i, cfg, obs[i])


@njit(cache=True, inline="always")
def _observe_one(s, b, cfg, out):
    """``observe_game``'s body, on ``raw`` views."""
    n_players, n_work = cfg[C_PLAYERS], cfg[C_WORK]
    blk = block_size(n_work)
    mem = memory_offset(n_players, n_work)
    glo = global_offset(n_players, n_work)
    size = glo + SHARED_SIZE
    row = out[0]
    _zero(row[:size])
    _public_blocks(s, b, cfg, row)
    _globals(s, b, row, glo)
    for v in range(1, n_players):  # egocentric: the viewer first, then the next seats in order
        dst = out[v]
        for q in range(n_players):
            src = ((v + q) % n_players) * blk
            _copy(dst[q * blk : (q + 1) * blk], row[src : src + blk])
        _zero(dst[mem:glo])
        _copy(dst[glo:size], row[glo:size])
    waste, waste_len, stock, stock_len = s.waste[b], s.waste_len[b], s.stock[b], s.stock_len[b]
    for v in range(n_players):  # R9: what the viewer remembers of their own waste and stock
        dst = out[v]
        w = waste_len[v]
        for t in range(w):
            dst[mem + MEMORY_WASTE + waste[v, t]] = w - t  # 1 = the top
        if s.stock_known[b, v]:
            k = stock_len[v]
            for t in range(k):
                dst[mem + MEMORY_STOCK + stock[v, t]] = k - t  # 1 = the next card to turn
            dst[mem + MEMORY_STOCK_KNOWN] = 1
    if cfg[C_TURN_BASED] != 0 or moves_take_time(cfg):
        for v in range(n_players):
            _timing(s, b, cfg, v, out[v], size)
    if tails_size(cfg) > 0:  # R8: partners and match sections, per viewer, after the timing section
        for v in range(n_players):
            write_tails(s, b, cfg, v, out[v], size + timing_size(cfg))


@njit(cache=True)
def state_vector(s, b, cfg, out):
    """The whole table of game ``b`` in seat order, hidden cards included (for critics). Cards are
    by code, whoever owns them (R4.8); where a Nertz pile holds one code twice the upper shows."""
    s = raw_state(s)
    n_players, n_work = cfg[C_PLAYERS], cfg[C_WORK]
    mem = memory_offset(n_players, n_work)
    out[:] = 0
    _public_blocks(s, b, cfg, out)
    _globals(s, b, out, mem)
    o = mem + SHARED_SIZE
    for p in range(n_players):
        for t in range(s.nertz_len[b, p]):
            out[o + HIDDEN_NERTZ + s.nertz[b, p, t]] = t + 1  # 1 = the bottom
        k = s.stock_len[b, p]
        for t in range(k):
            out[o + HIDDEN_STOCK + s.stock[b, p, t]] = k - t  # 1 = the next card to turn
        w = s.waste_len[b, p]
        for t in range(w):
            out[o + HIDDEN_WASTE + s.waste[b, p, t]] = w - t  # 1 = the top
        o += HIDDEN_SIZE
    if cfg[C_TURN_BASED] != 0 or moves_take_time(cfg):
        _timing(s, b, cfg, 0, out, o)
    if tails_size(cfg) > 0:  # R8 sections as seat 0 sees them: players in seat order
        write_tails(s, b, cfg, 0, out, o + timing_size(cfg))
