"""A slow, obviously correct reference for the rules, written from RULES.md alone, that the tests
check the compiled engine against state by state; nothing here imports the engine.

``legality.py`` says what is legal (R1 card faces, R10 action names, R3 timing, R4 moves) and lists
the readings of RULES.md the reference makes; ``tick.py`` resolves a tick (R3 to R7, with the R5
stall clock); ``match.py`` keeps an R8 match. The names below are the reference's whole interface:
``import reference`` then ``reference.legal_action_names``, ``reference.next_table`` ...
"""

from .legality import (
    RANK_LETTERS,
    all_action_names,
    builds_down_on,
    foundation_accepts,
    foundation_targets,
    is_red,
    legal_action_names,
    r4_names,
    rank,
    suit,
    waits_only,
)
from .match import match_after_hand, team_figures
from .tick import (
    apply_tick,
    land_all,
    lands,
    move_ticks,
    moving_card,
    next_table,
    progress_in_air,
    resolve_moves,
    score_of,
    stall_limit,
    stall_rotate,
    start_clock,
)

__all__ = [
    "RANK_LETTERS",
    "all_action_names",
    "apply_tick",
    "builds_down_on",
    "foundation_accepts",
    "foundation_targets",
    "is_red",
    "land_all",
    "lands",
    "legal_action_names",
    "match_after_hand",
    "move_ticks",
    "moving_card",
    "next_table",
    "progress_in_air",
    "r4_names",
    "rank",
    "resolve_moves",
    "score_of",
    "stall_limit",
    "stall_rotate",
    "start_clock",
    "suit",
    "team_figures",
    "waits_only",
]
