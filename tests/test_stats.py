"""Student's t in ``training.stats`` against values known independently of any library: the closed
forms of the quantile for 1, 2 and 4 degrees of freedom, a published table value, and the normal
limit."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("scipy", reason="training.stats needs scipy (extra 'training')")

from nertz_env.training import stats  # noqa: E402

PROBABILITIES = (0.5005, 0.6, 0.75, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999, 0.0005, 0.025, 0.3)


def closed_form_quantile(p: float, df: int) -> float:
    """Student's t quantile in closed form (Hill 1970) for df = 1, 2 and 4."""
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    alpha = 4 * p * (1 - p)  # df == 4
    q = math.cos(math.acos(math.sqrt(alpha)) / 3) / math.sqrt(alpha)
    return math.copysign(2 * math.sqrt(q - 1), p - 0.5)


@pytest.mark.parametrize("df", [1, 2, 4])
def test_t_quantile_matches_closed_forms(df):
    for p in PROBABILITIES:
        expected = closed_form_quantile(p, df)
        assert math.isclose(stats.t_quantile(p, df), expected, rel_tol=1e-9, abs_tol=1e-12), (p, df)
        assert math.isclose(stats.t_cdf(expected, df), p, rel_tol=1e-9), (p, df)


def test_t_quantile_known_table_values():
    # to 17 digits (mpmath, 30-digit root of the regularized incomplete beta)
    assert abs(stats.t_quantile(0.975, 10) - 2.2281388519862747) < 1e-9
    assert abs(stats.t_quantile(0.975, 9) - 2.2621571627982055) < 1e-9
    assert abs(stats.t_quantile(0.995, 30) - 2.7499956535672253) < 1e-9
    assert abs(stats.t_quantile(0.5, 7)) < 1e-15  # the median, 0 up to rounding (scipy 1.13: 6.9e-17)
    assert math.isclose(stats.t_quantile(0.025, 10), -stats.t_quantile(0.975, 10), rel_tol=1e-12)
    # many degrees of freedom: the normal quantile (the t excess is about (z^3 + z) / (4 df))
    z = stats.normal_quantile(0.975)
    assert abs(stats.t_quantile(0.975, 10**7) - z) < 1e-6


def test_t_cdf_symmetry_and_roundtrip():
    for df in (1, 3, 9, 30, 2.5):
        assert stats.t_cdf(0.0, df) == 0.5
        for t in (0.3, 1.0, 2.5, 7.0):
            assert math.isclose(stats.t_cdf(t, df) + stats.t_cdf(-t, df), 1.0, rel_tol=1e-12)
            assert math.isclose(stats.t_quantile(stats.t_cdf(t, df), df), t, rel_tol=1e-9)


def test_mean_interval_uses_t_with_n_minus_1_degrees():
    mean, lo, hi = stats.mean_interval([1, 2, 3, 4, 5])  # sd = sqrt(2.5), t on 4 degrees
    half = closed_form_quantile(0.975, 4) * math.sqrt(2.5) / math.sqrt(5)
    assert mean == 3.0
    assert abs(lo - (3.0 - half)) < 1e-9 and abs(hi - (3.0 + half)) < 1e-9


@pytest.mark.parametrize(("p", "df", "match"), [(0.0, 5, "0 < p < 1"), (1.0, 5, "0 < p < 1"),
                                                 (0.9, 0, "df > 0"), (0.9, -2, "df > 0")])
def test_t_quantile_rejects_bad_input(p, df, match):
    with pytest.raises(ValueError, match=match):
        stats.t_quantile(p, df)


def test_t_cdf_rejects_bad_degrees():
    with pytest.raises(ValueError, match="df > 0"):
        stats.t_cdf(1.0, 0)


def test_a_share_interval_over_deals_keeps_a_width_at_a_share_of_0_or_1():
    """A t interval of a share that is 0 on every deal shrinks to [0, 0]; the Wilson interval at the
    effective size (the deals, where the variance is 0) does not."""
    never, always = [[0.0] * 4 for _ in range(300)], [[1.0] * 4 for _ in range(300)]
    assert stats.clustered_interval(never, bounds=(0.0, 1.0)) == (0.0, 0.0, 0.0)
    share, lo, hi = stats.clustered_share_interval(never)
    z = stats.t_quantile(0.975, 299)
    assert (share, lo) == (0.0, 0.0) and hi == pytest.approx(z * z / 300 / (1 + z * z / 300))
    share, lo, hi = stats.clustered_share_interval(always)
    assert (share, hi) == (1.0, 1.0) and lo == pytest.approx(1 - z * z / 300 / (1 + z * z / 300))


def test_a_share_interval_is_the_t_interval_where_the_share_is_not_near_0_or_1():
    groups = [[float((d * 7 + r) % 4 == 0) for r in range(4)] for d in range(2000)]
    groups += [[0.5, 0.5, 0.0, 1.0]] * 100  # a tie's split win is a fraction
    share, lo, hi = stats.clustered_share_interval(groups)
    t_share, t_lo, t_hi = stats.clustered_interval(groups)
    assert share == t_share and 0.2 < share < 0.3
    assert (lo, hi) == pytest.approx((t_lo, t_hi), abs=5e-4)
    assert all(math.isnan(x) for x in stats.clustered_share_interval([[1.0, 0.0]])[1:])
    with pytest.raises(ValueError, match="a share is a mean of values in \\[0, 1\\], got 2.0"):
        stats.clustered_share_interval([[2.0], [2.0]])


def test_wilson_interval_refuses_more_successes_than_trials():
    with pytest.raises(ValueError, match="wilson_interval needs 0 <= successes <= n, got successes=5, n=4"):
        stats.wilson_interval(5, 4)
    assert all(math.isnan(x) for x in stats.wilson_interval(0, 0))


def test_the_interval_over_seeds_and_deals_adds_the_deals_noise_the_seeds_share():
    """Three seeds that agree to 0.0003 on the same deals, each with an error of 0.0016 over them:
    the seeds' spread alone gives +-0.0007; the deals they share keep it at their own +-0.003."""
    means, errors = [-0.00969, -0.00973, -0.01020], [0.00162, 0.00169, 0.00171]
    _, lo, hi = stats.seeds_and_deals_interval(means, errors, 10000)
    _, seeds_lo, seeds_hi = stats.mean_interval(means)
    assert seeds_hi - seeds_lo < 0.0015 < 0.0064 < hi - lo < 0.0068
    spread, noise = 0.0002823**2 / 3, sum(e * e for e in errors) / 3  # sd of the three means
    df = (spread + noise) ** 2 / (spread**2 / 2 + noise**2 / (3 * 9999))
    assert hi - lo == pytest.approx(2 * stats.t_quantile(0.975, df) * math.sqrt(spread + noise), rel=1e-3)
    # Seeds that disagree far beyond their deals' noise: the spread's 2 degrees of freedom rule.
    _, lo, hi = stats.seeds_and_deals_interval([0.0, 0.01, 0.02], [1e-6] * 3, 10000)
    assert (lo, hi) == pytest.approx(stats.mean_interval([0.0, 0.01, 0.02])[1:], rel=1e-4)
    assert all(math.isnan(x) for x in stats.seeds_and_deals_interval([0.1], [0.01], 100)[1:])
    with pytest.raises(ValueError, match="one error per mean \\(2\\) and 2 deals or more, got 1 errors"):
        stats.seeds_and_deals_interval([0.1, 0.2], [0.01], 100)


def test_partners_are_rated_by_their_teams_summed_score():
    """R8: a player whose partner carries the team is rated with the winning team, not with the
    players it scored below (``report.tables_of`` under partners)."""
    pytest.importorskip("openskill", reason="ratings need openskill (extra 'training')")
    from nertz_env.training.report import tables_of

    records = []
    for deal in range(40):  # agents 0 and 2 partner agents 1 and 3; 0 scores most, its partner 2 least
        records.append({"key": [deal, 0], "seats": [0, 1, 2, 3], "scores": [30, 5, -2, 4], "nertz_left": [0] * 4,
                        "called": [False] * 4, "on_foundations": [0] * 4, "ticks": 10, "races_won": [0] * 4,
                        "races_lost": [0] * 4})  # fmt: skip
    labels = ["star", "b", "carried", "d"]
    by_team = tables_of(records, labels, partners=True)["ratings"]
    alone = tables_of(records, labels, partners=False)["ratings"]
    assert by_team["carried"]["mu"] == pytest.approx(by_team["star"]["mu"])
    assert by_team["carried"]["mu"] > by_team["b"]["mu"] == pytest.approx(by_team["d"]["mu"])
    assert alone["carried"]["mu"] < alone["d"]["mu"] < alone["b"]["mu"]
    with pytest.raises(ValueError, match="a player sits twice at one table"):
        stats.rate_teams([([[0, 1], [1, 2]], [3.0, 1.0])])
