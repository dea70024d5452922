"""Views of arrays without reference counting, for the engine's hot loops.

Numba counts references to every array it hands around; in a loop that passes arrays to inlined
helpers (``legal_row``) the atomic counts cost more than the rules. ``raw(a)`` is the same memory
with no owner to count, so the compiler drops the counts. It only lives inside one compiled call,
while the caller keeps ``a`` alive.
"""

from __future__ import annotations

import ctypes

from numba import carray, config, njit, types
from numba.core import cgutils, ir_utils
from numba.extending import intrinsic, overload

from nertz_env.engine.state import State

# rules. ``raw(a)`` is the same memory with no owner to count, so the compiler drops the counts.
# It only lives inside one compiled call, while the caller keeps ``a`` alive.


@intrinsic
def _data(typingctx, arr):
    """The data pointer of an array."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, signature, args):
        return context.make_array(signature.args[0])(context, builder, args[0]).data

    return types.CPointer(arr.dtype)(arr), codegen


def raw(a):
    """``a`` itself in Python; inside compiled code a view of a C-contiguous ``a`` without
    reference counting (other layouts are returned as they are)."""
    return a


@overload(raw)
def _raw(a):
    if isinstance(a, types.Array) and a.layout == "C":
        return lambda a: carray(_data(a), a.shape)
    return lambda a: a


def _aliases_its_arguments(lhs, args, alias_map, arg_aliases):
    for arg in args:  # as numba.core.ir_utils._add_alias
        if arg.name in arg_aliases:
            arg_aliases.add(lhs)
        else:
            alias_map.setdefault(lhs, set()).add(arg.name)
            alias_map.setdefault(arg.name, set()).add(lhs)


# Numba's dead-code pass drops a write into an array that is never read afterwards unless it knows
# the array aliases one that outlives the function; tell it that a raw view (or a state of raw
# views) aliases its source, or writes through it would vanish.
ir_utils.alias_func_extensions[("raw", __name__)] = _aliases_its_arguments
ir_utils.alias_func_extensions[("raw_state", __name__)] = _aliases_its_arguments
ir_utils.alias_func_extensions[(State.__name__, State.__module__)] = _aliases_its_arguments


@njit(cache=True, inline="always")
def raw_state(s):
    """Every array of the state as a ``raw`` view (see ``raw``)."""
    return State(
        raw(s.nertz), raw(s.nertz_len), raw(s.work), raw(s.work_len), raw(s.stock), raw(s.stock_len),
        raw(s.waste), raw(s.waste_len), raw(s.stock_known), raw(s.foundations), raw(s.foundation_len),
        raw(s.foundation_suit),
        raw(s.n_foundations), raw(s.foundation_tops), raw(s.on_foundations), raw(s.called), raw(s.score), raw(s.tick),
        raw(s.since_progress), raw(s.rotations), raw(s.ended), raw(s.rng), raw(s.collision), raw(s.won_race),
        raw(s.illegal),
        raw(s.air),  # option move_ticks
        # episode="match" and partners (R8)
        raw(s.match_seats), raw(s.match_info),
        raw(s.nertz_owner), raw(s.work_owner),  # nertz_builds (R4.8)
        raw(s.stall_cycle),  # R5
    )  # fmt: skip


@intrinsic
def stack_int64(typingctx, size):
    """A pointer to ``size`` (a compile-time constant) int64 slots in the calling function's stack
    frame: scratch that costs no heap allocation. Valid only until that function returns."""
    if not isinstance(size, types.IntegerLiteral):
        return None
    slots = size.literal_value

    def codegen(context, builder, signature, args):
        return cgutils.alloca_once(builder, context.get_value_type(types.int64), size=slots)

    return types.CPointer(types.int64)(size), codegen


if config.DISABLE_JIT:  # pure Python (debugging): the scratch is a buffer of its own per size, kept

    _SCRATCH: dict[int, ctypes.Array] = {}

    def stack_int64(size):  # type: ignore[misc]  # noqa: F811 - the Python twin of the intrinsic above
        """A pointer to ``size`` int64 slots (one buffer per size, reused: Python runs one call at a time)."""
        if size not in _SCRATCH:
            _SCRATCH[size] = (ctypes.c_int64 * size)()
        return ctypes.cast(_SCRATCH[size], ctypes.POINTER(ctypes.c_int64))
