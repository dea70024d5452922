"""Numba's on-disk cache, made always right for code that inlines other files.

Numba stamps a cached function with its own file only (modification time and size), but the
engine's kernels carry compiled copies of functions from every engine file, and the agents'
kernels carry copies of the engine's rules. ``stamp_compiled`` adds a fingerprint of the sources a
module's kernels may inline (the whole engine, plus any folders named) to each of their cache
stamps, so that an edit to any of them recompiles every kernel that could hold a stale copy. It
also makes each kernel compile once across processes (``compile_once``): a process about to compile
a kernel takes the kernel's lock file in the cache folder, and a process that finds it taken waits,
then loads what the other compiled (test workers, a compile started in the background).

``ensure_cache_dir`` keeps a read-only install importable: numba caches next to the source when it
can write there, else under the user's cache folder; when neither is writable the cache goes to a
private folder under the system's temporary directory (or, failing that, caching is off).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from numba.core import event
from numba.core.compiler_lock import global_compiler_lock

try:
    import fcntl
except ImportError:  # not POSIX: every process compiles for itself, as numba does
    fcntl = None  # type: ignore[assignment]

ENGINE_DIR = Path(__file__).resolve().parent


def fingerprint(folders: Iterable[Path] = ()) -> str:
    """A sha256 over the Python sources of the engine and of ``folders``."""
    digest = hashlib.sha256()
    for folder in (ENGINE_DIR, *folders):
        for path in sorted(Path(folder).glob("*.py")):
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def stamp_compiled(namespace: Mapping[str, Any], *folders: Path) -> int:
    """Stamp the cache entries of every numba dispatcher defined in the module ``namespace`` with
    the fingerprint of the engine and ``folders``, and make each compile once across processes
    (``compile_once``); returns how many were stamped. Call it at the end of the module, before
    anything compiles."""
    module = namespace.get("__name__")
    stamp = fingerprint(folders)
    count = 0
    for value in list(namespace.values()):
        if getattr(getattr(value, "py_func", None), "__module__", None) != module:
            continue
        cache_file = getattr(getattr(value, "_cache", None), "_cache_file", None)
        if cache_file is not None and hasattr(cache_file, "_source_stamp"):
            cache_file._source_stamp = (cache_file._source_stamp, stamp)
            compile_once(value)
            count += 1
    return count


# Fired while a process waits for another one that compiles the same kernel (``notice`` says so).
WAIT_EVENT = "nertz_env:compile_wait"

# The modules whose compiles the engine's listeners (``notice``, ``collector``) act on.
OUR_MODULES = ("nertz_env.",)


def dispatcher_name(dispatcher: Any) -> tuple[str, str]:
    """The module and name of the Python function a numba dispatcher compiles."""
    func = getattr(dispatcher, "py_func", None)
    return getattr(func, "__module__", "") or "", getattr(func, "__name__", "?")


_held: dict[str, int] = {}  # lock files this process holds, with their nesting depth


def compile_once(dispatcher: Any) -> bool:
    """Make ``dispatcher`` compile under its lock file (``<cache entry>.lock`` in the cache
    folder), so that of several processes that need the same kernel one compiles it and the others
    load it from the cache once it is saved. A kernel's callees take their own locks inside it;
    the call graph has no cycles, so neither do the waits. Returns whether the lock is in place
    (not on systems without ``fcntl``, nor for a dispatcher that does not cache)."""
    cache: Any = getattr(dispatcher, "_cache", None)
    cache_file = getattr(cache, "_cache_file", None)
    if fcntl is None or cache_file is None or getattr(dispatcher, "_nertz_compile_once", False):
        return False
    lock_path = os.path.join(cache_file._cache_path, cache_file._index_name + ".lock")
    compile_unlocked: Callable[[Any], Any] = dispatcher.compile

    def compile(sig: Any) -> Any:
        # numba's own lock first, so that a thread never waits on a file another thread holds
        with global_compiler_lock, _exclusive(lock_path, dispatcher, cache._impl.locator.ensure_cache_path):
            return compile_unlocked(sig)

    dispatcher.compile = compile
    dispatcher._nertz_compile_once = True
    return True


@contextlib.contextmanager
def _exclusive(lock_path: str, dispatcher: Any, make_folder: Callable[[], None]) -> Iterator[None]:
    """Hold ``lock_path`` (re-entrant within the process); fire ``WAIT_EVENT`` while another
    process holds it. Where no lock file can be made the compile goes ahead unlocked."""
    if lock_path in _held:
        _held[lock_path] += 1
        try:
            yield
        finally:
            _held[lock_path] -= 1
        return
    try:
        make_folder()
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            with event.trigger_event(WAIT_EVENT, data={"dispatcher": dispatcher}):
                fcntl.flock(fd, fcntl.LOCK_EX)
        _held[lock_path] = 1
        try:
            yield
        finally:
            del _held[lock_path]
    finally:
        os.close(fd)  # releases the lock


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
        return True
    except OSError:
        return False


def ensure_cache_dir() -> str | None:
    """Make sure numba has somewhere to cache, before any engine function is compiled: the source
    folder when writable, else numba's user-wide cache folder, else ``NUMBA_CACHE_DIR`` set to a
    private temporary folder. Returns the folder chosen when it had to set one."""
    import numba

    if numba.config.CACHE_DIR or _writable(ENGINE_DIR / "__pycache__"):
        return None
    home_cache = Path(os.environ.get("XDG_CACHE_HOME") or Path("~/.cache").expanduser()) / "numba"
    if _writable(home_cache):
        return None
    fallback = Path(tempfile.gettempdir()) / f"nertz_env-numba-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
    if not _writable(fallback):
        return None
    numba.config.CACHE_DIR = str(fallback)
    os.environ["NUMBA_CACHE_DIR"] = str(fallback)
    return str(fallback)


def python_of(func):
    """The Python function behind a compiled one (``dispatcher.py_func``): ``func`` itself under
    ``NUMBA_DISABLE_JIT=1``, where ``njit`` returns the function it is given."""
    return getattr(func, "py_func", func)


def twin(func: Callable[..., Any], suffix: str, **calls: Any) -> types.FunctionType:
    """A copy of ``func`` named ``func.__name__ + suffix``, so that a second compilation of it (other
    options: threaded, or not inlined) has a cache entry of its own: numba names a cache entry after
    the Python function, not its options. ``calls`` replace the module's functions of those names
    in the copy's globals (another compilation of a function it calls)."""
    scope = {**func.__globals__, **calls} if calls else func.__globals__
    copy = types.FunctionType(func.__code__, scope, func.__name__ + suffix, func.__defaults__)
    copy.__qualname__ = func.__qualname__ + suffix
    copy.__doc__ = func.__doc__
    return copy
