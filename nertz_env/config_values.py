"""The checks of single option values that ``nertz_env.config.NertzConfig`` runs (R2 to R8).

Each raises a ``ValueError`` naming the option, the value and what is accepted; ``NertzConfig``
combines them with the checks that read several options at once.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NoReturn, TypeGuard

import numpy as np

MAX_SPEED_RATIO = 1e6  # speed weights lie in [1 / ratio, ratio]
# The kinds of move that ``move_ticks`` times, in the order of the action kinds of
# ``nertz_env.actions`` after WAIT (DRAW, CALL, TO_FOUNDATION, TO_WORK, UNDER, TO_NERTZ).
MOVE_KINDS = ("draw", "call", "foundation", "work", "under", "nertz")


def fail(option: str, value: Any, accepted: str) -> NoReturn:
    raise ValueError(f"invalid {option}={value!r}: accepted {accepted}")


def is_int(value: Any) -> TypeGuard[int | np.integer]:
    """A plain or numpy integer, not a bool (``True`` is no count, seat or card) and not a
    ``numpy.timedelta64`` (numpy makes a duration a subclass of its signed integers)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.timedelta64))


def is_int_dtype(dtype: Any) -> bool:
    """A signed or unsigned integer dtype: not bool, and not ``timedelta64``, which
    ``np.issubdtype(dtype, np.integer)`` counts as one."""
    return np.dtype(dtype).kind in "iu"


def is_real(value: Any) -> bool:
    """A plain or numpy real number, not a bool and not a ``numpy.timedelta64``."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_, np.timedelta64))


def one_of(choices: Sequence[str]) -> str:
    """``'a', 'b' or 'c'``: the accepted strings of an option, for its error."""
    names = [repr(c) for c in choices]
    return f"{', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else names[0]


def check_choice(option: str, value: Any, choices: Sequence[str]) -> None:
    """``value`` must be a string among ``choices``; an array or another object that only compares
    equal to one (``np.array(['any']) == 'any'``) is refused, naming its type."""
    if not isinstance(value, str) or value not in choices:
        kind = "" if isinstance(value, str) or value is None else f" (given a {type(value).__name__}, not a str)"
        fail(option, value, one_of(choices) + kind)


class UnknownOptionError(TypeError, ValueError):
    """Unknown keyword options: a ``ValueError`` as the project's other refusals are, and a
    ``TypeError`` saying "unexpected keyword argument 'NAME'" as Python's own for an unknown
    keyword does, which libraries that probe keywords read (TorchRL's ``GymEnv`` retries without
    ``frameskip`` on it)."""


def check_names(given: Iterable[str], known: Iterable[str], what: str = "option") -> None:
    """An ``UnknownOptionError`` naming every one of ``given`` that is not ``known``, and listing
    the known."""
    known = sorted(known)
    unknown = sorted({str(name) for name in given} - set(known))
    if unknown:
        python = "; ".join(f"unexpected keyword argument {name!r}" for name in unknown)  # as TypeError says it
        raise UnknownOptionError(f"unknown {what}(s) {', '.join(unknown)}; known {what}s: {', '.join(known)} "
                                 f"({python})")


def normalise_speed(speed: Any, num_players: int, collision: Any) -> tuple[float, ...] | None:
    """``speed`` as a tuple of ``num_players`` floats, from a list, tuple or 1-D array of real
    numbers (R6); a string, a mapping, bools or a count off the players raise."""
    if speed is None:
        return None
    lo, hi = 1 / MAX_SPEED_RATIO, MAX_SPEED_RATIO
    accepted = (f"None or {num_players} positive numbers, one per player (from {lo:g} to {hi:g}), as a list, tuple "
                "or 1-D array (not a str, a dict or bools)")  # fmt: skip
    listed = isinstance(speed, np.ndarray) and speed.ndim == 1
    listed = listed or isinstance(speed, Sequence) and not isinstance(speed, (str, bytes, Mapping))
    if not listed or len(speed) != num_players or not all(is_real(s) for s in speed):
        fail("speed", speed, accepted)
    try:
        weights = tuple(float(s) for s in speed)
    except OverflowError:  # an int beyond float
        fail("speed", speed, accepted)
    if not all(np.isfinite(s) and lo <= s <= hi for s in weights):
        fail("speed", speed, accepted)
    if collision != "random":
        fail("speed", speed, "None unless collision='random' (speed weights random races)")
    return weights


def normalise_move_ticks(value: Any) -> tuple[tuple[str, int], ...]:
    """``move_ticks`` as ``((kind, ticks), ...)`` over every kind of ``MOVE_KINDS``, in order; given
    as ``(kind, ticks)`` pairs, a kind may come once."""
    accepted = f"None, an integer from 1 to 64, or a mapping from {', '.join(MOVE_KINDS)} to such integers"
    if value is None:
        ticks: dict[str, Any] = dict.fromkeys(MOVE_KINDS, 1)
    elif is_int(value):
        ticks = dict.fromkeys(MOVE_KINDS, value)
    else:
        try:
            items = [tuple(pair) for pair in (value.items() if hasattr(value, "items") else value)]
            pairs = dict(items)
        except (TypeError, ValueError):
            fail("move_ticks", value, accepted)
        if len(pairs) < len(items):  # as pairs, a kind given twice (the last would silently win)
            twice = sorted({str(k) for k in pairs if [kind for kind, _ in items].count(k) > 1})
            fail("move_ticks", value, accepted + f" (kind(s) given twice: {', '.join(twice)}; give each kind once)")
        unknown = sorted(set(pairs) - set(MOVE_KINDS), key=str)
        if unknown:
            fail("move_ticks", value, accepted + f" (unknown kind(s): {', '.join(map(str, unknown))})")
        ticks = {k: pairs.get(k, 1) for k in MOVE_KINDS}
    if not all(is_int(t) and 1 <= t <= 64 for t in ticks.values()):
        fail("move_ticks", value, accepted)
    return tuple((k, int(ticks[k])) for k in MOVE_KINDS)


def check_pickled_fields(state: Any, fields: Sequence[str]) -> None:
    """The state a pickled ``NertzConfig`` restores must hold exactly its option fields: a field
    of another version would be set as a stray attribute, a missing one silently take its default."""
    if not isinstance(state, Mapping):
        raise ValueError(f"cannot unpickle a NertzConfig from a {type(state).__name__}: its state is a dict of the "
                         f"options {', '.join(fields)}")  # fmt: skip
    unknown = sorted(str(k) for k in set(state) - set(fields))
    missing = [f for f in fields if f not in state]
    if unknown or missing:
        said = []
        if unknown:
            said.append(f"unknown field(s) {', '.join(unknown)}")
        if missing:
            said.append(f"missing field(s) {', '.join(missing)}")
        raise ValueError(
            f"cannot unpickle a NertzConfig with {'; '.join(said)}: the pickled options must be exactly "
            f"{', '.join(fields)} (pickled by another version? rebuild it from its options)"
        )
