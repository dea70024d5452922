"""The benchmark's results table and learning curves, regenerated from the JSON records of
``training.reference`` (``docs/benchmark/results/*.json``); nothing in the table is typed by hand.

    python -m nertz_env.training.bench_table            # rewrites the table in docs/ and the plots

Every (task, algorithm, seed 1..3) is a row: measured, or marked with the reason it was not run
(``--reason``) and the command that runs it. The table goes between the ``<!-- results:start -->``
and ``<!-- results:end -->`` lines of ``docs/benchmark-tasks.md``; one learning-curve plot per task
(win share against each pool opponent at every checkpoint, each seed a line) goes to
``docs/benchmark/curves_{task}.png``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nertz_env import tasks
from nertz_env.cli_checks import Parser
from nertz_env.training.pages import markers, with_part
from nertz_env.training.reference import ALGOS, CROSS_PLAY, RESULTS, command_line, cross_play_command

SEEDS = (1, 2, 3)
PAGE = Path("docs") / "benchmark-tasks.md"
START, END = markers("results")
REASON = "not run: the 2 shared CPU cores gave no time for it yet"


def load(results: Path) -> dict[tuple[str, str, int], dict[str, Any]]:
    """The records by (task, algorithm, seed)."""
    out = {}
    for path in sorted(results.glob("*.json")):
        rec = json.loads(path.read_text())
        out[rec["task"]["name"], rec["algo"], rec["seed"]] = rec
    return out


def _ci(value: float, ci: Sequence[float], fmt: str = ".3f") -> str:
    return f"{value:{fmt}} [{ci[0]:{fmt}}, {ci[1]:{fmt}}]"


def row(task: str, algo: str, seed: int, rec: dict[str, Any] | None, reason: str) -> str:
    """One row of the table (markdown)."""
    cmd = f"`{command_line(task, algo, seed)}`"
    if rec is None or "final" not in rec:
        if rec:  # stopped part way: what the JSON holds, and the same command resumes it
            reason = f"partly run ({len(rec['curve'])} curve points, {rec['train_s']:.0f} s), no final protocol yet; "\
                     f"{reason.removeprefix('not run: ')}"
        return f"| {task} | {algo} | {seed} | {reason} |" + " |" * (2 + len(tasks.POOL)) + f" {cmd} |"
    by_opp = {r["opponent"]: r for r in rec["final"]["results"]}
    wins = " | ".join(_ci(by_opp[o]["win_share"], by_opp[o]["win_ci"]) for o in rec["final"]["pool"])
    ex = rec.get("exploit")
    exploit = _ci(ex["score_gain"], ex["score_gain_ci"], "+.2f") if ex else "not run"
    cpu = rec.get("train_cpu_s")
    trained = rec["curve"][-1]["steps"] if rec["curve"] else rec["steps"]  # ppo: whole updates, below the budget
    cost = f"{rec['train_s']:.0f} s wall"
    if cpu:
        cost += f", {cpu:.0f} s CPU, {trained / max(cpu, 1e-9):,.0f}/CPU-s"
    return f"| {task} | {algo} | {seed} | {trained:,} | {cost} | {wins} | {exploit} | {cmd} |"


def table(records: dict[tuple[str, str, int], dict[str, Any]], reason: str) -> str:
    """The whole table, every task, algorithm and seed."""
    pool = " | ".join(f"win vs {o}" for o in tasks.POOL)
    lines = [
        f"| task | algorithm | seed | agent-steps trained | training time (agent-steps per CPU-second) | {pool} | "
        "exploitability (score gain) | command |",
        "|" + "---|" * (8 + len(tasks.POOL) - 1),
    ]
    for task in tasks.names():
        for algo in ALGOS:
            for seed in SEEDS:
                lines.append(row(task, algo, seed, records.get((task, algo, seed)), reason))
    return "\n".join(lines)


def cross_tables(folder: Path) -> list[str]:
    """One matrix per cross-play record (``reference --cross-play``): the row algorithm's win share
    against copies of the column algorithm, with its 95% interval over deals."""
    out = []
    for path in sorted(folder.glob("*.json")):
        rec = json.loads(path.read_text())
        labels = rec["labels"]
        algos = [labels[a] for a in rec["agents"]]
        cell = {(labels[r["agent"]], labels[r["opponent"]]): r for r in rec["cross_play"]}
        task, seed = rec["task"]["name"], int(path.stem.rsplit("__", 1)[1])
        lines = [
            f"Cross-play on {task}, the final policies of the seed-{seed} runs ({rec['deals']} deals; the "
            f"row's win share against copies of the column, even share {rec['cross_play'][0]['even_share']:.3f}; "
            f"`{cross_play_command(task, seed)}`):",
            "",
            "| row vs column | " + " | ".join(algos) + " |",
            "|---|" + "---|" * len(algos),
        ]
        for a in algos:
            cells = [_ci(cell[a, b]["win_share"], cell[a, b]["win_ci"]) if a != b else "" for b in algos]
            lines.append(f"| {a} | " + " | ".join(cells) + " |")
        out.append("\n".join(lines))
    return out


def plot(records: dict[tuple[str, str, int], dict[str, Any]], out_dir: Path) -> list[Path]:
    """One figure per task with curves: win share at each checkpoint, per opponent and run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    for task in tasks.names():
        runs = {k: r for k, r in records.items() if k[0] == task and r["curve"]}
        if not runs:
            continue
        fig, axes = plt.subplots(1, len(tasks.POOL), figsize=(4 * len(tasks.POOL), 3.2), sharey=True)
        for ax, opp in zip(axes, tasks.POOL):
            for (_, algo, seed), rec in sorted(runs.items()):
                xs = [c["steps"] for c in rec["curve"]]
                ys = [next(r["win_share"] for r in c["results"] if r["opponent"] == opp) for c in rec["curve"]]
                ax.plot(xs, ys, marker="o", label=f"{algo} s{seed}")
            even = rec["curve"][0]["results"][0]["even_share"]
            ax.axhline(even, color="grey", lw=0.8, ls="--")
            ax.set_title(f"vs {opp}")
            ax.set_xlabel("agent-steps")
        axes[0].set_ylabel(f"win share ({tasks.get(task).curve_deals} deals)")
        axes[-1].legend(fontsize=7)
        fig.suptitle(f"{task}: the protocol at each checkpoint (dashed: an even share)")
        fig.tight_layout()
        path = out_dir / f"curves_{task}.png"
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)
    return written


def write_page(page: Path, text: str) -> None:
    """Replace the part of ``page`` between the markers with ``text``."""
    try:
        new = with_part(page.read_text(), START, END, text)
    except ValueError:
        raise ValueError(f"{page} has no {START} ... {END} lines to write the table between") from None
    page.write_text(new)


def main(argv: Sequence[str] | None = None) -> int:
    ap = Parser(prog="python -m nertz_env.training.bench_table", description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default=str(RESULTS), help="the folder of JSON records")
    ap.add_argument("--page", default=str(PAGE), help="the page whose table is rewritten")
    ap.add_argument("--reason", default=REASON, help="what a row not yet run says")
    ap.add_argument("--cross-play", default=str(CROSS_PLAY), help="the folder of cross-play records")
    ap.add_argument("--no-plots", action="store_true", help="the table only")
    args = ap.parse_args(argv)
    records = load(Path(args.results))
    page = Path(args.page)
    plots = [] if args.no_plots else plot(records, Path(args.results).parent)
    figures = [f"![{p.stem.removeprefix('curves_')}: learning curves]({p.relative_to(page.parent).as_posix()})"
               for p in plots]  # fmt: skip
    crosses = cross_tables(Path(args.cross_play))
    write_page(page, "\n\n".join([table(records, args.reason), *crosses, *figures]))
    print(f"wrote the table of {len(records)} runs{' and ' + str(len(plots)) + ' plots' if plots else ''} into {page}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
