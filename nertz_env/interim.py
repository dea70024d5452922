"""A first start that plays at once: a ``Game`` plays with the engine in plain Python while its
kernels compile in a background process, then goes on compiled from the next tick.

With an empty (or stale) numba cache the kernels of a game's deal and tick take about a minute to
compile on two cores. A ``Game`` (and so ``nertz_v0``'s parallel and AEC envs) and a
``NertzVectorEnv`` check, when they are made, whether their compiled tick would load from the
cache (``engine.tick_is_cached``, ``engine.is_cached``). When it would not, they play with
``engine.python_engine()`` (the same engine with numba's JIT off: every kernel a Python function,
some 500-650 game-ticks a second) and this module starts, once per process and kind,
``python -m nertz_env.interim``: it unpickles and calls the ``warm`` function it is handed (a game,
or a vector env, of the same options with the JIT on, which deals and plays one tick), so that
numba compiles exactly those kernels into its on-disk cache (with the background jobs of
``engine.warm``). Each tick the game asks whether that process has ended; when it has, the game
loads the compiled kernels from the cache and plays on with them. Both engines play the same game
byte for byte on the same arrays (``tests/test_interim.py``), so the switch changes the speed and
nothing else. If the background compile fails, the game compiles in its own process at that tick,
as it would have at the start, and says why. The scripted agents (``agents.base.Agent._kernel``)
do the same with their kernel modules, imported again as plain Python over that engine
(``engine.python_modules``); the evaluation arena plays its agents compiled from the start.

``NERTZ_INTERIM=0`` makes a first start compile before it plays instead (the test suite and the
speed benchmarks set it); the default is ``1``. A process that ends stops its background compile;
what was compiled by then stays in the cache. ``Game.compiled`` says which engine a game plays.
"""

from __future__ import annotations

import atexit
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from nertz_env import engine

ENV = "NERTZ_INTERIM"
_PREFIX = "nertz-env:"


def enabled() -> bool:
    """Whether a game may play in Python while it compiles (``NERTZ_INTERIM``, default 1)."""
    value = os.environ.get(ENV, "1").strip()
    if value not in ("0", "1", ""):
        raise ValueError(f"{ENV} must be 1 (play in Python while the engine compiles) or 0 (compile first), "
                         f"got {value!r}")  # fmt: skip
    return value != "0"


def _say(text: str) -> None:
    if os.environ.get("NERTZ_COMPILE_NOTICE", "1") != "0":
        sys.stderr.write(f"{_PREFIX} {text}\n")
        sys.stderr.flush()


class BackgroundCompile:
    """``python -m nertz_env.interim``, which calls ``warm`` (picklable: a module's function, or a
    ``functools.partial`` of one) to compile kernels into the cache; ``command`` replaces it."""

    def __init__(self, warm: Callable[[], None], command: Sequence[str] | None = None, what: str = "the kernels"):
        self.engine = engine.python_engine()
        root = str(Path(__file__).resolve().parents[1])  # the process imports this very package
        path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
        jobs = os.environ.get("NERTZ_COMPILE_JOBS", "2")  # it and one job of engine.warm; this one plays
        env = {**os.environ, ENV: "0", "NERTZ_COMPILE_NOTICE": "0", "PYTHONPATH": path, "NERTZ_COMPILE_JOBS": jobs,
               engine.warm.PARENT: str(os.getpid())}  # fmt: skip
        self._errors = tempfile.TemporaryFile()  # noqa: SIM115 - read when the process ends, closed with it
        self.process = subprocess.Popen(
            list(command or [sys.executable, "-m", __name__]), env=env, stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL, stderr=self._errors,
        )  # fmt: skip
        assert self.process.stdin is not None  # stdin=PIPE
        try:
            self.process.stdin.write(pickle.dumps(warm))
            self.process.stdin.close()
        except OSError:
            pass  # it ended already: done() reports how
        self.what = what
        self.started = time.perf_counter()
        self.returncode: int | None = None
        atexit.register(self.stop)
        global _announced
        if not _announced:
            _announced = True
            _say(f"first run: the engine compiles in the background ({engine.notice.FIRST_RUN_ESTIMATE}); "
                 "until then games and agents play it in plain Python (about 2 ms a game-tick)")  # fmt: skip

    def done(self) -> bool:
        """Whether the compile has ended (said once on stderr, with the error if it failed)."""
        if self.returncode is None:
            code = self.process.poll()
            if code is None:
                return False
            self.returncode = code
            took = time.perf_counter() - self.started
            if code == 0:
                _say(f"compiled {self.what} in the background in {took:.0f} s: compiled from the next step")
            else:
                self._errors.seek(0)
                tail = self._errors.read().decode(errors="replace").strip().splitlines()[-3:]
                _say(f"the background compile of {self.what} failed (exit {code}) after {took:.0f} s; "
                     f"compiling here instead: {' | '.join(tail)}")  # fmt: skip
        return True

    def stop(self) -> None:
        """End the compile if it still runs (what it finished stays in the cache)."""
        if self.process.poll() is None:
            self.process.terminate()
        self.process.wait()


_jobs: dict[str, BackgroundCompile] = {}
_cached: set[str] = set()  # the kinds whose kernels the cache held: every later object of them has the same types
_announced = False  # the first background compile of the process says what happens


def background(kind: str, warm: Callable[[], None], cached: Callable[[], bool]) -> BackgroundCompile | None:
    """The process's background compile of ``kind`` (what it compiles: ``"a game's kernels"``), started with
    ``warm`` if need be; None when the caller should play compiled: ``cached()`` says its kernels
    load from the cache, the JIT is off, ``NERTZ_INTERIM=0``, or the compile has ended (and then
    what it left uncached, if anything, compiles in this process, as without this module).
    ``cached()`` is asked until it says yes once for ``kind``."""
    if not enabled() or kind in _cached:
        return None
    if cached():
        _cached.add(kind)
        return None
    if kind not in _jobs:
        _jobs[kind] = BackgroundCompile(warm, what=kind)
    job = _jobs[kind]
    return None if job.done() else job


class InterimTick:
    """A game's tick while its kernels compile: the plain-Python engine's ``HeldTick`` of the same
    arguments. At the first tick after the compile has ended it calls ``switch``, which gives the
    game its compiled tick (and returns it), and plays that."""

    def __init__(self, args: Sequence[Any], job: BackgroundCompile, switch: Callable[[], Any]):
        self._python = job.engine.HeldTick(args)
        self._job = job
        self._switch = switch

    @property
    def args(self) -> list[Any]:
        return self._python.args

    def set(self, index: int, value: Any) -> None:
        self._python.set(index, value)

    def __call__(self) -> None:
        if self._job.done():
            self._switch()()
        else:
            self._python()


class InterimEngine:
    """The kernels an object plays while ``job`` compiles: every name is the plain-Python module's
    (``plain``, default ``job``'s engine) until the compile has ended; then ``switch`` is called (it
    gives the object the compiled module) and the name is the compiled module's (``compiled``,
    default the engine)."""

    def __init__(self, job: BackgroundCompile, switch: Callable[[], None], plain: Any = None, compiled: Any = None):
        self._job = job
        self._switch = switch
        self._plain = job.engine if plain is None else plain
        self._compiled = engine if compiled is None else compiled

    def check(self) -> bool:
        """Whether the compile has ended (and then the switch is made)."""
        if self._job.done():
            self._switch()
            return True
        return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._compiled if self.check() else self._plain, name)


def _compile_main() -> None:
    """The background process: call the function pickled on stdin."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stopped: stop engine.warm's jobs too (atexit)
    engine.warm.exit_with_parent()  # a parent killed outright cannot stop it
    pickle.load(sys.stdin.buffer)()


if __name__ == "__main__":
    _compile_main()
