"""One tick of one game, composed: the rules (``tick.step``), the match bookkeeping (R8), the
rewards, the observations and the masks; and the deal of a game with its observations and masks.
Every form of the game (``Game``, the vector env's batch kernels, the evaluation arena) plays its
ticks through ``play_tick`` and deals through ``deal_game``; the illegal-action penalty is applied
here and nowhere else. The batch kernels add the end-of-episode records and the same-step reset
(``nertz_env.engine.batch``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nertz_env.engine.constants import (
    C_EPISODE,
    C_PARTNERS,
    C_PLAYERS,
    C_REWARD,
    REWARD_LEAD,
    REWARD_RELATIVE,
    REWARD_SPARSE,
)
from nertz_env.engine.core import deal, partner_of, shuffle_deal
from nertz_env.engine.masks import legal_masks
from nertz_env.engine.match import episode_over, match_step, n_teams, running_value, team_sum
from nertz_env.engine.observe import observe_game
from nertz_env.engine.state import (
    RUNNING,
)
from nertz_env.engine.tick import step, step_span

NO_DECKS = np.empty((0, 52), np.int8)  # ``deal_game``'s decks for a shuffle from the game's own stream

# What ``play_tick`` does besides the rules (bits of its ``flags``): keep the R8 match books (add
# an ended hand to the totals and deal the next one), and write rewards, observations and masks.
PLAY_MATCH, PLAY_OBSERVE = 1, 2


@njit(cache=True, inline="always")
def rewards(s, b, prev_score, cfg, out):
    """Rewards of the tick that moved the scores from ``prev_score`` (option ``reward``);
    ``prev_score`` holds ``match.running_value`` before the tick (the scores, in a single hand).
    Inlined: a call per game passes the state's arrays one by one and cost more than the sums."""
    n_players = cfg[C_PLAYERS]
    mode = cfg[C_REWARD]
    if cfg[C_EPISODE] != 0 or cfg[C_PARTNERS] != 0:
        _r8_rewards(s, b, prev_score, cfg, out)
        return
    if mode == REWARD_LEAD:
        lead_rewards(s.score[b], prev_score, n_players, out)
        return
    total = 0.0
    for p in range(n_players):
        if mode == REWARD_SPARSE:
            out[p] = s.score[b, p] if s.ended[b] != RUNNING else 0
        else:
            out[p] = s.score[b, p] - prev_score[p]
        total += out[p]
    if mode == REWARD_RELATIVE:
        for p in range(n_players):
            out[p] = out[p] - (total - out[p]) / (n_players - 1)


@njit(cache=True)
def _r8_rewards(s, b, prev_score, cfg, out):
    """``rewards`` with partners or matches (R8). A match's running value is its totals plus the
    hand in play, so dense rewards run across hands; sparse pays the totals when the match ends.
    With partners each player is paid their team's figure (both partners' summed), and relative
    is the team's figure minus the mean of the other teams'."""
    n_players = cfg[C_PLAYERS]
    mode = cfg[C_REWARD]
    if mode == REWARD_LEAD:
        _r8_lead_rewards(s, b, prev_score, cfg, out)
        return
    over = episode_over(s, b, cfg)
    for p in range(n_players):
        value = running_value(s, b, p, cfg)
        if mode == REWARD_SPARSE:
            out[p] = value if over else 0
        else:
            out[p] = value - prev_score[p]
    if cfg[C_PARTNERS] != 0:
        for p in range(n_players // 2):
            team = out[p] + out[partner_of(p, n_players)]
            out[p] = team
            out[partner_of(p, n_players)] = team
    if mode == REWARD_RELATIVE:
        teams = n_teams(cfg)
        total = 0.0
        for t in range(teams):  # seat t plays in team t
            total += out[t]
        for p in range(n_players):
            out[p] = out[p] - (total - out[p]) / (teams - 1)


@njit(cache=True, inline="always")
def lead_rewards(now, before, n, out):
    """Option ``reward="lead"``: each of the ``n`` sides' change of its value minus the best other
    side's, from the values ``before`` the tick to those ``now``; a hand's rewards sum to its final
    margin over the best opponent (at the deal every margin is 0). Inlined where it is paid (the
    tick's kernel, ``_r8_lead_rewards``), so no process compiles it on its own."""
    for p in range(n):
        best_now, best_before = -1e18, -1e18
        for q in range(n):
            if q != p:
                best_now = max(best_now, float(now[q]))
                best_before = max(best_before, float(before[q]))
        out[p] = (float(now[p]) - best_now) - (float(before[p]) - best_before)


@njit(cache=True)
def _r8_lead_rewards(s, b, prev_score, cfg, out):
    """``lead_rewards`` over running values (R8 matches: totals plus the hand in play) and, with
    partners, over teams (both partners' values summed, each partner paid their team's)."""
    n_players = cfg[C_PLAYERS]
    teams = n_teams(cfg)
    values = np.empty(n_players)
    for p in range(n_players):
        values[p] = running_value(s, b, p, cfg)
    now, before, lead = np.empty(teams), np.empty(teams), np.empty(teams)
    for t in range(teams):  # seat t plays in team t
        now[t] = team_sum(values, t, cfg)
        before[t] = team_sum(prev_score, t, cfg)
    lead_rewards(now, before, teams, lead)
    for t in range(teams):
        out[t] = lead[t]
        if cfg[C_PARTNERS] != 0:
            out[partner_of(t, n_players)] = lead[t]


@njit(cache=True, inline="always")
def play_tick(s, b, actions, cfg, table, speed, plan, penalty, flags, obs, masks, reward_out, prev_score):
    """Game ``b``: one tick (R3) of the ``actions[P]``; with ``PLAY_MATCH`` the R8 books (an ended
    hand of a match is added to the totals and the next one dealt); with ``PLAY_OBSERVE`` the
    rewards into ``reward_out[P]``, less ``penalty`` for an illegal action, then every player's
    observation and mask into ``obs[P, D]`` and ``masks[P, N]`` (``prev_score[P]`` is scratch).
    It is ``play_scored`` and then ``observe_and_mask``."""
    play_scored(s, b, actions, cfg, table, speed, penalty, flags, reward_out, prev_score)
    if flags & PLAY_OBSERVE != 0:
        observe_game(s, b, cfg, obs)
        legal_masks(s, b, cfg, table, plan, masks)


@njit(cache=True, inline="always")
def play_scored(s, b, actions, cfg, table, speed, penalty, flags, reward_out, prev_score):
    """``play_tick`` short of the observations and masks: the rules, the R8 books with
    ``PLAY_MATCH``, and with ``PLAY_OBSERVE`` the rewards less the illegal-action ``penalty``
    (``values_before``, ``play_rules``, ``tick_rewards``). The batch kernels make each of these a
    pass over their games, and observe and mask them afterwards."""
    if flags & PLAY_OBSERVE == 0:
        play_rules(s, b, actions, cfg, table, speed, flags)
        return
    values_before(s, b, cfg, prev_score)
    play_rules(s, b, actions, cfg, table, speed, flags)
    tick_rewards(s, b, cfg, penalty, prev_score, reward_out)


@njit(cache=True, inline="always")
def values_before(s, b, cfg, prev_score):
    """Every seat's running value (``match.running_value``) into ``prev_score[P]``, before a tick."""
    for p in range(cfg[C_PLAYERS]):
        prev_score[p] = running_value(s, b, p, cfg)


@njit(cache=True, inline="always")
def tick_rewards(s, b, cfg, penalty, prev_score, reward_out):
    """The rewards of the tick just played (``rewards``, from ``values_before``'s ``prev_score``)
    into ``reward_out[P]``, less ``penalty`` for an illegal action: the one place it is applied."""
    rewards(s, b, prev_score, cfg, reward_out)
    for p in range(cfg[C_PLAYERS]):
        if s.illegal[b, p]:
            reward_out[p] -= penalty


@njit(cache=True, inline="always")
def play_rules(s, b, actions, cfg, table, speed, flags):
    """The rules of one tick of game ``b`` (``tick.step``) and, with ``PLAY_MATCH``, the R8 books."""
    step(s, b, actions, cfg, table, speed)
    if cfg[C_EPISODE] != 0 and flags & PLAY_MATCH != 0:
        match_step(s, b, cfg)


@njit(cache=True, inline="always")
def play_rules_span(s, first, actions, cfg, table, speed, flags):
    """``play_rules`` for each game ``first + i`` of a run of games, ``actions[i]`` its actions
    (one ``tick.step_span`` call for the run)."""
    step_span(s, first, actions, cfg, table, speed)
    if cfg[C_EPISODE] != 0 and flags & PLAY_MATCH != 0:
        for i in range(actions.shape[0]):
            match_step(s, first + i, cfg)


@njit(cache=True)
def deal_game(s, b, decks, cfg, table, plan, obs, masks):
    """Deal game ``b`` (R2): the R10 ``decks[P, 52]``, or with no rows (``NO_DECKS``) a shuffle from
    the game's own stream; then its observations and masks. The match (R8) must be started first
    (``match.start_match``)."""
    if decks.shape[0] == 0:
        shuffle_deal(s, b, cfg)
    else:
        deal(s, b, decks, cfg)
    observe_and_mask(s, b, cfg, table, plan, obs, masks)


@njit(cache=True)
def observe_and_mask(s, b, cfg, table, plan, obs, masks):
    """Game ``b``'s observations ``obs[P, D]`` and masks ``masks[P, N]``."""
    observe_game(s, b, cfg, obs)
    legal_masks(s, b, cfg, table, plan, masks)
