"""The table of the learned players measured against three ``heuristic:depth=3``, regenerated from
the stored evaluation reports in ``docs/learning/`` (``docs/research-log.md``, "The table of learned
players").

    python -m nertz_env.training.learning_results --add REPORT.json --name NAME --note "..."
    python -m nertz_env.training.learning_results          # prints the table
    python -m nertz_env.training.learning_results --write docs/research-log.md   # puts it in the page
    python -m nertz_env.training.learning_results --check docs/research-log.md   # exit 1 if it differs

In a page the table lies between a ``<!-- learned:start -->`` and a ``<!-- learned:end -->`` line
(``training.pages``), which ``--write`` keeps.

``--add`` keeps a harness report (``nertz eval ... --out REPORT.json``) without its per-hand
records, under ``docs/learning/NAME.json`` with a note saying what was evaluated; the table has one
row per stored report: the first agent's win share and its paired score difference per deal
against each other seat's agent, with the 95% intervals over deals.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nertz_env.cli_checks import USER_ERRORS, Parser
from nertz_env.training.pages import markers, with_part

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "docs" / "learning"
PAGE = ROOT / "docs" / "research-log.md"
HEADER = "| run | what was evaluated | deals |"
START, END = markers("learned")  # the lines the table lies between in a page


def slim(report: dict[str, Any], note: str) -> dict[str, Any]:
    """The report without its per-hand and per-match records, with ``note``."""
    missing = {"agents", "summary", "paired", "deals", "seed"} - set(report)
    if missing:
        raise ValueError(f"not a harness report (nertz eval --out): missing {', '.join(sorted(missing))}")
    return {"note": note, **{k: v for k, v in report.items() if k not in ("hands", "matches")}}


def row(name: str, report: dict[str, Any]) -> str:
    first = report["agents"][0]
    me = next(r for r in report["summary"] if r["agent"] == first)
    lo, hi = me["win_ci"]
    diffs = [
        f"{p['score_diff']:+.2f} [{p['score_diff_ci'][0]:+.2f}, {p['score_diff_ci'][1]:+.2f}]"
        for p in report["paired"] if p["agent"] == first
    ]  # fmt: skip
    return (f"| {name} | {report['note']} | {report['deals']:,} (seed {report['seed']}) | "
            f"{me['win_share']:.3f} [{lo:.3f}, {hi:.3f}] | {'; '.join(diffs)} |")  # fmt: skip


def table(folder: Path = FOLDER) -> str:
    lines = [f"{HEADER} win share [95% CI] | paired score difference per deal vs each opponent [95% CI] |",
             "|---|---|---|---|---|"]  # fmt: skip
    for path in sorted(folder.glob("*.json")):
        lines.append(row(path.stem, json.loads(path.read_text())))
    return "\n".join(lines)


def with_table(page: str, new_table: str) -> str:
    """``page`` with its table of learned players (between its ``START`` and ``END`` lines)
    replaced by ``new_table``."""
    try:
        return with_part(page, START, END, new_table)
    except ValueError as exc:
        raise ValueError(f"no table of learned players: {exc}") from None


def main(argv: Sequence[str] | None = None) -> int:
    ap = Parser(prog="python -m nertz_env.training.learning_results", description=__doc__.split("\n\n")[0])
    ap.add_argument("--add", metavar="REPORT", help="a harness report to keep (nertz eval --out)")
    ap.add_argument("--name", help="its name in docs/learning/ (with --add)")
    ap.add_argument("--note", default="", help="what was evaluated (with --add)")
    ap.add_argument("--folder", default=str(FOLDER), help="where the reports are kept")
    written = ap.add_mutually_exclusive_group()
    written.add_argument("--write", metavar="PAGE", help="put the table into this page (e.g. docs/research-log.md)")
    written.add_argument("--check", metavar="PAGE", help="exit 1 if the table in this page differs from the reports")
    args = ap.parse_args(argv)
    folder = Path(args.folder)
    if args.add:
        if not args.name:
            ap.error("--add needs --name")
        try:
            kept = slim(json.loads(Path(args.add).read_text()), args.note)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{args.name}.json").write_text(json.dumps(kept, indent=1))
        except USER_ERRORS as exc:  # a missing file, or one that is not JSON or not a harness report
            ap.error(f"--add {args.add}: {exc}")
    fresh = table(folder)
    page = args.write or args.check
    if page is None:
        print(fresh)
        return 0
    try:
        text = Path(page).read_text()
        new = with_table(text, fresh)
    except USER_ERRORS as exc:  # a missing page, or one without the table
        ap.error(f"--{'write' if args.write else 'check'} {page}: {exc}")
    if args.write:
        Path(page).write_text(new)
        print(f"{page}: the table of {len(fresh.splitlines()) - 2} stored reports written")
        return 0
    if new != text:
        print(f"{page}: its table differs from the reports in {folder}; run --write {page}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
