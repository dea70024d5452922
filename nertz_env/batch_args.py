"""Checks of the arguments of the batched env (``nertz_env.vector``): the arrays it writes into
(``out``) and the games a call acts on (``games``). Each raises a ``ValueError`` (``TypeError`` for
a wrong type) naming what it got and what is accepted. ``read_only`` makes the views of the engine's
arrays that the env hands out refuse writes."""

from __future__ import annotations

from typing import Any

import numpy as np

from nertz_env.config_values import is_int_dtype


def out_array(out: Any, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    """``out`` if it is a writable contiguous numpy array of ``dtype`` shaped ``shape``, else a
    ``ValueError`` naming what it is."""
    if not isinstance(out, np.ndarray):
        got = type(out).__name__
    else:
        f = out.flags
        flaws = [w for w, bad in (("read-only", not f.writeable), ("non-contiguous", not f.c_contiguous)) if bad]
        if out.shape == shape and out.dtype == dtype and not flaws:
            return out
        got = " ".join([*flaws, f"{out.dtype} array shaped {out.shape}"])
    raise ValueError(f"out must be a contiguous {np.dtype(dtype).name} array shaped {shape} (a writable numpy array), "
                     f"got {got}")  # fmt: skip


def games_of(games: Any, num_envs: int) -> np.ndarray:
    """The games ``games`` names among ``num_envs``, as ascending int64 indices (each once):
    ``games`` is a bool mask shaped ``(num_envs,)`` (True = chosen) or integer indices from 0 to
    ``num_envs - 1`` (a list, a numpy array, a CPU tensor; empty: no game)."""
    accepted = f"games must be a bool mask shaped ({num_envs},) or integer game indices from 0 to {num_envs - 1}"
    try:
        chosen = np.asarray(games)
    except Exception as exc:  # a tensor on a GPU, a ragged list ...
        raise TypeError(f"{accepted}, got {type(games).__name__} ({exc})") from exc
    if chosen.ndim == 1 and chosen.size == 0:
        return np.zeros(0, np.int64)
    if chosen.dtype == np.bool_:
        if chosen.shape != (num_envs,):
            raise ValueError(f"{accepted}, got a bool mask shaped {chosen.shape}")
        return np.flatnonzero(chosen).astype(np.int64)
    if not is_int_dtype(chosen.dtype):  # not timedelta64, which numpy counts as an integer
        raise TypeError(f"{accepted}, got {chosen.dtype} values {chosen.reshape(-1)[:4].tolist()}")
    if chosen.ndim != 1:
        raise ValueError(f"{accepted}, got integers shaped {chosen.shape} (a single game i is [i])")
    outside = chosen[(chosen < 0) | (chosen >= num_envs)]
    if outside.size:
        raise ValueError(f"{accepted}, got index {int(outside[0])}")
    return np.unique(chosen).astype(np.int64)


def read_only(array: np.ndarray) -> np.ndarray:
    """A view of the engine's ``array`` that refuses writes: a score, total or tick written from
    outside would reach compiled code unchecked (a tick past int32 wraps)."""
    view = array.view()
    view.flags.writeable = False
    return view
