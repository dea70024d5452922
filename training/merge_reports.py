"""One report from the shards of a duplicate evaluation, as if it had been played in one run.

A long evaluation can be split by deal: ``nertz eval ... --first-deal 0 --hands 500 --out a.json``,
``... --first-deal 500 --hands 500 --out b.json`` (on other cores or machines), then

    python -m nertz_env.training.merge_reports a.json b.json --out all.json

Deals are a pure function of the seed and their index (``evaluate.deal_decks``), so the shards'
hands are those of the whole run. The merge checks that the shards agree on the agents, seed,
players and rules, that no deal is in two of them and that together they hold every deal from
the first to the last (a gap would be claimed as played); then every summary, paired difference,
interval over deals and rating is recomputed from the hands. ``elapsed_s`` is the shards' sum.

The shards must be played with the same ``nertz_env`` and ``numpy`` (the rules engine and the
shuffles of the deals). Python, numba and openskill may differ between machines: they change no
deal and no hand (the ratings are recomputed here); the merged report then lists every shard's
``versions`` under ``shard_versions``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from nertz_env.cli_checks import Parser, json_kind, output_file
from nertz_env.training.report import format_report, tables_of

_SAME = ("agents", "specs", "players", "seed", "mode", "config")
_SAME_VERSIONS = ("nertz_env", "numpy")  # the rules engine and the shuffles: the deals and their play
_NEEDED = ("agents", "config", "hands", "elapsed_s")


def merge(reports: Sequence[dict[str, Any]], names: Sequence[str] | None = None) -> dict[str, Any]:
    """The report of the shards ``reports`` (duplicate mode) played as one run; ``names`` (their
    files) name them in errors, else ``report K``."""
    if not reports:
        raise ValueError("merge needs at least one report")
    names = list(names) if names is not None else [f"report {k}" for k in range(len(reports))]
    first = reports[0]
    for k, rep in enumerate(reports):
        _check_shard(rep, names[k])
        if rep.get("mode") != "duplicate":
            raise ValueError(f"report {k} is of mode {rep.get('mode')!r}; only duplicate deals merge")
        for key in _SAME:
            if rep.get(key) != first.get(key):
                raise ValueError(f"{names[k]} differs from {names[0]} in {key!r}: only shards of one run merge")
    shard_versions = check_versions(reports, names)
    seen: set[int] = set()  # the deals
    records = []
    for k, rep in enumerate(reports):
        deals = {r["key"][0] for r in rep["hands"]}
        if deals & seen:
            raise ValueError(f"{names[k]} repeats deal {min(deals & seen)}: shards must hold different deals")
        seen |= deals
        records += rep["hands"]
    missing = sorted(set(range(min(seen), max(seen) + 1)) - seen) if seen else []
    if missing:
        raise ValueError(f"the shards leave out deal{'s' if len(missing) > 1 else ''} {_ranges(missing)} between "
                         f"deal {min(seen)} and deal {max(seen)}: merge every shard of the run (its --first-deal and "
                         "--hands), or the merged report would claim deals it does not hold")  # fmt: skip
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
    if shard_versions:
        out["shard_versions"] = shard_versions
    return out


def _check_shard(rep: Any, name: str) -> None:
    """Refuse, naming what is wrong, a shard that is not a report of ``nertz eval --out``."""
    if not isinstance(rep, dict):
        raise ValueError(f"{name} is not a report of nertz eval --out: a JSON object expected, got {json_kind(rep)}")
    missing = [key for key in _NEEDED if key not in rep]
    if missing:
        raise ValueError(f"{name} is not a full report of nertz eval --out: missing {', '.join(missing)}")
    hands = rep["hands"]
    if not isinstance(hands, list) or not hands or not all(_is_hand(h) for h in hands):
        raise ValueError(f"{name}: 'hands' is not a list of hand records, each with its 'key' [deal, ...]")
    if not isinstance(rep["config"], dict) or not isinstance(rep["agents"], list):
        raise ValueError(f"{name}: 'config' is not an object or 'agents' not a list")


def _is_hand(record: Any) -> bool:
    key = record.get("key") if isinstance(record, dict) else None
    return isinstance(key, list) and bool(key) and isinstance(key[0], int)


def check_versions(reports: Sequence[dict[str, Any]], names: Sequence[str]) -> list[Any] | None:
    """Refuse reports played with another ``nertz_env`` or ``numpy`` than the first (merged
    shards, or the reports ``compare_reports`` pairs deal by deal); every report's ``versions``
    when others (Python, numba, openskill) differ, else None."""
    every: list[Any] = [rep.get("versions") for rep in reports]
    for k, versions in enumerate(every):
        if not isinstance(versions, dict) or any(not isinstance(versions.get(key), str) for key in _SAME_VERSIONS):
            raise ValueError(f"{names[k]} does not record the {' and '.join(_SAME_VERSIONS)} versions it was played "
                             "with ('versions'): pass the --out files of nertz eval as written")  # fmt: skip
        for key in _SAME_VERSIONS:
            if versions[key] != every[0][key]:
                raise ValueError(f"{names[k]} was played with {key} {versions[key]}, {names[0]} with "
                                 f"{every[0][key]}: only reports of the same {' and '.join(_SAME_VERSIONS)} merge "
                                 "or pair (they make the deals and their play)")  # fmt: skip
    return every if any(v != every[0] for v in every) else None


def _ranges(deals: Sequence[int]) -> str:
    """Sorted deal numbers as ranges: ``2-9, 14``."""
    spans: list[list[int]] = []
    for d in deals:
        if spans and d == spans[-1][1] + 1:
            spans[-1][1] = d
        else:
            spans.append([d, d])
    return ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in spans)


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
        report = merge(shards, args.reports)
    except (OSError, ValueError, KeyError, TypeError) as e:
        ap.error(f"{type(e).__name__}: {e}")
    print(format_report(report))
    with open(args.out, "w") as f:
        json.dump(report, f, default=float)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
