"""Text pictures of the table (R10 notation: cards as ``QH``, piles bottom to top)."""

from __future__ import annotations

from typing import Any

_RED = "\x1b[31m"
_RESET = "\x1b[0m"


def _card(name: str, color: bool) -> str:
    return f"{_RED}{name}{_RESET}" if color and name[1] in "DH" else name


def _foreign(pl: dict[str, Any], p: int) -> tuple[list[int | None], list[list[int | None]]]:
    """The owner of each Nertz and work card of player ``p`` that is not theirs (R4.8), else None."""
    nertz = [o if o != p else None for o in pl.get("nertz_owners", [p] * len(pl["nertz"]))]
    work = pl.get("work_owners", [[p] * len(w) for w in pl["work"]])
    return nertz, [[o if o != p else None for o in pile] for pile in work]


def _owned(text: str, owner: int | None) -> str:
    return text if owner is None else f"{text}({owner})"


def _timing(snapshot: dict[str, Any], p: int) -> str:
    """R3 timing options: whether seat ``p`` is on turn, and its move in the air."""
    out = "  (on turn)" if snapshot.get("turn") == p else ""
    move = snapshot.get("in_air", [None] * (p + 1))[p]
    if move is not None:
        card = f" {move['card']}" if move["card"] else ""
        out += f"  in the air: {move['action']}{card}, lands in {move['lands_in']}"
    return out


def render_text(snapshot: dict[str, Any], color: bool = False, names: list[str] | None = None) -> str:
    """A readable table: foundations, then each player's Nertz top and count, work piles, waste
    top and stock and waste sizes (and, under the timing options, who is on turn and what is in
    the air); red suits in red when ``color``. A card in a player's Nertz or work pile that another
    player owns (R4.8 builds) carries its owner, as foundation cards do: ``5H(2)``."""
    lines = [f"tick {snapshot['tick']}" + (f"  ended: {snapshot['end_reason']}" if snapshot["ended"] else "")]
    tops = []
    for f in snapshot["foundations"]:
        owner, top = f["cards"][-1]
        tops.append(_card(top, color) + ("*" if f["complete"] else "") + f"({owner})")
    lines.append("foundations: " + (" ".join(tops) if tops else "--"))
    lines += _r8_lines(snapshot, names)
    for p, pl in enumerate(snapshot["players"]):
        who = names[p] if names else f"player_{p}"
        called = " CALLED" if p in snapshot["callers"] else ""
        if "teams" in snapshot:
            called = f" [team {_team_of(snapshot, p)}]" + called
        nertz_owner, work_owner = _foreign(pl, p)
        nertz = _owned(_card(pl["nertz"][-1], color), nertz_owner[-1]) if pl["nertz"] else "--"
        waste = _card(pl["waste"][-1], color) if pl["waste"] else "--"
        lines.append(
            f"{who}: score {snapshot['scores'][p]:+d}{called} | nertz {nertz} ({len(pl['nertz'])}) | "
            f"waste {waste} ({len(pl['waste'])}) | stock ({len(pl['stock'])})" + _timing(snapshot, p)
        )
        for j, pile in enumerate(pl["work"]):
            cards = [_owned(_card(c, color), o) for c, o in zip(pile, work_owner[j])]
            lines.append(f"    work{j}: {' '.join(cards) if cards else '--'}")
    return "\n".join(lines)


def moved_card(player: dict[str, Any], action: str) -> str | None:
    """The card an R10 action takes from ``player``'s piles (a snapshot's player, before the move):
    the Nertz or waste top, a work pile's exposed card, or the first card of a moved block."""
    source, arrow, _ = action.partition(">")
    if not arrow:
        return None
    if source in ("nertz", "waste"):
        pile = player[source]
        return pile[-1] if pile else None
    if source.startswith("work") and source[4:].isdigit():
        pile = player["work"][int(source[4:])]
        n = int(action.rsplit(":", 1)[1]) if ":" in action else 1
        return pile[-n] if len(pile) >= n else None
    return None


def move_text(before: dict[str, Any], seat: int, action: str, won_race: bool = False, lost_race: bool = False) -> str:
    """What seat ``seat`` did in one tick, in R10 names: the action and the card it moved (from the
    snapshot ``before`` the tick), and the foundation race it won or lost (R6)."""
    card = moved_card(before["players"][seat], action)
    text = action if card is None else f"{action} {card}"
    if lost_race:
        text += "  (lost the race for the foundation, R6: the card stays)"
    elif won_race:
        text += "  (won a race for the foundation, R6)"
    return text


def _team_of(snapshot: dict[str, Any], p: int) -> int:
    return next(t for t, members in enumerate(snapshot["teams"]) if p in members)


def _r8_lines(snapshot: dict[str, Any], names: list[str] | None) -> list[str]:
    """Teams of partners with their scores, and the match totals (R8), when those options are on."""
    who = lambda p: names[p] if names else f"player_{p}"  # noqa: E731
    lines = []
    if "teams" in snapshot:
        parts = []
        for t, members in enumerate(snapshot["teams"]):
            score = sum(snapshot["scores"][p] for p in members)
            total = f", total {sum(snapshot['match']['totals'][p] for p in members)}" if "match" in snapshot else ""
            parts.append(f"team {t} ({' + '.join(who(p) for p in members)}): {score:+d}{total}")
        lines.append("teams: " + "; ".join(parts))
    if "match" in snapshot:
        m = snapshot["match"]
        totals = ", ".join(f"{who(p)} {t}" for p, t in enumerate(m["totals"]))
        leaders = ", ".join(who(p) for p in m["contenders"])
        state = "" if m["state"] == "playing" else f" ({m['state']}: {leaders})"
        lines.append(f"match after {m['hands_played']} hand(s): totals {totals}{state}")
    return lines


# -- pictures (optional: Pillow, imported only here) ---------------------------------------------

_CARD_W, _CARD_H, _FAN, _PILE_W = 38, 52, 23, 38 + 23 * 6
_SUIT_GLYPH = {"C": "\u2663", "D": "\u2666", "H": "\u2665", "S": "\u2660"}


def _pillow():
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError as exc:  # pragma: no cover - depends on the extra
        raise ModuleNotFoundError(
            "render_mode='rgb_array' and replays as GIF need Pillow: pip install 'nertz-env[render]'"
        ) from exc
    return Image, ImageDraw, ImageFont


def _fonts(image_font):
    for name in ("DejaVuSans-Bold.ttf", "DejaVuSans.ttf"):
        try:
            return image_font.truetype(name, 15), image_font.truetype(name, 11), True
        except OSError:
            continue
    return image_font.load_default(), image_font.load_default(), False


def render_rgb(snapshot: dict[str, Any], events: dict[str, list[bool]] | None = None, names=None, caption=None):
    """The table as an ``[H, W, 3]`` uint8 image: foundations in the middle, players around them,
    card faces with rank and suit, scores, and a mark on whoever won (W) or lost (X) a race (R6);
    ``caption`` lines (e.g. the tick and every player's move) go above the table."""
    import numpy as np

    image, image_draw, image_font = _pillow()
    players = snapshot["players"]
    n_work = len(players[0]["work"])
    row_h = _CARD_H + 34
    width = 16 + 3 * (_CARD_W + 26) + n_work * (_PILE_W + 12) + 16
    n_found = max(1, len(snapshot["foundations"]))
    per_row = max(1, (width - 32) // (_CARD_W + 6))
    found_h = 30 + ((n_found + per_row - 1) // per_row) * (_CARD_H + 18)
    top = (len(players) + 1) // 2
    caption = list(caption or [])
    caption_h = 15 * len(caption) + 6 if caption else 0
    height = 8 + caption_h + row_h * len(players) + found_h + 8
    img = image.new("RGB", (width, height), (22, 96, 52))
    painter = _Painter(image_draw.Draw(img), _fonts(image_font), snapshot, events, names)
    for k, line in enumerate(caption):
        painter.text((16, 6 + 15 * k), line, (255, 230, 120) if k == 0 else (255, 255, 255))
    y = 8 + caption_h
    for p in range(top):
        painter.player_row(p, y)
        y += row_h
    painter.foundations(y, per_row)
    y += found_h
    for p in range(top, len(players)):
        painter.player_row(p, y)
        y += row_h
    return np.asarray(img, dtype=np.uint8)


class _Painter:
    """Draws one snapshot's cards, piles and player rows on a Pillow ``ImageDraw``."""

    def __init__(self, draw, fonts, snapshot: dict[str, Any], events, names):
        self.draw, (self.big, self.small, self.glyphs) = draw, fonts
        self.snapshot, self.events, self.names = snapshot, events, names

    def text(self, xy, line: str, colour, big: bool = False) -> None:
        self.draw.text(xy, line, fill=colour, font=self.big if big else self.small)

    def card(self, x, y, name, owner=None) -> None:
        self.draw.rounded_rectangle((x, y, x + _CARD_W, y + _CARD_H), 5, fill=(250, 250, 245), outline=(40, 40, 40))
        colour = (200, 20, 30) if name[1] in "DH" else (15, 15, 15)
        rank = "10" if name[0] == "T" else name[0]
        suit = _SUIT_GLYPH[name[1]] if self.glyphs else name[1]
        self.text((x + 4, y + 2), rank, colour, big=True)
        self.text((x + 4, y + 20), suit, colour, big=True)
        if owner is not None:
            self.text((x + _CARD_W - 12, y + _CARD_H - 15), str(owner), (90, 90, 90))

    def slot(self, x, y, label) -> None:
        self.draw.rounded_rectangle((x, y, x + _CARD_W, y + _CARD_H), 5, outline=(160, 200, 170))
        self.text((x + 4, y + _CARD_H // 2 - 6), label, (160, 200, 170))

    def heading(self, p) -> str:
        """Player ``p``'s name, score, team, match total, call and race mark (R6-R8)."""
        snapshot, events, n = self.snapshot, self.events, len(self.snapshot["players"])
        who = self.names[p] if self.names else f"player_{p}"
        mark = ""
        if events is not None and events.get("won_race", [False] * n)[p]:
            mark = "  won a race (W)"
        if events is not None and events.get("collision", [False] * n)[p]:
            mark = "  lost a race (X)"
        called = "  NERTZ!" if p in snapshot["callers"] else ""
        if "teams" in snapshot:
            called = f"  team {_team_of(snapshot, p)}" + called
        if "match" in snapshot:
            called = f"  total {snapshot['match']['totals'][p]}" + called
        return f"{who}  score {snapshot['scores'][p]:+d}{called}{mark}{_timing(snapshot, p)}"

    def player_row(self, p, y) -> None:
        pl = self.snapshot["players"][p]
        self.text((16, y), self.heading(p), (255, 255, 255))
        y += 16
        x = 16
        nertz_owner, work_owner = _foreign(pl, p)  # R4.8: foreign cards show their owner
        (self.card(x, y, pl["nertz"][-1], nertz_owner[-1]) if pl["nertz"] else self.slot(x, y, ""))
        self.text((x, y + _CARD_H + 1), f"nertz {len(pl['nertz'])}", (255, 230, 120))
        x += _CARD_W + 26
        (self.card(x, y, pl["waste"][-1]) if pl["waste"] else self.slot(x, y, ""))
        self.text((x, y + _CARD_H + 1), f"waste {len(pl['waste'])}", (255, 255, 255))
        x += _CARD_W + 26
        if pl["stock"]:
            back = (x, y, x + _CARD_W, y + _CARD_H)
            self.draw.rounded_rectangle(back, 5, fill=(40, 60, 150), outline=(230, 230, 230))
        else:
            self.slot(x, y, "")
        self.text((x, y + _CARD_H + 1), f"stock {len(pl['stock'])}", (255, 255, 255))
        x += _CARD_W + 26
        for j, pile in enumerate(pl["work"]):
            if not pile:
                self.slot(x, y, "")
            fan = _FAN if len(pile) <= 7 else (_PILE_W - _CARD_W) / (len(pile) - 1)
            for k, c in enumerate(pile):
                self.card(int(x + k * fan), y, c, work_owner[j][k])
            self.text((x, y + _CARD_H + 1), f"work{j}", (200, 230, 210))
            x += _PILE_W + 12

    def foundations(self, y, per_row) -> None:
        """The foundations' top cards, ``per_row`` to a row, under a line of the R8 state."""
        self.text((16, y + 4), "   ".join(["foundations"] + _r8_lines(self.snapshot, self.names)), (255, 255, 255))
        fx, fy = 16, y + 22
        for i, f in enumerate(self.snapshot["foundations"]):
            owner, name = f["cards"][-1]
            if i and i % per_row == 0:
                fx, fy = 16, fy + _CARD_H + 18
            self.card(fx, fy, name, owner)
            if f["complete"]:
                self.text((fx + 2, fy + _CARD_H + 1), "done", (255, 230, 120))
            fx += _CARD_W + 6
