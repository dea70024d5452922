"""What each player sees (R9), rewards, and the full table for centralized critics.

An observation is one flat int8 vector, egocentric: the viewer's block first, then the other
players in seat order after the viewer. ``nertz_env.layout.ObservationLayout`` names its slices;
the offsets below are the same formulas.

Speed: these functions run once per game per tick, so they read the table through ``raw`` views
(no reference counting) and write each observation row once: row 0 is built, then copied into
the other viewers' rows with the blocks rotated. ``legal_masks`` is ``core.legal_mask`` for every
player at once; it asks the same ``core.legal_row`` about every catalogue row that could be legal.
"""

from __future__ import annotations

import numpy as np
from numba import carray, njit, types
from numba.core import ir_utils
from numba.extending import intrinsic, overload

from nertz_env.actions import TO_FOUNDATION, TO_NERTZ, TO_WORK, UNDER, WAIT, WORK_SOURCE
from nertz_env.config import C_EPISODE, C_PARTNERS, C_PLAYERS, C_REWARD, C_TURN_BASED, C_WORK
from nertz_env.engine.core import legal_row, moves_take_time, waits_only
from nertz_env.engine.match import episode_over, match_step, n_teams, running_value, tails_size, write_tails
from nertz_env.engine.state import AIR_CARD, AIR_KIND, AIR_TICKS, RUNNING, State
from nertz_env.engine.tick import step

REWARD_DENSE, REWARD_SPARSE, REWARD_RELATIVE = 0, 1, 2


# ---------------------------------------------------------------------------------------------
# Views without reference counts. Numba counts references to every array it hands around; in a
# loop that passes arrays to inlined helpers (``legal_row``) the atomic counts cost more than the
# rules. ``raw(a)`` is the same memory with no owner to count, so the compiler drops the counts.
# It only lives inside one compiled call, while the caller keeps ``a`` alive.


@intrinsic
def _data(typingctx, arr):
    """The data pointer of an array."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, signature, args):
        return context.make_array(signature.args[0])(context, builder, args[0]).data

    return types.CPointer(arr.dtype)(arr), codegen


def raw(a):
    """``a`` itself in Python; inside compiled code a view of a C-contiguous ``a`` without
    reference counting (other layouts are returned as they are)."""
    return a


@overload(raw)
def _raw(a):
    if isinstance(a, types.Array) and a.layout == "C":
        return lambda a: carray(_data(a), a.shape)
    return lambda a: a


def _aliases_its_arguments(lhs, args, alias_map, arg_aliases):
    for arg in args:  # as numba.core.ir_utils._add_alias
        if arg.name in arg_aliases:
            arg_aliases.add(lhs)
        else:
            alias_map.setdefault(lhs, set()).add(arg.name)
            alias_map.setdefault(arg.name, set()).add(lhs)


# Numba's dead-code pass drops a write into an array that is never read afterwards unless it knows
# the array aliases one that outlives the function; tell it that a raw view (or a state of raw
# views) aliases its source, or writes through it would vanish.
ir_utils.alias_func_extensions[("raw", __name__)] = _aliases_its_arguments
ir_utils.alias_func_extensions[("raw_state", __name__)] = _aliases_its_arguments
ir_utils.alias_func_extensions[(State.__name__, State.__module__)] = _aliases_its_arguments


@njit(cache=True, inline="always")
def raw_state(s):
    """Every array of the state as a ``raw`` view (see ``raw``)."""
    return State(
        raw(s.nertz), raw(s.nertz_len), raw(s.work), raw(s.work_len), raw(s.stock), raw(s.stock_len),
        raw(s.waste), raw(s.waste_len), raw(s.stock_known), raw(s.found), raw(s.found_len), raw(s.found_suit),
        raw(s.n_found), raw(s.found_tops), raw(s.on_found), raw(s.called), raw(s.score), raw(s.tick),
        raw(s.since_progress), raw(s.rotations), raw(s.ended), raw(s.rng), raw(s.collision), raw(s.won_race),
        raw(s.illegal),
        raw(s.air),  # option move_ticks
        # episode="match" and partners (R8)
        raw(s.match_seats), raw(s.match_info),
        raw(s.nertz_owner), raw(s.work_owner),  # nertz_builds (R4.8)
        raw(s.stall_cycle),  # R5
    )  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Offsets


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


@njit(cache=True, inline="always")
def timing_size(cfg) -> int:
    """The timing section at the end of observations and state vectors, present only with its
    options: who is on turn (``turn_based``, one flag per seat), then per player the ticks until
    their move in the air lands, its kind and its card + 1 (``move_ticks``)."""
    n = cfg[C_PLAYERS]
    return (n if cfg[C_TURN_BASED] != 0 else 0) + (3 * n if moves_take_time(cfg) else 0)


# ---------------------------------------------------------------------------------------------
# Observations (R9)


@njit(cache=True, inline="always")
def _zero(dst):
    for i in range(dst.shape[0]):  # indices from a range: no wraparound test, so one memset
        dst[i] = 0


@njit(cache=True, inline="always")
def _copy(dst, src):
    for i in range(dst.shape[0]):
        dst[i] = src[i]


@njit(cache=True, inline="always")
def _public_blocks(s, b, cfg, out):
    """Write every player's public block (R9) in seat order from ``out[0]`` (already zero)."""
    n_players, n_work = cfg[C_PLAYERS], cfg[C_WORK]
    blk = block_size(n_work)
    nertz, nertz_len, work, work_len = s.nertz[b], s.nertz_len[b], s.work[b], s.work_len[b]
    waste, waste_len, stock_len, called = s.waste[b], s.waste_len[b], s.stock_len[b], s.called[b]
    for p in range(n_players):
        o = p * blk
        k = nertz_len[p]
        if k > 0:
            out[o + nertz[p, k - 1]] = 1
        for j in range(n_work):
            oj = o + 52 * (j + 1)
            for h in range(work_len[p, j]):
                out[oj + work[p, j, h]] = 1
        k = waste_len[p]
        if k > 0:
            out[o + 52 * (n_work + 1) + waste[p, k - 1]] = 1
        c = o + 52 * (n_work + 3)
        out[c] = nertz_len[p]
        out[c + 1] = stock_len[p]
        out[c + 2] = k
        out[c + 3] = called[p]
    found, found_len = s.found[b], s.found_len[b]
    of = 52 * (n_work + 2)
    for f in range(s.n_found[b]):
        for h in range(found_len[f]):
            g = np.int64(found[f, h])
            out[(g // 52) * blk + of + g % 52] = 1


@njit(cache=True, inline="always")
def _globals(s, b, out, o):
    tops = s.found_tops[b]
    for suit in range(4):
        for r in range(1, 14):
            out[o + suit * 13 + r - 1] = tops[suit, r]
    out[o + 52] = min(s.since_progress[b], 127)
    out[o + 53] = min(s.rotations[b], 127)


@njit(cache=True, inline="always")
def _timing(s, b, cfg, v, out, o):
    """The timing section (``timing_size``) from seat ``v`` on, at ``out[o:]``: entry ``q`` of each
    part is about seat ``(v + q) % P`` (egocentric for a viewer, seat order for ``v = 0``)."""
    n = cfg[C_PLAYERS]
    if cfg[C_TURN_BASED] != 0:  # R3: the seat on turn
        turn = s.tick[b] % n
        for q in range(n):
            out[o + q] = (v + q) % n == turn
        o += n
    if moves_take_time(cfg):  # each player's move in the air: public, the card is face up
        for q in range(n):
            p = (v + q) % n
            t = s.air[b, p, AIR_TICKS]
            out[o + q] = t
            out[o + n + q] = s.air[b, p, AIR_KIND] if t > 0 else 0
            out[o + 2 * n + q] = s.air[b, p, AIR_CARD] + 1 if t > 0 else 0


@njit(cache=True)
def observe_game(s, b, cfg, out):
    """Write the observation of every player of game ``b`` into ``out[P, D]``."""
    s = raw_state(s)
    out = raw(out)
    n_players, n_work = cfg[C_PLAYERS], cfg[C_WORK]
    blk = block_size(n_work)
    mem = memory_offset(n_players, n_work)
    glo = global_offset(n_players, n_work)
    size = glo + 54
    row = out[0]
    _zero(row[:size])
    _public_blocks(s, b, cfg, row)
    _globals(s, b, row, glo)
    for v in range(1, n_players):  # egocentric: the viewer first, then the next seats in order
        dst = out[v]
        for q in range(n_players):
            src = ((v + q) % n_players) * blk
            _copy(dst[q * blk : (q + 1) * blk], row[src : src + blk])
        _zero(dst[mem:glo])
        _copy(dst[glo:size], row[glo:size])
    waste, waste_len, stock, stock_len = s.waste[b], s.waste_len[b], s.stock[b], s.stock_len[b]
    for v in range(n_players):  # R9: what the viewer remembers of their own waste and stock
        dst = out[v]
        w = waste_len[v]
        for t in range(w):
            dst[mem + waste[v, t]] = w - t  # 1 = the top
        if s.stock_known[b, v]:
            k = stock_len[v]
            for t in range(k):
                dst[mem + 52 + stock[v, t]] = k - t  # 1 = the next card to turn
            dst[mem + 104] = 1
    if cfg[C_TURN_BASED] != 0 or moves_take_time(cfg):
        for v in range(n_players):
            _timing(s, b, cfg, v, out[v], size)
    if tails_size(cfg) > 0:  # R8: partners and match sections, per viewer, after the timing section
        for v in range(n_players):
            write_tails(s, b, cfg, v, out[v], size + timing_size(cfg))


@njit(cache=True)
def state_vector(s, b, cfg, out):
    """The whole table of game ``b`` in seat order, hidden cards included (for critics). Cards are
    by code, whoever owns them (R4.8); where a Nertz pile holds one code twice the upper shows."""
    s = raw_state(s)
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
    if cfg[C_TURN_BASED] != 0 or moves_take_time(cfg):
        _timing(s, b, cfg, 0, out, o)
    if tails_size(cfg) > 0:  # R8 sections as seat 0 sees them: players in seat order
        write_tails(s, b, cfg, 0, out, o + timing_size(cfg))


# ---------------------------------------------------------------------------------------------
# Legal-action masks (R4)


@njit(cache=True)
def mask_plan(table):
    """The catalogue ``table`` as runs for ``legal_masks``: one row ``(first, kind, source,
    destination, n, count)`` per run of catalogue rows ``first .. first + count - 1``. A run is one
    row, or the moves of blocks of ``n, n + 1, ...`` cards between the same two work piles."""
    n_rows = table.shape[0]
    plan = np.empty((n_rows, 6), np.int16)
    g, a = 0, 0
    while a < n_rows:
        kind, src, dst, n = table[a, 0], table[a, 1], table[a, 2], table[a, 3]
        count = 1
        if kind == TO_WORK and src >= WORK_SOURCE:
            while a + count < n_rows and table[a + count, 0] == kind and table[a + count, 1] == src:
                if table[a + count, 2] != dst or table[a + count, 3] != n + count:
                    break
                count += 1
        plan[g, 0], plan[g, 1], plan[g, 2], plan[g, 3], plan[g, 4], plan[g, 5] = a, kind, src, dst, n, count
        g += 1
        a += count
    return plan[:g].copy()


@njit(cache=True)
def legal_masks(s, b, cfg, table, plan, out):
    """Every player's mask of game ``b`` over the catalogue ``table`` into ``out[P, N]`` (int8):
    row ``p`` equals ``core.legal_mask(s, b, p, ...)``, asked of the same ``core.legal_row``.
    ``plan`` is ``mask_plan(table)``: a run of block moves is asked only about the blocks the
    source pile holds (the others have no card to move)."""
    s = raw_state(s)
    cfg, table, plan, out = raw(cfg), raw(table), raw(plan), raw(out)
    n_players, n_work = cfg[C_PLAYERS], cfg[C_WORK]
    n_actions = table.shape[0]
    if s.ended[b] != RUNNING:
        for p in range(n_players):
            for a in range(n_actions):
                out[p, a] = table[a, 0] == WAIT
        return
    tops = s.found_tops[b]
    nertz, nertz_len = s.nertz, s.nertz_len  # the targets of R4.8 (whole: raw, so no view is made)
    for p in range(n_players):
        mask = out[p]
        if waits_only(s, b, p, cfg):  # R3 timing options: off turn, or a move in the air
            for a in range(n_actions):
                mask[a] = table[a, 0] == WAIT
            continue
        for a in range(n_actions):
            mask[a] = 0
        k = s.nertz_len[b, p]
        nt = np.int64(s.nertz[b, p, k - 1]) if k > 0 else np.int64(-1)  # the Nertz top, -1 if none
        k = s.waste_len[b, p]
        wt = np.int64(s.waste[b, p, k - 1]) if k > 0 else np.int64(-1)
        work, work_len = s.work[b, p], s.work_len[b, p]
        any_empty = False
        for j in range(n_work):
            if work_len[j] == 0:
                any_empty = True
        can_draw = s.stock_len[b, p] > 0 or k > 0
        for g in range(plan.shape[0]):
            a, kind, n = np.int64(plan[g, 0]), plan[g, 1], np.int64(plan[g, 4])
            src, dst = np.int64(plan[g, 2]), np.int64(plan[g, 3])
            # The kind is a constant where it is known, so each inlined copy of legal_row keeps
            # only its own branch.
            if kind == TO_WORK and src >= WORK_SOURCE:
                held = np.int64(work_len[src - WORK_SOURCE])
                for t in range(min(np.int64(plan[g, 5]), held - n + 1)):
                    mask[a + t] = legal_row(
                        TO_WORK, src, dst, n + t, nt, wt, work, work_len, tops, can_draw, any_empty, cfg,
                        b, p, nertz, nertz_len,
                    )  # fmt: skip
            elif kind == TO_WORK:
                mask[a] = legal_row(
                    TO_WORK, src, dst, n, nt, wt, work, work_len, tops, can_draw, any_empty, cfg, b, p, nertz, nertz_len
                )
            elif kind == TO_FOUNDATION:
                mask[a] = legal_row(
                    TO_FOUNDATION, src, dst, n, nt, wt, work, work_len, tops, can_draw, any_empty, cfg,
                    b, p, nertz, nertz_len,
                )  # fmt: skip
            elif kind == UNDER:
                mask[a] = legal_row(
                    UNDER, src, dst, n, nt, wt, work, work_len, tops, can_draw, any_empty, cfg, b, p, nertz, nertz_len
                )
            elif kind == TO_NERTZ:
                mask[a] = legal_row(
                    TO_NERTZ, src, dst, n, nt, wt, work, work_len, tops, can_draw, any_empty, cfg,
                    b, p, nertz, nertz_len,
                )  # fmt: skip
            else:
                mask[a] = legal_row(
                    kind, src, dst, n, nt, wt, work, work_len, tops, can_draw, any_empty, cfg, b, p, nertz, nertz_len
                )


# ---------------------------------------------------------------------------------------------
# Rewards and one whole tick


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
        half = n_players // 2
        for p in range(half):
            team = out[p] + out[p + half]
            out[p] = team
            out[p + half] = team
    if mode == REWARD_RELATIVE:
        teams = n_teams(cfg)
        total = 0.0
        for t in range(teams):  # seat t plays in team t
            total += out[t]
        for p in range(n_players):
            out[p] = out[p] - (total - out[p]) / (teams - 1)


@njit(cache=True)
def observe_and_mask(s, b, cfg, table, obs, masks):
    observe_game(s, b, cfg, obs)
    legal_masks(s, b, cfg, table, mask_plan(table), masks)


@njit(cache=True)
def advance(s, b, actions, cfg, table, speed, prev_score, obs, masks, reward_out):
    """One tick of game ``b`` followed by its rewards, observations and masks; in a match (R8) an
    ended hand is added to the totals and the next one dealt (``match.match_step``)."""
    for p in range(cfg[C_PLAYERS]):
        prev_score[p] = running_value(s, b, p, cfg)
    step(s, b, actions, cfg, table, speed)
    if cfg[C_EPISODE] != 0:
        match_step(s, b, cfg)
    rewards(s, b, prev_score, cfg, reward_out)
    observe_and_mask(s, b, cfg, table, obs, masks)
