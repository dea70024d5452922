"""A compiled kernel called without numba's per-call dispatch, for a caller that passes the same
arrays on every call (``Game``: one table and its buffers).

On every call numba's dispatcher types each argument to pick the compiled version. For the 30
arrays of the table that costs about as much as the tick itself (some 3 of the 6 microseconds of a
``play_game_tick`` call for one game). ``Bound`` picks the version for the exact types of its
arguments once (compiling it, or loading it from the cache, as a first call would) and then calls
it directly. It holds the arguments itself, so the compiled code only ever sees values of the
types it was compiled for: the caller changes the contents of the arrays between calls, and an
argument itself only through ``set``, which refuses a value of another type.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


class Bound:
    """``kernel(*args)``, called as ``bound()``."""

    def __init__(self, kernel: Any, args: Sequence[Any]):
        self.args = list(args)
        self._kernel = kernel
        typeof = getattr(kernel, "typeof_pyval", None)
        if typeof is None:  # NUMBA_DISABLE_JIT: a plain function, nothing to pick
            self._types: list[Any] | None = None
            self._call: Callable[..., Any] = kernel
            return
        self._types = [typeof(a) for a in self.args]
        self._call = kernel.compile(tuple(self._types))

    def __call__(self) -> Any:
        return self._call(*self.args)

    def set(self, index: int, value: Any) -> None:
        """Replace argument ``index`` by ``value``, which must have the compiled type."""
        if self._types is not None:
            got = self._kernel.typeof_pyval(value)
            if got != self._types[index]:
                raise TypeError(f"argument {index} was bound as {self._types[index]}, got {got}")
        self.args[index] = value
