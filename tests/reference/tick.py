"""The reference's tick (see ``legality.py`` for what it is and the readings of RULES.md it makes):
how one tick's moves resolve together (R3 ``move_ticks``, R4 effects, R5 calls, R6 races, R7
scores), and a whole tick with the R5 stall clock and ``max_cycles`` (``next_table``)."""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence

from .legality import foundation_targets, legal_action_names, r4_names, rank


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
    lost, progress = play_foundations(before, out, actions, order)
    landed, lost_builds = race_nertz_builds(actions, order, n)
    lost.update(lost_builds)

    callers = list(before["callers"])
    for p, name in enumerate(actions):
        if apply_move(out, p, name, config, landed.get(p), callers):
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


def card_at(snapshot: dict, p: int, source: str) -> str:
    """The top card of source ``source`` (``nertz``, ``waste``, ``work{i}``) of player ``p``."""
    me = snapshot["players"][p]
    return me[source][-1] if source in ("nertz", "waste") else me["work"][int(source[4:])][-1]


def play_foundations(before: dict, out: dict, actions: Sequence[str], order: Sequence[int]) -> tuple[set[int], bool]:
    """R6: foundation plays resolve against the piles as they were at the start of the tick
    (``before``), onto ``out``. Aces start new piles in seat order (R4.2; aces never collide). Of
    the claimants of another card, the first in race ``order`` win, as many as there are piles it
    fits, and take those piles, the oldest to the lowest seat. Returns the players who lost a race,
    and whether a card moved."""
    lost: set[int] = set()
    progress = False
    claims: dict[str, list[int]] = {}
    for p in order:
        name = actions[p]
        if name.endswith(">foundation"):
            claims.setdefault(card_at(before, p, name.split(">")[0]), []).append(p)
    for p in range(len(out["players"])):  # aces start new piles, in seat order (R4.2, R6: aces never collide)
        name = actions[p]
        if name.endswith(">foundation") and rank(card_at(before, p, name.split(">")[0])) == 1:
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
    return lost, progress


def race_nertz_builds(actions: Sequence[str], order: Sequence[int], n: int) -> tuple[dict[int, int], set[int]]:
    """R4.8: builds onto a Nertz pile whose owner plays from it fail; else the first in race order
    wins (``n`` players). Returns each winning builder's target player, and the builders who lost."""
    builders: dict[int, list[int]] = {}
    for p in order:
        dst = actions[p].partition(">")[2]
        if dst.startswith("nertz@"):
            builders.setdefault((p + int(dst[6:])) % n, []).append(p)
    landed: dict[int, int] = {}
    lost: set[int] = set()
    for target, claimants in builders.items():
        if actions[target].startswith("nertz>"):
            lost.update(claimants)
        else:
            landed[claimants[0]] = target
            lost.update(claimants[1:])
    return landed, lost


def apply_move(out: dict, p: int, name: str, config, build_target: int | None, callers: list[int]) -> bool:
    """Player ``p``'s move ``name`` on ``out`` (foundation plays are already made: ``play_foundations``);
    a CALL joins ``callers``; ``build_target`` is the player whose Nertz pile an R4.8 build goes on
    when it won its race, else None. Returns whether it is progress (R5): a card reached a work
    pile or another Nertz pile."""
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
        if build_target is not None:
            card, owner = _remove(out, p, src)
            target = out["players"][build_target]
            target["nertz"].append(card)
            target["nertz_owners"].append(owner)
            return True
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
        return True
    elif dst.startswith("under"):  # R4.5
        card, owner = _remove(out, p, src)
        me["work"][int(dst[5:])].insert(0, card)
        if "work_owners" in me:
            me["work_owners"][int(dst[5:])].insert(0, owner)
        return True
    return False


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
