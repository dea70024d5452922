"""The garbage collector's thresholds are raised while one of this package's kernels compiles,
and the process's own come back when the outermost compile ends, failed or not
(``engine.collector``)."""

from __future__ import annotations

import gc
from contextlib import ExitStack
from types import SimpleNamespace

import pytest
from numba import njit
from numba.core import event

from nertz_env.engine import collector
from nertz_env.engine.collector import COMPILE_THRESHOLDS, CollectorDuringCompiles


def _event(module: str) -> SimpleNamespace:
    return SimpleNamespace(data={"dispatcher": SimpleNamespace(py_func=SimpleNamespace(__module__=module,
                                                                                        __name__="k"))})  # fmt: skip


@pytest.fixture
def own_thresholds():
    saved = gc.get_threshold()
    gc.set_threshold(701, 11, 12)  # a process's own, distinct from the defaults
    yield (701, 11, 12)
    gc.set_threshold(*saved)


def test_the_outermost_compile_of_our_kernel_raises_the_thresholds_until_it_ends(own_thresholds):
    listener = CollectorDuringCompiles()
    outer, inner = _event("nertz_env.engine.tick"), _event("numba.np.arrayobj")
    listener.on_start(outer)
    assert gc.get_threshold() == COMPILE_THRESHOLDS
    listener.on_start(inner)  # a callee of another package, inside ours
    listener.on_end(inner)
    assert gc.get_threshold() == COMPILE_THRESHOLDS
    listener.on_end(outer)
    assert gc.get_threshold() == own_thresholds


def test_another_packages_compile_leaves_the_thresholds_alone(own_thresholds):
    listener = CollectorDuringCompiles()
    theirs = _event("somebody_else")
    listener.on_start(theirs)
    listener.on_start(_event("nertz_env.engine.core"))  # ours, but inside theirs: theirs decides
    assert gc.get_threshold() == own_thresholds
    listener.on_end(_event("nertz_env.engine.core"))
    listener.on_end(theirs)
    assert gc.get_threshold() == own_thresholds


class Probe(event.Listener):
    """Records the thresholds each compile starts under."""

    def __init__(self):
        self.seen: list[tuple[int, ...]] = []

    def on_start(self, ev: event.Event) -> None:
        self.seen.append(gc.get_threshold())

    def on_end(self, ev: event.Event) -> None:
        pass


def _kernel(module: str, body):
    body.__module__ = module
    return njit(body)


def test_a_real_compile_runs_under_the_raised_thresholds_and_restores_them_even_when_it_fails(own_thresholds):
    """The listener the engine installs at import, around numba's own compile events."""
    def add_one(x):
        return x + 1

    def broken(x):
        return undefined_name + x  # noqa: F821 - fails to type

    probe = Probe()
    assert collector.install() is collector.install()  # the engine's import installed it, once
    with ExitStack() as stack:
        stack.enter_context(event.install_listener("numba:compile", probe))
        assert _kernel("nertz_env.engine.fake", add_one)(1) == 2
        assert probe.seen[0] == COMPILE_THRESHOLDS
        assert gc.get_threshold() == own_thresholds
        with pytest.raises(Exception, match="undefined_name"):
            _kernel("nertz_env.engine.fake", broken)(1)
        assert gc.get_threshold() == own_thresholds
