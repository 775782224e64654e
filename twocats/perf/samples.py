"""Seconds per call of each timed repetition, and their median, extremes and spread.

The one record of timings: :mod:`twocats.perf.peers` keeps a wall-clock and a CPU one per timed
call, and the repository's benchmark suites one per repetition of any clock.
"""

from __future__ import annotations

import dataclasses
import statistics

__all__ = ["Samples"]


@dataclasses.dataclass(frozen=True)
class Samples:
    """Seconds per call of each timed repetition, in order."""

    values: tuple[float, ...]

    @property
    def median(self) -> float:
        """The median seconds per call."""
        return statistics.median(self.values)

    @property
    def fastest(self) -> float:
        """The fastest repetition's seconds per call."""
        return min(self.values)

    @property
    def slowest(self) -> float:
        """The slowest repetition's seconds per call."""
        return max(self.values)

    @property
    def spread(self) -> float:
        """(slowest - fastest) / median: how noisy the repetitions were."""
        return (self.slowest - self.fastest) / self.median
