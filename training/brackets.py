"""Tournament logic (R8) on match results: seating, table order, cuts, advancement, standings.

Nothing here plays cards. Every format runs on a ``play(stage, round, tables)`` callable that
returns one :class:`TableResult` per table (a match to the target, R8), so the same code runs a
real tournament (``training.tournament`` plays the matches in an ``Arena``) and a test that feeds
exact results. Entrants are integers ``0 .. n-1``; every source of chance (seat draws, cuts) is a
generator seeded from ``seed`` and where it is used, so a tournament is a pure function of its
seed and its results.

Every table's match ends as the rule set's ``match_end`` says (R8; ``training.tournament`` plays
it: the Snerts caller rule under ``preset=snerts``, and so on); the formats below read only its
result.

Readings of R8 (and of the source texts it cites):

* **Table order.** At every table the match winner (R8's tie rules, ``training.evaluate.
  match_winner``) comes first; the others follow by their table score, highest first. A tie that
  decides who moves on is cut (R8: "ties cut cards, ace low, here a seeded draw"): each tied player
  draws a card from one shuffled deck, the high card moves on, players who draw the same rank cut
  again. Ties that decide nothing stay in seat order and are not cut. A match stopped by the hand
  cap with a tie still standing (``TableResult.winners`` holds more than one) is decided by a cut.
* **Single elimination** (R8, ``seeds/000``, the Boardwalk format): tables of four, matches to
  100, the top two (by match total) advance, until a field of four or fewer sits at one final
  table, whose winner wins. A field that is not a multiple of four sits at the fewest tables of at
  most four, sizes as even as possible (7 -> 4+3, 6 -> 3+3, 9 -> 3+3+3, 5 -> 3+2), seats drawn
  from the seed every round. The top two advance from a table of three as from a table of four; a
  table of two (only a field of five makes one) sends only its winner, so every table eliminates
  someone. Places: the final table's order (equal totals share a place); players out in an
  earlier round share the place after everyone who went further.
* **Table ladder** (R8, ``seeds/003``, the Snerts tournament rules): ``n`` players (a multiple of
  four) at ``n / 4`` tables, table 1 the top table; first seats drawn from the seed. Every player
  plays ``rounds`` tables (four). At each table the winner records ``target`` (100) and the others
  the total they had before the final hand (the hand that decided the match; a player tied at the
  target who lost the extra hand records that total, which can exceed ``target``, but still places
  after the winner). After a round the top two of table ``t`` move to table ``t - 1`` and the
  bottom two to table ``t + 1``; the top two at table 1 and the bottom two at the last table stay.
  The highest sum of recorded scores wins; players tied for first play a tie-break match to the
  target (R8) among themselves, and its order places them. Other equal sums share a place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

TABLE = 4  # R8: tables of four
ADVANCE = 2  # R8: the top two advance (elimination) or move up (ladder)
LADDER_ROUNDS = 4  # R8: every player plays four tables

# Words that keep the seed streams of seat draws and cuts apart.
_SEATS, _CUT = 11, 12


@dataclass(frozen=True)
class TableResult:
    """One table's match to the target (R8), per seat: ``seats[s]`` is the entrant in seat ``s``."""

    seats: tuple[int, ...]
    totals: tuple[int, ...]  # the match totals
    last_hand: tuple[int, ...]  # the scores of the final hand
    winners: tuple[int, ...]  # the match winner (entrant); more than one only if the hand cap left a tie
    hands: int = 1

    @property
    def before_final(self) -> tuple[int, ...]:
        """Each seat's total before the final hand (R8, the ladder's recorded score)."""
        return tuple(t - h for t, h in zip(self.totals, self.last_hand))

    def recorded(self, target: int) -> tuple[int, ...]:
        """R8 (table ladder): the winner records ``target``, the others their total before the final hand.
        Call it on a decided result (one winner, ``decide``)."""
        return tuple(target if e == self.winners[0] else b for e, b in zip(self.seats, self.before_final))


Play = Callable[[str, int, list[tuple[int, ...]]], list[TableResult]]


def cut(players: Sequence[int], rng: np.random.Generator) -> tuple[list[int], list[dict[int, int]]]:
    """Players cut cards (R8): each draws a card from one shuffled deck; the high card goes first,
    ace low; players who drew the same rank cut again. Returns the order and every round's draws
    (``{player: rank}``, ace 1 to king 13)."""
    draws: list[dict[int, int]] = []

    def order(group: list[int]) -> list[int]:
        if len(group) < 2:
            return group
        ranks = [int(c) % 13 + 1 for c in rng.permutation(52)[: len(group)]]
        draws.append(dict(zip(group, ranks)))
        out: list[int] = []
        for r in sorted(set(ranks), reverse=True):
            out += order([p for p, q in zip(group, ranks) if q == r])
        return out

    return order(list(players)), draws


def cut_rng(seed: int, stage: str, round_no: int, table: int) -> np.random.Generator:
    """The generator of the cuts at one table."""
    return np.random.default_rng([seed, _CUT, stage_word(stage), round_no, table])


def seat_rng(seed: int, stage: str, round_no: int) -> np.random.Generator:
    """The generator of one round's seat draw."""
    return np.random.default_rng([seed, _SEATS, stage_word(stage), round_no])


def stage_word(stage: str) -> int:
    """The seed word of a stage (``elimination``, ``ladder`` or ``tiebreak``)."""
    return {"elimination": 1, "ladder": 2, "tiebreak": 3}[stage]


def decide(result: TableResult, rng: np.random.Generator) -> tuple[TableResult, list[dict[str, Any]]]:
    """The result with one winner: a match stopped by the hand cap with a tie still standing (R8
    would play on) is decided by a cut. Returns the cuts made."""
    if len(result.winners) == 1:
        return result, []
    order, draws = cut(result.winners, rng)
    decided = TableResult(result.seats, result.totals, result.last_hand, (order[0],), result.hands)
    return decided, [{"for": "winner", "players": list(result.winners), "draws": _json_draws(draws), "order": order}]


def place(
    result: TableResult, score: Sequence[float], moving: int, rng: np.random.Generator,
) -> tuple[list[int], list[dict[str, Any]]]:
    """The table order (R8) of a decided result: the winner first, then by ``score`` (per seat),
    highest first. Only a tie across the ``moving`` boundary (how many move on) is cut. Returns
    the order (entrants) and the cuts made."""
    if len(result.winners) != 1:
        raise ValueError(f"place a decided result (one winner), got winners {list(result.winners)}")
    winner = result.winners[0]
    by_seat = dict(zip(result.seats, score))
    rest = sorted((e for e in result.seats if e != winner), key=lambda e: -by_seat[e])  # stable: seat order
    order, cuts = [winner], []
    i = 0
    while i < len(rest):
        j = i
        while j < len(rest) and by_seat[rest[j]] == by_seat[rest[i]]:
            j += 1
        group = rest[i:j]
        lo, hi = len(order), len(order) + len(group)  # places lo .. hi-1 of the full order, from 0
        if len(group) > 1 and lo < moving < hi:
            group, draws = cut(group, rng)
            cuts.append({"for": f"place {lo + 1}", "players": rest[i:j], "draws": _json_draws(draws), "order": group})
        order += group
        i = j
    return order, cuts


def _json_draws(draws: list[dict[int, int]]) -> list[dict[str, int]]:
    return [{str(p): r for p, r in d.items()} for d in draws]


def shared_places(keys: Sequence[Any], start: int = 1) -> list[int]:
    """Places for an ordered list of sort keys: equal keys share a place (1, 2, 2, 4)."""
    places: list[int] = []
    for i, k in enumerate(keys):
        places.append(places[-1] if i and k == keys[i - 1] else start + i)
    return places


def rating_scores(result: TableResult, order: Sequence[int], score: Sequence[float]) -> list[float]:
    """Per seat, a score for OpenSkill whose ranking is the table's: the winner first, then equal
    ``score`` sharing a rank (a cut settles movement, not skill)."""
    by_seat = dict(zip(result.seats, score))
    keys = [(0, 0.0)] + [(1, -by_seat[e]) for e in order[1:]]
    rank = dict(zip(order, shared_places(keys)))
    return [-float(rank[e]) for e in result.seats]


def table_sizes(n: int, size: int = TABLE) -> list[int]:
    """The fewest tables of at most ``size`` that seat ``n``, sizes as even as possible, larger first."""
    t = -(-n // size)
    return [n // t + (1 if k < n % t else 0) for k in range(t)]


def advancing(table_size: int) -> int:
    """How many advance from a table (R8: the top two; a table of two sends only its winner)."""
    return min(ADVANCE, table_size - 1)


def elimination_table_sizes(n: int) -> set[int]:
    """Every table size a single elimination of ``n`` meets (they do not depend on the results)."""
    sizes = set()
    while n > TABLE:
        round_sizes = table_sizes(n)
        sizes |= set(round_sizes)
        n = sum(advancing(k) for k in round_sizes)
    return sizes | {n}


def draw_tables(players: Sequence[int], sizes: Sequence[int], rng: np.random.Generator) -> list[tuple[int, ...]]:
    """Seat ``players`` at tables of ``sizes`` by a seeded draw."""
    drawn = [int(players[k]) for k in rng.permutation(len(players))]
    out, i = [], 0
    for s in sizes:
        out.append(tuple(drawn[i : i + s]))
        i += s
    return out


def _played(play: Play, stage: str, round_no: int, tables: list[tuple[int, ...]]) -> list[TableResult]:
    results = list(play(stage, round_no, tables))
    if [sorted(r.seats) for r in results] != [sorted(t) for t in tables]:
        raise ValueError(f"{stage} round {round_no + 1}: results for {[r.seats for r in results]}, tables {tables}")
    return results


def _table_record(result: TableResult, order: list[int], cuts: list[dict[str, Any]], t: int) -> dict[str, Any]:
    return {
        "table": t + 1, "seats": list(result.seats), "totals": list(result.totals), "last_hand": list(result.last_hand),
        "before_final": list(result.before_final), "hands": result.hands, "winner": result.winners[0],
        "order": order, "cuts": cuts,
    }


def single_elimination(n: int, play: Play, seed: int) -> dict[str, Any]:
    """Single elimination (R8) for entrants ``0 .. n-1``: rounds of tables, the top two at each
    table advancing by match total, until one table of four or fewer remains; its winner wins."""
    if n < 2:
        raise ValueError(f"a tournament needs at least 2 entrants, got {n}")
    rounds: list[dict[str, Any]] = []
    field, out_in = list(range(n)), []
    while True:
        r = len(rounds)
        final = len(field) <= TABLE
        sizes = [len(field)] if final else table_sizes(len(field))
        tables = draw_tables(field, sizes, seat_rng(seed, "elimination", r))
        records, advanced = [], []
        for t, result in enumerate(_played(play, "elimination", r, tables)):
            moving = 1 if final else advancing(len(result.seats))
            rng = cut_rng(seed, "elimination", r, t)
            result, cuts = decide(result, rng)
            order, more = place(result, result.totals, moving, rng)
            rec = _table_record(result, order, cuts + more, t)
            rec["advance"] = [] if final else order[:moving]
            rec["rating_scores"] = rating_scores(result, order, result.totals)
            records.append(rec)
            advanced += rec["advance"]
        rounds.append({"round": r + 1, "tables": records})
        if final:
            break
        out_in.append(sorted(set(field) - set(advanced)))
        field = sorted(advanced)
    final_rec = rounds[-1]["tables"][0]
    totals = dict(zip(final_rec["seats"], final_rec["totals"]))
    order = final_rec["order"]
    keys = [(0, 0)] + [(1, -totals[e]) for e in order[1:]]
    standings = [
        {"place": p, "entrant": e, "round_out": None, "total": totals[e]} for e, p in zip(order, shared_places(keys))
    ]
    for r in range(len(out_in) - 1, -1, -1):  # later rounds first: they went further
        place_no = len(standings) + 1
        standings += [{"place": place_no, "entrant": e, "round_out": r + 1, "total": None} for e in out_in[r]]
    return {"rounds": rounds, "tiebreak": None, "standings": standings, "champion": order[0]}


def ladder_moves(orders: Sequence[Sequence[int]]) -> list[list[int]]:
    """The next round's tables (R8, table ladder; table 1 first): the top two of table ``t`` move to
    ``t - 1`` and the bottom two to ``t + 1``; at table 1 the top two stay, at the last the bottom two."""
    last = len(orders) - 1
    nxt: list[list[int]] = [[] for _ in orders]
    for t, order in enumerate(orders):
        nxt[max(t - 1, 0)] += order[:ADVANCE]
        nxt[min(t + 1, last)] += order[ADVANCE:]
    return [sorted(tbl) for tbl in nxt]


def ladder(n: int, play: Play, seed: int, target: int = 100, rounds: int = LADDER_ROUNDS) -> dict[str, Any]:
    """The table ladder (R8) for entrants ``0 .. n-1`` (``n`` a multiple of four): ``rounds``
    tables each, recorded scores summed, a tie-break match to ``target`` for first place."""
    if n < TABLE or n % TABLE:
        raise ValueError(f"the table ladder seats tables of {TABLE}: it needs a multiple of {TABLE} entrants, got {n}")
    if rounds < 1:
        raise ValueError(f"the table ladder needs at least one round, got {rounds}")
    tables = draw_tables(list(range(n)), [TABLE] * (n // TABLE), seat_rng(seed, "ladder", 0))
    recorded: list[list[int]] = [[] for _ in range(n)]  # each entrant's recorded scores
    sums, out = [0] * n, []
    for r in range(rounds):
        moving = ADVANCE if r + 1 < rounds and len(tables) > 1 else 0  # no cut where no one moves
        records, orders = [], []
        for t, result in enumerate(_played(play, "ladder", r, tables)):
            rng = cut_rng(seed, "ladder", r, t)
            result, cuts = decide(result, rng)
            rec_scores = result.recorded(target)
            order, more = place(result, rec_scores, moving, rng)
            rec = _table_record(result, order, cuts + more, t)
            rec["recorded"] = list(rec_scores)
            rec["rating_scores"] = rating_scores(result, order, rec_scores)
            if moving:
                rec["up"] = order[:ADVANCE] if t else []
                rec["down"] = order[ADVANCE:] if t < len(tables) - 1 else []
            for e, s in zip(result.seats, rec_scores):
                sums[e] += s
                recorded[e].append(s)
            records.append(rec)
            orders.append(order)
        out.append({"round": r + 1, "tables": records})
        if r + 1 < rounds:
            nxt = ladder_moves(orders)
            rng = seat_rng(seed, "ladder", r + 1)
            tables = [draw_tables(tbl, [len(tbl)], rng)[0] for tbl in nxt]
    ranked = sorted(range(n), key=lambda e: -sums[e])
    top = [e for e in ranked if sums[e] == sums[ranked[0]]]
    tiebreak = None
    if len(top) > 1:  # R8: a tie for first place is settled by a tie-break match to the target
        (result,) = _played(play, "tiebreak", 0, [tuple(sorted(top))])
        rng = cut_rng(seed, "tiebreak", 0, 0)
        result, cuts = decide(result, rng)
        order, _ = place(result, result.totals, 1, rng)
        tiebreak = _table_record(result, order, cuts, 0)
        tiebreak["rating_scores"] = rating_scores(result, order, result.totals)
        totals = dict(zip(result.seats, result.totals))
        ranked = order + ranked[len(top) :]
        top_places = shared_places([(0, 0)] + [(1, -totals[e]) for e in order[1:]])
    else:
        top_places = [1]
    places = top_places + shared_places([-sums[e] for e in ranked[len(top) :]], start=len(top) + 1)
    standings = [{"place": p, "entrant": e, "sum": sums[e], "recorded": recorded[e]} for e, p in zip(ranked, places)]
    return {"rounds": out, "tiebreak": tiebreak, "standings": standings, "champion": ranked[0]}
