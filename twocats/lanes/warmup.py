"""Compile the lane hashes of ``hash_many`` ahead of their first use (``twocats warmup --all``).

Usage::

    from twocats.lanes.warmup import lane_kernels
    from twocats.simd.warmup import compile_kernels

    for kernel, seconds in compile_kernels(lane_kernels("simd"), jobs=2):
        ...

Importing this module imports neither numpy nor numba; compiling does.
"""

from __future__ import annotations

from dataclasses import dataclass

from twocats.hashes import LANE_HASHES
from twocats.lanes.aot import LaneKey
from twocats.simd.warmup import check_backend

__all__ = ["LaneKernel", "lane_kernels"]


@dataclass(frozen=True)
class LaneKernel:
    """The ``hash_many`` scheduler its key names, as a warm-up job."""

    key: LaneKey

    @property
    def label(self) -> str:
        """A short name for progress displays, e.g. ``hash_many sha256``."""
        return f"hash_many {self.key.algorithm}"

    def compile(self) -> None:
        """Compile the scheduler (or load it from the disk cache) by hashing one empty block.

        Its ahead-of-time artefact is built too, where one can be (:mod:`twocats.lanes.aot`).
        """
        import numpy as np

        from twocats.lanes.many import hash_many_fixed

        hash_many_fixed(np.zeros((1, 64), np.uint8), self.key.algorithm, backend=self.key.backend)


def lane_kernels(backend: str) -> list[LaneKernel]:
    """Return the ``hash_many`` scheduler of every hash type on ``backend``."""
    check_backend(backend)
    return [LaneKernel(LaneKey(facts.name, backend)) for facts in LANE_HASHES]
