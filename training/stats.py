"""Intervals and ratings for the evaluation harness: Student's t from ``scipy.stats``, the normal
quantile from the standard library, ratings from ``openskill``.

* ``mean_interval``: the mean with a Student-t interval (the normal one for large samples is the
  same to 3 decimals, ``normal_interval``).
* ``clustered_interval``: the mean of values that come in groups (the hands of one deal, played
  in every seat rotation, or the rotations of one match), with a t interval over the groups:
  the hands of one deal are not independent, so the deal is the unit of the interval. The harness
  reports every score and share with it.
* ``wilson_interval``: a share of independent trials with the Wilson score interval, which stays
  inside [0, 1] and behaves at shares near 0 or 1.
* ``rate_hands``: OpenSkill (Plackett-Luce) ratings from each hand's ranking by R7 score.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from statistics import NormalDist
from typing import TypeVar

from scipy.stats import t as student_t

PlayerT = TypeVar("PlayerT", bound=Hashable)  # whatever names a player in rate_hands


def normal_quantile(p: float) -> float:
    """The standard normal quantile, ``normal_quantile(0.975) = 1.959964``."""
    return NormalDist().inv_cdf(p)


def t_cdf(t: float, df: float) -> float:
    """Student's t distribution function (``scipy.stats.t.cdf``)."""
    _check_df(df)
    return float(student_t.cdf(t, df))


def t_quantile(p: float, df: float) -> float:
    """Student's t quantile (``scipy.stats.t.ppf``), ``t_quantile(0.975, 9) = 2.262157``."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"t_quantile needs 0 < p < 1, got p={p}")
    _check_df(df)
    return float(student_t.ppf(p, df))


def _check_df(df: float) -> None:
    if not df > 0:
        raise ValueError(f"Student's t needs degrees of freedom df > 0, got df={df}")


def _mean_sd(values: Sequence[float]) -> tuple[int, float, float]:
    n = len(values)
    if n == 0:
        return 0, math.nan, math.nan
    mean = math.fsum(values) / n
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else math.nan
    return n, mean, math.sqrt(var)


def mean_interval(values: Iterable[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """``(mean, low, high)``: the Student-t interval of the mean (NaN bounds below 2 values)."""
    n, mean, sd = _mean_sd(list(values))
    if n < 2:
        return mean, math.nan, math.nan
    half = t_quantile(0.5 + confidence / 2.0, n - 1) * sd / math.sqrt(n)
    return mean, mean - half, mean + half


def clustered_interval(
    groups: Iterable[Sequence[float]], confidence: float = 0.95, bounds: tuple[float, float] | None = None
) -> tuple[float, float, float]:
    """``(mean, low, high)`` of values that come in ``groups`` (one group per deal): the mean of all
    values, with a Student-t interval (``G - 1`` degrees of freedom for ``G`` groups) from the
    cluster-robust variance ``G / (G - 1) * sum_g (S_g - mean * n_g)^2 / N^2`` (``S_g``, ``n_g``: a
    group's sum and size, ``N``: all values). With groups of equal size this is exactly
    ``mean_interval`` over the groups' means. ``bounds`` clips the interval (``(0, 1)`` for shares).
    NaN bounds below 2 groups."""
    sums, sizes = [], []
    for g in groups:
        if len(g):
            sums.append(math.fsum(g))
            sizes.append(len(g))
    n_groups, total = len(sums), sum(sizes)
    if n_groups == 0:
        return math.nan, math.nan, math.nan
    mean = math.fsum(sums) / total
    if n_groups < 2:
        return mean, math.nan, math.nan
    var = n_groups / (n_groups - 1) * math.fsum((s - mean * m) ** 2 for s, m in zip(sums, sizes)) / total**2
    half = t_quantile(0.5 + confidence / 2.0, n_groups - 1) * math.sqrt(var)
    lo, hi = mean - half, mean + half
    if bounds is not None:
        lo, hi = max(bounds[0], lo), min(bounds[1], hi)
    return mean, lo, hi


def normal_interval(values: Iterable[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """``(mean, low, high)`` with the normal quantile instead of Student's t."""
    n, mean, sd = _mean_sd(list(values))
    if n < 2:
        return mean, math.nan, math.nan
    half = normal_quantile(0.5 + confidence / 2.0) * sd / math.sqrt(n)
    return mean, mean - half, mean + half


def wilson_interval(successes: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of a share; ``successes`` may be fractional (split ties)."""
    if n <= 0:
        return math.nan, math.nan
    z = normal_quantile(0.5 + confidence / 2.0)
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if successes <= 0 else max(0.0, centre - half)
    hi = 1.0 if successes >= n else min(1.0, centre + half)
    return lo, hi


def win_shares(scores: Sequence[float]) -> list[float]:
    """Each seat's share of one hand's win: the highest score wins, ties split."""
    top = max(scores)
    winners = sum(1 for s in scores if s == top)
    return [1.0 / winners if s == top else 0.0 for s in scores]


def rate_hands(
    hands: Iterable[tuple[Sequence[PlayerT], Sequence[float]]],
    players: Iterable[PlayerT] = (),
    tau: float | None = 0.0,
) -> dict[PlayerT, tuple[float, float]]:
    """OpenSkill Plackett-Luce ratings ``{player: (mu, sigma)}`` from hands given in play order as
    ``(players at the table, their scores)``; equal scores share a rank. A player must not sit
    twice at one table. ``tau`` is the skill drift added before each hand: 0 by default, since an
    agent does not change during an evaluation (OpenSkill's own default, ``None`` here, makes
    the ratings follow the last few hundred hands and blurs small gaps)."""
    from openskill.models import PlackettLuce

    model = PlackettLuce() if tau is None else PlackettLuce(tau=tau)
    ratings = {p: model.rating() for p in players}
    for who, scores in hands:
        if len(set(who)) != len(who):
            raise ValueError(f"a player sits twice at one table: {list(who)}")
        for p in who:
            if p not in ratings:
                ratings[p] = model.rating()
        new = model.rate([[ratings[p]] for p in who], scores=[float(s) for s in scores])
        for p, team in zip(who, new):
            ratings[p] = team[0]
    return {p: (r.mu, r.sigma) for p, r in ratings.items()}
