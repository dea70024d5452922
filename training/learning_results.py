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

from nertz_env.cli_checks import USER_ERRORS, Parser, json_kind, output_file
from nertz_env.config_values import is_int, is_real
from nertz_env.training.pages import markers, with_part

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "docs" / "learning"
PAGE = ROOT / "docs" / "research-log.md"
HEADER = "| run | what was evaluated | deals |"
STANDARD = {"deals": 10_000, "seed": 2032, "players": 4}  # the evaluation every recipe is compared on
OPPONENTS = ["heuristic:depth=3"] * 3  # ... against these three, from deal 0
EVEN, AIM = 0.25, 0.27  # the win share of an equal player among four, and the first aim's
FLOOR = 0.19  # the plot's lowest win share
START, END = markers("learned")  # the lines the table lies between in a page


def slim(report: Any, note: str) -> dict[str, Any]:
    """The report without its per-hand and per-match records, with ``note``; checked as the table
    reads it (``checked``), so nothing is kept that the table could not show."""
    if not isinstance(report, dict):
        raise ValueError(f"not a harness report (nertz eval --out): a JSON object expected, got {json_kind(report)}")
    missing = {"agents", "summary", "paired", "deals", "seed"} - set(report)
    if missing:
        raise ValueError(f"not a harness report (nertz eval --out): missing {', '.join(sorted(missing))}")
    return checked({"note": note, **{k: v for k, v in report.items() if k not in ("hands", "matches")}})


def checked(report: Any) -> dict[str, Any]:
    """``report``, a kept report, if the table and the plot can read it; else a ValueError naming
    what is wrong. The table is of duplicate deals: a report of matches is refused."""
    if not isinstance(report, dict):
        raise ValueError(f"not a harness report: a JSON object expected, got {json_kind(report)}")
    missing = {"note", "agents", "summary", "paired", "deals", "seed"} - set(report)
    if missing:
        raise ValueError(f"not a kept harness report (learning_results --add): missing {', '.join(sorted(missing))}")
    if report.get("mode", "duplicate") != "duplicate":
        raise ValueError(f"a report of mode {report['mode']!r} (nertz eval --matches): the table is of duplicate "
                         "deals, evaluate without --matches")  # fmt: skip
    _expect(isinstance(report["note"], str), "'note' is not a string")
    _expect(is_int(report["deals"]) and report["deals"] >= 1, f"'deals' is {report['deals']!r}, not a count >= 1")
    _expect(is_int(report["seed"]), f"'seed' is {report['seed']!r}, not an integer")
    for key in ("agents", "specs"):
        names = report.get(key, ["-"])
        _expect(isinstance(names, list) and names and all(isinstance(a, str) for a in names),
                f"{key!r} is not a non-empty list of agent names")  # fmt: skip
    for key in ("summary", "paired"):
        _expect(isinstance(report[key], list) and all(isinstance(r, dict) and "agent" in r for r in report[key]),
                f"{key!r} is not a list of rows, each naming its 'agent'")  # fmt: skip
    first = report["agents"][0]
    mine = [r for r in report["summary"] if r["agent"] == first]
    _expect(bool(mine), f"'summary' has no row of the first agent {first!r}")
    _expect(is_real(mine[0].get("win_share")) and _is_interval(mine[0].get("win_ci")),
            f"the 'summary' row of {first!r} lacks a 'win_share' number or 'win_ci' [low, high]")  # fmt: skip
    lacking = f"a 'paired' row of {first!r} lacks a 'score_diff' number or 'score_diff_ci' [low, high]"
    for pair in report["paired"]:
        if pair["agent"] == first:
            _expect(is_real(pair.get("score_diff")) and _is_interval(pair.get("score_diff_ci")), lacking)
    return report


def _expect(holds: object, what: str) -> None:
    if not holds:
        raise ValueError(f"not a harness report: {what}")


def _is_interval(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(is_real(v) for v in value)


def kept(path: Path) -> dict[str, Any]:
    """The kept report at ``path``, checked; a ValueError naming the file if it is damaged."""
    try:
        text = path.read_text()
        report = json.loads(text)
    except (ValueError, OSError) as exc:  # a truncated file, not text, not a file
        raise ValueError(f"{path}: not a readable JSON file ({exc}): restore it or delete it") from None
    try:
        return checked(report)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}: restore it or delete it") from None


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
        lines.append(row(path.stem, kept(path)))
    return "\n".join(lines)


def search_free(folder: Path = FOLDER) -> list[tuple[str, float, float, float]]:
    """``(name, win share, low, high)`` of every stored search-free trained player on the
    ``STANDARD`` evaluation (``--plot``), lowest win share first."""
    out = []
    for path in sorted(folder.glob("*.json")):
        report = kept(path)
        first = report["specs"][0] if "specs" in report else report["agents"][0]
        trained = first.startswith(("policy:", "offset-policy(")) or first.split(":")[0] in ("ppo", "ppo-league")
        if not trained or "call=" in first or any(report.get(k) != v for k, v in STANDARD.items()):
            continue
        if (report.get("specs") or report["agents"])[1:] != OPPONENTS or report.get("first_deal") not in (0, None):
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
    if folder.exists() and not folder.is_dir():
        ap.error(f"--folder {args.folder}: a file, not a folder of kept reports")
    if args.add:
        if not args.name:
            ap.error("--add needs --name")
        if Path(args.name).name != args.name or args.name.startswith(".") or not args.name.strip():
            ap.error(f"--name {args.name!r}: accepted a plain file name (no folder, not hidden), kept in --folder")
        try:
            slimmed = slim(json.loads(Path(args.add).read_text()), args.note)
            if folder.is_dir():  # a damaged kept report is named before anything is stored
                table(folder)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{args.name}.json").write_text(json.dumps(slimmed, indent=1))
        except (*USER_ERRORS, OSError) as exc:  # a missing file, one that is not a harness report, a bad --folder
            ap.error(f"--add {args.add}: {exc}")
    try:
        fresh = table(folder)
        rows = search_free(folder) if args.plot else []
    except ValueError as exc:  # a damaged kept report, named
        ap.error(str(exc))
    if args.plot:
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
