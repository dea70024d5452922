"""Why a move is illegal, in words, for error messages: the R4 rule, the house rule or the
timing (R3) that forbids it on the table of a ``Game``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nertz_env.actions import NERTZ, TO_NERTZ, TO_WORK, WASTE, WORK_SOURCE
from nertz_env.config import NertzConfig
from nertz_env.engine import AIR_TICKS

if TYPE_CHECKING:
    from nertz_env.game import Game


def why_illegal(game: Game, player: int, action: int) -> str:
    """A short reason ``action`` of seat ``player`` is illegal in ``game`` now, for error messages."""
    s, p = game.snapshot(), game.state
    kind, src, dst, n = (int(x) for x in game.catalogue.table[action])
    name = game.catalogue.names[action]
    if s["ended"]:
        return "the hand is over; only 'wait' is legal"
    if p.air[0, player, AIR_TICKS] > 0:
        move = s["in_air"][player]
        lands = move["lands_in"]
        return f"its move {move['action']!r} is in the air for {lands} more tick(s) (move_ticks); only 'wait'"
    if game.config.turn_based and s["turn"] != player:
        return f"it is seat {s['turn']}'s turn (R3 turn_based); off turn only 'wait' is legal"
    if name == "call":
        return f"call needs an empty Nertz pile (R4.6); {int(p.nertz_len[0, player])} cards are left"
    if name == "draw":
        return "stock and waste are both empty (R4.1)"
    if kind == TO_NERTZ:
        if not game.config.nertz_builds:
            return "builds on another player's Nertz pile need nertz_builds=True (R4.8)"
        seat = (player + dst) % game.config.num_players
        target = s["players"][seat]["nertz"]
        if not target:
            return f"player {seat}'s Nertz pile is empty; there is no top to build on (R4.8)"
        if len(target) >= p.nertz.shape[2]:
            return f"player {seat}'s Nertz pile is full ({len(target)} cards) (R4.8)"
        return (
            f"R4.8 needs a card of the suit of player {seat}'s Nertz top {target[-1]}, one rank higher or "
            f"lower ({name!r})"
        )
    pl = s["players"][player]
    nertz = pl["nertz"][-1] if pl["nertz"] else None
    waste = pl["waste"][-1] if pl["waste"] else None
    table = f"nertz top {nertz}, waste top {waste}, work {pl['work']}"
    if kind == TO_WORK:
        option = _option_forbidding(game.config, src, dst, n, nertz, waste, pl["work"])
        if option:
            return f"{option} ({name!r}; {table})"
    return f"R4 does not allow {name!r} on this table ({table})"

def _option_forbidding(c: NertzConfig, src: int, dst: int, n: int, nertz, waste, work) -> str | None:
    """The R4.3/R4.4 option that forbids a move to a work pile that the standard game allows."""
    pile = work[src - WORK_SOURCE] if src >= WORK_SOURCE else None
    if pile is not None and len(pile) < n:
        return None  # no such block: R4 itself
    tops = {NERTZ: nertz, WASTE: waste}
    card = tops[src] if pile is None else pile[-n]
    if pile is not None and c.block_moves == "whole" and n != len(pile):
        return f"only a whole work pile moves (R4.3 block_moves='whole'); work{src - WORK_SOURCE} holds {len(pile)}"
    if pile is not None and c.block_moves == "none" and n > 1:
        return "only the exposed card of a work pile moves (R4.3 block_moves='none')"
    if card is not None and card[0] == "A" and not c.aces_to_work:
        return "an ace goes only to a foundation (R4.3 aces_to_work=False)"
    if not work[dst] and pile is not None and c.fill_empty_from != "any":
        return f"a work-pile card may not fill an empty pile (R4.4 fill_empty_from={c.fill_empty_from!r})"
    if not work[dst] and src == WASTE and c.fill_empty_from == "nertz":
        return "only the Nertz top fills an empty work pile (R4.4 fill_empty_from='nertz')"
    return None
