"""Text pictures of the table (R10 notation: cards as ``QH``, piles bottom to top)."""

from __future__ import annotations

from typing import Any

_RED = "\x1b[31m"
_RESET = "\x1b[0m"


def _card(name: str, color: bool) -> str:
    return f"{_RED}{name}{_RESET}" if color and name[1] in "DH" else name


def _pile(cards: list[str], color: bool, empty: str = "--") -> str:
    return " ".join(_card(c, color) for c in cards) if cards else empty


def render_text(snapshot: dict[str, Any], color: bool = False, names: list[str] | None = None) -> str:
    """A readable table: foundations, then each player's Nertz top and count, work piles, waste
    top and stock and waste sizes; red suits in red when ``color``."""
    lines = [f"tick {snapshot['tick']}" + (f"  ended: {snapshot['end_reason']}" if snapshot["ended"] else "")]
    tops = []
    for f in snapshot["foundations"]:
        owner, top = f["cards"][-1]
        tops.append(_card(top, color) + ("*" if f["complete"] else "") + f"({owner})")
    lines.append("foundations: " + (" ".join(tops) if tops else "--"))
    for p, pl in enumerate(snapshot["players"]):
        who = names[p] if names else f"player_{p}"
        called = " CALLED" if p in snapshot["callers"] else ""
        nertz = _card(pl["nertz"][-1], color) if pl["nertz"] else "--"
        waste = _card(pl["waste"][-1], color) if pl["waste"] else "--"
        lines.append(
            f"{who}: score {snapshot['scores'][p]:+d}{called} | nertz {nertz} ({len(pl['nertz'])}) | "
            f"waste {waste} ({len(pl['waste'])}) | stock ({len(pl['stock'])})"
        )
        for j, pile in enumerate(pl["work"]):
            lines.append(f"    work{j}: {_pile(pile, color)}")
    return "\n".join(lines)
