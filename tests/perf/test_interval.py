"""twocats.perf.interval: a ratio's geometric mean and Student's t interval on the log scale."""

from __future__ import annotations

import math

import pytest

from twocats.perf.interval import ratio_interval, t_975


@pytest.mark.parametrize(
    ("df", "quantile"),
    [(1, 12.706), (2, 4.303), (10, 2.228), (30, 2.042), (31, 2.0395), (60, 2.0003), (120, 1.9799)],
)
def test_t_quantiles_are_students(df: int, quantile: float) -> None:
    """The 0.975 quantiles match Student's tables to the table's precision."""
    assert t_975(df) == pytest.approx(quantile, abs=6e-4)


def test_the_estimate_is_the_geometric_mean_and_the_interval_symmetric_in_log() -> None:
    """Ratios 2 and 8 give 4, and an interval whose ends are equally far from it in log."""
    interval = ratio_interval([2.0, 8.0])
    assert interval.ratio == pytest.approx(4.0)
    # The logs are ln 2 and 3 ln 2: their standard error is ln 2, times t for one degree.
    assert math.log(interval.high / interval.ratio) == pytest.approx(12.706 * math.log(2))
    assert interval.low * interval.high == pytest.approx(interval.ratio**2)
    assert interval.half_width == interval.high / interval.ratio - 1
    assert interval.rounds == 2


def test_equal_ratios_give_an_empty_interval_and_one_round_none() -> None:
    """Rounds that agree exactly pin the ratio; one round spans everything."""
    same = ratio_interval([1.5] * 4)
    assert (same.ratio, same.low, same.high, same.half_width) == pytest.approx((1.5, 1.5, 1.5, 0))
    alone = ratio_interval([1.5])
    assert (alone.low, alone.high, alone.half_width) == (0.0, math.inf, math.inf)
    assert alone.document()["high"] is None


@pytest.mark.parametrize("ratios", [[], [1.0, 0.0], [-1.0]])
def test_no_ratio_or_one_not_above_zero_is_refused(ratios: list[float]) -> None:
    """An interval needs ratios, each above 0."""
    with pytest.raises(ValueError, match="at least one ratio, each above 0"):
        ratio_interval(ratios)
