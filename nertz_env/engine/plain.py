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
from collections.abc import Callable, Sequence
from typing import Any

import numba
from numba import typeof
from numba.core.compiler_lock import global_compiler_lock

from nertz_env.engine.bind import _hold, _play_held

_PACKAGE = __name__.rpartition(".")[0]
_lock = threading.RLock()
_modules: dict[str, types.ModuleType] = {}  # every plain-Python copy by name: the engine's, then others'


def _ours(name: str) -> bool:
    return name == _PACKAGE or name.startswith(_PACKAGE + ".")


def python_engine() -> types.ModuleType:
    """The engine package imported again with numba's JIT off (once per process): the same names,
    each kernel a plain Python function. The compiled package stays what ``import`` gives."""
    with _lock:
        if _PACKAGE not in _modules:
            _import_again([_PACKAGE], _ours)
        return _modules[_PACKAGE]


def python_modules(names: Sequence[str]) -> list[types.ModuleType]:
    """The modules ``names`` (above the engine: an agent's kernels) imported again with numba's JIT
    off, their imports of the engine answered by ``python_engine()``'s modules (once per process).
    Name together modules that import one another, so that each copy imports the others' copies."""
    python_engine()
    with _lock:
        missing = [name for name in names if name not in _modules]
        if missing:
            _import_again(missing, lambda name: name in missing)
        return [_modules[name] for name in names]


def _import_again(names: Sequence[str], again: Callable[[str], bool]) -> None:
    """Import ``names`` with the JIT off, every module ``again(name)`` (and the plain copies made
    before) taken from a fresh import or those copies; ``sys.modules`` and the packages' attributes
    are put back as they were. The copies made are kept in ``_modules``."""
    swapped = {name for name in sys.modules if again(name)} | set(_modules) | set(names)
    before = {name: sys.modules[name] for name in swapped if name in sys.modules}
    attributes = {name: _attribute(name) for name in swapped}
    was = numba.config.DISABLE_JIT
    for name in swapped:
        sys.modules.pop(name, None)
    sys.modules.update(_modules)
    try:
        numba.config.DISABLE_JIT = True  # read by njit as each function is decorated, and by the
        for name in names:  # engine's modules as they are imported
            importlib.import_module(name)
        _modules.update({name: module for name, module in sys.modules.items() if again(name) and name not in _modules})
    finally:
        numba.config.DISABLE_JIT = was
        for name in [name for name in sys.modules if again(name) or name in _modules]:
            del sys.modules[name]
        sys.modules.update(before)
        for name, value in attributes.items():
            parent, _, child = name.rpartition(".")
            if parent in sys.modules:
                if value is None:
                    sys.modules[parent].__dict__.pop(child, None)
                else:
                    setattr(sys.modules[parent], child, value)


def _attribute(name: str) -> Any:
    parent, _, child = name.rpartition(".")
    return getattr(sys.modules.get(parent), child, None)


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
