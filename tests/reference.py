"""A slow, obviously correct reference for the rules, written from RULES.md alone.

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

import copy
import re
from collections.abc import Sequence

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
    foundations = snapshot["foundations"]
    work = me["work"]
    w = config.work_piles
    nertz_top = me["nertz"][-1] if me["nertz"] else None
    waste_top = me["waste"][-1] if me["waste"] else None

    def may_leave(i: int, n: int) -> bool:  # R4.3 block_moves: any block, the whole pile, one card
        return {"any": True, "whole": n == len(work[i]), "none": n == 1}[config.block_moves]

    def may_go_to_work(card: str) -> bool:  # R4.3 aces_to_work=False: an ace only to a foundation
        return config.aces_to_work or rank(card) != 1

    # R4.1: turn cards from the stock, or turn the waste over when the stock is empty.
    if me["stock"] or me["waste"]:
        legal.add("draw")
    # R4.6: calling needs an empty Nertz pile.
    if not me["nertz"]:
        legal.add("call")

    # R4.2: any available card to a foundation.
    if nertz_top is not None and foundation_accepts(foundations, nertz_top):
        legal.add("nertz>foundation")
    if waste_top is not None and foundation_accepts(foundations, waste_top):
        legal.add("waste>foundation")
    for i in range(w):
        if work[i] and foundation_accepts(foundations, work[i][-1]):
            legal.add(f"work{i}>foundation")

    for j in range(w):
        target = work[j]
        if target:
            # R4.3: onto a non-empty work pile, one lower and of the other colour.
            exposed = target[-1]  # an ace builds on a 2 of the other colour, unless aces_to_work=False

            def builds(card: str, target: str = exposed) -> bool:
                return builds_down_on(card, target) and may_go_to_work(card)

            if nertz_top is not None and config.nertz_to_work and builds(nertz_top):
                legal.add(f"nertz>work{j}")
            if waste_top is not None and builds(waste_top):
                legal.add(f"waste>work{j}")
            for i in range(w):
                if i == j:
                    continue
                for n in range(1, len(work[i]) + 1):
                    if builds(work[i][-n]) and may_leave(i, n):
                        legal.add(f"work{i}>work{j}:{n}")
        else:
            # R4.4: into an empty work pile, any single card or any block; fill_empty_from="nertz"
            # only the Nertz top, "nertz_or_waste" the Nertz or the waste top.
            if nertz_top is not None and may_go_to_work(nertz_top):
                legal.add(f"nertz>work{j}")
            if waste_top is not None and config.fill_empty_from != "nertz" and may_go_to_work(waste_top):
                legal.add(f"waste>work{j}")
            if config.fill_empty_from == "any":
                for i in range(w):
                    if i == j:
                        continue
                    for n in range(1, len(work[i]) + 1):
                        if may_leave(i, n) and may_go_to_work(work[i][-n]):
                            legal.add(f"work{i}>work{j}:{n}")

    # R4.5: slide under a pile whose first (bottom) card is one lower, while a pile is empty.
    if config.slide_under and any(not pile for pile in work):
        for j in range(w):
            if not work[j]:
                continue
            first = work[j][0]
            if nertz_top is not None and builds_down_on(first, nertz_top):
                legal.add(f"nertz>under{j}")
            if waste_top is not None and config.fill_empty_from != "nertz" and builds_down_on(first, waste_top):
                legal.add(f"waste>under{j}")

    # R4.8: onto another player's Nertz top, same suit, one rank up or down.
    if config.nertz_builds:
        n = len(snapshot["players"])
        sources = {"nertz": nertz_top, "waste": waste_top}
        sources.update({f"work{i}": work[i][-1] if work[i] else None for i in range(w)})
        for k in range(1, n):
            target = snapshot["players"][(player + k) % n]["nertz"]
            if not target or len(target) >= 52:
                continue
            for name, card in sources.items():
                if card is not None and suit(card) == suit(target[-1]) and abs(rank(card) - rank(target[-1])) == 1:
                    legal.add(f"{name}>nertz@{k}")
    return legal


def score_of(snapshot: dict, player: int, config, called: bool) -> int:
    """R7: own cards on foundations − penalty × Nertz cards left (+ bonus for a caller)."""
    on_found = sum(1 for pile in snapshot["foundations"] for owner, _ in pile["cards"] if owner == player)
    score = on_found - config.nertz_penalty * len(snapshot["players"][player]["nertz"])
    return score + (config.call_bonus if called else 0)


def stall_rotate(snapshot: dict) -> dict:
    """R5 "all players stuck": the waste turned over goes under the stock, then the stock's top
    card goes to its bottom. Piles are bottom to top, so the stock's top is its last element."""
    out = copy.deepcopy(snapshot)
    for me in out["players"]:
        stock = me["waste"][::-1] + me["stock"]
        if stock:
            stock = [stock[-1]] + stock[:-1]
        me["stock"], me["waste"] = stock, []
    return out


def apply_tick(
    snapshot: dict,
    actions: Sequence[str],
    config,
    priority: Sequence[int] | None = None,
) -> tuple[dict, set[int], bool]:
    """Resolve one tick of moves (R3, R4, R5 calls, R6, R7) on a copy of ``snapshot``.

    Every action must be legal on ``snapshot``. ``priority`` orders the seats for foundation races
    (earlier wins); ``None`` is seat order (``collision="seat"``). The stall clock of R5 and
    ``max_cycles`` are left to the caller (the snapshot does not carry the clock); ``tick`` is
    advanced. Returns the new table, the players who lost a race (R6), and whether anyone made
    progress in the R5 sense.
    """
    n = len(snapshot["players"])
    for p, name in enumerate(actions):
        if name not in legal_action_names(snapshot, p, config):
            raise ValueError(f"player {p}: {name!r} is not legal")
    if "in_air" not in snapshot:
        out, lost, progress = resolve_moves(snapshot, actions, config, priority)
        if config.turn_based:
            out["turn"] = out["tick"] % n
        return out, lost, progress
    # R3 move_ticks: moves that land now resolve with the one-tick moves; slower ones take off.
    in_air = list(snapshot["in_air"])
    moves, failed = ["wait"] * n, set()
    for p, name in enumerate(actions):
        move = in_air[p]
        ticks = move_ticks(name, config)
        if move is None and ticks > 1:
            in_air[p] = {"action": name, "card": moving_card(snapshot, p, name), "lands_in": ticks - 1}
        elif move is None:
            moves[p] = name
        elif move["lands_in"] > 1:
            in_air[p] = {**move, "lands_in": move["lands_in"] - 1}
        else:
            in_air[p] = None
            if lands(snapshot, p, move, config):
                moves[p] = move["action"]
            else:
                failed.add(p)
    out, lost, progress = resolve_moves(snapshot, moves, config, priority)
    out["in_air"] = in_air
    if config.turn_based:
        out["turn"] = out["tick"] % n
    return out, lost | failed, progress


def move_ticks(name: str, config) -> int:
    """R3 ``move_ticks``: the ticks the move ``name`` takes (WAIT: one)."""
    if name == "wait":
        return 1
    if name in ("draw", "call"):
        return config.ticks_of(name)
    dst = name.split(">")[1]
    kind = next(k for k in ("foundation", "work", "under", "nertz") if dst.startswith(k))
    return config.ticks_of(kind)


def moving_card(snapshot: dict, player: int, name: str) -> str | None:
    """The card a move carries (the first of a block), None for DRAW and CALL."""
    if ">" not in name:
        return None
    me = snapshot["players"][player]
    src, dst = name.split(">")
    if src in ("nertz", "waste"):
        return me[src][-1]
    count = int(dst.split(":")[1]) if ":" in dst else 1
    return me["work"][int(src[4:])][-count]


def lands(snapshot: dict, player: int, move: dict, config) -> bool:
    """A move in the air may land on ``snapshot``: R4 still allows it and it carries its card."""
    name = move["action"]
    return name in r4_names(snapshot, player, config) and moving_card(snapshot, player, name) == move["card"]


def land_all(snapshot: dict, config, priority: Sequence[int] | None = None) -> tuple[dict, set[int]]:
    """R5 "cards in the air complete their move": at the end of the hand every move in the air
    lands on the table the final tick left, racing one another (R6)."""
    n = len(snapshot["players"])
    moves, failed = ["wait"] * n, set()
    for p, move in enumerate(snapshot["in_air"]):
        if move is not None and lands(snapshot, p, move, config):
            moves[p] = move["action"]
        elif move is not None:
            failed.add(p)
    out, lost, _ = resolve_moves({**snapshot, "ended": False}, moves, config, priority)
    out["tick"] = snapshot["tick"]
    out["in_air"] = [None] * n
    if not out["ended"]:
        out["ended"], out["end_reason"] = True, snapshot["end_reason"]
    return out, lost | failed


def resolve_moves(
    snapshot: dict,
    actions: Sequence[str],
    config,
    priority: Sequence[int] | None = None,
) -> tuple[dict, set[int], bool]:
    """The moves of one tick resolve together (R3, R4, R5 calls, R6, R7); ``actions`` are legal
    by R4 on ``snapshot`` (the timing options already applied)."""
    before = snapshot
    out = copy.deepcopy(snapshot)
    n = len(out["players"])
    order = list(range(n)) if priority is None else list(priority)

    def card_at(p: int, source: str) -> str:
        me = before["players"][p]
        return me[source][-1] if source in ("nertz", "waste") else me["work"][int(source[4:])][-1]

    # R6: foundation plays resolve against the piles as they were at the start of the tick.
    lost: set[int] = set()
    progress = False
    claims: dict[str, list[int]] = {}
    for p in order:
        name = actions[p]
        if name.endswith(">foundation"):
            claims.setdefault(card_at(p, name.split(">")[0]), []).append(p)
    for p in range(n):  # aces start new piles, in seat order (R4.2, R6: aces never collide)
        name = actions[p]
        if name.endswith(">foundation") and rank(card_at(p, name.split(">")[0])) == 1:
            src = name.split(">")[0]
            card, owner = _remove(out, p, src)
            out["foundations"].append({"cards": [[owner, card]], "complete": False})
            progress = True
    for card, claimants in claims.items():
        if rank(card) == 1:
            continue
        piles = foundation_targets(before["foundations"], card)
        for p, f in zip(sorted(claimants[: len(piles)]), piles):
            _, owner = _remove(out, p, actions[p].split(">")[0])
            out["foundations"][f]["cards"].append([owner, card])
            out["foundations"][f]["complete"] = len(out["foundations"][f]["cards"]) == 13
            progress = True
        lost.update(claimants[len(piles):])

    # R4.8: builds onto a Nertz pile whose owner plays from it fail; else the first in race order wins.
    builders: dict[int, list[int]] = {}
    for p in order:
        dst = actions[p].partition(">")[2]
        if dst.startswith("nertz@"):
            builders.setdefault((p + int(dst[6:])) % n, []).append(p)
    landed: dict[int, int] = {}
    for target, claimants in builders.items():
        if actions[target].startswith("nertz>"):
            lost.update(claimants)
        else:
            landed[claimants[0]] = target
            lost.update(claimants[1:])

    callers = list(before["callers"])
    for p, name in enumerate(actions):
        me = out["players"][p]
        src, _, dst = name.partition(">")
        if name == "draw":  # R4.1
            if me["stock"]:
                for _ in range(min(config.stock_draw, len(me["stock"]))):
                    me["waste"].append(me["stock"].pop())
            else:
                me["stock"], me["waste"] = me["waste"][::-1], []
        elif name == "call":  # R4.6
            callers.append(p)
        elif dst.startswith("nertz@"):  # R4.8: the card keeps its owner
            if p in landed:
                card, owner = _remove(out, p, src)
                target = out["players"][landed[p]]
                target["nertz"].append(card)
                target["nertz_owners"].append(owner)
                progress = True
        elif dst.startswith("work") and src.startswith("work"):  # R4.3 / R4.4 block move
            i, j, count = int(src[4:]), int(dst[4:].split(":")[0]), int(dst.split(":")[1])
            block = me["work"][i][-count:]
            del me["work"][i][-count:]
            me["work"][j].extend(block)
            if "work_owners" in me:
                owners = me["work_owners"][i][-count:]
                del me["work_owners"][i][-count:]
                me["work_owners"][j].extend(owners)
        elif dst.startswith("work"):  # R4.3 / R4.4 single card
            card, owner = _remove(out, p, src)
            me["work"][int(dst[4:])].append(card)
            if "work_owners" in me:
                me["work_owners"][int(dst[4:])].append(owner)
            progress = True
        elif dst.startswith("under"):  # R4.5
            card, owner = _remove(out, p, src)
            me["work"][int(dst[5:])].insert(0, card)
            if "work_owners" in me:
                me["work_owners"][int(dst[5:])].insert(0, owner)
            progress = True
    for p in range(n):
        if actions[p].startswith("nertz>") and p not in lost:
            progress = True
        if config.auto_call and not out["players"][p]["nertz"] and p not in callers:
            callers.append(p)  # R4.6 auto_call
    out["callers"] = sorted(set(callers))
    out["tick"] = before["tick"] + 1
    if out["callers"]:  # R5: the hand ends at the end of the tick of a call
        out["ended"], out["end_reason"] = True, "call"
    out["scores"] = [score_of(out, p, config, p in out["callers"]) for p in range(n)]
    return out, lost, progress


def _remove(out: dict, p: int, source: str) -> tuple[str, int]:
    """Take the top card of a source of player ``p``: the card and its owner (R1; with R4.8 a Nertz
    or work pile may hold another player's card, and the snapshot lists the owners)."""
    me = out["players"][p]
    if source == "waste":
        return me["waste"].pop(), p
    if source == "nertz":
        return me["nertz"].pop(), me["nertz_owners"].pop() if "nertz_owners" in me else p
    i = int(source[4:])
    return me["work"][i].pop(), me["work_owners"][i].pop() if "work_owners" in me else p


def stall_limit(snapshot: dict, config) -> int:
    """R5 "a whole stock cycle" from the table ``snapshot``: ``stall_ticks``, or with ``"auto"``
    the most DRAWs any player needs to turn through all of their stock and waste once from where
    they stand: ``ceil(s/d) + 1 + ceil(w/d)`` for ``s`` cards in stock and ``w`` in the waste."""
    if config.stall_ticks != "auto":
        return config.stall_ticks
    d = config.stock_draw
    most = max(-(-len(me["stock"]) // d) + 1 + -(-len(me["waste"]) // d) for me in snapshot["players"])
    period = config.ticks_of("draw")  # R3 move_ticks: the ticks between one DRAW and the next
    if config.turn_based:  # a player draws on their turn only, once a round of P ticks
        p = config.num_players
        period = -(-period // p) * p
    return most * period


def start_clock(snapshot: dict, config) -> tuple[int, int, int]:
    """The R5 clock of a freshly dealt hand: no tick without progress, no rotation, and the stock
    cycle measured on the dealt table."""
    return 0, 0, stall_limit(snapshot, config)


def progress_in_air(snapshot: dict) -> bool:
    """A move in the air that may be progress when it lands, or a call (not DRAW, not work to work)."""
    for move in snapshot.get("in_air", []):
        if move is not None and move["action"] != "draw" and not re.fullmatch(r"work\d>work\d:\d+", move["action"]):
            return True
    return False


def next_table(
    snapshot: dict,
    actions: Sequence[str],
    config,
    clock: tuple[int, int, int],
    priority: Sequence[int] | None = None,
) -> tuple[dict, set[int], tuple[int, int, int]]:
    """One whole tick: ``apply_tick``, then the R5 stall clock and ``max_cycles``.

    ``clock`` is (ticks since progress, stall rotations in a row, the stock cycle measured on the
    table of the last progress or rotation; ``start_clock`` for a new hand). Reading: a stall that
    ends the hand and ``max_cycles`` reached in the same tick report ``"stall"``; a call beats both.
    """
    out, lost, progress = apply_tick(snapshot, actions, config, priority)
    since, rotations, cycle = clock
    if out["ended"]:  # a call: the clock stands
        pass
    elif progress:
        since, rotations, cycle = 0, 0, stall_limit(out, config)
    else:
        since += 1
        if since >= cycle and not progress_in_air(out):
            if rotations >= config.stall_rotations:
                out["ended"], out["end_reason"] = True, "stall"
            else:
                out = stall_rotate(out)
                since, rotations, cycle = 0, rotations + 1, stall_limit(out, config)
    if not out["ended"] and out["tick"] >= config.max_cycles:
        out["ended"], out["end_reason"] = True, "max_cycles"
    if out["ended"] and any(move is not None for move in out.get("in_air", [])):
        out, landed_lost = land_all(out, config, priority)
        lost |= landed_lost
    return out, lost, (since, rotations, cycle)


# --- R8: partners and matches --------------------------------------------------------------


def team_figures(values: Sequence[int], config) -> list[int]:
    """R8 partners: each team's figure is the sum of both partners' (seats p and p + P/2)."""
    n = config.num_players
    if not config.partners:
        return list(values)
    return [values[p] + values[p + n // 2] for p in range(n // 2)]


def match_after_hand(match: dict, scores: Sequence[int], config, callers: Sequence[int] = ()) -> dict:
    """The match record (``Game.snapshot()["match"]``) after a hand scoring ``scores`` in which
    ``callers`` called (R8): hands go on until a team's total reaches ``target_score`` (or ``hands``
    are played); the highest total wins; a tie goes to the higher last-hand score; still tied,
    another hand, after which the rule is applied again among the tied; ``max_hands`` stops the
    match ("capped"). ``match_end``: "exceed" needs a total above the target, "spread" also ends
    on highest minus lowest total reaching it, "caller" lets a caller who reached it win first."""
    totals = [t + s for t, s in zip(match["totals"], scores)]
    hands = match["hands_played"] + 1
    n = config.num_players
    team = (lambda p: p % (n // 2)) if config.partners else (lambda p: p)
    team_total, team_last = team_figures(totals, config), team_figures(list(scores), config)
    contenders = sorted({team(p) for p in match["contenders"]})
    state = match["state"]
    fixed = config.hands is not None and hands >= config.hands
    target, end = config.target_score, config.match_end
    reached = max(team_total) > target if end == "exceed" else max(team_total) >= target
    if end == "spread":  # German Nerts: also when the spread of the totals reaches the target
        reached = reached or max(team_total) - min(team_total) >= target
    due = state == "tie-break" or fixed or (config.hands is None and reached)

    def rule(candidates):
        top = max(team_total[t] for t in candidates)
        tied = [t for t in candidates if team_total[t] == top]
        best = max(team_last[t] for t in tied)
        return [t for t in tied if team_last[t] == best]

    if due:
        if end == "caller":  # Snerts: a caller of this hand who has reached the target wins first
            called = sorted({team(p) for p in callers} & set(contenders))
            contenders = [t for t in called if team_total[t] >= target] or contenders
        contenders = rule(contenders)
        state = "decided" if len(contenders) == 1 else "tie-break"
    if state != "decided" and hands >= config.max_hands:
        if not due:
            contenders = rule(contenders)
        state = "capped"
    seats = [p for p in range(n) if team(p) in contenders]
    return {"totals": totals, "hands_played": hands, "contenders": seats, "state": state}
