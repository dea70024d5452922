"""Each game's own random stream (xorshift64*), kept in the state so that a game's chance never
depends on other games, threads or any global generator."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
from numba import config, njit

if config.DISABLE_JIT:  # pure Python: numpy warns where uint64 products wrap, as compiled code does silently
    warnings.filterwarnings("ignore", "overflow encountered in scalar", RuntimeWarning, module=__name__)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_MUL = np.uint64(0x2545F4914F6CDD1D)
_S11, _S12, _S25, _S27 = np.uint64(11), np.uint64(12), np.uint64(25), np.uint64(27)
_S30, _S31 = np.uint64(30), np.uint64(31)
_INV53 = 1.0 / 9007199254740992.0


def seed_streams(seed: int | Sequence[int] | None, n: int) -> np.ndarray:
    """``n`` nonzero stream states from one seed; stream ``i`` does not depend on ``n``."""
    words = np.random.SeedSequence(seed).generate_state(n, np.uint64)
    words[words == 0] = _GOLDEN
    return words


@njit(cache=True, inline="always")
def next_u64(rng: np.ndarray, b: int) -> np.uint64:
    x = rng[b]
    x ^= x >> _S12
    x ^= x << _S25
    x ^= x >> _S27
    rng[b] = x
    z = x * _MUL
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True, inline="always")
def uniform(rng: np.ndarray, b: int) -> float:
    return float(next_u64(rng, b) >> _S11) * _INV53


@njit(cache=True, inline="always")
def below(rng: np.ndarray, b: int, n: int) -> int:
    """A uniform integer in ``0..n-1``."""
    k = int(uniform(rng, b) * n)
    return k if k < n else n - 1
