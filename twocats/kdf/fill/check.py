"""The fill kernels' known-answer check: a small job filled exactly like the pure-Python reference.

Usage::

    from twocats.kdf.fill.check import reference_check, run_check

    assert run_check(kernel, key) == reference_check(key)   # kernel: NumbaFill or an artefact

Every build of a fill kernel passes it before it is used: numba's
(:func:`twocats.kdf.fill.kernels.checked_fill`) and each ahead-of-time artefact
(:mod:`twocats.kdf.fill.aot`).  Importing this module imports neither numba nor numpy.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any

from twocats.hashes import HASHES
from twocats.kdf import words
from twocats.kdf.fill.args import FillArgs, FillKey

__all__ = ["reference_check", "run_check"]


def run_check(kernel: Any, key: FillKey) -> bytes:
    """Fill a small known job with ``kernel`` and return the digest of memory and states.

    Two slices of two regions, the first data-independent and the second password-dependent with
    64-byte sub-blocks, so that every path of the kernel runs.
    """
    width = HASHES[key.hash_type].state_words
    blocklen = max(32, 2 * key.lanes)
    parallelism, bpt = 2, 4
    mem = words.allocate(parallelism * bpt * blocklen)
    states = words.rows(
        [[(i * 0x9E3779B1) & 0xFFFFFFFF for i in range(p * width, (p + 1) * width)]
         for p in range(parallelism)]
    )  # fmt: skip
    time_cost = 1 if key.variant else None
    for done, dependent in ((0, 0), (2, 1)):
        sub = 16 if dependent else blocklen
        args = FillArgs(0, 1, done, 2, bpt, blocklen, sub, parallelism, 2, dependent, time_cost)
        kernel(mem, states, args)
    return hashlib.sha256(mem.tobytes() + states.tobytes()).digest()


@functools.cache
def reference_check(key: FillKey) -> bytes:
    """Return :func:`run_check`'s digest computed by the pure-Python reference fill."""
    from twocats.kdf.reference import fill_slice

    def kernel(mem: words.Words, states: words.Words, args: FillArgs) -> None:
        fill_slice(mem, states, args.job(key.lanes, key.hash_type))

    return run_check(kernel, key)
