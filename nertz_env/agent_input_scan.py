"""The compiled scan behind ``check_agent_inputs.AgentInputCheck``: what the agents' kernels assume
of the rows they are handed.

An observation (R9) and its action mask (R10) reach the agents, the move features of trained
policies (``agents.features``) and the determinisations of a search (``agents.determinise``); all
of them index arrays with the cards, pile lengths and counts they read there. So a batch is
checked first, in one compiled pass (``scan_agent_inputs``), for being something a table can show:
values inside the observation space, masks of 0 and 1 with a legal action, at most one Nertz top and
one waste top per player and each shown exactly when its pile holds cards, work piles that are runs
(R4.3), the viewer's memory of its waste and (once known) its stock numbering exactly their cards,
the waste top the card that memory puts on top, each card of a deck in one place and every deck's
52 cards counted (R1), ``foundation_tops`` the piles the players' foundation parts show (R4.2), and
every move the mask allows having its card and its room. The scan only finds the first problem;
``AgentInputCheck`` words it (a ``ValueError`` naming the row, the part and what is accepted).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nertz_env import engine

# What ``scan_agent_inputs`` found wrong (0: nothing), as (code, row, index).
(BAD_VALUE, BAD_MASK, NO_LEGAL, TWO_TOPS, NOT_A_RUN, BAD_WASTE, NO_SOURCE, NO_ROOM, BAD_STOCK, TOP_COUNT, WASTE_TOP,
 CARD_TWICE, CARD_COUNT, TABLE_COUNT, TOPS_OVER, TOPS_DIFFER) = range(1, 17)  # fmt: skip
# Positions in the ``parts`` vector the scan reads: the sizes, the offsets of the viewer's block
# (player ``q``'s parts lie ``q * block`` further: the layout is egocentric), memory and shared parts.
(P_BLOCK, P_PLAYERS, P_WORK, P_BUILDS, P_NERTZ_TOP, P_WORK0, P_WASTE_TOP, P_FOUNDATION, P_NERTZ_COUNT, P_STOCK_COUNT,
 P_WASTE_COUNT, P_WASTE_ORDER, P_STOCK_ORDER, P_STOCK_KNOWN, P_TOPS) = range(15)  # fmt: skip
DECK = 52


@njit(cache=True)
def _values_and_mask(o, m, high):
    """``(code, index)`` of the first value outside the space, mask entry not 0 or 1, or no legal action."""
    outside = False
    for d in range(o.shape[0]):  # branch-free, so that it vectorizes
        outside |= (o[d] < 0) | (o[d] > high[d])
    if outside:
        for d in range(o.shape[0]):
            if o[d] < 0 or o[d] > high[d]:
                return BAD_VALUE, d
    not_01, legal = False, 0
    for a in range(m.shape[0]):
        not_01 |= (m[a] != 0) & (m[a] != 1)
        legal += m[a] == 1
    if not_01:
        for a in range(m.shape[0]):
            if m[a] != 0 and m[a] != 1:
                return BAD_MASK, a
    if legal == 0:
        return NO_LEGAL, 0
    return 0, -1


@njit(cache=True)
def _bits(o, start):
    """The cards the card part at ``o[start:start + 52]`` marks, as the bits of an int64 (card c: bit c)."""
    bits, at = np.int64(0), np.uint64(start)  # an unsigned index needs no wraparound test: it vectorizes
    for c in range(DECK):
        bits |= np.int64(o[at + np.uint64(c)] != 0) << c
    return bits


@njit(cache=True)
def _count(bits) -> int:
    """How many bits are set (SWAR popcount; 52 bits, so never the sign bit)."""
    bits = bits - ((bits >> 1) & 0x5555555555555555)
    bits = (bits & 0x3333333333333333) + ((bits >> 2) & 0x3333333333333333)
    bits = (bits + (bits >> 4)) & 0x0F0F0F0F0F0F0F0F
    return (bits * 0x0101010101010101) >> 56


@njit(cache=True)
def _run_length(bits) -> int:
    """The length of a work pile (its cards as ``_bits``) if it is a run built down by one rank in
    alternating colours (R4.3, so at most 13 cards), else -1: one card a rank, ranks with no gap,
    no two neighbours of one colour (bit r of each suit's 13 bits: rank r + 1)."""
    ranks = np.int64(0x1FFF)
    clubs, diamonds, hearts, spades = bits & ranks, (bits >> 13) & ranks, (bits >> 26) & ranks, (bits >> 39) & ranks
    red, black = diamonds | hearts, clubs | spades
    held = red | black
    twice = (clubs & spades) | (diamonds & hearts) | (red & black)  # two cards of one rank
    gap = (held + (held & -held)) & held  # 0 exactly when the ranks held are consecutive
    same_colour = (red & (red >> 1)) | (black & (black >> 1))
    return -1 if twice | gap | same_colour else _count(held)


@njit(cache=True)
def _second_place(o, parts, q, card) -> int:
    """The index of ``card`` in the second of block ``q``'s card parts that shows it, in the order
    ``_blocks`` reads them: foundation, waste top, Nertz top, work piles."""
    base, seen = q * parts[P_BLOCK], False
    for k in range(3 + parts[P_WORK]):
        start = parts[P_WORK0] + DECK * (k - 3) if k >= 3 else parts[(P_FOUNDATION, P_WASTE_TOP, P_NERTZ_TOP)[k]]
        if o[base + start + card] != 0:
            if seen:
                return base + start + card
            seen = True
    return base + parts[P_FOUNDATION] + card


@njit(cache=True)
def _lowest(bits) -> int:
    """The lowest set bit's card."""
    c = 0
    while ((bits >> c) & 1) == 0:
        c += 1
    return c


@njit(cache=True)
def _blocks(o, parts, lens, found):
    """Every block's Nertz and waste top (one card at most, shown exactly when its count is above
    0), work piles (runs; their lengths into ``lens[q * work + j]``), each card in one of its parts
    (R1; with R4.8 builds only the waste top and foundation are the owner's alone) and its cards
    counted (``_counts``); each block's foundation cards into ``found[q]``."""
    block, w, builds = parts[P_BLOCK], parts[P_WORK], parts[P_BUILDS] != 0
    for q in range(parts[P_PLAYERS]):
        base = q * block
        nb, wb = _bits(o, base + parts[P_NERTZ_TOP]), _bits(o, base + parts[P_WASTE_TOP])
        if (nb & (nb - 1)) != 0 or (wb & (wb - 1)) != 0:
            return TWO_TOPS, base + parts[P_NERTZ_TOP if (nb & (nb - 1)) != 0 else P_WASTE_TOP]
        if (nb != 0) != (o[base + parts[P_NERTZ_COUNT]] > 0):
            return TOP_COUNT, base + parts[P_NERTZ_TOP]
        if (wb != 0) != (o[base + parts[P_WASTE_COUNT]] > 0):
            return TOP_COUNT, base + parts[P_WASTE_TOP]
        fb = _bits(o, base + parts[P_FOUNDATION])
        seen, twice = fb | wb, fb & wb
        if not builds:
            twice |= seen & nb
            seen |= nb
        for j in range(w):
            bits = _bits(o, base + parts[P_WORK0] + DECK * j)
            n = _run_length(bits)
            if n < 0:
                return NOT_A_RUN, base + parts[P_WORK0] + DECK * j
            lens[q * w + j] = n
            if not builds:
                twice |= seen & bits
                seen |= bits
        if twice != 0:
            return CARD_TWICE, _second_place(o, parts, q, _lowest(twice))
        found[q] = fb
    return _counts(o, parts, lens, found)


@njit(cache=True)
def _counts(o, parts, lens, found):
    """Every deck's 52 cards counted (R1): each block's piles hold its owner's 52; with R4.8 builds
    (Nertz and work piles may hold any deck's cards) the stock, waste and foundation of each at
    most 52, and all the blocks' piles the decks' ``52 * P``."""
    block, w, p = parts[P_BLOCK], parts[P_WORK], parts[P_PLAYERS]
    total = 0
    for q in range(p):
        base = q * block
        own = np.int64(o[base + parts[P_STOCK_COUNT]]) + o[base + parts[P_WASTE_COUNT]] + _count(found[q])
        layout = np.int64(o[base + parts[P_NERTZ_COUNT]])
        for j in range(w):
            layout += lens[q * w + j]
        if (parts[P_BUILDS] == 0 and own + layout != DECK) or own > DECK:
            return CARD_COUNT, base + parts[P_NERTZ_COUNT]
        total += own + layout
    if total != DECK * p:
        return TABLE_COUNT, parts[P_NERTZ_COUNT]
    return 0, -1


@njit(cache=True)
def _memory(o, order, n):
    """The cards the memory part at ``order`` numbers (as ``_bits``) if it numbers ``n`` cards
    ``1..n``, each number once (R9), else -1."""
    cards, numbers = np.int64(0), np.int64(0)
    for c in range(DECK):
        v = np.int64(o[order + c])
        if v > 0:
            if v > n or ((numbers >> v) & 1) != 0:
                return np.int64(-1)
            numbers |= np.int64(1) << v
            cards |= np.int64(1) << c
    return cards if _count(cards) == n else np.int64(-1)


@njit(cache=True)
def _viewer_memory(o, parts, found):
    """The viewer's memory (R9): its waste numbered ``1..waste_count`` with the waste top first, its
    stock numbered ``1..stock_count`` once ``own_stock_known`` (else nothing), and neither card in
    another place of the viewer's (R1)."""
    waste = _memory(o, parts[P_WASTE_ORDER], np.int64(o[parts[P_WASTE_COUNT]]))
    if waste < 0:
        return BAD_WASTE, parts[P_WASTE_ORDER]
    known = o[parts[P_STOCK_KNOWN]] != 0
    stock = _memory(o, parts[P_STOCK_ORDER], np.int64(o[parts[P_STOCK_COUNT]]) if known else np.int64(0))
    if stock < 0:
        return BAD_STOCK, parts[P_STOCK_ORDER]
    top = _bits(o, parts[P_WASTE_TOP])
    if top != 0 and o[parts[P_WASTE_ORDER] + _lowest(top)] != 1:
        return WASTE_TOP, parts[P_WASTE_TOP]
    others = found[0]
    if parts[P_BUILDS] == 0:
        others |= _bits(o, parts[P_NERTZ_TOP])
        for j in range(parts[P_WORK]):
            others |= _bits(o, parts[P_WORK0] + DECK * j)
    if (waste & (stock | others)) != 0:
        return CARD_TWICE, parts[P_WASTE_ORDER] + _lowest(waste & (stock | others))
    if (stock & others) != 0:
        return CARD_TWICE, parts[P_STOCK_ORDER] + _lowest(stock & others)
    return 0, -1


@njit(cache=True)
def _mask_moves(o, m, parts, lens, table):
    """The first move ``m`` allows whose card is not there or whose destination has no room."""
    has_top, w = _bits(o, parts[P_NERTZ_TOP]) != 0, o[parts[P_WASTE_COUNT]]
    for a in range(m.shape[0]):
        kind, src, dst, cnt = table[a, 0], table[a, 1], table[a, 2], max(table[a, 3], 1)
        if m[a] == 0 or kind < 3:  # WAIT, DRAW and CALL move no card
            continue
        if (src == 0 and not has_top) or (src == 1 and w == 0) or (src >= 2 and lens[src - 2] < cnt):
            return NO_SOURCE, a
        if (kind == 4 and lens[dst] + cnt > 13) or (kind == 5 and lens[dst] + 1 > 13):
            return NO_ROOM, a
    return 0, -1


@njit(cache=True)
def _foundations(o, parts, found):
    """``foundation_tops`` as the foundation parts give them (R4.2): a pile holds its suit from the
    ace up to its top, so the cards of a rank shown on foundations are the piles reaching it, and a
    suit has at most one pile per deck (its ace)."""
    p, tops = parts[P_PLAYERS], parts[P_TOPS]
    for suit in range(4):
        piles = np.int64(0)
        for r in range(13):
            piles += o[tops + suit * 13 + r]
        if piles > p:
            return TOPS_OVER, tops + suit * 13
        piles = 0
        for r in range(12, -1, -1):  # the piles reaching rank r + 1: those whose top is that or higher
            piles += o[tops + suit * 13 + r]
            shown = 0
            for q in range(p):
                shown += (found[q] >> (suit * 13 + r)) & 1
            if shown != piles:
                return TOPS_DIFFER, tops + suit * 13 + r
    return 0, -1


@njit(cache=True)
def scan_agent_inputs(obs, masks, high, parts, table):
    """The first problem of a batch of agent inputs as ``(code, row, index)``, or ``(0, -1, -1)``.
    Reads only inside the arrays it is given (their shapes are checked before the call)."""
    lens = np.zeros(parts[P_PLAYERS] * parts[P_WORK], np.int64)
    found = np.zeros(parts[P_PLAYERS], np.int64)  # each block's foundation cards, as _bits
    for row in range(obs.shape[0]):
        o, m = obs[row], masks[row]
        code, index = _values_and_mask(o, m, high)
        if code == 0:
            code, index = _blocks(o, parts, lens, found)
        if code == 0:
            code, index = _viewer_memory(o, parts, found)
        if code == 0:
            code, index = _mask_moves(o, m, parts, lens, table)
        if code == 0:
            code, index = _foundations(o, parts, found)
        if code != 0:
            return code, row, index
    return 0, -1, -1


engine.stamp_compiled(globals())  # an edit to the engine recompiles the scan too
