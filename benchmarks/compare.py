"""Speed of this source tree against another, alternately in one sitting.

``python -m nertz_env.benchmarks.compare --against REV_OR_TREE [--repeats N] [--json PATH]`` runs
the fixed workloads of ``compare_workload.py`` (the parallel API, the vector env at B=1024, the
rules engine alone, the heuristic agent's decisions, the vector env with each of three house
rules on) on this tree and on the other, one process
after the other, ``N`` times each (default 3), after one warm-up process per tree that also fills
its numba cache. Each process reports the rate of its fastest of 7 runs by CPU time; the report
gives per workload the median of the ``N`` rates per tree and their ratio (this tree / the other:
above 1 is faster). ``--against`` is a folder holding a source tree, or a git revision of this
tree's repository, exported once (``git archive``) into a cache folder that keeps its compiled code.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

WORKLOAD = Path(__file__).resolve().with_name("compare_workload.py")
HERE = WORKLOAD.parents[1]  # the source tree this module belongs to
NAMES = {
    "parallel": "nertz_v0 parallel API, 4 players (agent-steps/s)",
    "vector": "NertzVectorEnv B=1024, obs+masks (agent-steps/s)",
    "engine": "engine alone B=1024 (agent-steps/s)",
    "heuristic": "heuristic agent, batched (decisions/s)",
    "blocks_whole": "NertzVectorEnv B=1024, block_moves='whole'",
    "move_ticks": "NertzVectorEnv B=1024, move_ticks=2",
    "nertz_builds": "NertzVectorEnv B=1024, nertz_builds=True",
}


def source_tree(against: str) -> Path:
    """A folder holding the tree ``against`` names: the folder itself, or a revision of this tree's
    git repository exported to a cache folder (reused, so its compiled code is too)."""
    folder = Path(against).expanduser()
    if folder.is_dir():
        if not (folder / "nertz_env" / "__init__.py").exists():
            raise SystemExit(f"--against {against!r}: the folder holds no nertz_env package (a source tree)")
        return folder.resolve()
    try:
        rev = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--verify", f"{against}^{{commit}}"],
                             capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        raise SystemExit(
            f"--against {against!r} is neither a folder holding a source tree nor a git revision of {HERE}"
        ) from None
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path("~/.cache").expanduser()) / "nertz_env" / "compare"
    tree = cache / rev
    if not (tree / "nertz_env" / "__init__.py").exists():
        tree.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile() as archive:
            subprocess.run(["git", "-C", str(HERE), "archive", "--format=tar", rev], stdout=archive, check=True)
            archive.seek(0)
            with tarfile.open(fileobj=archive) as tar:
                if hasattr(tarfile, "data_filter"):  # Python 3.10.12+: refuse paths outside the folder
                    tar.extractall(tree, filter="data")
                else:
                    tar.extractall(tree)
    return tree


def run_workload(tree: Path, runs: int) -> dict[str, float]:
    env = {**os.environ, "NERTZ_COMPILE_NOTICE": "0"}
    out = subprocess.run([sys.executable, str(WORKLOAD), str(tree), "--runs", str(runs)], env=env,
                         capture_output=True, text=True)  # fmt: skip
    if out.returncode != 0:
        raise SystemExit(f"the workload failed on {tree}:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def compare(other: Path, repeats: int, runs: int, log=print) -> dict[str, Any]:
    trees = {"this": HERE, "other": other}
    log(f"warming up (compiles each tree's kernels on first use): {HERE} and {other}")
    for tree in trees.values():
        run_workload(tree, 1)
    rates: dict[str, list[dict[str, float]]] = {"this": [], "other": []}
    for r in range(repeats):
        for side, tree in trees.items():  # alternately, so both see the same load
            rates[side].append(run_workload(tree, runs))
        here, there = rates["this"][-1], rates["other"][-1]
        log(f"  round {r + 1}/{repeats}: " + ", ".join(
            f"{k} x{_show(ratio(here.get(k), there.get(k)), '.2f')}" for k in NAMES))  # fmt: skip
    medians = {side: {k: _median([run.get(k) for run in rates[side]]) for k in NAMES} for side in rates}
    return {
        "this": str(HERE),
        "other": str(other),
        "repeats": repeats,
        "runs": runs,
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "rates": rates,
        "medians": medians,
        "ratios": {k: ratio(medians["this"][k], medians["other"][k]) for k in NAMES},
    }


def ratio(this: float | None, other: float | None) -> float | None:
    """this / other, or None where a tree has no figure (an older tree without the workload's option)."""
    return None if this is None or other is None else this / other


def _median(values: list[float | None]) -> float | None:
    return None if any(v is None for v in values) else statistics.median(values)


def _show(value: float | None, spec: str) -> str:
    return "n/a" if value is None else format(value, spec)


def table(report: dict[str, Any]) -> str:
    head = f"{'workload (rate per CPU second)':<52}{'this tree':>14}{'other':>14}{'ratio':>8}"
    lines = [head, "-" * len(head)]
    for k, name in NAMES.items():
        this, other = report["medians"]["this"][k], report["medians"]["other"][k]
        ratio_text = _show(report["ratios"][k], ".2f")
        lines.append(f"{name:<52}{_show(this, ',.0f'):>14}{_show(other, ',.0f'):>14}{ratio_text:>8}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    from nertz_env.cli_checks import Parser, at_least, output_file

    ap = Parser(prog="python -m nertz_env.benchmarks.compare", description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", required=True, help="a source tree's folder, or a git revision of this repository")
    ap.add_argument("--repeats", type=at_least(1), default=3, help="processes per tree, alternately (median)")
    ap.add_argument("--runs", type=at_least(1), default=7, help="runs per workload in each process (fastest)")
    ap.add_argument("--json", metavar="PATH", type=output_file(), help="also write the report as JSON")
    args = ap.parse_args(argv)
    report = compare(source_tree(args.against), args.repeats, args.runs, log=lambda m: print(m, file=sys.stderr))
    print(table(report))
    print(f"medians of {args.repeats} alternate processes per tree; load average {report['load_average']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
