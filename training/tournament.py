"""Tournaments (R8): single elimination and the table ladder, played by any mix of agents.

    nertz tournament --format elimination --agents heuristic greedy greedy random \\
        passive greedy heuristic random --seed 0
    nertz tournament --format ladder --agents heuristic greedy greedy random --seed 0 --out t.json
    nertz tournament --format ladder --agents ppo heuristic greedy random --target-score 30

Every table plays a match to ``--target-score`` (R8, ``training.evaluate.match_stream``: its tie
rules, its deals, its hand cap, and the rule set's ``match_end``: ``--rules preset=snerts`` plays
the Snerts caller rule, ``preset=nerts`` the German spread rule, ``preset=nerds`` the Nerds
"exceed" rule), all tables of a round at once in an ``Arena``. The formats, the
seat draws, the cuts and the readings of R8 live in ``training.brackets`` and run on the match
results alone. Agents are names or ``name:key=value,...`` specs (``agents.make_spec``), one per
entrant; each is built once per table size it meets (a trained policy plays only the player count
it was trained for, so give it a field where every table is full: 4, 8, 16, ... for elimination,
any multiple of four for the ladder, barring a tie-break among fewer players).

The same seed gives the same tournament: seats, cuts, deals, R6 races and agents all draw from
it. The run prints the bracket or ladder and the standings; ``--out`` writes the JSON record
(config, seed, entrants, every table's seats, totals, winner, order and movement, standings and
the OpenSkill ratings updated from every table, tie-break included).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from nertz_env.agents.base import Agent
from nertz_env.checks import check_seed
from nertz_env.cli_checks import (
    MOST_DEALS,
    USER_ERRORS,
    Parser,
    at_least,
    integer,
    output_file,
    rule_config,
    seed_number,
)
from nertz_env.config import NertzConfig
from nertz_env.training import brackets, stats
from nertz_env.training.arena import Arena, hand_stream_seed
from nertz_env.training.brackets import TableResult
from nertz_env.training.evaluate import build_agents, match_length, match_stream, versions

FORMATS = ("elimination", "ladder")
_TOURNAMENT = 6  # the seed word of tournament matches (evaluate uses 1 to 5)
# Rule options a tournament decides itself (R8), and how to set them instead.
TOURNAMENT_SETS = {
    "num_players": "tables seat four, fewer only when the field does not divide (R8)",
    "episode": "every table plays a match (R8); its length is --target-score",
    "target_score": "use --target-score",
    "max_hands": "use --max-match-hands",
    "hands": "every table plays to --target-score (R8)",
}


class ArenaPlay:
    """The ``play`` of ``training.brackets``: a round's tables as matches to ``target_score``
    (R8), every table of one size in one ``Arena``. Agents are built per table size, lazily."""

    def __init__(
        self, specs: Sequence[str | Agent], config: NertzConfig, seed: int, target_score: int = 100,
        max_match_hands: int = 100,
    ):
        self.specs, self.config, self.seed = list(specs), config, seed
        self.target_score, self.max_match_hands = target_score, max_match_hands
        self._arenas: dict[int, Arena] = {}
        self.labels = build_agents(self.specs, self._config(min(brackets.TABLE, len(self.specs))), seed)[1]

    def _config(self, players: int) -> NertzConfig:
        return self.config if self.config.num_players == players else self.config.replace(num_players=players)

    def prepare(self, players: int) -> Arena:
        """The arena of tables of ``players``, its agents built on first use."""
        if players not in self._arenas:
            config = self._config(players)
            self._arenas[players] = Arena(config, build_agents(self.specs, config, self.seed)[0], batch_size=64)
        return self._arenas[players]

    def __call__(self, stage: str, round_no: int, tables: list[tuple[int, ...]]) -> list[TableResult]:
        results: list[TableResult | None] = [None] * len(tables)
        for size in sorted({len(t) for t in tables}):
            streams = []
            for t, table in enumerate(tables):
                if len(table) != size:
                    continue

                def done(rec: dict[str, Any], t: int = t) -> None:
                    results[t] = TableResult(
                        seats=tuple(rec["seats"]), totals=tuple(rec["totals"]), last_hand=tuple(rec["hand_scores"][-1]),
                        winners=tuple(rec["winners"]), hands=rec["hands"],
                    )

                match_seed = hand_stream_seed(self.seed, _TOURNAMENT, brackets.stage_word(stage), round_no, t)
                streams.append(match_stream(
                    match_seed, 0, 0, table, self.target_score, self.max_match_hands, done,
                    match_end=self.config.match_end,
                ))
            self.prepare(size).play(streams)
        return results  # type: ignore[return-value]


def tournament(
    agents: Sequence[str | Agent],
    format: str = "elimination",  # noqa: A002 - the CLI's word
    seed: int = 0,
    config: NertzConfig | None = None,
    target_score: int = 100,
    max_match_hands: int = 100,
    rounds: int = brackets.LADDER_ROUNDS,
) -> dict[str, Any]:
    """Play a tournament (R8) among ``agents`` (one entrant each) and return its record: config,
    seed, entrants, ``rounds`` (every table), ``tiebreak`` (ladder), ``standings``, ``champion``
    and OpenSkill ``ratings`` updated from every table in play order."""
    if format not in FORMATS:
        raise ValueError(f"unknown tournament format {format!r}; choose one of {', '.join(FORMATS)}")
    if not isinstance(rounds, int) or isinstance(rounds, bool) or rounds < 1:
        raise ValueError(f"invalid rounds={rounds!r}: accepted an integer >= 1")
    check_seed(seed, allow_none=False)  # as the library takes seeds (numpy's SeedSequence takes any size)
    NertzConfig(target_score=target_score, max_hands=max_match_hands)  # R8's own checks of both
    config = config if config is not None else NertzConfig()
    play = ArenaPlay(agents, config, seed, target_score, max_match_hands)
    if format == "elimination":
        for size in sorted(brackets.elimination_table_sizes(len(play.labels))):
            play.prepare(size)  # an agent that cannot sit at a table size fails before any match
        result = brackets.single_elimination(len(play.labels), play, seed)
    else:
        result = brackets.ladder(len(play.labels), play, seed, target=target_score, rounds=rounds)
    record = {
        "format": format, "seed": seed, "target_score": target_score, "max_match_hands": max_match_hands,
        "rounds_per_player": rounds if format == "ladder" else None, "config": config.to_dict(),
        "entrants": play.labels, "specs": [a if isinstance(a, str) else repr(a) for a in agents],
        "versions": versions(), **result,
    }
    return rate(record)


def rate(record: dict[str, Any]) -> dict[str, Any]:
    """Add OpenSkill ratings (``stats.rate_hands``), one update per table in play order, the
    tie-break last; each table ranks its players as it placed them (the winner first)."""
    tables = [t for r in record["rounds"] for t in r["tables"]]
    if record.get("tiebreak"):
        tables.append(record["tiebreak"])
    entrants = range(len(record["entrants"]))
    ratings = stats.rate_hands(((t["seats"], t["rating_scores"]) for t in tables), players=entrants)
    record["ratings"] = {record["entrants"][k]: {"mu": mu, "sigma": sg} for k, (mu, sg) in ratings.items()}
    for row in record["standings"]:
        row["mu"], row["sigma"] = ratings[row["entrant"]]
    return record


def _table_lines(table: dict[str, Any], names: list[str], ladder: bool) -> list[str]:
    width = max(6, *(len(n) for n in names))
    cols = "before  recorded" if ladder else "  last"
    hands = f"{table['hands']} hand{'s' * (table['hands'] != 1)}"
    lines = [f"{'  Table ' + str(table['table']):<{width + 7}}total  {cols}  ({hands})"]
    seat = {e: s for s, e in enumerate(table["seats"])}
    for e in table["order"]:
        s = seat[e]
        notes = ["winner"] if e == table["winner"] else []
        if "advance" in table and e in table["advance"]:
            notes.append("advances")
        for word in ("up", "down"):
            if e in table.get(word, []):
                notes.append(f"moves {word}")
        last = f"{table['before_final'][s]:>6}  {table['recorded'][s]:>8}" if ladder else f"{table['last_hand'][s]:>6}"
        lines.append(f"    {names[e]:<{width}}  {table['totals'][s]:>6}  {last}  {', '.join(notes)}".rstrip())
    for c in table["cuts"]:
        draws = "; ".join(", ".join(f"{names[int(p)]} {_rank(r)}" for p, r in d.items()) for d in c["draws"])
        lines.append(f"    cut for {c['for']}: {draws} -> {', '.join(names[e] for e in c['order'])}")
    return lines


def _rank(r: int) -> str:
    return {1: "A", 11: "J", 12: "Q", 13: "K"}.get(r, str(r))


def format_tournament(record: dict[str, Any]) -> str:
    """The bracket or ladder and the standings as plain text, from a record (or its JSON)."""
    names, ladder = record["entrants"], record["format"] == "ladder"
    title = (
        f"Table ladder (R8): {len(names)} entrants, {record['rounds_per_player']} tables each"
        if ladder else f"Single elimination (R8): {len(names)} entrants, the top two at each table advance"
    )
    lines = [f"{title}; tables of {brackets.TABLE}, matches to {record['target_score']}, seed {record['seed']}"]
    for rnd in record["rounds"]:
        final = not ladder and rnd is record["rounds"][-1]
        lines += ["", f"{'Final' if final else 'Round ' + str(rnd['round'])}"]
        for table in rnd["tables"]:
            lines += _table_lines(table, names, ladder)
    if record.get("tiebreak"):
        lines += ["", "Tie-break for first place (R8)"] + _table_lines(record["tiebreak"], names, False)
    width = max(len(n) for n in names)
    lines += ["", "Standings"]
    if ladder:
        lines.append(f"  place  {'entrant':<{width}}  {'recorded per table':<24}  {'sum':>5}  {'mu':>6}  {'sigma':>5}")
        for row in record["standings"]:
            per = " ".join(f"{s:>4}" for s in row["recorded"])
            lines.append(
                f"  {row['place']:>5}  {names[row['entrant']]:<{width}}  {per:<24}  {row['sum']:>5}"
                f"  {row['mu']:>6.2f}  {row['sigma']:>5.2f}"
            )
    else:
        lines.append(f"  place  {'entrant':<{width}}  {'reached':<14}  {'mu':>6}  {'sigma':>5}")
        for row in record["standings"]:
            reached = "final" if row["round_out"] is None else f"out in round {row['round_out']}"
            lines.append(
                f"  {row['place']:>5}  {names[row['entrant']]:<{width}}  {reached:<14}"
                f"  {row['mu']:>6.2f}  {row['sigma']:>5.2f}"
            )
    lines.append(f"\nChampion: {names[record['champion']]}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None, prog: str = "nertz tournament") -> int:
    ap = Parser(prog=prog, description=__doc__.split("\n\n")[0])
    add = ap.add_argument
    add("--format", choices=FORMATS, default="elimination", help="single elimination or the table ladder (R8)")
    add("--agents", nargs="+", required=True, help="one agent name or name:key=value,... spec per entrant")
    add("--seed", type=seed_number, default=0, help="the seed of the seat draws, the cuts, the deals and the agents")
    add("--target-score", type=integer, default=None, help="every match is played to this total (R8; default 100)")
    add("--max-match-hands", type=integer, default=None,
        help="decide a match still running after this many hands (100)")
    add("--rounds", type=at_least(1, MOST_DEALS), default=None, help="ladder: tables each (R8: four, the default)")
    add("--rules", nargs="*", default=[], metavar="KEY=VALUE", help="NertzConfig options, e.g. stock_draw=1")
    add("--out", type=output_file(), default=None, help="write the tournament record as JSON")
    args = ap.parse_args(argv)
    if len(args.agents) < 2:
        ap.error(f"argument --agents: a tournament needs 2 entrants or more, got {len(args.agents)}")
    if args.rounds is not None and args.format != "ladder":  # else it would be silently unused
        ap.error(f"argument --rounds: sets the tables each entrant plays in --format ladder; --format {args.format} "
                 "plays rounds until one entrant is left")
    args.rounds = brackets.LADDER_ROUNDS if args.rounds is None else args.rounds
    config = rule_config(ap, args.rules, forbid=TOURNAMENT_SETS)
    if config.partners:  # from --rules partners=true or a preset
        ap.error("argument --rules: partners=true: a tournament seats, scores and advances each player alone; "
                 "partners (R8) play in nertz eval (its teams table), not in tournaments")  # fmt: skip
    target, cap = match_length(ap, config, args.target_score, args.max_match_hands)
    try:
        record = tournament(
            args.agents, format=args.format, seed=args.seed, config=config, target_score=target,
            max_match_hands=cap, rounds=args.rounds,
        )
    except USER_ERRORS as e:
        ap.error(str(e))
    print(format_tournament(record))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(record, f, indent=1)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(prog="python -m nertz_env.training.tournament"))
