"""The table of a batch of games as plain numpy arrays (struct of arrays, batch first).

Piles are stored bottom to top, so the last used slot is the card on top (R10). Player cards are
codes 0..51 of the owner's deck; foundation cards are global ids ``owner * 52 + card`` (R1).

With ``nertz_builds`` (R4.8) a Nertz pile, and through it a work pile, may hold another player's
cards: ``nertz_owner`` and ``work_owner`` give the owner seat of every card there. They are kept
only under that option; without it every card of a layout is its holder's and they stay unused.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

RUNNING, END_CALL, END_STALL, END_MAX_CYCLES = 0, 1, 2, 3
END_REASONS = (None, "call", "stall", "max_cycles")
# Columns of State.air (option move_ticks): the move in the air lands in the AIR_TICKS-th tick from
# now (0: nothing in the air); its catalogue row; its action kind; the card it carries (the first
# of a block; -1 for DRAW and CALL).
AIR_TICKS, AIR_ACTION, AIR_KIND, AIR_CARD = range(4)
# The state of a match (R8, ``episode="match"``): hands to play, a tie being played off, decided,
# or stopped undecided at ``max_hands`` (a truncation).
MATCH_PLAYING, MATCH_TIE_BREAK, MATCH_DECIDED, MATCH_CAPPED = 0, 1, 2, 3
# Rows of ``State.match_seats`` (per seat): the match totals of the finished hands, the R7 scores
# of the hand that ended last, who may still win the match (1; after a tie only the tied), and who
# called in the hand that ended last.
MS_TOTAL, MS_LAST, MS_CONTENDER, MS_CALLED = 0, 1, 2, 3
# Columns of ``State.match_info`` (per game): hands finished, MATCH_*, ticks of the match over all
# hands, whether a hand ended in the last tick, and that hand's end reason (END_*) and ticks.
MI_HANDS, MI_STATE, MI_TICKS, MI_HAND_OVER, MI_LAST_REASON, MI_LAST_TICKS = 0, 1, 2, 3, 4, 5


class State(NamedTuple):
    nertz: np.ndarray  # int8 [B, P, 52]
    nertz_len: np.ndarray  # int16 [B, P]
    work: np.ndarray  # int8 [B, P, W, 13]
    work_len: np.ndarray  # int8 [B, P, W]
    stock: np.ndarray  # int8 [B, P, 52], top at stock_len - 1
    stock_len: np.ndarray  # int16 [B, P]
    waste: np.ndarray  # int8 [B, P, 52], top at waste_len - 1
    waste_len: np.ndarray  # int16 [B, P]
    stock_known: np.ndarray  # bool [B, P]: the owner has turned through the whole stock (R9)
    foundations: np.ndarray  # int16 [B, F, 13] global card ids, F = 4 * P
    foundation_len: np.ndarray  # int8 [B, F]
    foundation_suit: np.ndarray  # int8 [B, F]
    n_foundations: np.ndarray  # int16 [B]
    foundation_tops: np.ndarray  # int8 [B, 4, 14]: piles of suit s whose top rank is r
    on_foundations: np.ndarray  # int16 [B, P]: cards of each player on foundations (R7)
    called: np.ndarray  # bool [B, P]
    score: np.ndarray  # int32 [B, P]: running R7 score
    tick: np.ndarray  # int32 [B]
    since_progress: np.ndarray  # int32 [B] (R5)
    rotations: np.ndarray  # int32 [B]: stall rotations in a row without progress (R5)
    ended: np.ndarray  # int8 [B]: RUNNING or END_*
    rng: np.ndarray  # uint64 [B]: each game's own random stream
    collision: np.ndarray  # bool [B, P]: lost a foundation race last tick (R6)
    won_race: np.ndarray  # bool [B, P]: won a contested race last tick (R6)
    illegal: np.ndarray  # bool [B, P]: last action was illegal and played as WAIT
    # Option move_ticks (R3): each player's move in the air, one array (every State field costs
    # the compiled calls that pass the state), columns AIR_*.
    air: np.ndarray  # int16 [B, P, 4]
    # episode="match" and partners (R8), packed in two arrays (each array is one more argument to
    # unbox on every call from Python): rows MS_* per seat and columns MI_* per game.
    match_seats: np.ndarray  # int32 [B, 4, P]: MS_TOTAL, MS_LAST, MS_CONTENDER, MS_CALLED
    match_info: np.ndarray  # int32 [B, 6]: MI_HANDS, MI_STATE, MI_TICKS, MI_HAND_OVER, MI_LAST_REASON, MI_LAST_TICKS
    # nertz_builds (R4.8): the owner seat of each card of the Nertz and work piles (R1)
    nertz_owner: np.ndarray  # int8 [B, P, 52]
    work_owner: np.ndarray  # int8 [B, P, W, 13]
    # R5: ticks of a whole stock cycle, measured from the table of the last progress (0: the hand's
    # first tick measures it on the dealt table)
    stall_cycle: np.ndarray  # int32 [B]


def new_state(batch: int, num_players: int, work_piles: int) -> State:
    b, p, w = batch, num_players, work_piles
    return State(
        nertz=np.zeros((b, p, 52), np.int8),
        nertz_len=np.zeros((b, p), np.int16),
        work=np.zeros((b, p, w, 13), np.int8),
        work_len=np.zeros((b, p, w), np.int8),
        stock=np.zeros((b, p, 52), np.int8),
        stock_len=np.zeros((b, p), np.int16),
        waste=np.zeros((b, p, 52), np.int8),
        waste_len=np.zeros((b, p), np.int16),
        stock_known=np.zeros((b, p), np.bool_),
        foundations=np.zeros((b, 4 * p, 13), np.int16),
        foundation_len=np.zeros((b, 4 * p), np.int8),
        foundation_suit=np.zeros((b, 4 * p), np.int8),
        n_foundations=np.zeros(b, np.int16),
        foundation_tops=np.zeros((b, 4, 14), np.int8),
        on_foundations=np.zeros((b, p), np.int16),
        called=np.zeros((b, p), np.bool_),
        score=np.zeros((b, p), np.int32),
        tick=np.zeros(b, np.int32),
        since_progress=np.zeros(b, np.int32),
        rotations=np.zeros(b, np.int32),
        ended=np.zeros(b, np.int8),
        rng=np.zeros(b, np.uint64),
        collision=np.zeros((b, p), np.bool_),
        won_race=np.zeros((b, p), np.bool_),
        illegal=np.zeros((b, p), np.bool_),
        # Option move_ticks
        air=np.zeros((b, p, 4), np.int16),
        match_seats=np.zeros((b, 4, p), np.int32),
        match_info=np.zeros((b, 6), np.int32),
        nertz_owner=np.zeros((b, p, 52), np.int8),
        work_owner=np.zeros((b, p, w, 13), np.int8),
        stall_cycle=np.zeros(b, np.int32),
    )


def copy_state(state: State) -> State:
    return State(*(a.copy() for a in state))
