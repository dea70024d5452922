"""Whole batches in one compiled call: step, rewards, same-step reset, observations and masks.

``nertz_env.vector.NertzVectorEnv`` is a thin layer over these kernels. Each kernel loops over the
games of a batch and calls the same per-game functions the single game uses (``tick.step``,
``observe.rewards``, ``observe.observe_game``, ``observe.legal_masks``, ``core.shuffle_deal``), so
a batch plays exactly the games ``nertz_env.game.Game`` plays. Every game draws its chance from
its own stream ``s.rng[b]``, so the ``*_threaded`` twins (numba ``prange`` over games) give the
same results as the serial kernels, whatever the number of threads.

Outputs go into preallocated arrays (``Buffers``); nothing is allocated per tick except what
``tick.step`` allocates itself.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from nertz_env.config import C_EPISODE, C_PLAYERS
from nertz_env.engine.core import shuffle_deal
from nertz_env.engine.match import episode_over, match_step, n_teams, running_value, start_match, team_sum
from nertz_env.engine.observe import legal_masks, observe_game, raw, raw_state, rewards
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
from nertz_env.engine.tick import step


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


def new_buffers(batch: int, num_players: int, obs_dim: int, num_actions: int, num_teams: int = 0) -> Buffers:
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
# One game of the batch


@njit(cache=True, inline="always")
def _tick(s, b, actions, cfg, table, speed, plan, penalty, out):
    """Game ``b``: one tick, its rewards, and if the episode (a hand, or a match, R8) ended its
    final record and a new deal from the game's own stream (same-step reset); then the
    observations and masks. Inside a match an ended hand is recorded and the next one dealt."""
    s = raw_state(s)
    n_players = cfg[C_PLAYERS]
    match = cfg[C_EPISODE] != 0
    prev, rew = raw(out.prev_score)[b], raw(out.rewards)[b]
    for p in range(n_players):
        prev[p] = running_value(s, b, p, cfg)
    step(s, b, actions, cfg, table, speed)
    if match:
        match_step(s, b, cfg)
    rewards(s, b, prev, cfg, rew)
    illegal, collision = raw(out.illegal)[b], raw(out.collision)[b]
    for p in range(n_players):
        illegal[p] = s.illegal[b, p]
        collision[p] = s.collision[b, p]
        if illegal[p]:
            rew[p] -= penalty
    ended = s.ended[b]
    over = episode_over(s, b, cfg)
    raw(out.done)[b] = over
    terminated, truncated = raw(out.terminated)[b], raw(out.truncated)[b]
    if match:  # R8: the match is decided, or stopped at max_hands
        if s.match_info[b, MI_HAND_OVER]:
            _record_hand(s, b, n_players, out)
        raw(out.hand_done)[b] = s.match_info[b, MI_HAND_OVER] != 0
        for p in range(n_players):
            terminated[p] = s.match_info[b, MI_STATE] == MATCH_DECIDED
            truncated[p] = s.match_info[b, MI_STATE] == MATCH_CAPPED
    else:
        for p in range(n_players):
            terminated[p] = ended != RUNNING and ended != END_MAX_CYCLES
            truncated[p] = ended == END_MAX_CYCLES
    if over:
        score, callers = raw(out.final_score)[b], raw(out.final_callers)[b]
        for p in range(n_players):
            score[p] = s.match_seats[b, MS_TOTAL, p] if match else s.score[b, p]
            callers[p] = s.called[b, p]
        for t in range(n_teams(cfg)):
            raw(out.final_team_score)[b, t] = team_sum(score, t, cfg)
        raw(out.final_length)[b] = s.match_info[b, MI_TICKS] if match else s.tick[b]
        raw(out.final_reason)[b] = ended
        if match:
            raw(out.final_hands)[b] = s.match_info[b, MI_HANDS]
            for p in range(n_players):
                raw(out.final_winners)[b, p] = s.match_seats[b, MS_CONTENDER, p] != 0
        observe_game(s, b, cfg, raw(out.final_obs)[b])
        if match:
            start_match(s, b, cfg)
        shuffle_deal(s, b, cfg)
    observe_game(s, b, cfg, raw(out.obs)[b])
    legal_masks(s, b, cfg, table, plan, raw(out.masks)[b])


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
    shuffle_deal(s, b, cfg)
    observe_game(s, b, cfg, out.obs[b])
    legal_masks(s, b, cfg, table, plan, out.masks[b])
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


def _step_batch(s, actions, cfg, table, speed, plan, penalty, out):
    """Step every game of the batch (``actions[b, p]`` index the catalogue ``table``)."""
    for b in prange(s.tick.shape[0]):
        _tick(s, b, actions[b], cfg, table, speed, plan, penalty, out)


def _deal_batch(s, cfg, table, plan, out):
    """Deal a new hand in every game from its own stream, with observations and masks."""
    for b in prange(s.tick.shape[0]):
        _deal(s, b, cfg, table, plan, out)


def _step_only_batch(s, actions, cfg, table, speed, ended):
    """The rules alone: step every game and redeal the ended ones; ``ended[b]`` counts hands."""
    for b in prange(s.tick.shape[0]):
        r = raw_state(s)  # as ``_tick``: no reference counts inside the rules
        step(r, b, actions[b], cfg, table, speed)
        if r.ended[b] != RUNNING:
            ended[b] += 1
            shuffle_deal(r, b, cfg)


def _sample_legal_rows(masks, streams, out):
    """A uniform legal action per row of ``masks[M, N]`` into ``out[M]`` (-1 where none is legal).
    Stream ``g`` of ``streams[G]`` draws for rows ``g * M // G`` to ``(g + 1) * M // G - 1``."""
    n_rows, n_actions = masks.shape
    per = n_rows // streams.shape[0]
    for g in prange(streams.shape[0]):
        for i in range(g * per, (g + 1) * per):
            row = masks[i]
            count = 0
            for a in range(n_actions):
                count += row[a] != 0
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
step_batch_threaded = njit(cache=True, parallel=True)(_step_batch)
deal_batch = njit(cache=True)(_deal_batch)
deal_batch_threaded = njit(cache=True, parallel=True)(_deal_batch)
step_only_batch = njit(cache=True)(_step_only_batch)
step_only_batch_threaded = njit(cache=True, parallel=True)(_step_only_batch)
sample_legal_rows = njit(cache=True)(_sample_legal_rows)
sample_legal_rows_threaded = njit(cache=True, parallel=True)(_sample_legal_rows)


# ---------------------------------------------------------------------------------------------
# Numba's on-disk cache knows only the file of the function it compiled, but these kernels carry
# compiled copies of the rules from core.py, tick.py and observe.py. Stamp their cache entries with
# the engine's sources as well, so an edit to the rules recompiles them instead of loading stale
# code.

_ENGINE_DIR = Path(__file__).resolve().parent
_SOURCES = sorted(_ENGINE_DIR.glob("*.py")) + [_ENGINE_DIR.parent / "config.py", _ENGINE_DIR.parent / "actions.py"]


def _engine_fingerprint() -> str:
    digest = hashlib.sha256()
    for path in _SOURCES:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _stamp_caches(*dispatchers) -> None:
    fingerprint = _engine_fingerprint()
    for dispatcher in dispatchers:
        cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
        if cache_file is not None and hasattr(cache_file, "_source_stamp"):
            cache_file._source_stamp = (cache_file._source_stamp, fingerprint)


_stamp_caches(
    *(f for f in list(globals().values()) if getattr(getattr(f, "py_func", None), "__module__", None) == __name__)
)
