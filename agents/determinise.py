"""Whole tables consistent with what one player sees: the determinisations of a search.

An observation (R9) shows every layout's face-up cards, each player's cards on the foundations,
the counts of every pile and the viewer's own waste (and, once turned through, stock) in order.
What it hides is the order of the cards below each Nertz top, below each other waste top and in
each stock. ``determinise`` deals those hidden cards, at random from a seeded generator, into a
full ``engine.State`` whose observation for seat 0 is exactly the one given (the viewer sits in
seat 0 and opponent ``k`` in seat ``k``: the layout is egocentric). Every pile it writes is one the
rules allow (``checks.check_table`` accepts it): work piles in their R4.3 order (ranks fall by one
from the bottom), foundation piles of one suit from the ace up (R4.2), the R7 running scores.

What the observation does not carry is set as at a hand's start: the tick count (0, or where the
viewer knows their stock the first tick at which they can have turned through it, R9 and
``engine.first_known_stock_tick``; under the standard timing only ``max_cycles`` reads it), the
R5 stall cycle (measured afresh on the table's first tick), and whether an opponent has turned through
their stock (their memory, R9, which no rule reads). Only the standard timing and single hands:
the R3 timing options, R4.8 Nertz builds and R8 matches carry state this module does not rebuild.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numba import njit

from nertz_env import engine
from nertz_env.actions import ActionCatalogue
from nertz_env.check_agent_inputs import AgentInputCheck
from nertz_env.config import NertzConfig, is_int
from nertz_env.engine import r7_score, stamp_compiled
from nertz_env.layout import ObservationLayout

# Positions in the offsets vector ``_fill`` reads (named parts of ``ObservationLayout``).
(
    F_BLOCK,
    F_NERTZ_TOP,
    F_WASTE_TOP,
    F_FOUNDATION,
    F_NERTZ_COUNT,
    F_STOCK_COUNT,
    F_WASTE_COUNT,
    F_CALLED,
    F_WASTE_ORDER,
    F_STOCK_ORDER,
    F_STOCK_KNOWN,
    F_TOPS,
    F_SINCE,
    F_ROTATIONS,
    F_PENALTY,
    F_BONUS,
    F_WORK0,
) = range(17)
BAD_FOUNDATIONS = -1  # what ``_fill`` returns when no foundation piles fit (else 0, or 1 + a player)


class Determiniser:
    """Fills ``engine.State`` games with tables consistent with an observation of ``config``."""

    def __init__(self, config: NertzConfig):
        if not config.is_default_timing or config.nertz_builds or config.episode != "hand":
            raise ValueError(
                "determinise rebuilds tables of single hands with the standard timing only: got "
                f"turn_based={config.turn_based}, move_ticks={config.move_ticks}, nertz_builds={config.nertz_builds}, "
                f"episode={config.episode!r}; accepted the defaults of those options"
            )
        self.config = config
        layout = ObservationLayout(config)
        self._check = AgentInputCheck(config, layout, ActionCatalogue(config).table)
        self._like = engine.new_state(1, config.num_players, config.work_piles)  # the shapes ``fill`` accepts
        s = layout.slices
        self.n_players = config.num_players
        parts = ("nertz_top", "waste_top", "foundation", "nertz_count", "stock_count", "waste_count", "called")
        shared = ("own_waste_order", "own_stock_order", "own_stock_known", "foundation_tops", "since_progress",
                  "stall_rotations")  # fmt: skip
        offsets = [s["opp1.nertz_top"].start if self.n_players > 1 else 0]
        offsets += [s[f"self.{name}"].start for name in parts] + [s[name].start for name in shared]
        offsets += [config.nertz_penalty, config.call_bonus]
        offsets += [s[f"self.work{j}"].start for j in range(config.work_piles)]
        self.offsets = np.array(offsets, np.int64)
        self.known_stock_tick = engine.first_known_stock_tick(config.packed, 0, ended=False)

    def fill(self, state: engine.State, b: int, obs: np.ndarray, rng: np.random.Generator) -> None:
        """Write into game ``b`` of ``state`` (a table of this config) a table whose seat-0
        observation is ``obs``, its hidden cards drawn with ``rng``. Raises ``ValueError`` where
        ``obs`` fits no table of the rules (``AgentInputCheck`` first: nothing unchecked is written)
        or ``b`` is not a game of ``state``."""
        if not isinstance(state, engine.State):
            raise TypeError(f"state must be an engine.State (engine.new_state), got {type(state).__name__}")
        for name, field, like in zip(engine.State._fields, state, self._like):
            if not isinstance(field, np.ndarray) or field.shape[1:] != like.shape[1:] or field.dtype != like.dtype:
                got = f"{field.dtype} {field.shape}" if isinstance(field, np.ndarray) else type(field).__name__
                raise ValueError(f"state.{name} is {got}; accepted games of this config, as engine.new_state(n, "
                                 f"{self.n_players}, {self.config.work_piles}) makes them ({like.dtype} {like.shape})")
        games = min(len(field) for field in state)
        if not is_int(b) or not 0 <= b < games:
            raise ValueError(f"game b={b!r} is not one of the state's {games} games; accepted 0..{games - 1}")
        obs = self._check.observations(np.asarray(obs)[None], "Determiniser.fill")[0]
        draws = rng.random((2, self.n_players, 52))
        code = _fill(state, int(b), obs, self.offsets, draws)
        state.rng[b] = rng.integers(0, 2**63, dtype=np.uint64)
        if code == 0 and state.stock_known[b, 0]:  # a table the rules reach: a stock known once turned through
            state.tick[b] = self.known_stock_tick
        if code > 0:
            raise ValueError(
                f"the observation's player {code - 1} block fits no table: its Nertz, waste and stock "
                "counts do not add up to its unseen cards; accepted observations written by the engine"
            )
        if code == BAD_FOUNDATIONS:
            raise ValueError(
                "the observation fits no table: its foundation_tops do not match the cards the players "
                "show on foundations; accepted observations written by the engine"
            )


@njit(cache=True)
def _ordered(part, cards, n) -> None:
    """``cards[:n]`` bottom first from a memory part (1 = the top, 2 = below it, ...)."""
    for c in range(52):
        if part[c] > 0:
            if not 0 <= n - part[c] < cards.shape[0]:  # no write outside the pile
                raise ValueError("a memory part numbers a card past its pile's count (R9)")
            cards[n - part[c]] = c


@njit(cache=True)
def _fill_layout(s, b, q, obs, off, draws) -> bool:
    """Player ``q``'s layout from their block (and, for the viewer, its memory); False if the counts
    do not fit the unseen cards."""
    base = q * off[F_BLOCK]
    seen = np.zeros(52, np.bool_)
    tops = np.full(2, -1, np.int64)  # Nertz top, waste top
    n_found = 0
    for c in range(52):
        if obs[base + off[F_NERTZ_TOP] + c]:
            tops[0] = c
            seen[c] = True
        if obs[base + off[F_WASTE_TOP] + c]:
            tops[1] = c
            seen[c] = True
        if obs[base + off[F_FOUNDATION] + c]:
            n_found += 1
            seen[c] = True
    for j in range(s.work.shape[2]):
        h = 0
        for r in range(12, -1, -1):  # R4.3: ranks fall by one from the bottom up
            for suit in range(4):
                if obs[base + off[F_WORK0 + j] + suit * 13 + r]:
                    if h >= s.work.shape[3]:  # no write outside the pile
                        raise ValueError("a work pile holds more than 13 cards (R4.3)")
                    s.work[b, q, j, h] = suit * 13 + r
                    seen[suit * 13 + r] = True
                    h += 1
        s.work_len[b, q, j] = h
    n_nertz, n_stock = obs[base + off[F_NERTZ_COUNT]], obs[base + off[F_STOCK_COUNT]]
    n_waste = obs[base + off[F_WASTE_COUNT]]
    known_waste = q == 0
    known_stock = q == 0 and obs[off[F_STOCK_KNOWN]] != 0
    if known_waste:
        _ordered(obs[off[F_WASTE_ORDER] :], s.waste[b, q], n_waste)
    if known_stock:
        _ordered(obs[off[F_STOCK_ORDER] :], s.stock[b, q], n_stock)
        s.stock_known[b, q] = True
    for c in range(52):
        if (known_waste and obs[off[F_WASTE_ORDER] + c] > 0) or (known_stock and obs[off[F_STOCK_ORDER] + c] > 0):
            seen[c] = True
    hidden = np.flatnonzero(~seen)
    hidden = hidden[np.argsort(draws[q][hidden])]  # the unseen cards in a random order
    below_nertz = max(n_nertz - 1, 0)
    below_waste = 0 if known_waste else max(n_waste - 1, 0)
    stock_drawn = 0 if known_stock else n_stock
    if (
        (tops[0] >= 0) != (n_nertz > 0)
        or (tops[1] >= 0) != (n_waste > 0)
        or below_nertz + below_waste + stock_drawn != len(hidden)
    ):
        return False  # fmt: skip
    s.nertz[b, q, :below_nertz] = hidden[:below_nertz]
    if n_nertz > 0:
        s.nertz[b, q, below_nertz] = tops[0]
    if not known_waste:
        s.waste[b, q, :below_waste] = hidden[below_nertz : below_nertz + below_waste]
        if n_waste > 0:
            s.waste[b, q, below_waste] = tops[1]
    if not known_stock:
        s.stock[b, q, :n_stock] = hidden[below_nertz + below_waste :]
    s.nertz_len[b, q], s.waste_len[b, q], s.stock_len[b, q] = n_nertz, n_waste, n_stock
    called = obs[base + off[F_CALLED]] != 0
    s.on_foundations[b, q], s.called[b, q] = n_found, called
    s.score[b, q] = r7_score(n_found, n_nertz, called, off[F_PENALTY], off[F_BONUS])
    return True


@njit(cache=True)
def _fill_foundations(s, b, obs, off, draws) -> bool:
    """R4.2 piles from ``foundation_tops``: the piles of a suit tallest first, and each card of it
    given, in a random order, to the players whose ``foundation`` part shows it (R1: a player holds
    one card of each code). False if the shown cards do not fill the piles exactly."""
    n_players = s.nertz.shape[1]
    f = 0
    for suit in range(4):
        first = f
        for r in range(13, 0, -1):  # the piles whose top is rank r, tallest first
            for _ in range(obs[off[F_TOPS] + suit * 13 + r - 1]):
                if f >= s.foundation_suit.shape[1]:  # never past the game's row of 4 * P piles
                    raise ValueError("foundation_tops count more piles than the 4 * P a table has (R4.2)")
                s.foundation_suit[b, f], s.foundation_len[b, f] = suit, r
                s.foundation_tops[b, suit, r] += 1
                f += 1
        for r in range(1, 14):
            c = suit * 13 + r - 1
            owners = np.array([q for q in range(n_players) if obs[q * off[F_BLOCK] + off[F_FOUNDATION] + c]], np.int64)
            owners = owners[np.argsort(draws[owners, c])]
            k = 0
            while first + k < f and s.foundation_len[b, first + k] >= r:
                k += 1
            if k != len(owners):
                return False
            for i in range(k):
                s.foundations[b, first + i, r - 1] = owners[i] * 52 + c
    s.n_foundations[b] = f
    return True


@njit(cache=True)
def _fill(s, b, obs, off, draws) -> int:
    """Game ``b`` of ``s`` from the seat-0 observation ``obs`` and uniforms ``draws[2, P, 52]``: 0,
    or 1 + the player whose block fits no layout, or ``BAD_FOUNDATIONS``."""
    if not 0 <= b < s.nertz.shape[0]:
        raise IndexError("game b is not one of the state's games")
    s.nertz[b], s.work[b], s.stock[b], s.waste[b], s.foundations[b] = 0, 0, 0, 0, 0
    s.nertz_len[b], s.work_len[b], s.stock_len[b], s.waste_len[b], s.stock_known[b] = 0, 0, 0, 0, False
    s.foundation_len[b], s.foundation_suit[b], s.foundation_tops[b], s.on_foundations[b] = 0, 0, 0, 0
    s.called[b], s.score[b], s.collision[b], s.won_race[b], s.illegal[b], s.air[b] = False, 0, False, False, False, 0
    s.match_seats[b], s.match_info[b] = 0, 0
    s.tick[b], s.ended[b], s.stall_cycle[b] = 0, 0, 0  # R5: the cycle is measured afresh on the first tick
    s.since_progress[b], s.rotations[b] = obs[off[F_SINCE]], obs[off[F_ROTATIONS]]
    for q in range(s.nertz.shape[1]):
        if not _fill_layout(s, b, q, obs, off, draws[0]):
            return q + 1
    return 0 if _fill_foundations(s, b, obs, off, draws[1]) else BAD_FOUNDATIONS


stamp_compiled(globals(), Path(__file__).resolve().parent)
