"""Where a first start's compile time goes, kernel by kernel.

``python -m nertz_env.benchmarks.compile_profile [parallel|vector|main] [--top N]`` runs the
command line of ``benchmarks.first_start``'s case inside a fresh process with an empty numba
cache and the background compiles off (``NERTZ_COMPILE_JOBS=1``, so every compile is this process's), listens to numba's
compile events and prints, per compiled function, its own seconds (without the compiles it
triggered) and its total seconds, largest own time first, and the functions compiled more than
once. Times are wall seconds of one process: compare trees one after the other in one sitting.
"""

from __future__ import annotations

import argparse
import os
import runpy
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence

from nertz_env.benchmarks import first_start

CASES = tuple(first_start.CASES)


def run_case(case: str) -> None:
    """``benchmarks.first_start``'s command line of ``case``, run in this process."""
    how, *rest = first_start.CASES[case]
    if how == "-c":
        exec(rest[0], {})  # noqa: S102 - the fixed case text of first_start
        return
    module, *argv = rest
    saved = sys.argv
    sys.argv = [module, *argv, "--quiet"]
    try:
        runpy.run_module(module, run_name="__main__")
    except SystemExit as done:
        if done.code not in (0, None):
            raise
    finally:
        sys.argv = saved


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
