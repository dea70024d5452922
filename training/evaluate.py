"""The evaluation harness: agents play duplicate hands (or matches) and get a table of results.

    nertz eval --agents heuristic greedy greedy greedy --hands 2000 --seed 0
    nertz eval --agents heuristic greedy --hands 2000 --matches --target-score 100
    nertz eval --agents heuristic greedy passive random --players 2 --hands 2000
    nertz eval --agents greedy heuristic:call=now --rules stock_draw=1 --out r.json

Duplicate format: deal ``i`` (one 52-card deck per seat, R10, drawn from the seed) is replayed
once per rotation, agent ``k`` sitting in seat ``(k + r) % P`` in rotation ``r``, so every agent
plays every deck from every seat and results are paired per deal. When more agents are named than
``--players``, they form a pool: each deal seats a seeded draw of ``--players`` of them, then
rotates. Agents are names or ``name:key=value,...`` (``agents.make_spec``).

Partners (``--rules partners=true``, R8): agents ``k`` and ``k + n/2`` of the ``n`` named form a
team, so ``--agents A B A2 B2`` seats the table ``[A, B, A2, B2]`` with A and A2 opposite
(seats ``p`` and ``p + P/2``). A rotation moves every agent by the same number of seats, so
partners stay opposite in every rotation; a pool draws whole teams. The report adds a row per
team: the team score (both partners summed) with its interval over deals, and the team's share of
hands (and matches) won.

Matches follow the engine's R8 rule (``nertz_env.engine.match_decision``: target, the config's
``match_end``, tie rule, tie-break hands, ``max_hands`` cap). ``--rules preset=racing_demon`` or ``episode=match`` plays
matches by the config's ``target_score``, ``hands`` and ``max_hands`` (the agents then see the
match so far in their observation's match section).

Per agent it reports the mean hand score (R7) and the hand win share (the highest score wins, ties
split), each with a 95% interval over deals (a deal's rotations are not independent hands, so
the deal is the unit: ``stats.clustered_interval``), how often it emptied its Nertz pile
and called (R4.6) and its win share in the hands it called (``calls_won``, in the JSON only),
cards to foundations, ticks per hand, foundation races won and lost (R6), and an OpenSkill
rating from every hand's ranking; with ``--matches``, matches to ``target_score`` (R8) and the
match win share. ``--out`` writes JSON with the config, seeds, versions and every
hand's result.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from nertz_env import agents as agent_registry
from nertz_env import engine
from nertz_env.agents.base import Agent
from nertz_env.checks import check_seed
from nertz_env.cli_checks import (
    MOST_BATCH,
    MOST_DEALS,
    SEATS_FROM,
    USER_ERRORS,
    Parser,
    at_least,
    integer,
    output_file,
    rule_config,
    seed_number,
)
from nertz_env.config import MATCH_ENDS, NertzConfig
from nertz_env.options import parse_rule_options
from nertz_env.training.arena import Arena, Hand, HandResult, MatchSoFar, Stream, hand_stream_seed, single
from nertz_env.training.report import format_report, over_deals, tables_of

# Words that keep the seed streams of deals, tables, hands and matches apart.
_DEAL, _TABLE, _HAND, _MATCH, _AGENT = 1, 2, 3, 4, 5


def deal_decks(seed: int, deal: int, num_players: int) -> np.ndarray:
    """Deal ``deal`` of a run: ``int8 [P, 52]`` card codes, each row a shuffled deck in R10 order.
    A pure function of its arguments, so a deal is the same however many are played."""
    return _shuffled_decks(np.random.default_rng([seed, _DEAL, deal]), num_players)


def match_decks(seed: int, match: int, hand: int, num_players: int) -> np.ndarray:
    """The deal of hand ``hand`` of match ``match`` (the same in every rotation)."""
    return _shuffled_decks(np.random.default_rng([seed, _MATCH, match, hand]), num_players)


def _shuffled_decks(rng: np.random.Generator, num_players: int) -> np.ndarray:
    return np.stack([rng.permutation(52) for _ in range(num_players)]).astype(np.int8)


def rotation_seats(table: Sequence[int], rotation: int) -> tuple[int, ...]:
    """The agent in each seat when ``table[k]`` sits in seat ``(k + rotation) % P``."""
    p = len(table)
    return tuple(table[(s - rotation) % p] for s in range(p))


def tables_for(seed: int, deals: int, n_agents: int, players: int, partners: bool = False,
               first: int = 0) -> list[tuple[int, ...]]:  # fmt: skip
    """The agents at each deal's table, deals ``first`` on: all of them, or a seeded draw from the
    pool. With ``partners`` agents ``k`` and ``k + n_agents/2`` are a team, seated ``P/2`` apart (R8)."""
    if n_agents == players:
        return [tuple(range(players))] * deals
    if partners:
        half = n_agents // 2
        out = []
        for i in range(first, first + deals):
            teams = np.random.default_rng([seed, _TABLE, i]).choice(half, players // 2, replace=False)
            out.append(tuple(int(t) for t in teams) + tuple(int(t) + half for t in teams))
        return out
    return [
        tuple(int(k) for k in np.random.default_rng([seed, _TABLE, i]).choice(n_agents, players, replace=False))
        for i in range(first, first + deals)
    ]


def duplicate_streams(seed: int, deals: int, tables: list[tuple[int, ...]], first: int = 0) -> list[Stream]:
    """Every deal once per rotation of its table (the duplicate format): deals ``first`` on."""
    out = []
    for i in range(first, first + deals):
        p = len(tables[i - first])
        decks = deal_decks(seed, i, p)
        for r in range(p):
            hand = Hand((i, r), decks, rotation_seats(tables[i - first], r), hand_stream_seed(seed, _HAND, i, r))
            out.append(single(hand))
    return out


def match_winner(totals: np.ndarray, last: np.ndarray, contenders: list[int]) -> list[int]:
    """R8: the highest total among ``contenders``; ties go to the higher last-hand score; the
    players still tied are returned to play another hand (the engine's ``match_winner``)."""
    keep = np.zeros(len(totals), np.bool_)
    keep[list(contenders)] = True
    engine.match_winner(np.asarray(totals, np.int64), np.asarray(last, np.int64), keep)
    return [int(s) for s in np.flatnonzero(keep)]


def match_stream(
    seed: int, match: int, rotation: int, table: tuple[int, ...], target: int, max_hands: int,
    done: Callable[[dict[str, Any]], None], hands: int | None = None, config: NertzConfig | None = None,
    match_end: str | None = None,
) -> Stream:
    """One match (R8) in one rotation; its deals are the same in every rotation. It is decided
    by the engine's rule (``engine.match_decision``): to ``target`` as ``match_end`` reads it
    (default ``config.match_end``, else ``"highest"``), or ``hands`` hands; ties to the higher last
    hand, then tie-break hands; stopped at ``max_hands`` with the leaders (a tie split). With
    ``config.partners`` it is played between teams; with ``config.episode="match"`` every hand
    carries the match so far for the observation. The record keeps every hand's scores per seat
    (``hand_scores``), so a tournament can read each player's total before the final hand (R8,
    table ladder)."""
    p = len(table)
    seats = rotation_seats(table, rotation)
    teams = config.teams if config is not None else tuple((s,) for s in range(p))
    observed = config is not None and config.episode == "match"
    if match_end is None:
        match_end = config.match_end if config is not None else "highest"
    if match_end not in MATCH_ENDS:
        raise ValueError(f"invalid match_end={match_end!r}: accepted {', '.join(map(repr, MATCH_ENDS))}")
    end_rule = MATCH_ENDS.index(match_end)
    totals = np.zeros(p, np.int64)
    hand_scores: list[list[int]] = []
    contenders = np.ones(len(teams), np.bool_)
    status, h = engine.MATCH_PLAYING, 0
    while True:
        decks = match_decks(seed, match, h, p)
        so_far = None
        if observed:
            seat_contenders = tuple(bool(contenders[next(t for t, m in enumerate(teams) if s in m)]) for s in range(p))
            so_far = MatchSoFar(tuple(int(t) for t in totals), h, seat_contenders, status)
        key, stream_seed = (match, rotation, h), hand_stream_seed(seed, _MATCH, match, rotation, h)
        result = yield Hand(key, decks, seats, stream_seed, so_far)
        last = np.asarray(result.scores, np.int64)
        totals += last
        hand_scores.append([int(x) for x in result.scores])
        h += 1
        team_totals = np.array([totals[list(t)].sum() for t in teams], np.int64)
        team_last = np.array([last[list(t)].sum() for t in teams], np.int64)
        team_called = np.array([any(result.called[s] for s in t) for t in teams], np.bool_)
        status = engine.match_decision(
            team_totals, team_last, contenders, h, status, target, hands or 0, max_hands, team_called, end_rule
        )
        if status >= engine.MATCH_DECIDED:
            break
    won = [t for t in range(len(teams)) if contenders[t]]
    share = 1.0 / len(won)
    winners = [s for t in won for s in teams[t]]
    done({
        "key": [match, rotation], "seats": list(seats), "hands": h, "totals": [int(t) for t in totals],
        "winners": [int(seats[s]) for s in winners], "shares": {int(seats[s]): share for s in winners},
        "capped": status == engine.MATCH_CAPPED, "hand_scores": hand_scores,
    })


def build_agents(specs: Sequence[str | Agent], config: NertzConfig, seed: int) -> tuple[list[Agent], list[str]]:
    """The agents of a run and their labels (a repeated name gets ``#2``, ``#3``, ...)."""
    seen: defaultdict[str, int] = defaultdict(int)  # each name's agents so far
    built, labels = [], []
    for k, spec in enumerate(specs):
        agent_seed = hand_stream_seed(seed, _AGENT, k)
        agent = spec if isinstance(spec, Agent) else agent_registry.make_spec(spec, seed=agent_seed, config=config)
        label = spec if isinstance(spec, str) else agent.name
        seen[label] += 1
        built.append(agent)
        labels.append(label if seen[label] == 1 else f"{label}#{seen[label]}")
    return built, labels


def _record(result: HandResult) -> dict[str, Any]:
    h = result.hand
    return {
        "key": list(h.key), "seed": h.seed, "seats": list(h.seats), "scores": list(result.scores),
        "on_foundations": list(result.on_foundations), "nertz_left": list(result.nertz_left),
        "called": list(result.called), "races_won": list(result.races_won), "races_lost": list(result.races_lost),
        "ticks": result.ticks, "end_reason": result.end_reason,
    }


def versions() -> dict[str, str]:
    """The versions a result was measured with (nertz_env, Python, numpy, numba, openskill, and
    torch where a policy played on it), for every JSON record of the harness."""
    import numba
    import openskill

    import nertz_env

    return {
        "nertz_env": nertz_env.__version__, "python": platform.python_version(), "numpy": np.__version__,
        "numba": numba.__version__, "openskill": getattr(openskill, "__version__", "?"),
        **({"torch": sys.modules["torch"].__version__} if "torch" in sys.modules else {}),
    }


def _progress(total: int, enabled: bool | None, unit: str):
    """A progress bar on a terminal; in a log (stderr not a terminal), a line every few seconds."""
    from tqdm import tqdm

    if enabled is None and not sys.stderr.isatty():
        return _LogProgress(total, unit)
    return tqdm(total=total, unit=unit, disable=enabled is False, smoothing=0.05, file=sys.stderr)


class _LogProgress:
    """``tqdm``'s ``update`` and ``close`` as plain lines on stderr, one every ``every`` seconds."""

    def __init__(self, total: int, unit: str, every: float = 5.0):
        self.total, self.unit, self.every = total, unit, every
        self.done = 0
        self.start = self.last = time.perf_counter()
        print(f"0/{total} {unit}s", file=sys.stderr, flush=True)

    def update(self, n: int = 1) -> None:
        self.done += n
        now = time.perf_counter()
        if now - self.last >= self.every:
            self.last = now
            share = 100 * self.done / max(1, self.total)
            print(f"{self.done}/{self.total} {self.unit}s ({share:.0f}%), {now - self.start:.0f} s", file=sys.stderr,
                  flush=True)

    def close(self) -> None:
        pass


def evaluate(
    agents: Sequence[str | Agent],
    hands: int = 2000,
    seed: int = 0,
    config: NertzConfig | None = None,
    players: int | None = None,
    matches: bool = False,
    target_score: int = 100,
    max_match_hands: int = 100,
    batch_size: int = 2048,
    progress: bool | None = None,
    first_deal: int = 0,
) -> dict[str, Any]:
    """Play ``hands`` duplicate deals (or, with ``matches``, that many matches per rotation) and return the
    report: ``summary`` rows (per agent), ``paired`` rows (per pair of agents), ``ratings``, every hand in
    ``hands`` (and ``matches``), the config, seeds and versions; with partners also ``teams`` rows. A config
    with ``episode="match"`` plays matches by its own ``target_score``, ``hands`` and ``max_hands``.
    ``first_deal``: the deals from that one on (a shard of a longer run, ``training.merge_reports``)."""
    for name, value, low in (("hands", hands, 1), ("batch_size", batch_size, 1), ("first_deal", first_deal, 0)):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise ValueError(f"invalid {name}={value!r}: accepted an integer >= {low}")
    check_seed(seed, allow_none=False)  # as the library takes seeds (numpy's SeedSequence takes any size)
    NertzConfig(target_score=target_score, max_hands=max_match_hands)  # R8's own checks of both
    players = players if players is not None else len(agents)
    base = config if config is not None else NertzConfig()
    config = base if base.num_players == players else base.replace(num_players=players)
    if len(agents) < players:
        raise ValueError(f"{players} seats need at least {players} agents, got {len(agents)}")
    if config.partners and len(agents) % 2:
        raise ValueError(f"partners: agents k and k + n/2 form a team, so give an even number, got {len(agents)}")
    fixed_hands = None
    if config.episode == "match":  # R8 matches as the config defines them
        matches, target_score, fixed_hands, max_match_hands = True, config.target_score, config.hands, config.max_hands
    if first_deal and (matches or config.episode == "match"):
        raise ValueError(f"first_deal={first_deal} shards duplicate deals; matches start at match 0")
    built, labels = build_agents(agents, config, seed)
    tables = tables_for(seed, hands, len(built), players, config.partners, first_deal)
    match_records: list[dict[str, Any]] = []
    t0, arena = time.perf_counter(), Arena(config, built, batch_size)
    if matches:
        bar = _progress(hands * players, progress, "match")

        def done(rec: dict[str, Any]) -> None:
            match_records.append(rec)
            bar.update()

        streams = [
            match_stream(seed, m, r, tables[m], target_score, max_match_hands, done, fixed_hands, config)
            for m in range(hands) for r in range(players)
        ]
        results = arena.play(streams)
    else:
        bar = _progress(hands * players, progress, "hand")
        results = arena.play(duplicate_streams(seed, hands, tables, first_deal), lambda _: bar.update())
    bar.close()
    elapsed = time.perf_counter() - t0
    records = sorted((_record(r) for r in results), key=lambda r: r["key"])
    match_records.sort(key=lambda r: r["key"])
    results_tables = tables_of(records, labels, config.partners, match_records)
    if matches:
        _add_match_shares(results_tables["summary"], match_records)
    ticks = sum(r["ticks"] for r in records)
    return {
        "agents": labels, "specs": [a if isinstance(a, str) else repr(a) for a in agents],
        "players": players, "seed": seed, "deals": hands, "mode": "matches" if matches else "duplicate",
        "target_score": target_score if matches else None, "match_hands": fixed_hands, "teams": results_tables["teams"],
        "config": config.to_dict(), "versions": versions(), "first_deal": first_deal,
        "elapsed_s": elapsed, "hands_played": len(records), "ticks": ticks, "ticks_per_s": ticks / max(elapsed, 1e-9),
        "summary": results_tables["summary"], "paired": results_tables["paired"],
        "replay": (  # how to rebuild any hand with nertz_env.game.Game
            f"Game(NertzConfig(**config)).reset(seed=hand['seed'], decks=training.evaluate."
            f"{'match_decks(seed, match, hand_no, players)' if matches else 'deal_decks(seed, deal, players)'}"
            ".tolist()); seat s is played by agents[hand['seats'][s]]"
        ),
        "ratings": results_tables["ratings"], "hands": records, "matches": match_records,
    }


def _add_match_shares(summary: list[dict[str, Any]], match_records: list[dict[str, Any]]) -> None:
    """Each agent's matches, match win share and its interval over matches (a match's rotations
    share its deals, so the match is the unit), into its summary row."""
    for row in summary:
        k = row["index"]
        mine = [(m["key"][0], m["shares"].get(k, 0.0)) for m in match_records if k in m["seats"]]
        row["matches"] = len(mine)
        row["match_win_share"], row["match_win_ci"] = over_deals(mine, share=True)


def rate_pool(
    agent_names: Sequence[str], players_per_table: int, hands: int, seed: int = 0,
    config: NertzConfig | None = None, progress: bool | None = False,
) -> dict[str, tuple[float, float]]:
    """OpenSkill ``{label: (mu, sigma)}`` for a pool of agents of any size, seated in rotating
    tables of ``players_per_table`` (``hands`` deals, each played in every rotation)."""
    report = evaluate(agent_names, hands=hands, seed=seed, config=config, players=players_per_table, progress=progress)
    return {k: (v["mu"], v["sigma"]) for k, v in report["ratings"].items()}


def parse_rules(items: Sequence[str]) -> dict[str, Any]:
    """``["stock_draw=1", "speed=1,2"]`` -> NertzConfig options (comma lists become tuples)."""
    return parse_rule_options(items)


def main(argv: Sequence[str] | None = None, prog: str = "nertz eval") -> int:
    ap = Parser(prog=prog, description=__doc__.split("\n\n")[0])
    add = ap.add_argument
    add("--agents", nargs="+", required=True, help="agent names or name:key=value,... specs, one per seat")
    add("--hands", type=at_least(1, MOST_DEALS), default=2000, help="deals, each played in every rotation (or matches)")
    add("--seed", type=seed_number, default=0, help="the seed of the deals, the races (R6) and the agents")
    add("--players", type=at_least(2), default=None, help="seats per table; default one per agent, fewer makes a pool")
    add("--matches", action="store_true", help="play matches to --target-score (R8) instead of single hands")
    add("--target-score", type=integer, default=None, help="match target (R8; default 100)")
    add("--max-match-hands", type=integer, default=None,
        help="decide a match still running after this many hands (100)")
    add("--rules", nargs="*", default=[], metavar="KEY=VALUE", help="NertzConfig options, e.g. stock_draw=1")
    add("--batch-size", type=at_least(1, MOST_BATCH), default=2048, help="tables stepped together")
    add("--first-deal", type=at_least(0), default=0, help="play deals from this index on (a shard: merge_reports)")
    add("--out", type=output_file(), default=None, help="write the full report, every hand included, as JSON")
    add("--quiet", action="store_true", help="no progress")
    args = ap.parse_args(argv)
    config = rule_config(ap, args.rules, forbid={"num_players": "seats are --players"}, derived=SEATS_FROM,
                         num_players=args.players or len(args.agents))  # fmt: skip
    target, cap = match_length(ap, config, args.target_score, args.max_match_hands)
    if not args.matches and config.episode != "match":  # else the flags would be silently ignored
        if args.target_score is not None:
            ap.error("--target-score sets the target of a match: add --matches")
        if args.max_match_hands is not None:
            ap.error("--max-match-hands caps a match: add --matches")
    try:
        report = evaluate(
            args.agents, hands=args.hands, seed=args.seed, config=config, players=config.num_players,
            matches=args.matches, target_score=target, max_match_hands=cap,
            batch_size=args.batch_size, progress=False if args.quiet else None, first_deal=args.first_deal,
        )
    except USER_ERRORS as e:
        ap.error(str(e))
    print(format_report(report))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, default=float)
        print(f"wrote {args.out}")
    return 0


def match_length(ap: Parser, config: NertzConfig, target: int | None, cap: int | None) -> tuple[int, int]:
    """``--target-score`` and ``--max-match-hands`` (default 100 each), checked by ``NertzConfig``'s
    own rules for ``target_score`` and ``max_hands`` (R8)."""
    if config.episode == "match" and (target is not None or cap is not None):
        ap.error("with --rules episode=match the match is set by --rules target_score=... max_hands=... (R8)")
    target, cap = (100 if target is None else target), (100 if cap is None else cap)
    for flag, option, value in (("--target-score", "target_score", target), ("--max-match-hands", "max_hands", cap)):
        rule: dict[str, Any] = {option: value}  # target_score or max_hands, never from_kwargs' preset
        try:
            NertzConfig.from_kwargs(**rule)
        except ValueError as e:
            ap.error(f"argument {flag}: {e}")
    return target, cap


if __name__ == "__main__":
    raise SystemExit(main(prog="python -m nertz_env.training.evaluate"))
