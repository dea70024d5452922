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
