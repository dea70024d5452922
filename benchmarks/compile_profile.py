"""Where a first start's compile time goes, kernel by kernel.

``python -m nertz_env.benchmarks.compile_profile [parallel|vector|main] [--top N]`` runs the case
of ``benchmarks.first_start`` in a fresh process with an empty numba cache and the background
compiles off (``NERTZ_COMPILE_JOBS=1``, so every compile is this process's), listens to numba's
compile events and prints, per compiled function, its own seconds (without the compiles it
triggered) and its total seconds, largest own time first, and the functions compiled more than
once. Times are wall seconds of one process: compare trees one after the other in one sitting.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence

CASES = ("parallel", "vector", "main")


def run_case(case: str) -> None:
    if case == "parallel":
        from nertz_env import nertz_v0

        env = nertz_v0.parallel_env()
        env.reset(seed=0)
        env.step({a: 0 for a in env.agents})
    elif case == "vector":
        from nertz_env.vector import NertzVectorEnv

        env = NertzVectorEnv(8, seed=0)
        env.reset()
        env.step(env.sample_actions())
    else:
        from nertz_env.training.cli import main as cli_main

        cli_main(["eval", "--agents", "heuristic", "greedy", "greedy", "greedy", "--hands", "50", "--seed", "0",
                  "--quiet"])  # fmt: skip


def profile(case: str, top: int) -> None:
    """In this process (its numba cache empty): run ``case`` and print the compiles."""
    from numba.core import event

    rows: list[tuple[float, float, str]] = []
    stack: list[tuple[float, list[float]]] = []

    class Listener(event.Listener):
        def on_start(self, ev):
            stack.append((time.perf_counter(), [0.0]))

        def on_end(self, ev):
            start, children = stack.pop()
            spent = time.perf_counter() - start
            if stack:
                stack[-1][1][0] += spent
            func = getattr(ev.data["dispatcher"], "py_func", None)
            name = f"{func.__module__}.{func.__qualname__}" if func else str(ev.data["dispatcher"])
            rows.append((spent - children[0], spent, name))

    event.register("numba:compile", Listener())
    began = time.perf_counter()
    run_case(case)
    total = time.perf_counter() - began
    rows.sort(reverse=True)
    print(f"{case}: {total:.1f} s from import to first step, {len(rows)} compiles, "
          f"{sum(r[0] for r in rows):.1f} s in them")  # fmt: skip
    print(f"{'own s':>7} {'total s':>8}  function")
    for own, spent, name in rows[:top]:
        print(f"{own:7.2f} {spent:8.2f}  {name}")
    again = sorted((n, k) for n, k in Counter(r[2] for r in rows).items() if k > 1 and n.startswith("nertz_env"))
    print("compiled more than once:", ", ".join(f"{n} x{k}" for n, k in again) or "none")


def main(argv: Sequence[str] | None = None) -> int:
    from nertz_env.cli_checks import Parser, at_least

    ap = Parser(prog="python -m nertz_env.benchmarks.compile_profile", description=__doc__.split("\n\n")[0])
    ap.add_argument("case", nargs="?", choices=CASES, default="vector", help="what to start (default vector)")
    ap.add_argument("--top", type=at_least(1), default=25, help="functions listed (largest own time first)")
    ap.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.in_process:
        profile(args.case, args.top)
        return 0
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "NERTZ_COMPILE_JOBS": "1", "NERTZ_COMPILE_NOTICE": "0"}
        command = [sys.executable, "-W", "ignore", "-m", "nertz_env.benchmarks.compile_profile", args.case,
                   "--top", str(args.top), "--in-process"]  # fmt: skip
        return subprocess.run(command, env=env).returncode


if __name__ == "__main__":
    raise SystemExit(main())
