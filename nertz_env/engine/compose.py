"""One tick of one game, composed: the rules (``tick.step``), the match bookkeeping (R8), the
rewards, the end of the episode with its record and a new deal, the observations and the masks.
Every form of the game (``Game``, the vector env's batch kernels, the evaluation arena) plays its
ticks through ``play_tick``; the illegal-action penalty is applied here and nowhere else.
"""

from __future__ import annotations

from numba import njit

from nertz_env.engine.constants import (
    C_EPISODE,
    C_PARTNERS,
    C_PLAYERS,
    C_REWARD,
    REWARD_RELATIVE,
    REWARD_SPARSE,
)
from nertz_env.engine.core import deal, partner_of, shuffle_deal
from nertz_env.engine.masks import legal_masks
from nertz_env.engine.match import episode_over, match_step, n_teams, running_value, start_match, team_sum
from nertz_env.engine.observe import observe_game
from nertz_env.engine.raw import raw, raw_state
from nertz_env.engine.state import (
    END_MAX_CYCLES,
    MATCH_CAPPED,
    MATCH_DECIDED,
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
from nertz_env.engine.tick import step

# What ``play_tick`` does besides the rules (bits of its ``flags``): keep the R8 match books (add
# an ended hand to the totals and deal the next), deal a new episode when one ends (same-step
# reset), and write rewards, ends, records, observations and masks.
PLAY_MATCH, PLAY_REDEAL, PLAY_OBSERVE = 1, 2, 4
PLAY_ALL = PLAY_MATCH | PLAY_REDEAL | PLAY_OBSERVE


@njit(cache=True)
def rewards(s, b, prev_score, cfg, out):
    """Rewards of the tick that moved the scores from ``prev_score`` (option ``reward``);
    ``prev_score`` holds ``match.running_value`` before the tick (the scores, in a single hand)."""
    n_players = cfg[C_PLAYERS]
    mode = cfg[C_REWARD]
    if cfg[C_EPISODE] != 0 or cfg[C_PARTNERS] != 0:
        _r8_rewards(s, b, prev_score, cfg, out)
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
def play_tick(s, b, actions, cfg, table, speed, plan, penalty, flags, out):
    """Game ``b``: one tick (R3); with ``PLAY_MATCH`` the R8 books (an ended hand of a match is
    added to the totals and the next one dealt); with ``PLAY_OBSERVE`` its rewards, less
    ``penalty`` for an illegal action, the end flags and, if the episode (a hand, or a match)
    ended, its final record; with ``PLAY_REDEAL`` an ended episode is followed by a new deal from
    the game's own stream (same-step reset); then, with ``PLAY_OBSERVE``, the observations and
    masks. ``out`` is a ``Buffers`` (``nertz_env.engine.batch``)."""
    s = raw_state(s)
    n_players = cfg[C_PLAYERS]
    match = cfg[C_EPISODE] != 0 and flags & PLAY_MATCH != 0
    observe = flags & PLAY_OBSERVE != 0
    prev, rew = raw(out.prev_score)[b], raw(out.rewards)[b]
    if observe:
        for p in range(n_players):
            prev[p] = running_value(s, b, p, cfg)
    step(s, b, actions, cfg, table, speed)
    if match:
        match_step(s, b, cfg)
    if not observe:
        if flags & PLAY_REDEAL != 0 and s.ended[b] != RUNNING:
            shuffle_deal(s, b, cfg)
        return
    rewards(s, b, prev, cfg, rew)
    illegal, collision, won_race = raw(out.illegal)[b], raw(out.collision)[b], raw(out.won_race)[b]
    for p in range(n_players):
        illegal[p] = s.illegal[b, p]
        collision[p] = s.collision[b, p]
        won_race[p] = s.won_race[b, p]
        if illegal[p]:
            rew[p] -= penalty
    over = episode_over(s, b, cfg)
    raw(out.done)[b] = over
    _end_flags(s, b, cfg, match, out)
    if over:
        _record_episode(s, b, cfg, match, out)
        if flags & PLAY_REDEAL != 0:
            if match:
                start_match(s, b, cfg)
            shuffle_deal(s, b, cfg)
    observe_game(s, b, cfg, raw(out.obs)[b])
    legal_masks(s, b, cfg, table, plan, raw(out.masks)[b])


@njit(cache=True, inline="always")
def _end_flags(s, b, cfg, match, out):
    """Terminated: a hand ended by a call or the stall rule, or a match decided; truncated: a
    hand at ``max_cycles`` (R5), or a match stopped at ``max_hands`` (R8)."""
    terminated, truncated = raw(out.terminated)[b], raw(out.truncated)[b]
    if match:
        if s.match_info[b, MI_HAND_OVER]:
            _record_hand(s, b, cfg[C_PLAYERS], out)
        raw(out.hand_done)[b] = s.match_info[b, MI_HAND_OVER] != 0
        for p in range(cfg[C_PLAYERS]):
            terminated[p] = s.match_info[b, MI_STATE] == MATCH_DECIDED
            truncated[p] = s.match_info[b, MI_STATE] == MATCH_CAPPED
    else:
        ended = s.ended[b]
        for p in range(cfg[C_PLAYERS]):
            terminated[p] = ended != RUNNING and ended != END_MAX_CYCLES
            truncated[p] = ended == END_MAX_CYCLES


@njit(cache=True, inline="always")
def _record_episode(s, b, cfg, match, out):
    """The final record of the episode that ended: scores (a match's totals), callers, team
    scores (R8), length, end reason, and its last observation."""
    n_players = cfg[C_PLAYERS]
    score, callers = raw(out.final_score)[b], raw(out.final_callers)[b]
    for p in range(n_players):
        score[p] = s.match_seats[b, MS_TOTAL, p] if match else s.score[b, p]
        callers[p] = s.called[b, p]
    for t in range(n_teams(cfg)):
        raw(out.final_team_score)[b, t] = team_sum(score, t, cfg)
    raw(out.final_length)[b] = s.match_info[b, MI_TICKS] if match else s.tick[b]
    raw(out.final_reason)[b] = s.ended[b]
    if match:
        raw(out.final_hands)[b] = s.match_info[b, MI_HANDS]
        for p in range(n_players):
            raw(out.final_winners)[b, p] = s.match_seats[b, MS_CONTENDER, p] != 0
    observe_game(s, b, cfg, raw(out.final_obs)[b])


@njit(cache=True, inline="always")
def _record_hand(s, b, n_players, out):
    raw(out.hand_length)[b] = s.match_info[b, MI_LAST_TICKS]
    raw(out.hand_reason)[b] = s.match_info[b, MI_LAST_REASON]
    for p in range(n_players):
        raw(out.hand_score)[b, p] = s.match_seats[b, MS_LAST, p]
        raw(out.hand_callers)[b, p] = s.match_seats[b, MS_CALLED, p] != 0
        raw(out.hand_totals)[b, p] = s.match_seats[b, MS_TOTAL, p]


@njit(cache=True)
def deal_game(s, b, decks, cfg, table, plan, out):
    """Deal game ``b`` (R2): the R10 ``decks[P, 52]``, or with no rows a shuffle from the game's
    own stream; then its observations and masks, and no rewards or ends yet. The match (R8) must
    be started first (``match.start_match``)."""
    if decks.shape[0] == 0:
        shuffle_deal(s, b, cfg)
    else:
        deal(s, b, decks, cfg)
    observe_and_mask(s, b, cfg, table, plan, out)
    for p in range(cfg[C_PLAYERS]):
        out.rewards[b, p] = 0
        out.terminated[b, p] = False
        out.truncated[b, p] = False
        out.illegal[b, p] = False
        out.collision[b, p] = False
        out.won_race[b, p] = False
    out.done[b] = False
    out.hand_done[b] = False


@njit(cache=True)
def observe_and_mask(s, b, cfg, table, plan, out):
    """Game ``b``'s observations and masks into ``out.obs[b]`` and ``out.masks[b]``."""
    observe_game(s, b, cfg, out.obs[b])
    legal_masks(s, b, cfg, table, plan, out.masks[b])
