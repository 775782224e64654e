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

from twocats.hashes import HASHES
from twocats.simd.warmup import check_backend

__all__ = ["LaneKernel", "lane_kernels"]


@dataclass(frozen=True)
class LaneKernel:
    """The ``hash_many`` kernel of one hash on a backend."""

    backend: str
    hash_code: int

    @property
    def label(self) -> str:
        """A short name for progress displays, e.g. ``hash_many sha256``."""
        return f"hash_many {HASHES[self.hash_code].name}"

    def compile(self) -> None:
        """Compile the kernel (or load it from the disk cache) by hashing one empty block."""
        import numpy as np

        from twocats.lanes.many import hash_many_fixed

        name = HASHES[self.hash_code].name
        hash_many_fixed(np.zeros((1, 64), np.uint8), name, backend=self.backend)


def lane_kernels(backend: str) -> list[LaneKernel]:
    """Return the ``hash_many`` kernel of every hash type on ``backend``."""
    check_backend(backend)
    return [LaneKernel(backend, facts.code) for facts in HASHES]
