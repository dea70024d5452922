"""The rules a saved table must keep beyond its ranges and card conservation (``checks.check_table``
runs these, and shares their ``fail``): flags that are 0 or 1, Nertz piles of a size the deal and
R4.8 allow, calls only from an empty Nertz pile (R4.6), a stock its owner knows (R9) only once they
can have turned through it (R4.1), and a match (R8) whose counters are in
range, whose contenders agree with its state and whose counters cannot overflow while it goes on.
Each breach is a ``ValueError`` naming the field and what is accepted, so that no restored table
plays on into a state the env cannot show (an observation outside its own observation space) or
the compiled engine cannot count (int32)."""

from __future__ import annotations

import numpy as np

from nertz_env import engine
from nertz_env.config import MAX_OBSERVED_TOTAL, NertzConfig


def fail(what: str, accepted: str) -> None:
    """The refusal of every table check (``checks.check_table``): what is wrong, what is accepted."""
    raise ValueError(f"invalid saved table: {what}; {accepted}")


def check_flags(s: engine.State) -> None:
    """Every bool field holds the byte 0 or 1: a numpy bool array written through an integer view
    can hold any byte, which reads as True in Python but not in compiled comparisons."""
    for name, a in zip(engine.State._fields, s):
        if a.dtype != np.bool_:
            continue
        raw = a.view(np.uint8)
        if (raw > 1).any():
            where = tuple(int(i) for i in np.argwhere(raw > 1)[0])
            fail(f"{name}{list(where)} holds the byte {int(raw[where])}", "bool fields hold 0 (False) or 1 (True)")


def check_table_rules(s: engine.State, config: NertzConfig) -> None:
    """The match's ranges, the Nertz piles and calls (R2, R4.6, R4.8) and the match's rules (R8) of
    a table that passed the other checks."""
    check_match_ranges(s, config)
    check_nertz_piles(s, config)
    check_stock_known(s, config)
    check_match_rules(s, config)


def check_match_ranges(s: engine.State, config: NertzConfig) -> None:
    """R8's counters and flags each within its range: totals within what ``max_hands`` hands of this
    config can score, flags 0 or 1, hands, state, last end reason and ticks in range."""
    seats, info = s.match_seats[0].astype(np.int64), s.match_info[0].astype(np.int64)
    worst = config.max_hands * (52 * (config.nertz_penalty + 1) + config.call_bonus)
    if (np.abs(seats[engine.MS_TOTAL]) > worst).any() or (np.abs(seats[engine.MS_LAST]) > worst).any():
        fail(f"match totals {seats[engine.MS_TOTAL].tolist()}", f"totals within +-{worst} under this config")
    flags = np.concatenate([seats[engine.MS_CONTENDER], seats[engine.MS_CALLED], info[[engine.MI_HAND_OVER]]])
    if ((flags != 0) & (flags != 1)).any():
        fail("a match flag is not 0 or 1", "contender, called and hand_over are 0 or 1")
    if not 0 <= info[engine.MI_HANDS] <= config.max_hands or not 0 <= info[engine.MI_STATE] <= 3:
        fail(f"match hands {info[engine.MI_HANDS]}, state {info[engine.MI_STATE]}",
             f"0..max_hands={config.max_hands} hands, states 0..3")  # fmt: skip
    if not 0 <= info[engine.MI_LAST_REASON] < len(engine.END_REASONS) or info[engine.MI_TICKS] < 0:
        fail("match end reason or ticks out of range", "a match saved by get_state()")
    if not 0 <= info[engine.MI_LAST_TICKS] <= config.max_cycles:
        fail(f"last hand's ticks {info[engine.MI_LAST_TICKS]}", f"0..max_cycles={config.max_cycles}")


def check_nertz_piles(s: engine.State, config: NertzConfig) -> None:
    """R2, R4.8: a Nertz pile holds at most the ``nertz_pile_size`` cards dealt to it, unless
    ``nertz_builds`` lets the other players add to it (then up to 52, the observation's bound).
    R4.6, R5: a player who called did so from an empty Nertz pile, and nothing lands on an empty
    pile (an R4.8 build needs a top card), so it is still empty."""
    lengths = s.nertz_len[0].astype(np.int64)
    size = config.nertz_pile_size
    if not config.nertz_builds and (lengths > size).any():
        p = int(np.argmax(lengths > size))
        accepted = f"a deal of nertz_pile_size={size} gives at most {size}, and only nertz_builds (R4.8) adds any (R2)"
        fail(f"player {p}'s Nertz pile holds {int(lengths[p])} cards (nertz_len)", accepted)
    called = s.called[0] & (lengths > 0)
    if called.any():
        p = int(np.argmax(called))
        fail(f"player {p} called with {int(lengths[p])} cards in their Nertz pile",
              "R4.6: a call is legal only with an empty Nertz pile")  # fmt: skip


def check_stock_known(s: engine.State, config: NertzConfig) -> None:
    """R9: the observation shows a player's stock once they have turned through it; a table that
    marks it known before they can have (``engine.first_known_stock_tick``) would show cards never turned."""
    tick, ended = int(s.tick[0]), engine.END_REASONS[int(s.ended[0])] is not None
    for p in np.flatnonzero(s.stock_known[0]):
        earliest = engine.first_known_stock_tick(config.packed, int(p), ended)
        if tick < earliest:
            fail(f"player {p} knows their stock (stock_known) at tick {tick}",
                 f"R9: a stock is known once turned through (R4.1), at tick {earliest} at the earliest for this "
                 f"seat under this config ({'an ended' if ended else 'a running'} hand)")  # fmt: skip


_STATES = ("playing", "tie-break", "decided", "capped")


def check_match_rules(s: engine.State, config: NertzConfig) -> None:
    """R8 as ``engine.match`` keeps it: the match ticks within ``max_cycles`` per hand played plus
    the hand in play (R5), so they cannot overflow while the match goes on; and in a match the
    totals within what the observation holds exactly, partners contenders together, every team a
    contender while no tie is being played off, two or more in a tie-break, one when decided and at
    least one when capped, and the last hand ended exactly when the match is over."""
    info = s.match_info[0].astype(np.int64)
    hands, ticks, tick = int(info[engine.MI_HANDS]), int(info[engine.MI_TICKS]), int(s.tick[0])
    most = hands * config.max_cycles + tick
    if ticks > most:
        fail(f"match_info ticks is {ticks} after {hands} hands and {tick} ticks of this one",
              f"accepted 0..{most}: a hand lasts at most max_cycles={config.max_cycles} ticks (R5)")  # fmt: skip
    if config.episode != "match":
        return
    totals = s.match_seats[0, engine.MS_TOTAL].astype(np.int64)
    if (np.abs(totals) > MAX_OBSERVED_TOTAL).any():
        p = int(np.argmax(np.abs(totals) > MAX_OBSERVED_TOTAL))
        fail(f"player {p}'s match total is {int(totals[p])}",
              f"totals within +-{MAX_OBSERVED_TOTAL}, what the observation holds exactly (R8)")  # fmt: skip
    flags = s.match_seats[0, engine.MS_CONTENDER]
    for team in config.teams:
        if len({int(flags[p]) for p in team}) > 1:
            fail(f"partners {team[0]} and {team[1]} differ as match contenders", "R8: a team wins as one")
    state, n = _STATES[int(info[engine.MI_STATE])], sum(int(flags[team[0]]) for team in config.teams)
    teams = "teams" if config.partners else "players"
    need = {"playing": (config.num_teams, f"all {config.num_teams} {teams} until a tie is played off"),
            "tie-break": (2, f"2 or more tied {teams}"), "decided": (1, "its one winner"),
            "capped": (1, f"its leading {teams}, 1 or more")}[state]  # fmt: skip
    if n < need[0] or (state == "decided" and n != 1):
        fail(f"the match is {state} with {n} contender(s) (match_seats row MS_CONTENDER)",
              f"R8: a {state} match has as contenders {need[1]}")  # fmt: skip
    over, ended = state in ("decided", "capped"), engine.END_REASONS[int(s.ended[0])] is not None
    if over != ended:
        fail(f"the match is {state} but the hand " + ("ended" if ended else "runs"),
              "R8: the hand that ends the match stays on the table; any other is followed at once by the next deal")
