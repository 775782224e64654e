"""The kernel intrinsics: ``opaque`` hands its argument back, prefetches change nothing."""

from __future__ import annotations

from typing import Any

import numpy as np

from twocats.simd._jit import jit
from twocats.simd.intrinsics import opaque, prefetch_read, prefetch_write


@jit
def _chain(a: Any, b: Any, steps: Any) -> Any:
    for _ in range(steps):
        a = opaque(a ^ ((a * b) >> np.uint64(32)))
    return a


@jit
def _touch(words: Any) -> Any:
    prefetch_read(words, np.uint64(0))
    prefetch_write(words, np.uint64(words.size))
    return opaque(words[0])


def test_opaque_returns_its_argument() -> None:
    """A chain of xors behind ``opaque`` gives the plain chain's value; prefetches write nothing."""
    a, b = 0x12345678, 0x9ABCDEF1
    want = a
    for _ in range(100):
        want ^= (want * b) >> 32
    assert int(_chain(np.uint64(a), np.uint64(b), 100)) == want
    words = np.arange(5, 10, dtype=np.uint32)
    assert int(_touch(words)) == 5
    np.testing.assert_array_equal(words, np.arange(5, 10, dtype=np.uint32))
