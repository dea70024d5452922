"""Intervals and ratings for the evaluation harness: Student's t from ``scipy.stats``, the normal
quantile from the standard library, ratings from ``openskill``.

* ``mean_interval``: the mean with a Student-t interval (the normal one for large samples is the
  same to 3 decimals, ``normal_interval``).
* ``clustered_interval``: the mean of values that come in groups (the hands of one deal, played
  in every seat rotation, or the rotations of one match), with a t interval over the groups:
  the hands of one deal are not independent, so the deal is the unit of the interval. The harness
  reports every score and share with it.
* ``clustered_share_interval``: the same for a share, as the Wilson score interval at the
  sample size the clustered variance is worth (Korn and Graubard's effective size), which stays
  inside [0, 1] and keeps a width at shares of 0 or 1, where a t interval shrinks to a point.
* ``wilson_interval``: a share of independent trials with the Wilson score interval.
* ``seeds_and_deals_interval``: a mean over training seeds evaluated on the same deals, whose
  interval holds the seeds' spread and the deals' noise they share.
* ``rate_hands``, ``rate_teams``: OpenSkill (Plackett-Luce) ratings from each hand's ranking by R7
  score, of players or of teams of partners (R8).
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
    n_groups, total, mean, var = _clustered(groups)
    if n_groups < 2:
        return mean, math.nan, math.nan
    half = t_quantile(0.5 + confidence / 2.0, n_groups - 1) * math.sqrt(var)
    lo, hi = mean - half, mean + half
    if bounds is not None:
        lo, hi = max(bounds[0], lo), min(bounds[1], hi)
    return mean, lo, hi


def clustered_share_interval(groups: Iterable[Sequence[float]], confidence: float = 0.95) -> tuple[float, float, float]:
    """``(share, low, high)`` of values in [0, 1] that come in ``groups`` (a win is 1, a tie's part
    of it a fraction): the Wilson score interval at the effective size ``p (1 - p) / var`` of the
    clustered variance ``var`` (the number of groups at a share of 0 or 1, where ``var`` is 0),
    with the t quantile of ``G - 1`` degrees of freedom. Where the share is not near 0 or 1 it is
    the t interval of ``clustered_interval`` to about 3 decimals; near them it keeps its width and
    its coverage. NaN bounds below 2 groups."""
    n_groups, _, share, var = _clustered(groups)
    if n_groups < 2:
        return share, math.nan, math.nan
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"a share is a mean of values in [0, 1], got {share}")
    if share in (0.0, 1.0):
        size = float(n_groups)
    elif var > 0:
        size = share * (1.0 - share) / var
    else:  # the same share in every group: the t interval's point
        return share, share, share
    lo, hi = _wilson(share, size, t_quantile(0.5 + confidence / 2.0, n_groups - 1))
    return share, lo, hi


def _clustered(groups: Iterable[Sequence[float]]) -> tuple[int, int, float, float]:
    """``(G, N, mean, var)``: the groups that hold values, the values, their mean and its
    cluster-robust variance (NaN below 2 groups)."""
    sums, sizes = [], []
    for g in groups:
        if len(g):
            sums.append(math.fsum(g))
            sizes.append(len(g))
    n_groups, total = len(sums), sum(sizes)
    if n_groups == 0:
        return 0, 0, math.nan, math.nan
    mean = math.fsum(sums) / total
    if n_groups < 2:
        return n_groups, total, mean, math.nan
    var = n_groups / (n_groups - 1) * math.fsum((s - mean * m) ** 2 for s, m in zip(sums, sizes)) / total**2
    return n_groups, total, mean, var


def seeds_and_deals_interval(
    means: Sequence[float], errors: Sequence[float], deals: int, confidence: float = 0.95
) -> tuple[float, float, float]:
    """``(mean, low, high)`` of the mean of ``means``, one per training seed, each the mean over the
    same ``deals`` deals with standard error ``errors`` over them. The seeds share the deals, so
    their spread leaves out the deals' noise they share; the variance ``s^2 / S + mean(error^2)``
    adds it back, with Welch-Satterthwaite degrees of freedom. It is an upper bound, as it counts
    each seed's own noise over the deals twice (in the spread and in its error); near exact where
    most of a deal's difference is the deal's, the same for every seed.
    NaN bounds below 2 seeds."""
    n, mean, sd = _mean_sd(list(means))
    if n < 2:
        return mean, math.nan, math.nan
    if len(errors) != n or deals < 2:
        raise ValueError(f"seeds_and_deals_interval needs one error per mean ({n}) and 2 deals or more, "
                         f"got {len(errors)} errors and {deals} deals")  # fmt: skip
    spread, noise = sd * sd / n, math.fsum(e * e for e in errors) / n
    if spread + noise == 0:
        return mean, mean, mean
    df = (spread + noise) ** 2 / (spread**2 / (n - 1) + noise**2 / (n * (deals - 1)))
    half = t_quantile(0.5 + confidence / 2.0, df) * math.sqrt(spread + noise)
    return mean, mean - half, mean + half


def normal_interval(values: Iterable[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """``(mean, low, high)`` with the normal quantile instead of Student's t."""
    n, mean, sd = _mean_sd(list(values))
    if n < 2:
        return mean, math.nan, math.nan
    half = normal_quantile(0.5 + confidence / 2.0) * sd / math.sqrt(n)
    return mean, mean - half, mean + half


def wilson_interval(successes: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of a share of ``n`` independent trials; ``successes`` may be
    fractional (split ties). NaN below 1 trial."""
    if not n > 0:
        return math.nan, math.nan
    if not 0 <= successes <= n:
        raise ValueError(f"wilson_interval needs 0 <= successes <= n, got successes={successes}, n={n}")
    return _wilson(successes / n, n, normal_quantile(0.5 + confidence / 2.0))


def _wilson(p: float, n: float, z: float) -> tuple[float, float]:
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if p <= 0 else max(0.0, centre - half)
    hi = 1.0 if p >= 1 else min(1.0, centre + half)
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
    the ratings follow the last few hundred hands and blurs small gaps). One pass in play order:
    ``mu`` moves with the order of the hands by about one ``sigma``, which is the rating's own
    uncertainty, not an interval over deals."""
    return rate_teams((([[p] for p in who], scores) for who, scores in hands), players, tau)


def rate_teams(
    hands: Iterable[tuple[Sequence[Sequence[PlayerT]], Sequence[float]]],
    players: Iterable[PlayerT] = (),
    tau: float | None = 0.0,
) -> dict[PlayerT, tuple[float, float]]:
    """``rate_hands`` for teams: each hand is ``(teams at the table, each a list of players, the
    teams' scores)``, as R8's partners are ranked by their summed score."""
    from openskill.models import PlackettLuce

    model = PlackettLuce() if tau is None else PlackettLuce(tau=tau)
    ratings = {p: model.rating() for p in players}
    for teams, scores in hands:
        who = [p for team in teams for p in team]
        if len(set(who)) != len(who):
            raise ValueError(f"a player sits twice at one table: {who}")
        for p in who:
            if p not in ratings:
                ratings[p] = model.rating()
        new = model.rate([[ratings[p] for p in team] for team in teams], scores=[float(s) for s in scores])
        for team, rated in zip(teams, new):
            for p, r in zip(team, rated):
                ratings[p] = r
    return {p: (r.mu, r.sigma) for p, r in ratings.items()}
