"""The fixed action catalogue of one config, named as in R10.

Every move of R4 appears exactly once. The catalogue depends only on the config (the number of work
piles, whether slide-under exists), so ``Discrete(len(catalogue))`` is fixed for an env. The
compiled engine reads the catalogue as a table ``[N, 4]`` of (kind, source, destination, count).
"""

from __future__ import annotations

import numpy as np

from nertz_env.config import NertzConfig, is_int

# Action kinds (column T_KIND), sources (column T_SOURCE) and the first rows are the engine's.
from nertz_env.engine.constants import (
    ACTION_CALL,
    ACTION_DRAW,
    ACTION_WAIT,
    CALL,
    DRAW,
    NERTZ,
    TO_FOUNDATION,
    TO_NERTZ,
    TO_WORK,
    UNDER,
    WAIT,
    WASTE,
    WORK_SOURCE,
)

__all__ = [
    "ACTION_CALL", "ACTION_DRAW", "ACTION_WAIT", "CALL", "DRAW", "NERTZ", "TO_FOUNDATION", "TO_NERTZ", "TO_WORK",
    "UNDER", "WAIT", "WASTE", "WORK_SOURCE", "ActionCatalogue",
]


def _source_name(src: int) -> str:
    return "nertz" if src == NERTZ else "waste" if src == WASTE else f"work{src - WORK_SOURCE}"


class ActionCatalogue:
    """Names and engine table of every action under one config (R4, R10)."""

    def __init__(self, config: NertzConfig):
        w = config.work_piles
        rows: list[tuple[int, int, int, int]] = [(WAIT, 0, 0, 0), (DRAW, 0, 0, 0), (CALL, 0, 0, 0)]
        rows += [(TO_FOUNDATION, src, 0, 1) for src in range(WORK_SOURCE + w)]
        rows += [(TO_WORK, src, j, 1) for src in (NERTZ, WASTE) for j in range(w)]
        if config.slide_under:
            rows += [(UNDER, src, j, 1) for src in (NERTZ, WASTE) for j in range(w)]
        rows += [(TO_WORK, WORK_SOURCE + i, j, n) for i in range(w) for j in range(w) if i != j for n in range(1, 14)]
        if config.nertz_builds:  # R4.8, after the standard rows so those keep their indices
            rows += [(TO_NERTZ, src, k, 1) for src in range(WORK_SOURCE + w) for k in range(1, config.num_players)]
        self.table = np.array(rows, dtype=np.int8)
        self.table.setflags(write=False)
        self.names: tuple[str, ...] = tuple(self._name(*r) for r in rows)
        self._index = {name: i for i, name in enumerate(self.names)}

    def __setstate__(self, state: dict) -> None:
        """Unpickled with its table read-only again (pickling drops the flag), so that the compiled
        kernels see the same argument types as before."""
        self.__dict__.update(state)
        self.table.setflags(write=False)

    @staticmethod
    def _name(kind: int, src: int, dst: int, n: int) -> str:
        if kind == WAIT:
            return "wait"
        if kind == DRAW:
            return "draw"
        if kind == CALL:
            return "call"
        if kind == TO_FOUNDATION:
            return f"{_source_name(src)}>foundation"
        if kind == UNDER:
            return f"{_source_name(src)}>under{dst}"
        if kind == TO_NERTZ:
            return f"{_source_name(src)}>nertz@{dst}"
        if src >= WORK_SOURCE:
            return f"{_source_name(src)}>work{dst}:{n}"
        return f"{_source_name(src)}>work{dst}"

    def __len__(self) -> int:
        return len(self.names)

    def index(self, name: str) -> int:
        """The index of an action name (R10); unknown names raise ValueError."""
        try:
            return self._index[name]
        except (KeyError, TypeError):
            raise ValueError(
                f"unknown action name {name!r}; names look like 'wait', 'draw', 'call', "
                f"'nertz>foundation', 'waste>work2', 'work0>work3:2', 'waste>nertz@1' (see action_names)"
            ) from None

    def name(self, index: int) -> str:
        """The R10 name of action ``index``, a plain or numpy integer: a ``TypeError`` for another
        value (``2.9``, ``True``, ``'5'`` are no action), a ``ValueError`` out of range."""
        if not is_int(index):
            raise TypeError(f"an action is an integer 0..{len(self.names) - 1}, got {index!r}")
        if not 0 <= index < len(self.names):
            raise ValueError(f"action {index!r} is out of range; actions are 0..{len(self.names) - 1}")
        return self.names[int(index)]
