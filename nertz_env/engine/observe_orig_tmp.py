"""What each player sees (R9), rewards, and the full table for centralized critics.

An observation is one flat int8 vector, egocentric: the viewer's block first, then the other
players in seat order after the viewer. ``nertz_env.layout.ObservationLayout`` names its slices;
the offsets below are the same formulas.
"""

from __future__ import annotations

from numba import njit

from nertz_env.config import C_PLAYERS, C_REWARD, C_WORK
from nertz_env.engine.core import legal_mask, step
from nertz_env.engine.state import RUNNING

REWARD_DENSE, REWARD_SPARSE, REWARD_RELATIVE = 0, 1, 2


@njit(cache=True, inline="always")
def block_size(n_work) -> int:
    """Per player: Nertz top, work piles, waste top, on-foundation (52 each) and 4 counts."""
    return 52 * (n_work + 3) + 4


@njit(cache=True, inline="always")
def memory_offset(n_players, n_work) -> int:
    return n_players * block_size(n_work)


@njit(cache=True, inline="always")
def global_offset(n_players, n_work) -> int:
    return memory_offset(n_players, n_work) + 105


@njit(cache=True, inline="always")
def obs_size(n_players, n_work) -> int:
    return global_offset(n_players, n_work) + 54


@njit(cache=True, inline="always")
def state_size(n_players, n_work) -> int:
    return obs_size(n_players, n_work) - 105 + n_players * 156


@njit(cache=True)
def _public_blocks(s, b, cfg, out):
    """Write every player's public block (R9) in seat order from ``out[0]``."""
    n_players, n_work = cfg[C_PLAYERS], cfg[C_WORK]
    blk = block_size(n_work)
    for p in range(n_players):
        o = p * blk
        if s.nertz_len[b, p] > 0:
            out[o + s.nertz[b, p, s.nertz_len[b, p] - 1]] = 1
        for j in range(n_work):
            for h in range(s.work_len[b, p, j]):
                out[o + 52 * (j + 1) + s.work[b, p, j, h]] = 1
        if s.waste_len[b, p] > 0:
            out[o + 52 * (n_work + 1) + s.waste[b, p, s.waste_len[b, p] - 1]] = 1
        c = o + 52 * (n_work + 3)
        out[c] = s.nertz_len[b, p]
        out[c + 1] = s.stock_len[b, p]
        out[c + 2] = s.waste_len[b, p]
        out[c + 3] = s.called[b, p]
    for f in range(s.n_found[b]):
        for h in range(s.found_len[b, f]):
            g = s.found[b, f, h]
            out[(g // 52) * blk + 52 * (n_work + 2) + g % 52] = 1


@njit(cache=True)
def _globals(s, b, out, o):
    for suit in range(4):
        for r in range(1, 14):
            out[o + suit * 13 + r - 1] = s.found_tops[b, suit, r]
    out[o + 52] = min(s.since_progress[b], 127)
    out[o + 53] = min(s.rotations[b], 127)


@njit(cache=True)
def observe_game(s, b, cfg, out):
    """Write the observation of every player of game ``b`` into ``out[P, D]``."""
    n_players, n_work = cfg[C_PLAYERS], cfg[C_WORK]
    blk = block_size(n_work)
    mem = memory_offset(n_players, n_work)
    glo = global_offset(n_players, n_work)
    out[:n_players, :] = 0
    _public_blocks(s, b, cfg, out[0])
    _globals(s, b, out[0], glo)
    for v in range(1, n_players):  # egocentric: the viewer first, then the next seats in order
        for q in range(n_players):
            src = ((v + q) % n_players) * blk
            out[v, q * blk : (q + 1) * blk] = out[0, src : src + blk]
        out[v, glo : glo + 54] = out[0, glo : glo + 54]
    for v in range(n_players):  # R9: what the viewer remembers of their own waste and stock
        w = s.waste_len[b, v]
        for t in range(w):
            out[v, mem + s.waste[b, v, t]] = w - t  # 1 = the top
        if s.stock_known[b, v]:
            k = s.stock_len[b, v]
            for t in range(k):
                out[v, mem + 52 + s.stock[b, v, t]] = k - t  # 1 = the next card to turn
            out[v, mem + 104] = 1


@njit(cache=True)
def state_vector(s, b, cfg, out):
    """The whole table of game ``b`` in seat order, hidden cards included (for critics)."""
    n_players, n_work = cfg[C_PLAYERS], cfg[C_WORK]
    mem = memory_offset(n_players, n_work)
    out[:] = 0
    _public_blocks(s, b, cfg, out)
    _globals(s, b, out, mem)
    o = mem + 54
    for p in range(n_players):
        for t in range(s.nertz_len[b, p]):
            out[o + s.nertz[b, p, t]] = t + 1  # 1 = the bottom
        k = s.stock_len[b, p]
        for t in range(k):
            out[o + 52 + s.stock[b, p, t]] = k - t  # 1 = the next card to turn
        w = s.waste_len[b, p]
        for t in range(w):
            out[o + 104 + s.waste[b, p, t]] = w - t  # 1 = the top
        o += 156


@njit(cache=True)
def rewards(s, b, prev_score, cfg, out):
    """Rewards of the tick that moved the scores from ``prev_score`` (option ``reward``)."""
    n_players = cfg[C_PLAYERS]
    mode = cfg[C_REWARD]
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
def observe_and_mask(s, b, cfg, table, obs, masks):
    observe_game(s, b, cfg, obs)
    for p in range(cfg[C_PLAYERS]):
        legal_mask(s, b, p, cfg, table, masks[p])


@njit(cache=True)
def advance(s, b, actions, cfg, table, speed, prev_score, obs, masks, reward_out):
    """One tick of game ``b`` followed by its rewards, observations and masks."""
    for p in range(cfg[C_PLAYERS]):
        prev_score[p] = s.score[b, p]
    step(s, b, actions, cfg, table, speed)
    rewards(s, b, prev_score, cfg, reward_out)
    observe_and_mask(s, b, cfg, table, obs, masks)
