"""The first run says that it compiles, before the compile starts, and keeps saying so while it
runs; a function loaded from numba's cache, or one of another package, says nothing."""

from __future__ import annotations

import io
import os
import time
from types import SimpleNamespace

from numba import njit
from numba.core import event

from nertz_env.engine.cache import WAIT_EVENT
from nertz_env.engine.notice import FIRST_RUN_ESTIMATE, CompileNotice, install


class Log(io.StringIO):
    def isatty(self) -> bool:
        return False


def _kernel(module: str):
    def add_one(x):
        return x + 1

    add_one.__module__ = module
    return njit(add_one)


def listening(notice: CompileNotice):
    return event.install_listener("numba:compile", notice)


def test_a_real_compile_of_our_kernel_is_announced_before_it_starts_and_reported_when_done():
    log = Log()
    kernel = _kernel("nertz_env.engine.fake")
    with listening(CompileNotice(stream=log, interval=60)):
        assert kernel(1) == 2
        kernel(2)  # compiled already: nothing more
    lines = log.getvalue().splitlines()
    banner = f"compiling the rules engine (first run only, {FIRST_RUN_ESTIMATE}; cached afterwards)"
    assert lines[0] == f"nertz-env: {banner}"
    assert len(lines) == 2 and lines[1].startswith("nertz-env: compiled add_one in ")


def test_other_packages_kernels_are_not_announced():
    log = Log()
    with listening(CompileNotice(stream=log, interval=60)):
        _kernel("somebody_else")(1)
    assert log.getvalue() == ""


class FakeDispatcher:
    def __init__(self, module: str, name: str):
        self.py_func = SimpleNamespace(__module__=module, __name__=name)


def test_a_long_compile_prints_progress_every_interval_and_nested_compiles_are_part_of_it():
    log = Log()
    notice = CompileNotice(stream=log, interval=0.05)
    outer, inner = FakeDispatcher("nertz_env.engine.tick", "step"), FakeDispatcher("nertz_env.engine.core", "legal")
    with listening(notice):
        event.start_event("numba:compile", {"dispatcher": outer})
        assert "compiling the rules engine" in log.getvalue()  # said before any work
        event.start_event("numba:compile", {"dispatcher": inner})
        time.sleep(0.3)
        event.end_event("numba:compile", {"dispatcher": inner})
        event.end_event("numba:compile", {"dispatcher": outer})
        event.start_event("numba:compile", {"dispatcher": inner})
        event.end_event("numba:compile", {"dispatcher": inner})
    lines = log.getvalue().splitlines()
    progress = [line for line in lines if line.startswith("nertz-env: compiling step ... ")]
    assert len(progress) >= 3  # 0.3 s at one line per 0.05 s, allowing for a slow machine
    assert not any("legal ..." in line for line in lines)  # the nested compile is part of step's
    done = [line for line in lines if line.startswith("nertz-env: compiled ")]
    assert [d.split()[2] for d in done] == ["step", "legal"]
    assert lines.count(lines[0]) == 1 and "first run only" in lines[0]  # the banner once
    time.sleep(0.15)
    assert log.getvalue().splitlines() == lines  # no progress after the compiles ended


def test_a_failed_compile_is_not_reported_as_compiled():
    log = Log()
    d = FakeDispatcher("nertz_env.engine.tick", "step")
    with listening(CompileNotice(stream=log, interval=60)):
        event.start_event("numba:compile", {"dispatcher": d})
        event.end_event("numba:compile", {"dispatcher": d}, exc_details=(TypeError, TypeError("x"), None))
    assert "compiled step" not in log.getvalue()


class Terminal(Log):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_progress_rewrites_one_line_and_clears_a_progress_bar():
    screen = Terminal()
    d = FakeDispatcher("nertz_env.engine.tick", "step")
    with listening(CompileNotice(stream=screen, interval=0.05)):
        event.start_event("numba:compile", {"dispatcher": d})
        time.sleep(0.2)
        event.end_event("numba:compile", {"dispatcher": d})
    text = screen.getvalue()
    clear = "\r\x1b[K"
    assert text.startswith(clear + "nertz-env: compiling the rules engine")
    lines = text.split("\n")
    assert len(lines) == 3 and lines[2] == ""  # the banner, then one line that the progress kept rewriting
    assert lines[1].count(clear + "nertz-env: compiling step ... ") >= 2
    assert lines[1].rsplit(clear, 1)[1].startswith("nertz-env: compiled step in ")


def test_waiting_for_another_process_says_so_and_what_it_loaded():
    """``cache.compile_once``: while another process compiles a kernel this one needs, the notice
    says it waits (with progress), then that it loaded the other process's result."""
    log = Log()
    notice = CompileNotice(stream=log, interval=0.05)
    d = FakeDispatcher("nertz_env.engine.tick", "step")
    with event.install_listener(WAIT_EVENT, notice):
        event.start_event(WAIT_EVENT, {"dispatcher": d})
        time.sleep(0.2)
        event.end_event(WAIT_EVENT, {"dispatcher": d})
    lines = log.getvalue().splitlines()
    assert "compiling the rules engine" in lines[0]
    assert sum(line.startswith("nertz-env: waiting for step, compiled by another process ... ") for line in lines) >= 2
    assert lines[-1].startswith("nertz-env: loaded step, compiled by another process, after 0.")


def test_the_compile_log_has_a_line_per_kernel_compiled_and_none_for_a_wait(tmp_path):
    path = tmp_path / "compiles.log"
    notice = CompileNotice(stream=Log(), interval=60, quiet=True, log=str(path))
    kernel = _kernel("nertz_env.engine.fake")
    with listening(notice), event.install_listener(WAIT_EVENT, notice):
        kernel(1)
        kernel(2)  # compiled already: no line
        d = FakeDispatcher("nertz_env.engine.tick", "step")
        event.start_event(WAIT_EVENT, {"dispatcher": d})
        event.end_event(WAIT_EVENT, {"dispatcher": d})
    fields = [line.split("\t") for line in path.read_text().splitlines()]
    assert [f[:2] for f in fields] == [[str(os.getpid()), "nertz_env.engine.fake.add_one"]]
    pid, name, signature, folder, seconds = fields[0]
    assert len(signature) == 12 and folder == "" and float(seconds) >= 0  # not cached: no folder
    assert notice.stream.getvalue() == ""  # quiet: the log alone


def test_install_listens_for_the_log_alone_and_not_when_silenced_without_it(monkeypatch):
    from nertz_env.engine import notice

    monkeypatch.setattr(notice, "_installed", None)
    monkeypatch.setenv("NERTZ_COMPILE_NOTICE", "0")
    monkeypatch.delenv("NERTZ_COMPILE_LOG", raising=False)
    assert install() is None
    monkeypatch.setenv("NERTZ_COMPILE_LOG", "compiles.log")
    listener = install()
    try:
        assert listener is not None and listener.quiet and listener.log == "compiles.log"
    finally:
        event.unregister("numba:compile", listener)
        event.unregister(WAIT_EVENT, listener)
