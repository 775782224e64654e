"""A ratio measured in paired rounds, and its 95% confidence interval.

``compare`` times TwoCats and a peer once each per round, in alternation, so that whatever slows
the machine down during a round slows both; each round gives one ratio.  The ratios are combined
on a log scale (a ratio and its inverse are equally far from 1): the estimate is their geometric
mean, and the interval is Student's t interval of the mean log ratio, taken back with ``exp``.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Sequence
from typing import Any, Final

__all__ = ["RatioInterval", "ratio_interval", "t_975"]

#: Student's t quantile 0.975 for 1 to 30 degrees of freedom.
_T_975: Final = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip

#: The normal distribution's quantile 0.975.
_Z_975: Final = 1.959964


def t_975(df: int) -> float:
    """Return Student's t quantile 0.975 for `df` degrees of freedom (at least 1).

    A table up to 30, then the Cornish-Fisher expansion around the normal quantile, which is
    within 0.001 of the exact value from there on.
    """
    if df < 1:
        raise ValueError("a t quantile needs at least one degree of freedom")
    if df <= len(_T_975):
        return _T_975[df - 1]
    z = _Z_975
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


@dataclasses.dataclass(frozen=True)
class RatioInterval:
    """A ratio's estimate (geometric mean of the rounds) and its 95% confidence interval."""

    ratio: float
    low: float
    high: float
    rounds: int

    @property
    def half_width(self) -> float:
        """The interval's larger distance from the estimate, relative to it (0.1 is ±10%)."""
        return max(self.high / self.ratio - 1, 1 - self.low / self.ratio)

    def document(self) -> dict[str, Any]:
        """The interval as a JSON-ready dict (an unbounded end is None)."""
        return {
            "ratio": self.ratio,
            "low": self.low,
            "high": self.high if math.isfinite(self.high) else None,
            "half_width": self.half_width if math.isfinite(self.half_width) else None,
            "rounds": self.rounds,
        }


def ratio_interval(ratios: Sequence[float]) -> RatioInterval:
    """Return the estimate and 95% interval of the ratio the rounds' `ratios` measure.

    One round gives no interval: it spans 0 to infinity.
    """
    if not ratios or min(ratios) <= 0:
        raise ValueError("a ratio interval needs at least one ratio, each above 0")
    logs = [math.log(ratio) for ratio in ratios]
    mean = statistics.fmean(logs)
    if len(logs) < 2:
        return RatioInterval(math.exp(mean), 0.0, math.inf, 1)
    spread = t_975(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return RatioInterval(
        math.exp(mean), math.exp(mean - spread), math.exp(mean + spread), len(logs)
    )
