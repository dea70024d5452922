"""A first start people can see: numba compiles the rules engine (and the scripted agents' and
the harness's kernels) the first time they run, then loads them from its cache (``__pycache__``).
This module says so on stderr before each compile starts and reports progress while it runs,
every few seconds, in logs as below and on a terminal alike (there each progress line replaces
the one before):

    nertz-env: compiling the rules engine (first run only, about 1 min on two free cores; cached afterwards)
    nertz-env: compiled observe_and_mask in 3.1 s
    nertz-env: compiling _advance_tables ... 5 s
    nertz-env: compiled _advance_tables in 9.8 s (14 s in all)

It listens to numba's own ``numba:compile`` event, which fires only when a function is really
compiled (not when it is loaded from the cache), so a warm start prints nothing; and to
``cache.WAIT_EVENT``, which fires while another process (a test worker, or the background compile
of ``nertz_env.engine.warm``) compiles a kernel this one needs:

    nertz-env: waiting for step, compiled by another process ... 5 s
    nertz-env: loaded step, compiled by another process, after 12.3 s

``install()`` is called by ``nertz_env.engine`` on import; ``NERTZ_COMPILE_NOTICE=0`` silences it.
``NERTZ_COMPILE_LOG=FILE`` appends a line per kernel compiled, nested ones included, from every
process that inherits it (process id, kernel, signature digest, cache folder, seconds): how often a
test run compiles each kernel (``tests/conftest.py`` sums it up).
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import time
from typing import TextIO

from numba import config as numba_config
from numba.core import event

from nertz_env.engine import collector
from nertz_env.engine.cache import OUR_MODULES, WAIT_EVENT, dispatcher_name

# The main job's first run (README, "Start": nertz eval with the heuristic and greedy agents)
# compiles in 117 s of CPU time on the project's 2-core machine, 45 s of it in the background
# processes of ``warm`` (the parallel env's first step: 86 s, 32 s of it in the first process).
FIRST_RUN_ESTIMATE = "1 to 2 min on two free cores"
PREFIX = "nertz-env:"


class CompileNotice(event.Listener):
    """Announces compiles of this package's kernels. Only the outermost compile is reported (a
    kernel's callees compile inside it); ``interval`` is the seconds between progress lines;
    ``quiet`` says nothing; ``log`` names a file that gets a line per kernel compiled."""

    def __init__(self, stream: TextIO | None = None, interval: float = 5.0, quiet: bool = False, log: str = ""):
        self.stream = stream
        self.quiet = quiet
        self.log = log
        self.interval = interval
        self.announced = False
        self.total = 0.0
        self._depth = 0
        self._starts: list[float] = []  # the start of each compile in progress, nested ones included
        self._started = 0.0
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def _say(self, text: str, progress: bool = False) -> None:
        """A line on stderr; on a terminal a progress line is rewritten in place by the next one."""
        if self.quiet:
            return
        out = self.stream if self.stream is not None else sys.stderr
        tty = out.isatty()
        clear = "\r\x1b[K" if tty else ""  # a progress bar or the last progress line may hold the line
        out.write(f"{clear}{PREFIX} {text}{'' if progress and tty else chr(10)}")
        out.flush()

    def on_start(self, ev: event.Event) -> None:
        module, name = dispatcher_name(ev.data["dispatcher"])
        if not module.startswith(OUR_MODULES):
            return
        self._starts.append(time.perf_counter())
        self._depth += 1
        if self._depth > 1:
            return
        if not self.announced:
            self.announced = True
            self._say(f"compiling the rules engine (first run only, {FIRST_RUN_ESTIMATE}; cached afterwards)")
        self._started = time.perf_counter()
        self._stop.clear()
        doing = f"waiting for {name}, compiled by another process" if ev.kind == WAIT_EVENT else f"compiling {name}"
        self._ticker = threading.Thread(target=self._tick, args=(doing,), daemon=True)
        self._ticker.start()

    def _write_log(self, ev: event.Event, kernel: str, took: float) -> None:
        """A line per compile: process, kernel, a digest of its signature, its cache folder, seconds."""
        signature = hashlib.sha256(str(ev.data.get("args")).encode()).hexdigest()[:12]
        folder = getattr(getattr(ev.data["dispatcher"], "_cache", None), "cache_path", None) or ""
        with open(self.log, "a") as log:  # one short line per write: lines from several processes stay whole
            log.write(f"{os.getpid()}\t{kernel}\t{signature}\t{folder}\t{took:.2f}\n")

    def _tick(self, doing: str) -> None:
        while not self._stop.wait(self.interval):
            self._say(f"{doing} ... {time.perf_counter() - self._started:.0f} s", progress=True)

    def on_end(self, ev: event.Event) -> None:
        module, name = dispatcher_name(ev.data["dispatcher"])
        if not module.startswith(OUR_MODULES):
            return
        took = time.perf_counter() - self._starts.pop()
        if self.log and ev.kind != WAIT_EVENT and getattr(ev, "_exc_details", None) is None:
            self._write_log(ev, f"{module}.{name}", took)
        self._depth -= 1
        if self._depth > 0:
            return
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        took = time.perf_counter() - self._started
        self.total += took
        if getattr(ev, "_exc_details", None) is None:  # numba's own is_failed reads inverted
            in_all = f" ({self.total:.0f} s in all)" if self.total > took + 0.5 else ""
            if ev.kind == WAIT_EVENT:
                self._say(f"loaded {name}, compiled by another process, after {took:.1f} s{in_all}")
            else:
                self._say(f"compiled {name} in {took:.1f} s{in_all}")


_installed: CompileNotice | None = None


def install() -> CompileNotice | None:
    """Listen for compiles of this package's kernels, and for waits on another process's compile
    (once per process); returns the listener, or None when ``NERTZ_COMPILE_NOTICE=0`` and no
    ``NERTZ_COMPILE_LOG`` is set (with the log alone it writes the log and says nothing)."""
    global _installed
    if numba_config.DISABLE_JIT:  # plain Python (NUMBA_DISABLE_JIT, plain.python_engine) compiles nothing
        return _installed
    collector.install()  # and, whatever is said, the garbage collector held back while they compile
    quiet, log = os.environ.get("NERTZ_COMPILE_NOTICE", "1") == "0", os.environ.get("NERTZ_COMPILE_LOG", "")
    if _installed is None and (not quiet or log):
        _installed = CompileNotice(quiet=quiet, log=log)
        event.register("numba:compile", _installed)
        event.register(WAIT_EVENT, _installed)
    return _installed
