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
from numba import carray, njit

from nertz_env.engine.cache import python_of, twin
from nertz_env.engine.constants import (
    C_AUTO_CALL,
    C_BONUS,
    C_BUILDS,
    C_DRAW,
    C_MAX_CYCLES,
    C_MAX_ROT,
    C_NERTZ,
    C_PENALTY,
    C_PLAYERS,
    C_STALL_TICKS,
    C_TICKS,
    C_TURN_BASED,
    C_WORK,
    CALL,
    COUNT,
    DEST,
    DRAW,
    KIND,
    MAX_SEATS,
    OWNER,
    PILE,
    SCRATCH_ROWS,
    SCRATCH_SIZE,
    SOURCE,
    T_COUNT,
    T_DEST,
    T_KIND,
    T_SOURCE,
    TO_FOUNDATION,
    TO_NERTZ,
    TO_WORK,
    WAIT,
    WORK_SOURCE,
)
from nertz_env.engine.core import (
    legal_row,
    moves_take_time,
    player_view,
    r7_score,
    source_card,
)
from nertz_env.engine.moves import draw, lay_on_foundation_tops, play_own_move, rotate_stock
from nertz_env.engine.races import foundation_races, move_owners, resolve_builds
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
from nertz_env.engine.views import raw, raw_state, stack_int64


@njit(cache=True, inline="always")
def _draws(cards, d) -> np.int64:
    """``ceil(cards / d)``: the DRAWs that turn ``cards`` (>= 0) over ``d`` at a time (R4.1), by a
    constant divisor for the draws of the rules (3 or 1)."""
    n = np.int64(cards)
    if d == 3:
        return (n + 2) // 3
    if d == 1:
        return n
    return (n + d - 1) // d


@njit(cache=True, inline="always")
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
        most = max(most, _draws(s.stock_len[b, p], d) + 1 + _draws(s.waste_len[b, p], d))
    return most * draw_period(cfg)


@njit(cache=True, inline="always")
def draw_period(cfg) -> int:
    """R5: the ticks between one DRAW of a player and their next: ``move_ticks["draw"]``, rounded
    up to whole rounds of ``P`` ticks under ``turn_based`` (a player draws only on their turn)."""
    period = cfg[C_TICKS + DRAW]
    if cfg[C_TURN_BASED] != 0:
        period = (period + cfg[C_PLAYERS] - 1) // cfg[C_PLAYERS] * cfg[C_PLAYERS]
    return period


def stall_ceiling(cfg) -> int:
    """The most ``stall_limit`` can give under ``cfg`` (``NertzConfig.packed``): ``stall_ticks``, or
    with ``"auto"`` a bound on any table's cycle, the 52 cards of a deck in stock and waste turned
    through twice, plus the flip, at ``draw_period``. For checking saved tables, not for play."""
    if cfg[C_STALL_TICKS] > 0:
        return int(cfg[C_STALL_TICKS])
    draws = python_of(_draws)
    return int((2 * draws(52, int(cfg[C_DRAW])) + 1) * python_of(draw_period)(cfg))


def first_known_stock_tick(cfg, seat: int, ended: bool) -> int:
    """R9: the earliest tick of a hand at which ``seat`` can know their stock (``stock_known``, set
    only by the DRAW that turns the waste over into a new stock, R4.1). The deal leaves ``52 -
    nertz - work`` cards in the stock (R2), which loses at most ``stock_draw`` per DRAW (a stall
    rotation, R5, only adds to it), so the turn-over is DRAW ``_draws(stock) + 1``; DRAWs come
    ``draw_period`` apart from the seat's first turn (tick ``seat`` under ``turn_based``, R3) and
    land ``move_ticks["draw"]`` ticks after they start, or at the end of the hand's last tick (R5).
    For checking saved tables, not for play."""
    stock = 52 - int(cfg[C_NERTZ]) - int(cfg[C_WORK])
    draws = int(python_of(_draws)(stock, int(cfg[C_DRAW]))) + 1
    first = seat if cfg[C_TURN_BASED] != 0 else 0
    landing = 1 if ended else int(cfg[C_TICKS + DRAW])
    return first + (draws - 1) * int(python_of(draw_period)(cfg)) + landing


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
    move_kind, move_src = table[a, T_KIND], table[a, T_SOURCE]
    move_dst, move_count = table[a, T_DEST], table[a, T_COUNT]
    s.air[b, p, AIR_TICKS] = 0
    nertz_top, waste_top, work, work_len, tops, can_draw, any_empty = player_view(s, b, p, cfg[C_WORK])
    if (
        legal_row(
            move_kind, move_src, move_dst, move_count, nertz_top, waste_top, work, work_len, tops, can_draw, any_empty,
            cfg, b, p, s.nertz, s.nertz_len
        )
        and moving_card(s, b, p, move_kind, move_src, move_count) == s.air[b, p, AIR_CARD]
    ):
        kind[p], src[p], dst[p], cnt[p] = move_kind, move_src, move_dst, move_count
    else:  # R4.8: a move that cannot land leaves its pile as it was (no source), open to builds
        s.collision[b, p] = True


@njit(cache=True, inline="always")
def _apply_moves(s, b, buf, cfg) -> bool:
    """Every move of the tick at once (R3): each changes only its owner's layout (the effects of
    ``moves``) and its own foundation pile or Nertz pile (R4.2, R4.8). Returns whether any was
    progress (R5): a card leaving a Nertz pile or the waste, or a card to a foundation."""
    kind, src, dst, cnt, pile, owner = buf[KIND], buf[SOURCE], buf[DEST], buf[COUNT], buf[PILE], buf[OWNER]
    n_found = s.n_foundations[b]
    progress = False
    for p in range(cfg[C_PLAYERS]):
        kp = kind[p]
        if kp == DRAW:
            draw(s.stock[b], s.stock_len[b], s.waste[b], s.waste_len[b], s.stock_known[b], p, cfg[C_DRAW])
        elif kp == CALL:
            s.called[b, p] = True
        elif kp != WAIT:
            card = play_own_move(
                kp, src[p], dst[p], cnt[p], s.nertz[b, p], s.nertz_len[b], s.waste[b, p], s.waste_len[b], p,
                s.work[b, p], s.work_len[b, p],
            )  # fmt: skip
            if kp == TO_FOUNDATION:
                f = pile[p]
                if f < 0:  # R4.2: an ace starts a new pile
                    f = n_found
                    n_found += 1
                    s.foundation_suit[b, f] = card // 13
                h = s.foundation_len[b, f]
                s.foundations[b, f, h] = owner[p] * 52 + card  # R1: the card's owner, scored by R7
                s.foundation_len[b, f] = h + 1
                lay_on_foundation_tops(s.foundation_tops[b], card)
                s.on_foundations[b, owner[p]] += 1
            elif kp == TO_NERTZ:  # R4.8: onto seat pile[p]'s Nertz pile (its owner is already there)
                t = pile[p]
                s.nertz[b, t, s.nertz_len[b, t]] = card
                s.nertz_len[b, t] += 1
            # R5: a block between work piles is no progress; every other card move is (a build
            # onto a Nertz pile included, like a card leaving a Nertz pile or the waste)
            progress = progress or not (kp == TO_WORK and src[p] >= WORK_SOURCE)
    s.n_foundations[b] = n_found
    return progress


@njit(cache=True, inline="always")
def _resolve(s, b, buf, cfg, speed) -> bool:
    """The foundation races (R6), the R4.8 build races, and then every move of the tick at once
    (R3), for the moves in rows KIND, SOURCE, DEST, COUNT of ``buf`` (the other rows are scratch,
    all zero). Returns whether any was progress (R5)."""
    owner = buf[OWNER]
    for p in range(cfg[C_PLAYERS]):
        owner[p] = p
    foundation_races(s, b, buf, cfg, speed)
    if cfg[C_BUILDS] != 0:  # R4.8: races for the other players' Nertz piles, then where each card's owner goes
        resolve_builds(s, b, buf, cfg, speed)
        move_owners(s, b, buf)
    return _apply_moves(s, b, buf, cfg)


# ``_land_all``'s copy of ``_resolve``: compiled once on its own rather than inlined a second time
# (the landing at the end of a hand is rare; the tick's own copy stays inlined in ``step``).
_resolve_landing = njit(cache=True)(twin(python_of(_resolve), "_landing"))


@njit(cache=True, inline="always")
def _score(s, b, cfg) -> bool:
    """R4.6 auto_call and the R7 running score; returns whether anyone has called."""
    any_call = False
    for p in range(cfg[C_PLAYERS]):
        if cfg[C_AUTO_CALL] != 0 and s.nertz_len[b, p] == 0:  # R4.6 auto_call
            s.called[b, p] = True
        any_call = any_call or s.called[b, p]
        s.score[b, p] = r7_score(
            s.on_foundations[b, p], s.nertz_len[b, p], s.called[b, p], cfg[C_PENALTY], cfg[C_BONUS]
        )
    return any_call


@njit(cache=True, inline="always")
def _progress_in_air(s, b, table, n_players) -> bool:
    """``move_ticks``: a move in the air that may be progress when it lands (R5), or a call."""
    for p in range(n_players):
        if s.air[b, p, AIR_TICKS] > 0:
            a = s.air[b, p, AIR_ACTION]
            kind = s.air[b, p, AIR_KIND]
            if kind != DRAW and not (kind == TO_WORK and table[a, T_SOURCE] >= WORK_SOURCE):
                return True
    return False


@njit(cache=True, inline="always")
def _tick_buffer(n_players):
    """``step``'s scratch rows (see there), all zero but the sources: a player with no move has
    none (-1), so only a move from a Nertz pile keeps builds off it (R4.8), whoever waits,
    acted illegally or could not land."""
    if n_players > MAX_SEATS:
        raise ValueError("a table seats at most 8 players")
    buf = carray(stack_int64(SCRATCH_SIZE), (SCRATCH_ROWS, n_players))
    for row in range(SCRATCH_ROWS):
        for p in range(n_players):
            buf[row, p] = -1 if row == SOURCE else 0
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
            _land(s, b, p, cfg, table, buf[KIND], buf[SOURCE], buf[DEST], buf[COUNT])
            landing = True
    if landing:
        _resolve_landing(s, b, buf, cfg, speed)
        if _score(s, b, cfg):
            s.ended[b] = END_CALL


@njit(cache=True, inline="always")
def step(s, b, actions, cfg, table, speed):
    """Resolve one tick of game ``b``; ``actions[p]`` indexes the catalogue ``table`` (a
    ``step_span`` of one game)."""
    step_span(s, b, actions.reshape((1, actions.shape[0])), cfg, table, speed)


@njit(cache=True)
def step_span(s, first, actions, cfg, table, speed):
    """Resolve one tick of each game ``first + i`` of a run of games, ``actions[i, p]`` indexing
    the catalogue ``table``. The rules compile once, here, for every caller; one call per run of
    games, not per game, because a call passes the state's arrays one by one: per game it cost
    more than the rules themselves (``benchmarks.tick_parts``). The arrays are read as ``raw``
    views: without them every view the rules take of a table's array counts references."""
    s = raw_state(s)
    actions, cfg, table, speed = raw(actions), raw(cfg), raw(table), raw(speed)
    for i in range(actions.shape[0]):
        _step_one(s, first + i, actions[i], cfg, table, speed)


@njit(cache=True, inline="always")
def _step_one(s, b, actions, cfg, table, speed):
    """One tick of game ``b`` (``step``)."""
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
    kind, src, dst, cnt = buf[KIND], buf[SOURCE], buf[DEST], buf[COUNT]
    nertz, nertz_len = s.nertz, s.nertz_len  # R4.8 targets, read once (no view, no count per player)
    timed = moves_take_time(cfg)
    turn = s.tick[b] % n_players if cfg[C_TURN_BASED] != 0 else -1
    # R3: every action is judged on the state at the start of the tick; illegal ones are WAIT.
    for p in range(n_players):
        a = actions[p]
        if s.air[b, p, AIR_TICKS] > 0:  # move_ticks: only WAIT while the move is in the air
            if a < 0 or a >= n_actions or table[a, T_KIND] != WAIT:
                s.illegal[b, p] = True
            if s.air[b, p, AIR_TICKS] == 1:
                _land(s, b, p, cfg, table, kind, src, dst, cnt)
            else:
                s.air[b, p, AIR_TICKS] -= 1
            continue
        if a < 0 or a >= n_actions:
            s.illegal[b, p] = True
            continue
        move_kind, move_src = table[a, T_KIND], table[a, T_SOURCE]
        move_dst, move_count = table[a, T_DEST], table[a, T_COUNT]
        if p != turn and turn >= 0 and move_kind != WAIT:  # R3 turn_based: off turn only WAIT
            s.illegal[b, p] = True
            continue
        # The rule is legal_row's, on the player's view of the table.
        nertz_top, waste_top, work, work_len, tops, can_draw, any_empty = player_view(s, b, p, cfg[C_WORK])
        if not legal_row(
            move_kind, move_src, move_dst, move_count, nertz_top, waste_top, work, work_len, tops, can_draw, any_empty,
            cfg, b, p, nertz, nertz_len
        ):
            s.illegal[b, p] = True
        elif timed and cfg[C_TICKS + move_kind] > 1:  # move_ticks: it takes off now and lands later
            s.air[b, p, AIR_TICKS] = cfg[C_TICKS + move_kind] - 1
            s.air[b, p, AIR_ACTION] = a
            s.air[b, p, AIR_KIND] = move_kind
            s.air[b, p, AIR_CARD] = moving_card(s, b, p, move_kind, move_src, move_count)
        else:
            kind[p], src[p], dst[p], cnt[p] = move_kind, move_src, move_dst, move_count

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
                    rotate_stock(s.stock[b], s.stock_len[b], s.waste[b], s.waste_len[b], p)
                s.rotations[b] += 1
                s.since_progress[b] = 0
                s.stall_cycle[b] = stall_limit(s, b, cfg)
    if s.ended[b] == RUNNING and s.tick[b] >= cfg[C_MAX_CYCLES]:  # R5: truncation
        s.ended[b] = END_MAX_CYCLES
    if timed and s.ended[b] != RUNNING:
        _land_all(s, b, cfg, table, speed)
