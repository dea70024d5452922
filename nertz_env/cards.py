"""Card codes and the R10 notation.

A card of one player's deck is an integer ``0..51``: ``suit * 13 + rank - 1`` with suits in the
order ``C D H S`` and ranks A(1) .. K(13) (R1). On the shared foundations a card also carries its
owner, as the global id ``owner * 52 + card`` (R1: every foundation card keeps its owner).
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Set as AbstractSet

from nertz_env.config import is_int

RANKS = "A23456789TJQK"
SUITS = "CDHS"
RED_SUITS = frozenset({1, 2})  # diamonds and hearts (R1)
DECK_SIZE = 52


def suit_of(card: int) -> int:
    return card // 13


def rank_of(card: int) -> int:
    """Rank 1 (ace) .. 13 (king)."""
    return card % 13 + 1


def is_red(card: int) -> bool:
    return suit_of(card) in RED_SUITS


def card_name(card: int) -> str:
    """``0 -> 'AC'``, ``51 -> 'KS'`` (R10)."""
    if not is_int(card) or not 0 <= card < DECK_SIZE:
        raise ValueError(f"a card code is a whole number 0..51 (R10), got {card!r}")
    return RANKS[card % 13] + SUITS[card // 13]


def parse_card(text: str) -> int:
    """``'QH' -> card code``. Accepts ``10`` for ``T`` and either case (R10)."""
    if not isinstance(text, str):
        raise ValueError(f"a card is a string such as 'AS' or 'TH', got {text!r}")
    t = text.strip().upper()
    if t.startswith("10"):
        t = "T" + t[2:]
    if len(t) != 2 or t[0] not in RANKS or t[1] not in SUITS:
        raise ValueError(
            f"unknown card {text!r}: a card is a rank ({' '.join(RANKS)}, or 10) "
            f"followed by a suit ({' '.join(SUITS)}), e.g. 'AS', 'TH', 'QD'"
        )
    return SUITS.index(t[1]) * 13 + RANKS.index(t[0])


def parse_deck(cards: Iterable[str | int], owner: int | None = None) -> list[int]:
    """Parse one player's 52-card fixed deal (R10); a malformed deal raises ValueError."""
    who = "" if owner is None else f" for player {owner}"
    if isinstance(cards, str):
        cards = cards.split()
    if isinstance(cards, AbstractSet):  # a set's order changes with the hash seed: not one deal
        raise ValueError(f"the deal{who} is a set, which has no order: list its 52 cards top of the deck first (R10)")
    codes = []
    for c in cards:
        if isinstance(c, str):
            try:
                codes.append(parse_card(c))
            except ValueError as exc:
                raise ValueError(f"in the deal{who}: {exc}") from None
        elif is_int(c) and 0 <= c < DECK_SIZE:
            codes.append(int(c))
        else:
            raise ValueError(f"unknown card {c!r}{who}: give R10 names such as 'AS' or codes 0..51")
    if len(codes) != DECK_SIZE:
        raise ValueError(f"a deal{who} must list exactly 52 cards, got {len(codes)}")
    seen: set[int] = set()
    dupes: list[str] = []
    for c in codes:
        if c in seen:
            dupes.append(card_name(c))
        seen.add(c)
    if dupes:
        raise ValueError(f"the deal{who} repeats {', '.join(sorted(set(dupes)))}; each card once")
    return codes
