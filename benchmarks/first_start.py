"""First start: import to first step with an empty numba cache, wall and CPU time.

Each case runs in a fresh subprocess with an empty ``NUMBA_CACHE_DIR``, compiling before it plays
(``NERTZ_INTERIM=0``); CPU time is the
subprocess's and its children's (the background compiles of ``nertz_env.engine.warm``), user plus
system, so a figure taken on a busy machine still says how much work the first start was. Each
case runs with the default number of compiling processes and with ``NERTZ_COMPILE_JOBS=1`` (all in
one process), alternating, ``--repeats`` times; the report gives medians. The load average is
printed beside them: wall time means something only on an idle machine. The parallel and vector
cases also run as a new user's do, with ``NERTZ_INTERIM=1`` (``nertz_env.interim``: the env plays
in plain Python while its kernels compile in the background): to the first step, and until the
env plays compiled (stepping flat out meanwhile).

Usage: ``python -m nertz_env.benchmarks.first_start [--repeats 1] [--cases parallel vector main]
[--json PATH]`` (``--json`` also writes the medians, with the machine's cores and load).
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from nertz_env.cli_checks import Parser, at_least, output_file

CASES = {
    "parallel": [
        "-c",
        "from nertz_env import nertz_v0; env = nertz_v0.parallel_env(); env.reset(seed=0); "
        "env.step({a: 0 for a in env.agents})",
    ],
    "vector": [
        "-c",
        "from nertz_env.vector import NertzVectorEnv; e = NertzVectorEnv(8, seed=0); e.reset(); "
        "e.step(e.sample_actions())",
    ],
    # README "Start": the main job, on 50 deals (the play itself takes under a second)
    "main": ["-m", "nertz_env.training.cli", "eval", "--agents", "heuristic", "greedy", "greedy", "greedy",
             "--hands", "50", "--seed", "0"],
    # a whole hand of `nertz watch` (heuristic and three greedy), printed without delay
    "watch": ["-m", "nertz_env.training.cli", "watch", "--delay", "0", "--quiet"],
}  # fmt: skip
# With NERTZ_INTERIM=1: the first step (then the process ends, and its background compile with it),
# and the steps until the env plays compiled.
INTERIM = {
    ("parallel", "first step"): CASES["parallel"],
    ("parallel", "until compiled"): [
        "-c",
        "from nertz_env import nertz_v0; env = nertz_v0.parallel_env(); env.reset(seed=0)\n"
        "while not env.unwrapped.game.compiled:\n"
        "    env.step({a: 0 for a in env.agents})\n"
        "    env.agents or env.reset()",
    ],
    ("vector", "first step"): CASES["vector"],
    ("vector", "until compiled"): [
        "-c",
        "from nertz_env.vector import NertzVectorEnv; e = NertzVectorEnv(8, seed=0); e.reset()\n"
        "while not e.compiled:\n"
        "    e.step(e.sample_actions())",
    ],
    ("watch", "whole hand"): CASES["watch"],
}


def run_case(case: str, jobs: str, interim: str = "") -> dict[str, float]:
    """One run of ``case`` with an empty cache (or of ``INTERIM[case, interim]``, NERTZ_INTERIM=1):
    wall seconds, CPU seconds, kernels compiled."""
    with tempfile.TemporaryDirectory(prefix="nertz-first-start-") as cache:
        log = os.path.join(cache, "compiles.log")
        env = {**os.environ, "NUMBA_CACHE_DIR": os.path.join(cache, "numba"), "NERTZ_COMPILE_LOG": log,
               "NERTZ_COMPILE_NOTICE": "0", "NERTZ_INTERIM": "1" if interim else "0"}  # fmt: skip
        if jobs:
            env["NERTZ_COMPILE_JOBS"] = jobs
        else:
            env.pop("NERTZ_COMPILE_JOBS", None)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        argv = INTERIM[case, interim] if interim else CASES[case]
        subprocess.run([sys.executable, *argv], env=env, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        kernels = []
        if os.path.exists(log):  # no kernel compiled writes no log
            with open(log) as f:
                kernels = [tuple(line.split("\t")[1:4]) for line in f]  # kernel, signature, cache folder
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {"wall_s": wall, "cpu_s": cpu, "compiles": len(kernels), "distinct": len(set(kernels))}


def main(argv: Sequence[str] | None = None) -> int:
    ap = Parser(prog="python -m nertz_env.benchmarks.first_start", description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=at_least(1), default=1, help="runs of each case and setting (medians reported)")
    ap.add_argument("--cases", nargs="+", choices=sorted(CASES), default=["parallel", "vector", "main"])
    ap.add_argument("--json", metavar="PATH", type=output_file(), help="also write the medians as JSON")
    args = ap.parse_args(argv)
    report = {"cores": os.cpu_count(), "load_at_start": os.getloadavg()[0], "repeats": args.repeats, "cases": {}}
    print(f"cores {report['cores']}, load average at start {report['load_at_start']:.2f}")
    for case in args.cases:
        settings = {f"{case} NERTZ_COMPILE_JOBS={jobs}": (jobs, "") for jobs in ("default", "1")}
        settings.update({f"{case} NERTZ_INTERIM=1 {name}": ("default", name) for c, name in INTERIM if c == case})
        runs: dict[str, list[dict[str, float]]] = {label: [] for label in settings}
        for _ in range(args.repeats):
            for label, (jobs, interim) in settings.items():
                runs[label].append(run_case(case, "" if jobs == "default" else jobs, interim))
        for label, results in runs.items():
            med = {k: statistics.median(r[k] for r in results) for k in results[0]}
            med["load"] = os.getloadavg()[0]
            report["cases"][label] = med
            print(
                f"{label:42s} wall {med['wall_s']:6.1f} s  CPU {med['cpu_s']:6.1f} s  "
                f"kernels compiled {med['compiles']:.0f} ({med['distinct']:.0f} distinct)  load {med['load']:.2f}"
            )
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
