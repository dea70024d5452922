"""A first start on two cores: the rules of a tick compile in the background.

Every way of playing (``Game``, the vector env, the evaluation arena) first deals, which compiles
the deal, the observations and the masks; its first tick then needs the rules (``tick.step_span`` and
its callees: the races, the landing of moves in the air), the R8 books (``match.match_step``) and
the rewards. On the first compile of an engine kernel in a process (an empty or stale cache) this
module starts background processes (``python -m nertz_env.engine.warm JOB``) that compile those
kernels into numba's on-disk cache while the first process compiles the deal. Nothing is compiled
twice: a kernel compiles under its lock file (``cache.compile_once``), so the first process,
reaching ``step_span``, waits for the process compiling it and loads the result.

The jobs compile from signatures (sample arrays of the dtypes the engine is called with), without
running anything. ``NERTZ_COMPILE_JOBS`` sets how many processes compile at once, this one included
(default 3 on a machine of two cores or more: this one and one per job; 1 on one core, where
everything compiles in the first process). A process
that ends stops its background compiles; what they had finished stays in the cache. A process
killed (SIGKILL, or SIGTERM before Python's exit handlers) cannot stop them: each background
process ends itself within a second of its parent's end (``exit_with_parent``).
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
from numba import config as numba_config
from numba import typeof
from numba.core import event

from nertz_env.engine import compose, match, tick
from nertz_env.engine.cache import OUR_MODULES, dispatcher_name
from nertz_env.engine.constants import C_SIZE
from nertz_env.engine.state import new_state

ENV = "NERTZ_COMPILE_JOBS"
_IN_WORKER = "_NERTZ_WARM_WORKER"  # set in the background processes: they start no others
PARENT = "_NERTZ_COMPILE_PARENT"  # the pid of the process that started a background compile


def _samples() -> dict[str, object]:
    """Arguments of the types the composed tick passes to the rules (``compose.play_tick``)."""
    cfg = np.zeros(C_SIZE, np.int64)
    cfg.setflags(write=False)  # NertzConfig.packed is read-only
    table = np.zeros((1, 4), np.int8)
    table.setflags(write=False)  # ActionCatalogue.table is read-only
    return {
        "s": new_state(1, 2, 4), "b": 0, "actions": np.zeros(2, np.int64), "cfg": cfg, "table": table,
        "speed": np.ones(2), "prev": np.zeros(2, np.int32),
    }  # fmt: skip


def _compile(dispatcher, *args) -> None:
    dispatcher.compile(tuple(typeof(a) for a in args))


def _rules(x: dict) -> None:
    """``tick.step_span``: the rules of a tick (R3-R7), the largest kernel."""
    _compile(tick.step_span, x["s"], x["b"], x["actions"].reshape(1, -1), x["cfg"], x["table"], x["speed"])


def _books(x: dict) -> None:
    """The landing of moves in the air at the end of a hand (``step_span`` waits for it), the R8
    books and the R8 rewards (float64 for ``Game``, float32 for the vector env's buffers; the
    rewards of a single hand are inlined where they are paid)."""
    _compile(tick._land_all, x["s"], x["b"], x["cfg"], x["table"], x["speed"])
    _compile(match.match_step, x["s"], x["b"], x["cfg"])
    for dtype in (np.float64, np.float32):
        _compile(compose._r8_rewards, x["s"], x["b"], x["prev"], x["cfg"], np.zeros(2, dtype))


JOBS = {"rules": _rules, "books": _books}  # in the order they start


class _Starter(event.Listener):
    """Starts the background jobs at the first real compile of an engine kernel."""

    def __init__(self, jobs: int):
        self.jobs = jobs
        self.procs: list[subprocess.Popen] = []

    def on_start(self, ev: event.Event) -> None:
        if self.procs or not dispatcher_name(ev.data["dispatcher"])[0].startswith(OUR_MODULES):
            return
        # the jobs import this very package, wherever this process found it
        root = str(Path(__file__).resolve().parents[2])
        path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
        env = {**os.environ, _IN_WORKER: "1", "NERTZ_COMPILE_NOTICE": "0", "PYTHONPATH": path, PARENT: str(os.getpid())}
        for name in list(JOBS)[: self.jobs - 1]:
            self.procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "nertz_env.engine.warm", name], env=env, stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                )  # fmt: skip
            )
        atexit.register(self.stop)

    def on_end(self, ev: event.Event) -> None:
        pass

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
            proc.wait()


def jobs() -> int:
    """How many processes compile at once (``NERTZ_COMPILE_JOBS``; default 3 with two cores or more)."""
    value = os.environ.get(ENV, "")
    if value.strip():
        try:
            count = int(value)
        except ValueError:
            count = 0
        if count < 1:
            raise ValueError(f"{ENV} must be a whole number of processes (1 or more), got {value!r}")
        return count
    return 1 + len(JOBS) if (os.cpu_count() or 1) > 1 else 1


def exit_with_parent(period: float = 0.5) -> None:
    """In a background compile: end this process (and so, in turn, its own jobs) once the process
    that started it (``PARENT``, set by it: gone already if killed before this child looked) is
    gone, rather than compile on for minutes beside whatever runs next."""
    parent = int(os.environ.get(PARENT, os.getppid()))

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(period)
        os._exit(0)

    threading.Thread(target=watch, name="nertz-exit-with-parent", daemon=True).start()


_starter: _Starter | None = None


def install() -> None:
    """Start the background jobs when this process first compiles an engine kernel (once per
    process; never in a background job itself, nor with ``NERTZ_COMPILE_JOBS=1``)."""
    global _starter
    if numba_config.DISABLE_JIT:  # plain Python (NUMBA_DISABLE_JIT, plain.python_engine) compiles nothing
        return
    if _starter is None and os.environ.get(_IN_WORKER) != "1" and jobs() > 1:
        _starter = _Starter(jobs())
        event.register("numba:compile", _starter)


if __name__ == "__main__":
    exit_with_parent()
    samples = _samples()
    for job in sys.argv[1:]:
        JOBS[job](samples)
