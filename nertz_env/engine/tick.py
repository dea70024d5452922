"""One tick of RULES.md (R3, R5, R6, R7) as compiled functions over one game ``b`` of a batch.

``step`` first checks every player's action against the state at the start of the tick
(``nertz_env.engine.core``), then resolves the foundation races (R6) and, with ``nertz_builds``,
the races for the other players' Nertz piles (R4.8), then applies all moves together, then the
call, stall and length rules (R5) and the score (R7). No Python object is created per card or per
move.

With ``move_ticks`` (R3) a move that takes ``d > 1`` ticks is judged when it is made, is in the
air for the next ``d - 1`` ticks (its player may only WAIT) and resolves in the last of them,
judged again with that tick's other moves (R6 races included). Its card stays at its source until
it lands.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nertz_env.actions import CALL, DRAW, NERTZ, TO_FOUNDATION, TO_NERTZ, TO_WORK, UNDER, WAIT, WASTE, WORK_SOURCE
from nertz_env.config import (
    C_AUTO_CALL,
    C_BONUS,
    C_BUILDS,
    C_COLLISION_SEAT,
    C_DRAW,
    C_MAX_CYCLES,
    C_MAX_ROT,
    C_PENALTY,
    C_PLAYERS,
    C_STALL_TICKS,
    C_TICKS,
    C_TURN_BASED,
    C_WORK,
)
from nertz_env.engine.core import (
    legal_row,
    moves_take_time,
    player_view,
    rank,
    source_card,
    source_owner,
)
from nertz_env.engine.rng import uniform
from nertz_env.engine.state import (
    AIR_ACTION,
    AIR_CARD,
    AIR_KIND,
    AIR_TICKS,
    END_CALL,
    END_MAX_CYCLES,
    END_STALL,
    RUNNING,
)


@njit(cache=True, inline="always")
def pop_source(s, b, p, src):
    if src == NERTZ:
        s.nertz_len[b, p] -= 1
    elif src == WASTE:
        s.waste_len[b, p] -= 1
    else:
        s.work_len[b, p, src - WORK_SOURCE] -= 1


@njit(cache=True)
def draw(s, b, p, n_draw):
    """R4.1: turn up to ``n_draw`` cards one by one, or turn the waste over into a new stock."""
    k = s.stock_len[b, p]
    if k > 0:
        m = min(n_draw, k)
        w = s.waste_len[b, p]
        for t in range(m):
            s.waste[b, p, w + t] = s.stock[b, p, k - 1 - t]
        s.stock_len[b, p] = k - m
        s.waste_len[b, p] = w + m
    else:
        w = s.waste_len[b, p]
        for t in range(w):
            s.stock[b, p, t] = s.waste[b, p, w - 1 - t]
        s.stock_len[b, p] = w
        s.waste_len[b, p] = 0
        s.stock_known[b, p] = True  # R9: the owner has now seen every card of the stock


@njit(cache=True)
def rotate_stock(s, b, p):
    """R5 stall rule: the waste turned over goes under the stock, then the top card to the bottom."""
    k, w = s.stock_len[b, p], s.waste_len[b, p]
    n = k + w
    if n == 0:
        return
    buf = np.empty(n, np.int8)
    for t in range(w):
        buf[t] = s.waste[b, p, w - 1 - t]
    for t in range(k):
        buf[w + t] = s.stock[b, p, t]
    s.stock[b, p, 0] = buf[n - 1]
    for t in range(n - 1):
        s.stock[b, p, t + 1] = buf[t]
    s.stock_len[b, p] = n
    s.waste_len[b, p] = 0


@njit(cache=True)
def stall_limit(s, b, cfg) -> int:
    """R5: ticks for every player to turn through all of their stock and waste once from the table
    as it stands: a player with ``s`` cards in stock and ``w`` in the waste needs
    ``ceil(s/d) + 1 + ceil(w/d)`` DRAWs (the flip included); the most of any player, times the
    ticks between one DRAW and the next: ``move_ticks["draw"]``, rounded up to whole rounds of
    ``P`` ticks under ``turn_based`` (a player draws only on their turn). ``step`` measures it
    when progress last happened (``State.stall_cycle``)."""
    if cfg[C_STALL_TICKS] > 0:
        return cfg[C_STALL_TICKS]
    d = cfg[C_DRAW]
    most = 0
    for p in range(cfg[C_PLAYERS]):
        most = max(most, (s.stock_len[b, p] + d - 1) // d + 1 + (s.waste_len[b, p] + d - 1) // d)
    period = cfg[C_TICKS + DRAW]
    if cfg[C_TURN_BASED] != 0:
        period = (period + cfg[C_PLAYERS] - 1) // cfg[C_PLAYERS] * cfg[C_PLAYERS]
    return most * period


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
    kind, src, dst, pile, claimants, won, reach = buf[0], buf[1], buf[2], buf[5], buf[6], buf[7], buf[9]
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
            pick_winners(s, b, claimants, m, 1, cfg, speed, won)
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
    ``buf[10]`` (foundations score it, R7) and to its place in the destination pile, all on the
    start-of-tick piles as the card moves will find them (no one else touches a player's work piles,
    and a Nertz pile takes at most one build and none while its owner plays from it)."""
    kind, src, dst, cnt, pile, owner = buf[0], buf[1], buf[2], buf[3], buf[5], buf[10]
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
def moving_card(s, b, p, kind, src, n) -> int:
    """The card a move carries (the first card of a block), or -1 for DRAW, CALL and WAIT."""
    if kind < TO_FOUNDATION:
        return -1
    return source_card(s, b, p, src, n)


@njit(cache=True, inline="always")
def _land(s, b, p, cfg, table, kind, src, dst, cnt):
    """``move_ticks``: player ``p``'s move in the air lands now. It is judged again on the table at
    the start of the tick (R3) and must still carry the card it took off with; if it cannot land
    (its foundation pile was taken meanwhile), the card stays where it was, reported as a
    collision (R6). Otherwise it joins the tick's moves and their races."""
    a = s.air[b, p, AIR_ACTION]
    k_, s_, d_, n_ = table[a, 0], table[a, 1], table[a, 2], table[a, 3]
    s.air[b, p, AIR_TICKS] = 0
    nt, wt, work, wl, tops, can_draw, any_empty = player_view(s, b, p, cfg[C_WORK])
    if (
        legal_row(k_, s_, d_, n_, nt, wt, work, wl, tops, can_draw, any_empty, cfg, b, p, s.nertz, s.nertz_len)
        and moving_card(s, b, p, k_, s_, n_) == s.air[b, p, AIR_CARD]
    ):
        kind[p], src[p], dst[p], cnt[p] = k_, s_, d_, n_
    else:  # R4.8: a move that cannot land leaves its pile as it was (no source), open to builds
        s.collision[b, p] = True


@njit(cache=True, inline="always")
def _resolve(s, b, buf, cfg, speed) -> bool:
    """The foundation races (R6), the R4.8 build races, and then every move of the tick at once
    (R3), for the moves ``kind, src, dst, cnt`` in rows 0-3 of ``buf`` (the other rows are
    scratch, all zero). Returns whether any was progress (R5)."""
    n_players = cfg[C_PLAYERS]
    kind, src, dst, cnt, card = buf[0], buf[1], buf[2], buf[3], buf[4]
    pile, claimants, won, done, owner = buf[5], buf[6], buf[7], buf[8], buf[10]
    for p in range(n_players):
        owner[p] = p
    # R6: races for the same foundation card. Piles are chosen on the start-of-tick table, so
    # the assignment is made before any card lands.
    card[:] = -1
    pile[:] = -1
    for p in range(n_players):
        if kind[p] == TO_FOUNDATION:
            card[p] = source_card(s, b, p, src[p], 1)
    n_found = s.n_found[b]
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
        k = min(m, np.int64(s.found_tops[b, suit, below_rank]))
        if m > k:
            pick_winners(s, b, claimants, m, k, cfg, speed, won)
        else:
            for i in range(m):
                won[i] = True
        f = 0
        for i in range(m):  # winners in seat order take the matching piles in pile order
            q = claimants[i]
            if not won[i]:
                s.collision[b, q] = True
                kind[q] = WAIT
                continue
            s.won_race[b, q] = m > k
            while not (s.found_suit[b, f] == suit and s.found_len[b, f] == below_rank):
                f += 1
            pile[q] = f
            f += 1
    if cfg[C_BUILDS] != 0:  # R4.8: races for the other players' Nertz piles, then where each card's owner goes
        resolve_builds(s, b, buf, cfg, speed)
        move_owners(s, b, buf)

    # All moves resolve together (R3); each touches only its owner's layout and its own pile.
    progress = False
    for p in range(n_players):
        kp = kind[p]
        if kp == DRAW:
            draw(s, b, p, cfg[C_DRAW])
        elif kp == CALL:
            s.called[b, p] = True
        elif kp == TO_FOUNDATION:
            c = card[p]
            suit = c // 13
            if pile[p] < 0:  # R4.2: an ace starts a new pile
                f = n_found
                n_found += 1
                s.found_suit[b, f] = suit
            else:
                f = pile[p]
            h = s.found_len[b, f]
            s.found[b, f, h] = owner[p] * 52 + c  # R1: the card's owner, scored by R7
            s.found_tops[b, suit, h] -= 1 if h > 0 else 0
            s.found_len[b, f] = h + 1
            s.found_tops[b, suit, h + 1] += 1
            s.on_found[b, owner[p]] += 1
            pop_source(s, b, p, src[p])
            progress = True
        elif kp == TO_WORK:
            j, sp = dst[p], src[p]
            h = s.work_len[b, p, j]
            if sp >= WORK_SOURCE:  # a block of cnt cards keeps its order (work-to-work: no progress)
                i = sp - WORK_SOURCE
                hi = s.work_len[b, p, i]
                for t in range(cnt[p]):
                    s.work[b, p, j, h + t] = s.work[b, p, i, hi - cnt[p] + t]
                s.work_len[b, p, i] = hi - cnt[p]
                s.work_len[b, p, j] = h + cnt[p]
            else:
                s.work[b, p, j, h] = source_card(s, b, p, sp, 1)
                s.work_len[b, p, j] = h + 1
                pop_source(s, b, p, sp)
                progress = True
        elif kp == UNDER:  # R4.5
            j = dst[p]
            h = s.work_len[b, p, j]
            for t in range(h, 0, -1):
                s.work[b, p, j, t] = s.work[b, p, j, t - 1]
            s.work[b, p, j, 0] = source_card(s, b, p, src[p], 1)
            s.work_len[b, p, j] = h + 1
            pop_source(s, b, p, src[p])
            progress = True
        elif kp == TO_NERTZ:  # R4.8: onto seat pile[p]'s Nertz pile (its owner is already there)
            t = pile[p]
            h = s.nertz_len[b, t]
            s.nertz[b, t, h] = source_card(s, b, p, src[p], 1)
            s.nertz_len[b, t] = h + 1
            pop_source(s, b, p, src[p])
            progress = True  # R5 reading: a build is progress (like a card leaving a Nertz pile or the waste)
    s.n_found[b] = n_found
    return progress


@njit(cache=True, inline="always")
def _score(s, b, cfg) -> bool:
    """R4.6 auto_call and the R7 running score; returns whether anyone has called."""
    any_call = False
    for p in range(cfg[C_PLAYERS]):
        if cfg[C_AUTO_CALL] != 0 and s.nertz_len[b, p] == 0:  # R4.6 auto_call
            s.called[b, p] = True
        any_call = any_call or s.called[b, p]
        s.score[b, p] = (  # R7
            s.on_found[b, p] - cfg[C_PENALTY] * s.nertz_len[b, p] + (cfg[C_BONUS] if s.called[b, p] else 0)
        )
    return any_call


@njit(cache=True, inline="always")
def _progress_in_air(s, b, table, n_players) -> bool:
    """``move_ticks``: a move in the air that may be progress when it lands (R5), or a call."""
    for p in range(n_players):
        if s.air[b, p, AIR_TICKS] > 0:
            a = s.air[b, p, AIR_ACTION]
            if s.air[b, p, AIR_KIND] != DRAW and not (s.air[b, p, AIR_KIND] == TO_WORK and table[a, 1] >= WORK_SOURCE):
                return True
    return False


@njit(cache=True, inline="always")
def _tick_buffer(n_players):
    """``step``'s scratch rows (see there), all zero but the sources: a player with no move has
    none (-1), so only a move from a Nertz pile keeps builds off it (R4.8), whoever waits,
    acted illegally or could not land."""
    buf = np.zeros((11, n_players), np.int64)
    buf[1, :] = -1
    return buf


@njit(cache=True)
def _land_all(s, b, cfg, table, speed):
    """R5 "cards in the air complete their move": when the hand ends, every move still in the air
    lands at the end of the final tick, judged on the table the tick's own moves left, racing one
    another by R6. A call among them counts, and so does a Nertz pile they empty under auto_call."""
    buf = _tick_buffer(cfg[C_PLAYERS])  # only the landing moves play from a pile now
    landing = False
    for p in range(cfg[C_PLAYERS]):
        if s.air[b, p, AIR_TICKS] > 0:
            _land(s, b, p, cfg, table, buf[0], buf[1], buf[2], buf[3])
            landing = True
    if landing:
        _resolve(s, b, buf, cfg, speed)
        if _score(s, b, cfg):
            s.ended[b] = END_CALL


@njit(cache=True)
def step(s, b, actions, cfg, table, speed):
    """Resolve one tick of game ``b``; ``actions[p]`` indexes the catalogue ``table``."""
    n_players = cfg[C_PLAYERS]
    for p in range(n_players):
        s.collision[b, p] = False
        s.won_race[b, p] = False
        s.illegal[b, p] = False
    if s.ended[b] != RUNNING:
        return
    if s.stall_cycle[b] == 0:  # R5: the hand's first tick measures the cycle on the dealt table
        s.stall_cycle[b] = stall_limit(s, b, cfg)
    n_actions = table.shape[0]
    # One scratch allocation per tick: kind, src, dst, cnt, card, pile, claimants, won/done flags,
    # and for R4.8 who plays from their own Nertz pile and the owner of each moving card.
    buf = _tick_buffer(n_players)
    kind, src, dst, cnt = buf[0], buf[1], buf[2], buf[3]
    nertz, nertz_len = s.nertz, s.nertz_len  # R4.8 targets, read once (no view, no count per player)
    timed = moves_take_time(cfg)
    turn = s.tick[b] % n_players if cfg[C_TURN_BASED] != 0 else -1
    # R3: every action is judged on the state at the start of the tick; illegal ones are WAIT.
    for p in range(n_players):
        a = actions[p]
        if s.air[b, p, AIR_TICKS] > 0:  # move_ticks: only WAIT while the move is in the air
            if a < 0 or a >= n_actions or table[a, 0] != WAIT:
                s.illegal[b, p] = True
            if s.air[b, p, AIR_TICKS] == 1:
                _land(s, b, p, cfg, table, kind, src, dst, cnt)
            else:
                s.air[b, p, AIR_TICKS] -= 1
            continue
        if a < 0 or a >= n_actions:
            s.illegal[b, p] = True
            continue
        k_, s_, d_, n_ = table[a, 0], table[a, 1], table[a, 2], table[a, 3]
        if p != turn and turn >= 0 and k_ != WAIT:  # R3 turn_based: off turn only WAIT
            s.illegal[b, p] = True
            continue
        # The rule is legal_row's; the player's view is read here rather than through legal(s, ...),
        # whose passing of the whole state costs more than the check itself.
        nt, wt, work, wl, tops, can_draw, any_empty = player_view(s, b, p, cfg[C_WORK])
        if not legal_row(k_, s_, d_, n_, nt, wt, work, wl, tops, can_draw, any_empty, cfg, b, p, nertz, nertz_len):
            s.illegal[b, p] = True
        elif timed and cfg[C_TICKS + k_] > 1:  # move_ticks: it takes off now and lands later
            s.air[b, p, AIR_TICKS] = cfg[C_TICKS + k_] - 1
            s.air[b, p, AIR_ACTION] = a
            s.air[b, p, AIR_KIND] = k_
            s.air[b, p, AIR_CARD] = moving_card(s, b, p, k_, s_, n_)
        else:
            kind[p], src[p], dst[p], cnt[p] = k_, s_, d_, n_

    progress = _resolve(s, b, buf, cfg, speed)
    s.tick[b] += 1

    if _score(s, b, cfg):  # R5: the hand ends at the end of the tick of the call
        s.ended[b] = END_CALL
    elif progress:
        s.since_progress[b] = 0
        s.rotations[b] = 0
        s.stall_cycle[b] = stall_limit(s, b, cfg)  # R5: the cycle from where everyone stands now
    else:
        s.since_progress[b] += 1
        # R5 stall. With move_ticks it waits for every move in the air that may be progress, so a
        # rotation never strands a card in the air (a DRAW in the air turns the rotated stock).
        if s.since_progress[b] >= s.stall_cycle[b] and not (timed and _progress_in_air(s, b, table, n_players)):
            if s.rotations[b] >= cfg[C_MAX_ROT]:
                s.ended[b] = END_STALL
            else:
                for p in range(n_players):
                    rotate_stock(s, b, p)
                s.rotations[b] += 1
                s.since_progress[b] = 0
                s.stall_cycle[b] = stall_limit(s, b, cfg)
    if s.ended[b] == RUNNING and s.tick[b] >= cfg[C_MAX_CYCLES]:  # R5: truncation
        s.ended[b] = END_MAX_CYCLES
    if timed and s.ended[b] != RUNNING:
        _land_all(s, b, cfg, table, speed)
