"""One report from the shards of a duplicate evaluation, as if it had been played in one run.

A long evaluation can be split by deal: ``nertz eval ... --first-deal 0 --hands 500 --out a.json``,
``... --first-deal 500 --hands 500 --out b.json`` (on other cores or machines), then

    python -m nertz_env.training.merge_reports a.json b.json --out all.json

Deals are a pure function of the seed and their index (``evaluate.deal_decks``), so the shards'
hands are those of the whole run. The merge checks that the shards agree on the agents, seed,
players and rules, and that no deal is in two of them; then every summary, paired difference,
interval over deals and rating is recomputed from the hands. ``elapsed_s`` is the shards' sum.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from nertz_env.cli_checks import Parser, output_file
from nertz_env.training.report import format_report, tables_of

_SAME = ("agents", "specs", "players", "seed", "mode", "config")


def merge(reports: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The report of the shards ``reports`` (duplicate mode) played as one run."""
    if not reports:
        raise ValueError("merge needs at least one report")
    first = reports[0]
    for k, rep in enumerate(reports):
        if rep.get("mode") != "duplicate":
            raise ValueError(f"report {k} is of mode {rep.get('mode')!r}; only duplicate deals merge")
        for key in _SAME:
            if rep.get(key) != first.get(key):
                raise ValueError(f"report {k} differs from report 0 in {key!r}: only shards of one run merge")
    records, seen = [], set()
    for k, rep in enumerate(reports):
        deals = {tuple(r["key"])[0] for r in rep["hands"]}
        if deals & seen:
            raise ValueError(f"report {k} repeats deal {min(deals & seen)}: shards must hold different deals")
        seen |= deals
        records += rep["hands"]
    records.sort(key=lambda r: r["key"])
    elapsed = sum(r["elapsed_s"] for r in reports)
    ticks = sum(r["ticks"] for r in records)
    out = dict(first)
    out.update(
        deals=len(seen),
        first_deal=min(seen),
        shards=len(reports),
        elapsed_s=elapsed,
        hands_played=len(records),
        ticks=ticks,
        ticks_per_s=ticks / max(elapsed, 1e-9),
        hands=records,
        **tables_of(records, first["agents"], bool(first["config"].get("partners"))),
    )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = Parser(prog="python -m nertz_env.training.merge_reports", description=__doc__.split("\n\n")[0])
    ap.add_argument("reports", nargs="+", help="--out files of nertz eval runs, one per shard")
    ap.add_argument("--out", type=output_file(), required=True, help="the merged report (JSON)")
    args = ap.parse_args(argv)
    try:
        shards = []
        for path in args.reports:
            with open(path) as f:
                shards.append(json.load(f))
        report = merge(shards)
    except (OSError, ValueError, KeyError, TypeError) as e:
        ap.error(f"{type(e).__name__}: {e}")
    print(format_report(report))
    with open(args.out, "w") as f:
        json.dump(report, f, default=float)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
