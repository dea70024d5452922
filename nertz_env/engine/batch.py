"""Whole batches in one compiled call: the games of a batch each play ``compose.play_tick`` (or
are dealt by ``compose.deal_game``), the composer ``nertz_env.game.Game`` and the evaluation arena
use too, so a batch plays exactly the games a single game plays; a batch adds the record of an
episode that ended and the same-step reset. Every game draws its chance from
its own stream ``s.rng[b]``, so the ``*_threaded`` twins (numba ``prange`` over games) give the
same results as the serial kernels, whatever the number of threads.

Outputs go into preallocated arrays (``Buffers``); nothing is allocated per tick except what
``tick.step`` allocates itself.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from nertz_env.engine.cache import python_of, twin
from nertz_env.engine.compose import (
    NO_DECKS,
    PLAY_MATCH,
    PLAY_OBSERVE,
    deal_game,
    play_rules_span,
    play_scored,
    play_tick,
    tick_rewards,
    values_before,
)
from nertz_env.engine.constants import C_EPISODE, C_PLAYERS
from nertz_env.engine.core import shuffle_deal
from nertz_env.engine.masks import legal_masks, legal_masks_span
from nertz_env.engine.match import episode_over, n_teams, start_match, team_sum
from nertz_env.engine.observe import observe_game, observe_span, state_vector
from nertz_env.engine.rng import below
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
from nertz_env.engine.views import raw, raw_state


class Buffers(NamedTuple):
    """What one batched tick writes, batch first (``B`` games, ``P`` players)."""

    obs: np.ndarray  # int8 [B, P, D]: each player's observation (after a reset: the new hand's)
    masks: np.ndarray  # int8 [B, P, N]: each player's legal actions
    rewards: np.ndarray  # float32 [B, P]
    terminated: np.ndarray  # bool [B, P]: the hand ended by a call or a stall (R5)
    truncated: np.ndarray  # bool [B, P]: the hand reached max_cycles (R5)
    illegal: np.ndarray  # bool [B, P]: the action was illegal and played as WAIT
    collision: np.ndarray  # bool [B, P]: lost a foundation race (R6)
    prev_score: np.ndarray  # int32 [B, P]: scratch, the scores before the tick
    done: np.ndarray  # bool [B]: the hand ended this tick (the final_* rows below are valid)
    final_obs: np.ndarray  # int8 [B, P, D]: the last observation of the hand that ended
    final_state: np.ndarray  # int8 [B, S]: its whole table (``state_vector``); S = 0 keeps none
    final_score: np.ndarray  # int32 [B, P]: its R7 scores
    final_length: np.ndarray  # int32 [B]: its ticks
    final_reason: np.ndarray  # int8 [B]: its end reason (index into engine.END_REASONS)
    final_callers: np.ndarray  # bool [B, P]: who called
    # R8: teams of partners and whole matches (episode="match"; the final_* rows are the match's)
    final_team_score: np.ndarray  # int32 [B, T]: the final scores (totals) per team (T = P without partners)
    final_hands: np.ndarray  # int32 [B]: hands the match lasted
    final_winners: np.ndarray  # bool [B, P]: who won the match (several if it was capped while tied)
    hand_done: np.ndarray  # bool [B]: a hand of the match ended this step (the hand_* rows are valid)
    hand_score: np.ndarray  # int32 [B, P]: its R7 scores
    hand_length: np.ndarray  # int32 [B]: its ticks
    hand_reason: np.ndarray  # int8 [B]: its end reason
    hand_callers: np.ndarray  # bool [B, P]: who called in it
    hand_totals: np.ndarray  # int32 [B, P]: the match totals after it


def new_buffers(
    batch: int, num_players: int, obs_dim: int, num_actions: int, num_teams: int = 0, state_size: int = 0
) -> Buffers:
    """Zeroed buffers for ``batch`` games; ``state_size`` (``layout.state_size``, or 0 for none)
    sizes ``final_state``, the whole table of each hand that ended."""
    b, p = batch, num_players
    return Buffers(
        obs=np.zeros((b, p, obs_dim), np.int8),
        masks=np.zeros((b, p, num_actions), np.int8),
        rewards=np.zeros((b, p), np.float32),
        terminated=np.zeros((b, p), np.bool_),
        truncated=np.zeros((b, p), np.bool_),
        illegal=np.zeros((b, p), np.bool_),
        collision=np.zeros((b, p), np.bool_),
        prev_score=np.zeros((b, p), np.int32),
        done=np.zeros(b, np.bool_),
        final_obs=np.zeros((b, p, obs_dim), np.int8),
        final_state=np.zeros((b, state_size), np.int8),
        final_score=np.zeros((b, p), np.int32),
        final_length=np.zeros(b, np.int32),
        final_reason=np.zeros(b, np.int8),
        final_callers=np.zeros((b, p), np.bool_),
        final_team_score=np.zeros((b, num_teams or p), np.int32),
        final_hands=np.zeros(b, np.int32),
        final_winners=np.zeros((b, p), np.bool_),
        hand_done=np.zeros(b, np.bool_),
        hand_score=np.zeros((b, p), np.int32),
        hand_length=np.zeros(b, np.int32),
        hand_reason=np.zeros(b, np.int8),
        hand_callers=np.zeros((b, p), np.bool_),
        hand_totals=np.zeros((b, p), np.int32),
    )


# ---------------------------------------------------------------------------------------------
# One game of a batch: the composed tick, then the end of an episode recorded and a new one dealt


@njit(cache=True, inline="always")
def _settle(s, b, cfg, penalty, out):
    """Game ``b`` after its rules: ``compose.tick_rewards``, its race and legality flags and end
    flags; and if the episode (a hand, or a match, R8) ended, its final record and a new deal
    from the game's own stream (same-step reset). The threaded kernel calls ``_settle_called``:
    inlined into its ``prange`` loop, numba's parfor pass drops the stores into ``out``'s arrays
    (``out.done[b] = ...``; numba issue 7135), and ``num_threads=2`` never ended an episode in
    ``infos``."""
    s = raw_state(s)
    n_players = cfg[C_PLAYERS]
    match = cfg[C_EPISODE] != 0
    tick_rewards(s, b, cfg, penalty, raw(out.prev_score)[b], raw(out.rewards)[b])
    illegal, collision = raw(out.illegal)[b], raw(out.collision)[b]
    for p in range(n_players):
        illegal[p] = s.illegal[b, p]
        collision[p] = s.collision[b, p]
    over = episode_over(s, b, cfg)
    raw(out.done)[b] = over
    _end_flags(s, b, cfg, match, out)
    if over:
        observe_game(s, b, cfg, raw(out.final_obs)[b])
        if out.final_state.shape[1] > 0:
            state_vector(s, b, cfg, raw(out.final_state)[b])
        _record_episode(s, b, cfg, match, out)
        if match:
            start_match(s, b, cfg)
        shuffle_deal(s, b, cfg)


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
    scores (R8), length and end reason."""
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


@njit(cache=True, inline="always")
def _record_hand(s, b, n_players, out):
    raw(out.hand_length)[b] = s.match_info[b, MI_LAST_TICKS]
    raw(out.hand_reason)[b] = s.match_info[b, MI_LAST_REASON]
    for p in range(n_players):
        raw(out.hand_score)[b, p] = s.match_seats[b, MS_LAST, p]
        raw(out.hand_callers)[b, p] = s.match_seats[b, MS_CALLED, p] != 0
        raw(out.hand_totals)[b, p] = s.match_seats[b, MS_TOTAL, p]


@njit(cache=True)
def _deal(s, b, cfg, table, plan, out):
    start_match(s, b, cfg)
    deal_game(s, b, NO_DECKS, cfg, table, plan, out.obs[b], out.masks[b])
    for p in range(cfg[C_PLAYERS]):
        out.rewards[b, p] = 0
        out.terminated[b, p] = False
        out.truncated[b, p] = False
        out.illegal[b, p] = False
        out.collision[b, p] = False
    out.done[b] = False
    out.hand_done[b] = False


# ---------------------------------------------------------------------------------------------
# Batches: serial kernels, and threaded twins compiled from the same Python source


# Games per compiled call in a pass (``tick.step_span``, ``observe.observe_span``,
# ``masks.legal_masks_span``): a call passes the state's arrays one by one, which per game cost
# more than the rules themselves; the threaded kernels share out the runs.
SPAN = 32


@njit(cache=True, inline="always")
def _run_count(n) -> int:
    """How many runs of ``SPAN`` games a batch of ``n`` games makes (the last may be shorter)."""
    return (n + SPAN - 1) // SPAN


@njit(cache=True, inline="always")
def _run_bounds(c, n):
    """The games ``lo .. hi - 1`` of run ``c`` of a batch of ``n`` games."""
    lo = c * SPAN
    return lo, min(n, lo + SPAN)


def _step_batch(s, actions, cfg, table, speed, plan, penalty, out):
    """Step every game of the batch (``actions[b, p]`` index the catalogue ``table``): each game
    gets what ``compose.play_tick`` gives it (rules, match books, rewards, observations, masks),
    and an ended episode its record and a new deal (``_settle``). The parts go in passes over all
    the games: the values before the tick, the rules, the rewards and ends, the observations, the
    masks. A pass runs one part of the engine's code, which stays in the processor's caches
    (the parts interleaved per game cost a third more)."""
    n = s.tick.shape[0]
    for b in prange(n):
        values_before(raw_state(s), b, cfg, raw(out.prev_score)[b])
    for c in prange(_run_count(n)):
        lo, hi = _run_bounds(c, n)
        play_rules_span(raw_state(s), lo, actions[lo:hi], cfg, table, speed, PLAY_MATCH)
    for b in prange(n):
        _settle(s, b, cfg, penalty, out)
    _observe_passes(s, cfg, table, plan, out.obs, out.masks)


@njit(cache=True, inline="always")
def _observe_passes(s, cfg, table, plan, obs, masks):
    """Every game's observations into ``obs[B, P, D]``, then every game's masks into
    ``masks[B, P, N]``, a run of ``SPAN`` games per call (inlined, so that the threaded kernels
    run each pass in parallel)."""
    n = s.tick.shape[0]
    for c in prange(_run_count(n)):
        lo, hi = _run_bounds(c, n)
        observe_span(raw_state(s), lo, cfg, raw(obs)[lo:hi])
    for c in prange(_run_count(n)):
        lo, hi = _run_bounds(c, n)
        legal_masks_span(raw_state(s), lo, cfg, table, plan, raw(masks)[lo:hi])


@njit(cache=True)
def observe_batch(s, cfg, table, plan, obs, masks):
    """The observation and mask passes ``step_batch`` makes after the rules, on their own."""
    _observe_passes(s, cfg, table, plan, obs, masks)


def _deal_batch(s, cfg, table, plan, out):
    """Start a match (R8) and deal a new hand in every game from its own stream, with
    observations and masks."""
    for b in prange(s.tick.shape[0]):
        _deal(s, b, cfg, table, plan, out)


def _deal_games(s, games, cfg, table, plan, out):
    """``_deal_batch`` for the games ``games`` only (indices): each starts a match and is dealt a
    new hand from its own stream; the other games, their streams and buffers, are left alone."""
    for i in range(games.shape[0]):
        _deal(s, games[i], cfg, table, plan, out)


def _step_rules_batch(s, actions, cfg, table, speed):
    """The rules alone: ``compose.play_rules`` (no match books, observations or rewards) for every
    game, and a new deal for the ended ones."""
    n = s.tick.shape[0]
    for c in prange(_run_count(n)):
        r = raw_state(s)
        lo, hi = _run_bounds(c, n)
        play_rules_span(r, lo, actions[lo:hi], cfg, table, speed, 0)
        for b in range(lo, hi):
            if r.ended[b] != RUNNING:
                shuffle_deal(r, b, cfg)


def _step_games(s, games, actions, cfg, table, speed, plan, obs, masks, reward_out, prev_score):
    """One tick of the games ``games`` only, each a single hand (no match books, no redeal):
    rewards, observations and masks (the evaluation arena, whose streams make matches), in
    passes as ``_step_batch``."""
    for i in range(games.shape[0]):
        b = games[i]
        play_scored(raw_state(s), b, actions[b], cfg, table, speed, 0.0, PLAY_OBSERVE, reward_out[b], prev_score[b])
    for i in range(games.shape[0]):
        observe_game(raw_state(s), games[i], cfg, obs[games[i]])
    for i in range(games.shape[0]):
        legal_masks(raw_state(s), games[i], cfg, table, plan, masks[games[i]])


def _play_game_tick(s, b, actions, cfg, table, speed, plan, penalty, flags, obs, masks, reward_out, prev_score):
    """``compose.play_tick`` of game ``b``, callable from Python (``nertz_env.game.Game``)."""
    play_tick(raw_state(s), b, actions, cfg, table, speed, plan, penalty, flags, raw(obs), raw(masks),
              raw(reward_out), raw(prev_score))  # fmt: skip


@njit(cache=True)
def state_vectors(s, cfg, out):
    """Every game's whole table, hidden cards included (``observe.state_vector``), into
    ``out[B, state_size]``."""
    for b in range(out.shape[0]):
        state_vector(s, b, cfg, out[b])


@njit(cache=True, inline="always")
def _legal_count(row, n_actions):
    """How many of ``row[:n_actions]`` are nonzero. Up to 255 actions the count is kept in a byte,
    which the compiler sums 32 at a time (an int64 count widens every byte: 4x slower)."""
    if n_actions > 255:
        count = 0
        for a in range(n_actions):
            count += row[a] != 0
        return count
    small = np.uint8(0)
    for a in range(n_actions):
        small = np.uint8(small + np.uint8(row[a] != 0))
    return np.int64(small)


def _sample_legal_rows(masks, streams, out):
    """A uniform legal action per row of ``masks[M, N]`` into ``out[M]`` (-1 where none is legal).
    Stream ``g`` of ``streams[G]`` draws for rows ``g * M // G`` to ``(g + 1) * M // G - 1``."""
    masks = raw(masks)
    n_rows, n_actions = masks.shape
    per = n_rows // streams.shape[0]
    for g in prange(streams.shape[0]):
        for i in range(g * per, (g + 1) * per):
            row = masks[i]
            count = _legal_count(row, n_actions)
            if count == 0:
                out[i] = -1
                continue
            k = below(streams, g, count)
            for a in range(n_actions):
                if row[a] != 0:
                    if k == 0:
                        out[i] = a
                        break
                    k -= 1


step_batch = njit(cache=True)(_step_batch)
_settle_called = njit(cache=True)(twin(python_of(_settle), "_called"))
step_batch_threaded = njit(cache=True, parallel=True)(twin(_step_batch, "_threaded", _settle=_settle_called))
deal_batch = njit(cache=True)(_deal_batch)
deal_batch_threaded = njit(cache=True, parallel=True)(twin(_deal_batch, "_threaded"))
deal_games = njit(cache=True)(_deal_games)
step_rules_batch = njit(cache=True)(_step_rules_batch)
step_games = njit(cache=True)(_step_games)
play_game_tick = njit(cache=True)(_play_game_tick)
sample_legal_rows = njit(cache=True)(_sample_legal_rows)
sample_legal_rows_threaded = njit(cache=True, parallel=True)(twin(_sample_legal_rows, "_threaded"))
