"""Whole batches in one compiled call: the games of a batch each play ``compose.play_tick`` (or
are dealt by ``compose.deal_game``), the composer ``nertz_env.game.Game`` and the evaluation arena
use too, so a batch plays exactly the games a single game plays. Every game draws its chance from
its own stream ``s.rng[b]``, so the ``*_threaded`` twins (numba ``prange`` over games) give the
same results as the serial kernels, whatever the number of threads.

Outputs go into preallocated arrays (``Buffers``); nothing is allocated per tick except what
``tick.step`` allocates itself.
"""

from __future__ import annotations

import types
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from nertz_env.engine.compose import PLAY_ALL, PLAY_OBSERVE, PLAY_REDEAL, deal_game, play_tick
from nertz_env.engine.match import start_match
from nertz_env.engine.rng import below


class Buffers(NamedTuple):
    """What one batched tick writes, batch first (``B`` games, ``P`` players)."""

    obs: np.ndarray  # int8 [B, P, D]: each player's observation (after a reset: the new hand's)
    masks: np.ndarray  # int8 [B, P, N]: each player's legal actions
    rewards: np.ndarray  # float32 [B, P]
    terminated: np.ndarray  # bool [B, P]: the hand ended by a call or a stall (R5)
    truncated: np.ndarray  # bool [B, P]: the hand reached max_cycles (R5)
    illegal: np.ndarray  # bool [B, P]: the action was illegal and played as WAIT
    collision: np.ndarray  # bool [B, P]: lost a foundation race (R6)
    won_race: np.ndarray  # bool [B, P]: won a contested race (R6)
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


def new_buffers(
    batch: int, num_players: int, obs_dim: int, num_actions: int, num_teams: int = 0, reward_dtype=np.float32
) -> Buffers:
    b, p = batch, num_players
    return Buffers(
        obs=np.zeros((b, p, obs_dim), np.int8),
        masks=np.zeros((b, p, num_actions), np.int8),
        rewards=np.zeros((b, p), reward_dtype),
        terminated=np.zeros((b, p), np.bool_),
        truncated=np.zeros((b, p), np.bool_),
        illegal=np.zeros((b, p), np.bool_),
        collision=np.zeros((b, p), np.bool_),
        won_race=np.zeros((b, p), np.bool_),
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
# Batches: serial kernels, and threaded twins compiled from the same Python source


def _step_batch(s, actions, cfg, table, speed, plan, penalty, out):
    """Step every game of the batch (``actions[b, p]`` index the catalogue ``table``): rules,
    match books, rewards, same-step reset, observations and masks."""
    for b in prange(s.tick.shape[0]):
        play_tick(s, b, actions[b], cfg, table, speed, plan, penalty, PLAY_ALL, out)


def _deal_batch(s, cfg, table, plan, out):
    """Start a match (R8) and deal a new hand in every game from its own stream, with
    observations and masks."""
    no_decks = np.empty((0, 52), np.int8)
    for b in prange(s.tick.shape[0]):
        start_match(s, b, cfg)
        deal_game(s, b, no_decks, cfg, table, plan, out)


def _step_rules_batch(s, actions, cfg, table, speed, plan, out):
    """The rules alone: step every game and redeal the ended ones (no observations, no rewards)."""
    for b in prange(s.tick.shape[0]):
        play_tick(s, b, actions[b], cfg, table, speed, plan, 0.0, PLAY_REDEAL, out)


def _step_games(s, games, actions, cfg, table, speed, plan, penalty, out):
    """One tick of the games ``games`` only, each a single hand (no match books, no redeal):
    rewards, ends, observations and masks (the evaluation arena, whose streams make matches)."""
    for i in range(games.shape[0]):
        b = games[i]
        play_tick(s, b, actions[b], cfg, table, speed, plan, penalty, PLAY_OBSERVE, out)


def _play_game_tick(s, b, actions, cfg, table, speed, plan, penalty, flags, out):
    """One tick of game ``b`` (``compose.play_tick``), callable from Python (``nertz_env.game``)."""
    play_tick(s, b, actions, cfg, table, speed, plan, penalty, flags, out)


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


def _twin(func):
    """A copy of ``func`` under its own name, so that its threaded compilation has a cache entry
    of its own (numba names a cache entry after the Python function, not its options)."""
    twin = types.FunctionType(func.__code__, func.__globals__, func.__name__ + "_threaded", func.__defaults__)
    twin.__qualname__ = func.__qualname__ + "_threaded"
    twin.__doc__ = func.__doc__
    return twin


step_batch = njit(cache=True)(_step_batch)
step_batch_threaded = njit(cache=True, parallel=True)(_twin(_step_batch))
deal_batch = njit(cache=True)(_deal_batch)
deal_batch_threaded = njit(cache=True, parallel=True)(_twin(_deal_batch))
step_rules_batch = njit(cache=True)(_step_rules_batch)
step_games = njit(cache=True)(_step_games)
play_game_tick = njit(cache=True)(_play_game_tick)
sample_legal_rows = njit(cache=True)(_sample_legal_rows)
sample_legal_rows_threaded = njit(cache=True, parallel=True)(_twin(_sample_legal_rows))
