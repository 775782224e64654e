"""The word helpers of the hash kernels (twocats.lanes._words), called directly."""

from __future__ import annotations

import numpy as np

from twocats.lanes import _words


def test_byte_swaps() -> None:
    """bswap32 and bswap64 reverse the bytes of a word."""
    assert int(_words.bswap32(np.uint32(0x01020304))) == 0x04030201
    assert int(_words.bswap32(np.uint32(0xFF000080))) == 0x800000FF
    assert int(_words.bswap64(np.uint64(0x0102030405060708))) == 0x0807060504030201
    assert int(_words.bswap64(np.uint64(0xFF00000000000001))) == 0x01000000000000FF
