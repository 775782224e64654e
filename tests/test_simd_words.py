"""The word helpers of the hash kernels (twocats.simd._words), called directly."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from twocats.simd import _words


def _padded_block(message: bytes, start: int, size: int, marker: int) -> bytes:
    """Bytes [start, start + size) of the message, then the marker byte, then zeros."""
    tail = message + bytes([marker]) if marker else message
    return (tail[start : start + size]).ljust(size, b"\x00")


def test_byte_swaps() -> None:
    """bswap32 and bswap64 reverse the bytes of a word."""
    assert int(_words.bswap32(np.uint32(0x01020304))) == 0x04030201
    assert int(_words.bswap32(np.uint32(0xFF000080))) == 0x800000FF
    assert int(_words.bswap64(np.uint64(0x0102030405060708))) == 0x0807060504030201
    assert int(_words.bswap64(np.uint64(0xFF00000000000001))) == 0x01000000000000FF


@settings(max_examples=60)
@given(
    message=st.binary(max_size=300),
    offset=st.integers(0, 7),
    block=st.integers(0, 5),
    big=st.booleans(),
    marker=st.sampled_from([0, 0x80]),
    wide=st.booleans(),
)
def test_decode_block_matches_int_from_bytes(
    message: bytes, offset: int, block: int, big: bool, marker: int, wide: bool
) -> None:
    """A decoded block is the padded block's words, read with int.from_bytes in that byte order."""
    size, word = (128, 8) if wide else (64, 4)
    start = block * size
    data = np.frombuffer(bytes(offset) + message + b"\xee" * 9, dtype=np.uint8)
    words = np.zeros((16, 3), dtype=np.uint64 if wide else np.uint32)
    decode = _words.decode_block64 if wide else _words.decode_block32
    decode(
        data,
        np.uint64(offset),
        np.uint64(len(message)),
        np.uint64(start),
        big,
        np.uint8(marker),
        words,
        np.uint64(1),
    )
    padded = _padded_block(message, start, size, marker)
    order = "big" if big else "little"
    expected = [int.from_bytes(padded[i : i + word], order) for i in range(0, size, word)]
    assert [int(w) for w in words[:, 1]] == expected
    assert not words[:, 0].any()
    assert not words[:, 2].any()
