"""The table of the learned players measured against three ``heuristic:depth=3``, regenerated from
the stored evaluation reports in ``docs/learning/`` (``docs/research-log.md``, "The table of learned
players").

    python -m nertz_env.training.learning_results --add REPORT.json --name NAME --note "..."
    python -m nertz_env.training.learning_results          # prints the table
    python -m nertz_env.training.learning_results --write docs/research-log.md   # puts it in the page
    python -m nertz_env.training.learning_results --check docs/research-log.md   # exit 1 if it differs
    python -m nertz_env.training.learning_results --plot docs/plateau.png          # every trained player

In a page the table lies between a ``<!-- learned:start -->`` and a ``<!-- learned:end -->`` line
(``training.pages``), which ``--write`` keeps.

``--add`` keeps a harness report (``nertz eval ... --out REPORT.json``) without its per-hand
records, under ``docs/learning/NAME.json`` with a note saying what was evaluated; the table has one
row per stored report: the first agent's win share and its paired score difference per deal
against each other seat's agent, with the 95% intervals over deals.

``--plot`` draws every stored search-free trained player measured on the standard evaluation (its
first seat a ``policy:`` file, the shipped ``ppo``/``ppo-league`` or a ``training.move_offsets``
player, with no rule put in for the network, on the 10,000 deals of seed 2032) as its win share
and interval, sorted, the cloning-only players (no PPO, shifted or not) apart, beside the even
share (0.25) and the aim (0.27): where every recipe lands.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nertz_env.cli_checks import USER_ERRORS, Parser, output_file
from nertz_env.training.pages import markers, with_part

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "docs" / "learning"
PAGE = ROOT / "docs" / "research-log.md"
HEADER = "| run | what was evaluated | deals |"
STANDARD = {"deals": 10_000, "seed": 2032}  # the evaluation every recipe is compared on
EVEN, AIM = 0.25, 0.27  # the win share of an equal player among four, and the first aim's
FLOOR = 0.19  # the plot's lowest win share
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


def search_free(folder: Path = FOLDER) -> list[tuple[str, float, float, float]]:
    """``(name, win share, low, high)`` of every stored search-free trained player on the
    ``STANDARD`` evaluation (``--plot``), lowest win share first."""
    out = []
    for path in sorted(folder.glob("*.json")):
        report = json.loads(path.read_text())
        first = report["specs"][0] if "specs" in report else report["agents"][0]
        trained = first.startswith(("policy:", "offset-policy(")) or first.split(":")[0] in ("ppo", "ppo-league")
        if not trained or "call=" in first or any(report.get(k) != v for k, v in STANDARD.items()):
            continue
        me = next(r for r in report["summary"] if r["agent"] == report["agents"][0])
        out.append((path.stem, me["win_share"], *me["win_ci"]))
    return sorted(out, key=lambda r: r[1])


def plot_search_free(rows: Sequence[tuple[str, float, float, float]], path: str | Path) -> Path:
    """The ``search_free`` rows as points with their intervals, the cloning-only ones in grey."""
    from nertz_env.training.plots import _pyplot

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 3.6), layout="constrained")
    for clone in (False, True):  # the cloning-only ones drawn last, over the rest
        shown = [(i, r) for i, r in enumerate(rows) if ("cloning_only" in r[0]) == clone]
        x = [i for i, _ in shown]
        y = [r[1] for _, r in shown]
        err = [[r[1] - r[2] for _, r in shown], [r[3] - r[1] for _, r in shown]]
        ax.errorbar(x, y, yerr=err, fmt="o", ms=3, capsize=0, color="#999999" if clone else "#2b6ca3",
                    label=f"{'cloning only, no PPO' if clone else 'cloning, then PPO or fine-tuning'} "
                          f"({len(x)})")  # fmt: skip
    ax.axhline(EVEN, color="black", lw=0.8, ls=":", label=f"even share {EVEN}")
    ax.axhline(AIM, color="#c0392b", lw=1.0, ls="--", label=f"the aim {AIM}")
    below = sum(r[1] < FLOOR for r in rows)  # off the scale (the dense reward's 0.04), said in the label
    ax.set_ylim(FLOOR, AIM + 0.01)
    ax.set_xticks([])
    off_scale = f" ({below} below {FLOOR}, off the scale)" if below else ""
    ax.set_xlabel(f"stored search-free players, by win share{off_scale}")
    ax.set_ylabel("win share [95% CI]")
    ax.set_title(f"Against three heuristic:depth=3, {STANDARD['deals']:,} deals of seed {STANDARD['seed']}")
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return Path(path)


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
    ap.add_argument("--plot", type=output_file(".png"), help="also draw the search-free players (a .png file)")
    args = ap.parse_args(argv)
    folder = Path(args.folder)
    if not args.add and (args.name is not None or args.note):  # else they would be silently ignored
        ap.error("--name and --note name a report of --add: add --add")
    if not args.add and not folder.is_dir():  # else an empty table would be printed or written
        ap.error(f"--folder {args.folder}: no such folder of kept reports")
    if args.add:
        if not args.name:
            ap.error("--add needs --name")
        if Path(args.name).name != args.name or args.name.startswith(".") or not args.name.strip():
            ap.error(f"--name {args.name!r}: accepted a plain file name (no folder, not hidden), kept in --folder")
        try:
            kept = slim(json.loads(Path(args.add).read_text()), args.note)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{args.name}.json").write_text(json.dumps(kept, indent=1))
        except USER_ERRORS as exc:  # a missing file, or one that is not JSON or not a harness report
            ap.error(f"--add {args.add}: {exc}")
    fresh = table(folder)
    if args.plot:
        rows = search_free(folder)
        try:
            print(f"{plot_search_free(rows, args.plot)}: {len(rows)} search-free players drawn")
        except ImportError as exc:  # matplotlib comes with the training extra
            ap.error(f"--plot {args.plot}: {exc}")
    page = args.write or args.check
    if page is None:
        if not args.plot:
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
