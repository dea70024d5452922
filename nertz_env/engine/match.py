"""R8 in the engine: partners' team scores and whole matches (``episode="match"``).

The single statement of R8's match rule is here: ``match_winner`` (the tie rule) and
``match_decision`` (is the match over after a hand?), over teams of partners or over players.
The harness (``training.evaluate``) calls the same functions, the environments reach them through
``match_step``, which runs after every tick of a match: when a hand ends it adds the hand to the
totals, decides, and if the match goes on deals the next hand at once from the game's own stream,
so a seed and the actions fix the whole match.

Readings of R8 where it is silent (RULES.md):

* Partners (seats ``p`` and ``p + P/2``): the team's score, total and last-hand score are the sums
  of both partners'; a match is played between teams (a team total reaching the target ends it,
  the tie rule compares team figures).
* The tied players "play another hand": everyone plays it (the table stays as it is), only the
  contenders can win; after it the rule is applied again among the contenders, whether or not
  their totals still reach the target.
* ``hands=N``: after N hands the match is decided with the same tie rule, and a tie goes on to
  tie-break hands.
* ``max_hands`` bounds a match, tie-break hands included: a match not decided by then is stopped
  (a truncation); its leaders by the tie rule are reported, several if still tied.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nertz_env.engine.constants import C_EPISODE, C_HANDS, C_MAX_HANDS, C_PARTNERS, C_PLAYERS, C_TARGET
from nertz_env.engine.core import shuffle_deal
from nertz_env.engine.state import (
    MATCH_CAPPED,
    MATCH_DECIDED,
    MATCH_PLAYING,
    MATCH_TIE_BREAK,
    MI_HAND_OVER,
    MI_HANDS,
    MI_LAST_REASON,
    MI_LAST_TICKS,
    MI_STATE,
    MI_TICKS,
    MS_CALLED,
    MS_CONTENDER,
    MS_LAST,
    MS_TOTAL,
    RUNNING,
)

_LOWEST = -(1 << 62)


@njit(cache=True)
def match_winner(totals, last, contenders) -> int:
    """R8's tie rule among ``contenders`` (bool, updated in place): the highest total; among
    equal totals the higher last-hand score; those still tied remain. Returns how many remain."""
    n = totals.shape[0]
    top = _LOWEST
    for i in range(n):
        if contenders[i] and totals[i] > top:
            top = totals[i]
    best = _LOWEST
    for i in range(n):
        if contenders[i] and totals[i] == top and last[i] > best:
            best = last[i]
    k = 0
    for i in range(n):
        keep = contenders[i] and totals[i] == top and last[i] == best
        contenders[i] = keep
        k += keep
    return k


@njit(cache=True)
def match_decision(totals, last, contenders, hands_played, status, target, fixed_hands, max_hands) -> int:
    """The match state after a hand (R8): ``totals`` and ``last`` (the hand just played) per team,
    ``contenders`` updated in place. The match is due for a decision once a total reaches
    ``target`` (or ``fixed_hands > 0`` hands are played), and after every tie-break hand; a
    unique winner decides it, a tie plays another hand; at ``max_hands`` it is capped."""
    due = status == MATCH_TIE_BREAK
    if fixed_hands > 0:
        due = due or hands_played >= fixed_hands
    else:
        for i in range(totals.shape[0]):
            due = due or totals[i] >= target
    if due:
        if match_winner(totals, last, contenders) == 1:
            return MATCH_DECIDED
        status = MATCH_TIE_BREAK
    if hands_played >= max_hands:
        if not due:  # stopped before the rule was due: the leaders as if it were
            match_winner(totals, last, contenders)
        return MATCH_CAPPED
    return status


@njit(cache=True, inline="always")
def n_teams(cfg) -> int:
    return cfg[C_PLAYERS] // 2 if cfg[C_PARTNERS] != 0 else cfg[C_PLAYERS]


@njit(cache=True, inline="always")
def team_sum(values, t, cfg):
    """Team ``t``'s figure: partners ``t`` and ``t + P/2`` summed (R8), else player ``t``'s."""
    if cfg[C_PARTNERS] != 0:
        return values[t] + values[t + cfg[C_PLAYERS] // 2]
    return values[t]


@njit(cache=True)
def start_match(s, b, cfg):
    """A new match in game ``b``: totals zero, everyone a contender (call before the first deal)."""
    for p in range(cfg[C_PLAYERS]):
        s.match_seats[b, MS_TOTAL, p] = 0
        s.match_seats[b, MS_CONTENDER, p] = True
        s.match_seats[b, MS_LAST, p] = 0
        s.match_seats[b, MS_CALLED, p] = False
    s.match_info[b, MI_HANDS] = 0
    s.match_info[b, MI_STATE] = MATCH_PLAYING
    s.match_info[b, MI_TICKS] = 0
    s.match_info[b, MI_HAND_OVER] = False
    s.match_info[b, MI_LAST_REASON] = RUNNING
    s.match_info[b, MI_LAST_TICKS] = 0


@njit(cache=True)
def finish_hand(s, b, cfg) -> bool:
    """Add the hand that just ended to game ``b``'s match and decide (R8); True if it goes on."""
    n = cfg[C_PLAYERS]
    for p in range(n):
        s.match_seats[b, MS_TOTAL, p] += s.score[b, p]
        s.match_seats[b, MS_LAST, p] = s.score[b, p]
        s.match_seats[b, MS_CALLED, p] = s.called[b, p]
    s.match_info[b, MI_LAST_REASON] = s.ended[b]
    s.match_info[b, MI_LAST_TICKS] = s.tick[b]
    s.match_info[b, MI_HAND_OVER] = True
    s.match_info[b, MI_HANDS] += 1
    k = n_teams(cfg)
    totals = np.empty(k, np.int64)
    last = np.empty(k, np.int64)
    contenders = np.empty(k, np.bool_)
    for t in range(k):
        totals[t] = team_sum(s.match_seats[b, MS_TOTAL], t, cfg)
        last[t] = team_sum(s.match_seats[b, MS_LAST], t, cfg)
        contenders[t] = s.match_seats[b, MS_CONTENDER, t] != 0
    status = match_decision(
        totals, last, contenders, s.match_info[b, MI_HANDS], s.match_info[b, MI_STATE],
        cfg[C_TARGET], cfg[C_HANDS], cfg[C_MAX_HANDS],
    )
    for p in range(n):
        s.match_seats[b, MS_CONTENDER, p] = contenders[p % k]
    s.match_info[b, MI_STATE] = status
    return status < MATCH_DECIDED


@njit(cache=True)
def match_step(s, b, cfg):
    """After a tick of a match: count it, and if the hand ended finish it and deal the next."""
    s.match_info[b, MI_HAND_OVER] = False
    if s.match_info[b, MI_STATE] >= MATCH_DECIDED:
        return
    s.match_info[b, MI_TICKS] += 1
    if s.ended[b] != RUNNING and finish_hand(s, b, cfg):
        n = cfg[C_PLAYERS]
        events = np.empty((3, n), np.bool_)  # the tick's R6 races and illegal actions outlive the deal
        for p in range(n):
            events[0, p], events[1, p], events[2, p] = s.collision[b, p], s.won_race[b, p], s.illegal[b, p]
        shuffle_deal(s, b, cfg)
        for p in range(n):
            s.collision[b, p], s.won_race[b, p], s.illegal[b, p] = events[0, p], events[1, p], events[2, p]


@njit(cache=True, inline="always")
def running_value(s, b, p, cfg):
    """What the rewards follow (R7, R8): the running hand score, or in a match the totals plus the
    running score of the hand in play."""
    if cfg[C_EPISODE] == 0:
        return s.score[b, p]
    return s.match_seats[b, MS_TOTAL, p] + (s.score[b, p] if s.ended[b] == RUNNING else 0)


@njit(cache=True, inline="always")
def episode_over(s, b, cfg) -> bool:
    if cfg[C_EPISODE] == 0:
        return s.ended[b] != RUNNING
    return s.match_info[b, MI_STATE] >= MATCH_DECIDED


# ---------------------------------------------------------------------------------------------
# The R8 sections of the observation, after the standard one (and after a timing section, when
# one is present): ``partner`` (with partners) and ``match.*`` (with episode="match").


@njit(cache=True, inline="always")
def tails_size(cfg) -> int:
    n = cfg[C_PLAYERS]
    return (n if cfg[C_PARTNERS] != 0 else 0) + (4 * n + 2 if cfg[C_EPISODE] != 0 else 0)


@njit(cache=True, inline="always")
def write_tails(s, b, cfg, v, dst, o):
    """Viewer ``v``'s R8 sections into ``dst`` from offset ``o``, players in egocentric order:
    the partner (1 at offset P/2), then each player's match total as sign, hundreds and rest (exact,
    see ``NertzConfig.max_hands``), whether they may still win, hands played and hands left."""
    n = cfg[C_PLAYERS]
    if cfg[C_PARTNERS] != 0:
        for q in range(n):
            dst[o + q] = q == n // 2
        o += n
    if cfg[C_EPISODE] != 0:
        for q in range(n):
            p = (v + q) % n
            t = np.int64(s.match_seats[b, MS_TOTAL, p])
            a = -t if t < 0 else t
            dst[o + q] = t < 0
            dst[o + n + q] = a // 100
            dst[o + 2 * n + q] = a % 100
            dst[o + 3 * n + q] = s.match_seats[b, MS_CONTENDER, p]
        o += 4 * n
        played = np.int64(s.match_info[b, MI_HANDS])
        dst[o] = played
        dst[o + 1] = max(cfg[C_HANDS] - played, 0) if cfg[C_HANDS] > 0 else 0
