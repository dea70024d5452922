"""A slow, obviously correct reference for the rules, written from RULES.md alone: this module, what
is legal (R1 card faces, R10 action names, R3 timing, R4 moves); ``tick.py`` how a tick resolves,
``match.py`` R8 matches.

It works on the R10 table of ``Game.snapshot()`` (every pile bottom to top, the last element on
top) and a ``NertzConfig``, with plain lists and sets and no cleverness, so that the compiled
engine can be checked against it state by state (the OpenSpiel habit of comparing two
implementations). Nothing here imports the engine.

Readings of RULES.md made here (each is tested against the engine):

* R4.1: DRAW is legal while the stock or the waste holds a card; on an empty stock it only turns
  the waste over (it turns no card in the same tick).
* R4.3 / R4.4: ``nertz_to_work=False`` forbids the Nertz top only on a *non-empty* work pile; R4.4
  still lets it fill an empty one.
* R4.4: "any block" includes a whole work pile, so moving a whole pile into an empty pile is
  listed as legal (it changes nothing but which pile holds the cards).
* R4.5: slide-under needs an empty work pile of one's own and a non-empty target whose *first*
  (bottom, highest) card is one lower and of the other colour. R4.5 calls it a shortcut for "put
  it in the space, move the whole pile onto it", so it is open only to a card that may fill a
  space (R4.4): with ``fill_empty_from="nertz"`` the waste top may not slide under (the Snerts text
  ``seeds/003`` lets only the Snerts pile fill a space). ``nertz_to_work=False`` does not limit it,
  since the Nertz top may always fill a space.
* R4.3 ``block_moves``: it limits every move from a work pile to a work pile, into a space too:
  ``"whole"`` moves only the whole pile, ``"none"`` only the exposed card. ``aces_to_work=False``
  keeps an ace off every work pile, a space included, from any source; a dealt ace in a work pile
  stays there until it goes to a foundation.
* R4.4 ``fill_empty_from="nertz_or_waste"``: the waste top may fill a space, so it may also slide
  under (R4.5); a work-pile card or block may not fill one.
* R6: when one card can go on several foundation piles, the winners, taken in seat order, get the
  matching piles in the order the piles were started. Aces start piles in seat order.
* A card's face: ranks A(1)..K(13), clubs and spades black, diamonds and hearts red (R1).
* R4.8 (``nertz_builds``): any single available card (Nertz top, waste top, exposed work card) may
  go onto the Nertz top of the player ``k`` seats on (``{source}>nertz@{k}``), same suit, one rank
  up or down; an empty Nertz pile takes none, nor a full one (52 cards, the engine's array). A
  built card keeps its owner (R1): the snapshot lists owners beside the Nertz and work piles, a
  foundation scores it for its owner (R7), and it counts in its holder's Nertz penalty (R7).
* R4.8 races (RULES.md is silent): a Nertz pile whose owner plays from it in the same tick
  (any ``nertz>...`` action) takes no build; every build onto it fails as a collision. Otherwise
  of several builds onto one pile the first in race order wins (seat order for
  ``collision="seat"``), the others fail as collisions. A successful build is progress (R5).
* R3 ``turn_based``: seat ``tick % P`` is on turn (seat 0 first); everyone else may only WAIT.
* R3 ``move_ticks``: a move of ``d`` ticks is judged on the table it is made on, then waits in the
  air (its player may only WAIT) and resolves in the ``d``-th tick counted from the one it was made
  in, judged again on that tick's table: it must still be legal (R4) and carry the same card, or
  it fails and counts as a lost race (R6). When the hand ends every move still in the air
  resolves at the end of the final tick, on the table that tick left (R5 "cards in the air
  complete their move"). The stall rule (R5) does not fire while a move other than a DRAW or a
  work-to-work move is in the air, and "a whole stock cycle" is counted in the ticks a DRAW
  takes, rounded up to whole rounds of P ticks under ``turn_based``.
* R8: with partners a match is between teams (team figures are both partners' summed); the tied
  players' "another hand" is played by everyone, only the tied can win, and after it the rule is
  applied again among them whether or not the target is still reached; ``hands=N`` ties go on the
  same way; ``max_hands`` stops an undecided match with its leaders by the same rule.
* R8 ``match_end="caller"``: when the match is due, the teams that called in the hand just played
  and whose totals reached the target are the only contenders, if there are any (several such
  callers: the tie rule among them); in a tie-break hand only a contender's call counts.
  ``"spread"`` compares the highest and the lowest total of all teams. A match is due after every
  tie-break hand whatever the totals, as under ``"highest"``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

RANK_LETTERS = "A23456789TJQK"


def rank(card: str) -> int:
    """``'AS' -> 1``, ``'TH' -> 10``, ``'KD' -> 13`` (R1, R10)."""
    return RANK_LETTERS.index(card[0]) + 1


def suit(card: str) -> str:
    return card[1]


def is_red(card: str) -> bool:
    return suit(card) in ("D", "H")


def builds_down_on(moving: str, target: str) -> bool:
    """R4.3: ``moving`` is one rank lower than ``target`` and of the opposite colour."""
    return rank(moving) == rank(target) - 1 and is_red(moving) != is_red(target)


def foundation_accepts(foundations: list[dict], card: str) -> bool:
    """R4.2: an ace always starts a pile; any other card needs an incomplete pile of its suit whose
    top is exactly one rank lower."""
    if rank(card) == 1:
        return True
    return len(foundation_targets(foundations, card)) > 0


def foundation_targets(foundations: list[dict], card: str) -> list[int]:
    """Indices of the piles ``card`` (not an ace) may go on (R4.2), oldest first."""
    out = []
    for f, pile in enumerate(foundations):
        if not pile["cards"] or len(pile["cards"]) >= 13:
            continue
        top = pile["cards"][-1][1]
        if suit(top) == suit(card) and rank(top) == rank(card) - 1:
            out.append(f)
    return out


def all_action_names(config) -> list[str]:
    """Every action name R10 gives under ``config`` (R4.5 names only with ``slide_under``)."""
    w = config.work_piles
    names = ["wait", "draw", "call", "nertz>foundation", "waste>foundation"]
    names += [f"work{i}>foundation" for i in range(w)]
    names += [f"{src}>work{j}" for src in ("nertz", "waste") for j in range(w)]
    if config.slide_under:
        names += [f"{src}>under{j}" for src in ("nertz", "waste") for j in range(w)]
    names += [f"work{i}>work{j}:{n}" for i in range(w) for j in range(w) if i != j for n in range(1, 14)]
    if config.nertz_builds:  # R4.8, after the standard names
        sources = ["nertz", "waste"] + [f"work{i}" for i in range(w)]
        names += [f"{src}>nertz@{k}" for src in sources for k in range(1, config.num_players)]
    return names


def waits_only(snapshot: dict, player: int, config) -> bool:
    """R3 timing options: off turn under ``turn_based``, or a move in the air (``move_ticks``)."""
    if config.turn_based and snapshot["tick"] % config.num_players != player:
        return True
    return snapshot.get("in_air", [None] * config.num_players)[player] is not None


def legal_action_names(snapshot: dict, player: int, config) -> set[str]:
    """The names of every legal action of ``player`` on ``snapshot``, following R4 word by word.

    R5: once the hand has ended, only WAIT is left; R3: off turn or in the air, only WAIT.
    """
    if snapshot["ended"] or waits_only(snapshot, player, config):
        return {"wait"}
    return r4_names(snapshot, player, config)


def r4_names(snapshot: dict, player: int, config) -> set[str]:
    """The moves R4 allows ``player`` on ``snapshot``, whatever the timing options say."""
    legal = {"wait"}  # R4.7
    me = snapshot["players"][player]
    # R4.1: turn cards from the stock, or turn the waste over when the stock is empty.
    if me["stock"] or me["waste"]:
        legal.add("draw")
    # R4.6: calling needs an empty Nertz pile.
    if not me["nertz"]:
        legal.add("call")
    legal.update(to_foundation(snapshot["foundations"], me, config))
    for j in range(config.work_piles):
        legal.update(onto_work_pile(me, j, config) if me["work"][j] else into_empty_pile(me, j, config))
    if config.slide_under:
        legal.update(slide_under(me, config))
    if config.nertz_builds:
        legal.update(onto_nertz_piles(snapshot, player, config))
    return legal


def top_card(pile: list[str]) -> str | None:
    """The top (last) card of a pile, None when it is empty."""
    return pile[-1] if pile else None


def may_leave(work: list[list[str]], i: int, n: int, config) -> bool:
    """R4.3 ``block_moves``: the ``n`` top cards of work pile ``i`` may move (any block, the whole
    pile, or one card)."""
    return {"any": True, "whole": n == len(work[i]), "none": n == 1}[config.block_moves]


def may_go_to_work(card: str, config) -> bool:
    """R4.3 ``aces_to_work=False``: an ace goes only to a foundation."""
    return config.aces_to_work or rank(card) != 1


def to_foundation(foundations: list[dict], me: dict, config) -> Iterator[str]:
    """R4.2: any available card to a foundation."""
    nertz_top, waste_top = top_card(me["nertz"]), top_card(me["waste"])
    if nertz_top is not None and foundation_accepts(foundations, nertz_top):
        yield "nertz>foundation"
    if waste_top is not None and foundation_accepts(foundations, waste_top):
        yield "waste>foundation"
    for i in range(config.work_piles):
        if me["work"][i] and foundation_accepts(foundations, me["work"][i][-1]):
            yield f"work{i}>foundation"


def blocks_to(me: dict, j: int, config, fits: Callable[[str], bool]) -> Iterator[str]:
    """Every block of another work pile that may leave it (R4.3 ``block_moves``) and whose first
    card ``fits`` work pile ``j``."""
    work = me["work"]
    for i in range(config.work_piles):
        if i == j:
            continue
        for n in range(1, len(work[i]) + 1):
            if fits(work[i][-n]) and may_leave(work, i, n, config):
                yield f"work{i}>work{j}:{n}"


def onto_work_pile(me: dict, j: int, config) -> Iterator[str]:
    """R4.3: onto the non-empty work pile ``j``, one lower and of the other colour."""
    nertz_top, waste_top = top_card(me["nertz"]), top_card(me["waste"])
    exposed = me["work"][j][-1]  # an ace builds on a 2 of the other colour, unless aces_to_work=False

    def builds(card: str) -> bool:
        return builds_down_on(card, exposed) and may_go_to_work(card, config)

    if nertz_top is not None and config.nertz_to_work and builds(nertz_top):
        yield f"nertz>work{j}"
    if waste_top is not None and builds(waste_top):
        yield f"waste>work{j}"
    yield from blocks_to(me, j, config, builds)


def into_empty_pile(me: dict, j: int, config) -> Iterator[str]:
    """R4.4: into the empty work pile ``j``, any single card or any block; ``fill_empty_from="nertz"``
    only the Nertz top, ``"nertz_or_waste"`` the Nertz or the waste top."""
    nertz_top, waste_top = top_card(me["nertz"]), top_card(me["waste"])
    if nertz_top is not None and may_go_to_work(nertz_top, config):
        yield f"nertz>work{j}"
    if waste_top is not None and config.fill_empty_from != "nertz" and may_go_to_work(waste_top, config):
        yield f"waste>work{j}"
    if config.fill_empty_from == "any":
        yield from blocks_to(me, j, config, lambda card: may_go_to_work(card, config))


def slide_under(me: dict, config) -> Iterator[str]:
    """R4.5: slide under a pile whose first (bottom) card is one lower, while a pile is empty."""
    work = me["work"]
    if not any(not pile for pile in work):
        return
    nertz_top, waste_top = top_card(me["nertz"]), top_card(me["waste"])
    for j in range(config.work_piles):
        if not work[j]:
            continue
        first = work[j][0]
        if nertz_top is not None and builds_down_on(first, nertz_top):
            yield f"nertz>under{j}"
        if waste_top is not None and config.fill_empty_from != "nertz" and builds_down_on(first, waste_top):
            yield f"waste>under{j}"


def onto_nertz_piles(snapshot: dict, player: int, config) -> Iterator[str]:
    """R4.8: onto another player's Nertz top, same suit, one rank up or down."""
    me = snapshot["players"][player]
    n = len(snapshot["players"])
    sources = {"nertz": top_card(me["nertz"]), "waste": top_card(me["waste"])}
    sources.update({f"work{i}": top_card(me["work"][i]) for i in range(config.work_piles)})
    for k in range(1, n):
        target = snapshot["players"][(player + k) % n]["nertz"]
        if not target or len(target) >= 52:
            continue
        for name, card in sources.items():
            if card is not None and suit(card) == suit(target[-1]) and abs(rank(card) - rank(target[-1])) == 1:
                yield f"{name}>nertz@{k}"
