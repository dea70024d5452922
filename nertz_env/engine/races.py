"""The races of a tick (R6, R4.8), decided on the table at the start of the tick (R3) before any
card moves: who of several players reaching for the same foundation card, or building onto the
same Nertz pile, succeeds. They work on the tick's scratch rows (``constants.KIND`` ...).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nertz_env.engine.constants import (
    C_COLLISION_SEAT,
    C_PLAYERS,
    CARD,
    CLAIMANTS,
    COUNT,
    DEST,
    DONE,
    KIND,
    NERTZ,
    OWNER,
    PILE,
    REACH,
    SOURCE,
    TO_FOUNDATION,
    TO_NERTZ,
    TO_WORK,
    UNDER,
    WAIT,
    WON,
    WORK_SOURCE,
)
from nertz_env.engine.core import rank, source_card, source_owner
from nertz_env.engine.rng import uniform


@njit(cache=True)
def pick_winners(s, b, claimants, m, k, cfg, speed, won):
    """R6: choose ``k`` of the ``m`` claimants; ``won[i]`` marks claimant ``claimants[i]``."""
    for i in range(m):
        won[i] = False
    if cfg[C_COLLISION_SEAT] != 0:  # claimants are listed in seat order: lower seats win
        for i in range(k):
            won[i] = True
        return
    for _ in range(k):  # weighted draws without replacement from the game's stream
        total = 0.0
        for i in range(m):
            if not won[i]:
                total += speed[claimants[i]]
        x = uniform(s.rng, b) * total
        chosen = -1
        for i in range(m):
            if not won[i]:
                chosen = i
                x -= speed[claimants[i]]
                if x < 0.0:
                    break
        won[chosen] = True


@njit(cache=True)
def resolve_builds(s, b, buf, cfg, speed):
    """R4.8 races, on the start-of-tick table (R3). A Nertz pile takes no build in a tick in which
    its owner plays from it (``reach``: any legal move of their Nertz top, whether or not it then
    wins its own race): the owner's hand is on the pile, so every build onto it fails. Otherwise,
    of several builds onto one pile one wins, chosen as in R6 (``collision``), since the first
    card to land changes the top. The losers keep their cards and get the collision flag. Targets
    are settled in seat order, so a random race draws from the game's stream after the R6 races.
    ``buf`` is ``step``'s scratch: the winner's seat goes to ``pile``, failed builds become WAIT in
    ``kind``."""
    kind, src, dst, pile = buf[KIND], buf[SOURCE], buf[DEST], buf[PILE]
    claimants, won, reach = buf[CLAIMANTS], buf[WON], buf[REACH]
    n_players = cfg[C_PLAYERS]
    for t in range(n_players):  # a legal card move from the Nertz pile; R6 losers are WAIT now, flagged
        moves = kind[t] == TO_FOUNDATION or kind[t] == TO_WORK or kind[t] == UNDER or kind[t] == TO_NERTZ
        reach[t] = src[t] == NERTZ and (moves or s.collision[b, t])
    for t in range(n_players):
        m = 0
        for q in range(n_players):
            if kind[q] == TO_NERTZ and (q + dst[q]) % n_players == t:
                claimants[m] = q
                m += 1
        if m == 0:
            continue
        if reach[t]:
            for i in range(m):
                won[i] = False
        elif m > 1:
            pick_winners(s, b, claimants, np.int64(m), np.int64(1), cfg, speed, won)  # int64: one compile
        else:
            won[0] = True
        for i in range(m):
            q = claimants[i]
            if won[i]:
                s.won_race[b, q] = m > 1
                pile[q] = t
            else:
                s.collision[b, q] = True
                kind[q] = WAIT


@njit(cache=True)
def move_owners(s, b, buf):
    """R1 under R4.8: before the cards of the tick move, the owner of each moving card goes to
    ``buf[OWNER]`` (foundations score it, R7) and to its place in the destination pile, all on the
    start-of-tick piles as the card moves will find them (no one else touches a player's work piles,
    and a Nertz pile takes at most one build and none while its owner plays from it)."""
    kind, src, dst, cnt, pile, owner = buf[KIND], buf[SOURCE], buf[DEST], buf[COUNT], buf[PILE], buf[OWNER]
    for p in range(kind.shape[0]):
        kp, sp = kind[p], src[p]
        if kp in (TO_FOUNDATION, TO_NERTZ, UNDER) or (kp == TO_WORK and sp < WORK_SOURCE):
            owner[p] = source_owner(s, b, p, sp, 1)
        if kp == TO_WORK:
            j = dst[p]
            h = s.work_len[b, p, j]
            if sp >= WORK_SOURCE:  # a block keeps its owners in order
                i, n = sp - WORK_SOURCE, cnt[p]
                hi = s.work_len[b, p, i]
                for t in range(n):
                    s.work_owner[b, p, j, h + t] = s.work_owner[b, p, i, hi - n + t]
            else:
                s.work_owner[b, p, j, h] = owner[p]
        elif kp == UNDER:
            j = dst[p]
            for t in range(s.work_len[b, p, j], 0, -1):
                s.work_owner[b, p, j, t] = s.work_owner[b, p, j, t - 1]
            s.work_owner[b, p, j, 0] = owner[p]
        elif kp == TO_NERTZ:
            t = pile[p]
            s.nertz_owner[b, t, s.nertz_len[b, t]] = owner[p]


@njit(cache=True, inline="always")
def foundation_races(s, b, buf, cfg, speed):
    """R6: races for the same foundation card. Piles are chosen on the start-of-tick table, so the
    assignment is made before any card lands: winners in seat order take the matching piles in
    pile order (``buf[PILE]``; -1 for an ace, which starts a new pile); losers keep their card,
    get the collision flag and WAIT."""
    n_players = cfg[C_PLAYERS]
    kind, src, card, pile = buf[KIND], buf[SOURCE], buf[CARD], buf[PILE]
    claimants, won, done = buf[CLAIMANTS], buf[WON], buf[DONE]
    card[:] = -1
    pile[:] = -1
    for p in range(n_players):
        if kind[p] == TO_FOUNDATION:
            card[p] = source_card(s, b, p, src[p], 1)
    for p in range(n_players):
        if card[p] < 0 or done[p] or rank(card[p]) == 1:  # R6: aces never collide
            continue
        m = 0
        for q in range(p, n_players):
            if card[q] >= 0 and not done[q] and card[q] == card[p]:
                claimants[m] = q
                m += 1
                done[q] = True
        suit, below_rank = card[p] // 13, rank(card[p]) - 1
        k = min(m, np.int64(s.foundation_tops[b, suit, below_rank]))
        if m > k:
            pick_winners(s, b, claimants, np.int64(m), np.int64(k), cfg, speed, won)  # int64: one compile
        else:
            for i in range(m):
                won[i] = True
        f = 0
        for i in range(m):
            q = claimants[i]
            if not won[i]:
                s.collision[b, q] = True
                kind[q] = WAIT
                continue
            s.won_race[b, q] = m > k
            while not (s.foundation_suit[b, f] == suit and s.foundation_len[b, f] == below_rank):
                f += 1
            pile[q] = f
            f += 1
