"""The compiled-code cache is always right: an edit to any engine source reaches every kernel that
inlines it (no stale code, no manual step), the serial and threaded kernels cache apart, and an
install whose folders are not writable still imports and runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from nertz_env import engine

ROOT = Path(__file__).resolve().parents[1]

# Plays a few ticks through the parallel env and the vector env and reports whether any mask ever
# allowed a card onto a non-empty work pile (R4.3 builds).
PROBE = textwrap.dedent(
    """
    import json, numpy as np
    from nertz_env import nertz_v0
    from nertz_env.vector import NertzVectorEnv
    env = nertz_v0.parallel_env(num_players=2)
    names = env.unwrapped.action_names
    builds = [a for a, n in enumerate(names) if ">work" in n]
    obs, _ = env.reset(seed=0)
    parallel_builds = 0
    for _ in range(60):
        for agent in env.agents:
            pile = {a: int(n.split(">work")[1].split(":")[0]) for a, n in enumerate(names) if ">work" in n}
            snap = env.unwrapped.snapshot()["players"][int(agent[-1])]["work"]
            parallel_builds += sum(1 for a in builds if obs[agent]["action_mask"][a] and snap[pile[a]])
        obs, *_ = env.step({a: env.action_space(a).sample(obs[a]["action_mask"]) for a in env.agents})
        if not env.agents:
            break
    venv = NertzVectorEnv(8, num_players=2, seed=0)
    venv.reset()
    vector_builds = 0
    for _ in range(60):
        work_len = venv.state.work_len.copy()
        masks = venv.action_masks
        for a in builds:
            dst = int(names[a].split(">work")[1].split(":")[0])
            vector_builds += int((masks[:, :, a].astype(bool) & (work_len[:, :, dst] > 0)).sum())
        venv.step(venv.sample_actions())
    print(json.dumps({"parallel": parallel_builds, "vector": vector_builds}))
    """
)


def _pythonpath(*first: Path) -> str:
    """``first``, then the ``PYTHONPATH`` the tests run with (where the dependencies may live)."""
    return os.pathsep.join([*map(str, first), *filter(None, [os.environ.get("PYTHONPATH")])])


def _run(cwd: Path, code: str, env: dict | None = None) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=900,
        env={**os.environ, "PYTHONPATH": _pythonpath(cwd), **(env or {})},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


@pytest.mark.slow
def test_an_engine_edit_reaches_every_kernel_with_a_warm_cache(tmp_path):
    """Copy the package with its compiled cache (numba's files in ``__pycache__``, with the
    sources' times kept: warm from the tests before, else warmed by the first probe), then edit
    ``builds_on_ranked`` (R4.3, which ``builds_on`` calls) in the copy's ``core.py``: the parallel
    env and the vector env, whose kernels inline it from other files, both follow the edit."""
    shutil.copytree(ROOT / "nertz_env", tmp_path / "nertz_env", ignore=shutil.ignore_patterns("*.pyc"))
    before = json.loads(_run(tmp_path, PROBE))
    assert before["parallel"] > 0 and before["vector"] > 0  # builds happen under the real rule
    core = tmp_path / "nertz_env" / "engine" / "core.py"
    text = core.read_text()
    rule = "return (card_rank == onto_rank - 1) & (card_red != onto_red)"
    assert rule in text
    core.write_text(text.replace(rule, "return False  # edited: no builds"))
    after = json.loads(_run(tmp_path, PROBE))
    assert after == {"parallel": 0, "vector": 0}, "a kernel linked stale compiled code"


def test_serial_and_threaded_kernels_cache_apart():
    pairs = [
        (engine.step_batch, engine.step_batch_threaded),
        (engine.deal_batch, engine.deal_batch_threaded),
        (engine.sample_legal_rows, engine.sample_legal_rows_threaded),
    ]
    for serial, threaded in pairs:
        assert not serial.targetoptions.get("parallel") and threaded.targetoptions.get("parallel")
        assert serial._cache._cache_file._index_name != threaded._cache._cache_file._index_name


def test_a_twin_compiles_under_its_own_name():
    """``cache.twin``: the landing's own copy of the tick's resolution (not inlined) has a cache
    entry of its own, apart from the inlined original, and runs the same code."""
    from nertz_env.engine import tick
    from nertz_env.engine.cache import twin

    assert tick._resolve.targetoptions.get("inline") == "always"
    assert tick._resolve_landing.targetoptions.get("inline", "never") == "never"
    assert tick._resolve_landing.py_func.__code__ is tick._resolve.py_func.__code__
    assert tick._resolve_landing.py_func.__qualname__ == "_resolve_landing"
    assert tick._resolve_landing._cache._cache_file._index_name != tick._resolve._cache._cache_file._index_name
    copy = twin(tick._resolve.py_func, "_x")
    assert (copy.__name__, copy.__doc__) == ("_resolve_x", tick._resolve.py_func.__doc__)


def test_every_kernel_is_stamped_with_the_engine_fingerprint():
    from nertz_env.agents import _search
    from nertz_env.engine import cache, tick

    stamp = tick.step_span._cache._cache_file._source_stamp
    assert isinstance(stamp, tuple) and stamp[1] == cache.fingerprint()
    agents_stamp = _search.score_moves._cache._cache_file._source_stamp
    assert agents_stamp[1] == cache.fingerprint([Path(_search.__file__).parent])


def test_every_engine_kernel_is_stamped_and_compiles_once():
    """Every cached dispatcher of every engine module carries the fingerprint and its lock
    (``engine.stamp_compiled``): a module left out would keep stale copies and compile in each process."""
    import importlib
    import pkgutil

    from nertz_env.engine import cache

    kernels = 0
    for info in pkgutil.iter_modules(engine.__path__):
        module = importlib.import_module(f"nertz_env.engine.{info.name}")
        for name, value in vars(module).items():
            cache_file = getattr(getattr(value, "_cache", None), "_cache_file", None)
            if cache_file is None or value.py_func.__module__ != module.__name__:
                continue
            kernels += 1
            assert cache_file._source_stamp[1] == cache.fingerprint(), f"{info.name}.{name} is not stamped"
            assert getattr(value, "_nertz_compile_once", False), f"{info.name}.{name} has no compile lock"
    assert kernels > 40


def test_a_read_only_install_still_imports_and_runs(tmp_path):
    """Neither the package folder nor the user's cache folder can be written (here: a file stands
    where each folder would be made): the cache falls back to a private temporary folder."""
    shutil.copytree(ROOT / "nertz_env", tmp_path / "pkg" / "nertz_env", ignore=shutil.ignore_patterns("__pycache__"))
    for folder in (tmp_path / "pkg" / "nertz_env").rglob("*"):
        if folder.is_dir():
            (folder / "__pycache__").write_text("not a folder")
    (tmp_path / "home").write_text("not a folder")
    temp = tmp_path / "tmp"
    temp.mkdir()
    code = "from nertz_env import engine; import numba; print(numba.config.CACHE_DIR); "
    code += "print(engine.r7_score(3, 2, 1, 2, 9))"
    env = {"XDG_CACHE_HOME": str(tmp_path / "home" / "cache"), "HOME": str(tmp_path / "home"), "TMPDIR": str(temp)}
    clean = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path / "pkg", capture_output=True, text=True, timeout=600,
        env={**clean, "PYTHONPATH": _pythonpath(tmp_path / "pkg"), **env},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.splitlines() == [str(temp / f"nertz_env-numba-{os.getuid()}"), str(3 - 2 * 2 + 9)]
    assert any(temp.rglob("*.nbi")), "nothing was cached in the fallback folder"


# A kernel outside the engine, stamped like the agents' kernels; the script reports whether it
# compiled the kernel or loaded it from the cache.
KERNEL = """
from numba import njit
from nertz_env.engine import stamp_compiled


@njit(cache=True)
def add_one(x):
    return x + 1


stamp_compiled(globals())
"""
USE_KERNEL = textwrap.dedent(
    """
    import json, sys
    import kernel_module
    print("imported", flush=True)
    assert kernel_module.add_one(1) == 2
    misses, hits = sum(kernel_module.add_one._cache_misses.values()), sum(kernel_module.add_one._cache_hits.values())
    print(json.dumps({"compiled": misses, "loaded": hits}))
    """
)


def test_of_two_processes_that_need_a_kernel_one_compiles_it_and_the_other_loads_it(tmp_path):
    """``cache.compile_once``: while the kernel's lock is held (here by the test, as by a process
    compiling it) both processes wait; once it is free one compiles and the other, which waited
    for it, loads the result from the cache."""
    import fcntl

    (tmp_path / "kernel_module.py").write_text(KERNEL)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(PYTHONPATH=_pythonpath(tmp_path, ROOT), NERTZ_COMPILE_NOTICE="0", NERTZ_COMPILE_JOBS="1")
    (tmp_path / "__pycache__").mkdir()
    code = compile(KERNEL, "kernel_module.py", "exec")
    line = next(c.co_firstlineno for c in code.co_consts if getattr(c, "co_name", "") == "add_one")
    index = f"kernel_module.add_one-{line}.py{sys.version_info[0]}{sys.version_info[1]}.nbi"  # numba's name
    lock = os.open(tmp_path / "__pycache__" / f"{index}.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(lock, fcntl.LOCK_EX)
    procs = [
        subprocess.Popen([sys.executable, "-c", USE_KERNEL], cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    try:
        for proc in procs:
            assert proc.stdout.readline().strip() == "imported"
        time.sleep(1.0)
        assert [proc.poll() for proc in procs] == [None, None], "a process compiled while the lock was held"
    finally:
        os.close(lock)  # the lock is free
    reports = [json.loads(proc.communicate(timeout=300)[0]) for proc in procs]
    assert sorted(r["compiled"] for r in reports) == [0, 1]
    assert sorted(r["loaded"] for r in reports) == [0, 1]


def test_the_number_of_compiling_processes_is_checked(monkeypatch):
    from nertz_env.engine import warm

    for bad in ("two", "0", "-2", "1.5"):
        monkeypatch.setenv("NERTZ_COMPILE_JOBS", bad)
        with pytest.raises(ValueError, match=f"NERTZ_COMPILE_JOBS must be a whole number of processes .*'{bad}'"):
            warm.jobs()
    monkeypatch.setenv("NERTZ_COMPILE_JOBS", " 3 ")
    assert warm.jobs() == 3
    monkeypatch.setenv("NERTZ_COMPILE_JOBS", "1")
    assert warm.jobs() == 1
    monkeypatch.delenv("NERTZ_COMPILE_JOBS")
    assert warm.jobs() == (1 + len(warm.JOBS) if (os.cpu_count() or 1) > 1 else 1)


FIRST_STEP = (
    "from nertz_env import nertz_v0; env = nertz_v0.parallel_env(); env.reset(seed=0); "
    "env.step({a: 0 for a in env.agents})"
)


@pytest.mark.slow
def test_the_background_jobs_compile_what_the_first_step_needs(tmp_path):
    """``engine.warm``'s jobs compile from signatures; a first step of the parallel env after them
    (in an otherwise empty cache, with no background jobs of its own) compiles the deal, the
    observations and masks and its own kernel, and loads the rest from what the jobs compiled:
    their signatures are the ones the engine calls."""
    log = tmp_path / "compiles.log"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "NERTZ_COMPILE_LOG": str(log),
           "NERTZ_COMPILE_JOBS": "1", "NERTZ_COMPILE_NOTICE": "0"}  # fmt: skip
    for args in (["-m", "nertz_env.engine.warm", *warm_jobs()], ["-c", FIRST_STEP]):
        result = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
        assert result.returncode == 0, result.stderr[-3000:]
    by_process: dict[str, list[str]] = {}
    for line in log.read_text().splitlines():
        pid, kernel, *_ = line.split("\t")
        by_process.setdefault(pid, []).append(kernel)
    # numba compiles an overload's implementation (``views.raw``'s lambda) in every process that
    # types a call of it, and never caches it: not a kernel either process could share
    jobs, first_step = ({k for k in kernels if not k.endswith("<lambda>")} for kernels in by_process.values())
    assert {"nertz_env.engine.tick.step_span", "nertz_env.engine.match.match_step",
            "nertz_env.engine.compose._r8_rewards", "nertz_env.engine.tick._land_all"} <= set(jobs)  # fmt: skip
    assert "nertz_env.engine.compose.deal_game" in first_step
    assert not set(jobs) & set(first_step), "the first step compiled again what the jobs had compiled"


def warm_jobs() -> list[str]:
    from nertz_env.engine import warm

    return list(warm.JOBS)


def test_a_background_compile_ends_when_its_parent_is_killed(tmp_path):
    """A parent killed outright runs no exit handler to stop its background compile
    (``engine.warm``'s jobs, ``python -m nertz_env.interim``): each ends itself once its parent is
    gone (``warm.exit_with_parent``), rather than compile on for minutes as an orphan."""
    child = "from nertz_env.engine import warm; import time; warm.exit_with_parent(0.1); time.sleep(120)"
    parent = ("import subprocess, sys, os, signal; "
              f"env = {{**os.environ, {engine.warm.PARENT!r}: str(os.getpid())}}; "
              f"p = subprocess.Popen([sys.executable, '-c', {child!r}], env=env, stdout=subprocess.DEVNULL); "
              "print(p.pid, flush=True); import time; time.sleep(5); os.kill(os.getpid(), signal.SIGKILL)")  # fmt: skip
    res = subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True, timeout=60)
    pid = int(res.stdout.split()[0])
    status = Path(f"/proc/{pid}/status")
    deadline = time.monotonic() + 30  # the parent lives 5 s (the child watches it by then), then 0.1 s
    while time.monotonic() < deadline and status.exists() and "State:\tZ" not in status.read_text():
        time.sleep(0.2)
    gone = not status.exists() or "State:\tZ" in status.read_text()
    if not gone:
        os.kill(pid, 9)
    assert gone, "the orphaned background process was still running 30 s after its parent was killed"
