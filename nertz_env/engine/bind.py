"""A compiled kernel called without numba's per-call dispatch, for a caller that passes the same
arrays on every call (``Game``: one table and its buffers).

On every call numba's dispatcher types each argument to pick the compiled version. For the 30
arrays of the table that costs about as much as the tick itself (some 3 of the 6 microseconds of a
``play_game_tick`` call for one game). ``Bound`` picks the version for the exact types of its
arguments once (compiling it, or loading it from the cache, as a first call would) and then calls
it directly. It holds the arguments itself, so the compiled code only ever sees values of the
types it was compiled for: the caller changes the contents of the arrays between calls, and an
argument itself only through ``set``, which refuses a value of another type.

Even without the dispatcher, each call still unboxes every array it passes. ``HeldTick``, the tick
``Game`` plays, goes one step further for ``play_game_tick``: compiled code holds its arguments in
one object (a numba StructRef), and a call unboxes that object alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from numba import njit, typeof
from numba.core import types
from numba.experimental import structref

from nertz_env.engine.compose import play_tick
from nertz_env.engine.views import raw, raw_state


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


# -- Game's tick: its arguments held by one compiled object ------------------------------------
# ``Bound`` saves the dispatcher's typing, but numba still unboxes every array on every call: the
# 31 of the table and 9 more, about 1.4 of the 3.5 microseconds of a tick that waits. A StructRef
# is unboxed as one pointer, so ``HeldTick`` keeps ``play_game_tick``'s arguments in one.


@structref.register
class _TickArgsType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class _TickArgs(structref.StructRefProxy):
    """``play_game_tick``'s arguments, held by compiled code (built by ``_hold``)."""


_TICK_FIELDS = ("s", "b", "actions", "cfg", "table", "speed", "plan", "penalty", "flags", "obs", "masks",
                "reward_out", "prev_score")  # fmt: skip
structref.define_proxy(_TickArgs, _TickArgsType, list(_TICK_FIELDS))


@njit(cache=True)
def _hold(s, b, actions, cfg, table, speed, plan, penalty, flags, obs, masks, reward_out, prev_score):
    return _TickArgs(s, b, actions, cfg, table, speed, plan, penalty, flags, obs, masks, reward_out, prev_score)


@njit(cache=True)
def _play_held(r):
    """``play_game_tick(*args)`` of the held arguments ``r``."""
    play_tick(raw_state(r.s), r.b, r.actions, r.cfg, r.table, r.speed, r.plan, r.penalty, r.flags, raw(r.obs),
              raw(r.masks), raw(r.reward_out), raw(r.prev_score))  # fmt: skip


def _play_plain(args: list[Any]) -> None:
    """The held tick with numba's JIT disabled: the composed tick called as plain Python."""
    play_tick(*args)


class HeldTick:
    """``play_game_tick(*args)``, called as ``held()``: ``Game``'s tick on its own table and buffers.

    Like ``Bound`` it holds the arguments and compiles (or loads) the version for their exact types
    once; unlike it, compiled code holds them too, so a call unboxes one object. ``set`` replaces
    an argument by a value of the same type (and rebuilds the held copy)."""

    _call: Callable[[Any], Any]  # the compiled tick, or the plain one under NUMBA_DISABLE_JIT

    def __init__(self, args: Sequence[Any]):
        if len(args) != len(_TICK_FIELDS):
            raise TypeError(f"play_game_tick takes {len(_TICK_FIELDS)} arguments ({', '.join(_TICK_FIELDS)}), "
                            f"got {len(args)}")  # fmt: skip
        self.args = list(args)
        if not hasattr(_play_held, "compile"):  # NUMBA_DISABLE_JIT: plain functions, nothing to hold
            self._types: list[Any] | None = None
            self._held, self._call = self.args, _play_plain
            return
        self._types = [typeof(a) for a in self.args]
        self._hold()

    def _hold(self) -> None:
        self._held = _hold(*self.args)
        self._call = _play_held.compile((typeof(self._held),))

    def __call__(self) -> None:
        self._call(self._held)

    def set(self, index: int, value: Any) -> None:
        """Replace argument ``index`` by ``value``, which must have the compiled type."""
        if self._types is not None:
            got = typeof(value)
            if got != self._types[index]:
                raise TypeError(f"argument {index} ({_TICK_FIELDS[index]}) was bound as {self._types[index]}, "
                                f"got {got}")  # fmt: skip
        self.args[index] = value
        if self._types is not None:
            self._hold()
