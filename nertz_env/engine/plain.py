"""The engine as plain Python, for the seconds a first start would otherwise spend compiling.

``python_engine()`` imports a second copy of this package with numba's JIT disabled
(``numba.config.DISABLE_JIT``, as ``NUMBA_DISABLE_JIT=1`` does for a whole process): every kernel
is then the Python function itself, and the copy plays the same games as the compiled engine, byte
for byte (``tests/test_pure_python.py``), at about 1/150 of its speed, and compiles nothing. Both
work on the same numpy arrays (``State``, the buffers), so a game can go from one to the other
between two ticks. ``nertz_env.interim`` plays a game with it while the kernels compile in a
background process.

``is_cached(kernel, args)`` says whether ``kernel(*args)`` would run without compiling: the version
for those argument types is loaded already or is in numba's on-disk cache (it loads it, as a first
call would); ``tick_is_cached(args)`` says it of a ``HeldTick`` of ``args`` (its two kernels).
"""

from __future__ import annotations

import importlib
import sys
import threading
import types
from collections.abc import Sequence
from typing import Any

import numba
from numba import typeof
from numba.core.compiler_lock import global_compiler_lock

from nertz_env.engine.bind import _hold, _play_held

_PACKAGE = __name__.rpartition(".")[0]
_lock = threading.Lock()
_python: types.ModuleType | None = None


def _ours(name: str) -> bool:
    return name == _PACKAGE or name.startswith(_PACKAGE + ".")


def python_engine() -> types.ModuleType:
    """The engine package imported again with numba's JIT off (once per process): the same names,
    each kernel a plain Python function. The compiled package stays what ``import`` gives."""
    global _python
    with _lock:
        if _python is None:
            _python = _import_plain()
        return _python


def _import_plain() -> types.ModuleType:
    compiled = {name: module for name, module in sys.modules.items() if _ours(name)}
    parent = sys.modules[_PACKAGE.rpartition(".")[0]]
    was = numba.config.DISABLE_JIT
    for name in compiled:
        del sys.modules[name]
    try:
        numba.config.DISABLE_JIT = True  # read by njit as each function is decorated, and by this
        return importlib.import_module(_PACKAGE)  # package's modules as they are imported
    finally:
        numba.config.DISABLE_JIT = was
        for name in [name for name in sys.modules if _ours(name)]:
            del sys.modules[name]
        sys.modules.update(compiled)
        setattr(parent, _PACKAGE.rpartition(".")[2], compiled[_PACKAGE])


def _loaded(dispatcher: Any, argtypes: tuple[Any, ...]) -> bool:
    """Whether ``dispatcher`` has a version for ``argtypes``, or loads one from numba's cache and
    keeps it (what ``Dispatcher.compile`` does before it compiles)."""
    with global_compiler_lock:
        if argtypes in dispatcher.overloads:
            return True
        cres = dispatcher._cache.load_overload(argtypes, dispatcher.targetctx)
        if cres is None:
            return False
        dispatcher.targetctx.insert_user_function(cres.entry_point, cres.fndesc, [cres.library])
        dispatcher.add_overload(cres)
        return True


def is_cached(kernel: Any, args: Sequence[Any]) -> bool:
    """Whether ``kernel(*args)`` runs without compiling (always under numba's JIT off)."""
    if not hasattr(kernel, "compile"):
        return True
    try:
        return _loaded(kernel, tuple(typeof(a) for a in args))
    except AttributeError:  # another numba's internals: say cached, and the call compiles as before
        return True


def tick_is_cached(args: Sequence[Any]) -> bool:
    """Whether ``HeldTick(args)`` starts without compiling (always under numba's JIT off)."""
    if not hasattr(_hold, "compile"):
        return True
    return is_cached(_hold, args) and is_cached(_play_held, (_hold(*args),))
