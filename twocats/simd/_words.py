"""Word-level helpers shared by the hash kernels: block decoding with padding, byte swaps.

Kernel code only (imports numba through ``twocats.simd._jit``).  Every function is a ``jit`` kernel
in the "scalar" vectorizer mode and may be called from any other kernel.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from twocats.simd._jit import jit

__all__ = ["bswap32", "bswap64", "decode_block32", "decode_block64"]

if sys.byteorder != "little":
    raise ImportError("twocats kernels assume a little-endian host")

U32 = np.uint32
U64 = np.uint64


@jit
def bswap32(x: Any) -> Any:
    """Reverse the byte order of a 32-bit word (compiles to one ``bswap``/``movbe``)."""
    return U32(((x >> 24) & 0xFF) | ((x >> 8) & 0xFF00) | ((x << 8) & 0xFF0000) | (x << 24))


@jit
def bswap64(x: Any) -> Any:
    """Reverse the byte order of a 64-bit word."""
    high = bswap32(U32(x & U64(0xFFFFFFFF)))
    low = bswap32(U32(x >> U64(32)))
    return (U64(high) << U64(32)) | U64(low)


@jit
def decode_block32(
    data: Any, base: Any, length: Any, start: Any, big: Any, marker: Any, M: Any, lane: Any
) -> None:
    """Decode one 64-byte block of a message into 32-bit words M[0:16, lane].

    The message is data[base:base + length]; the block covers message bytes [start, start + 64).
    Bytes past the end read as zero, except the byte at offset ``length``, which reads as
    ``marker`` (0x80 for SHA padding, 0 for BLAKE2).  ``big`` selects big-endian words.  Every
    index argument is a uint64, so that no negative-index fix-up stands in the way of combining
    the byte loads into word loads.
    """
    for i in range(16):
        p = start + U64(4 * i)
        if p + U64(4) <= length:
            q = base + p
            b0 = U32(data[q])
            b1 = U32(data[q + U64(1)])
            b2 = U32(data[q + U64(2)])
            b3 = U32(data[q + U64(3)])
            if big:
                M[i, lane] = U32((b0 << 24) | (b1 << 16) | (b2 << 8) | b3)
            else:
                M[i, lane] = U32(b0 | (b1 << 8) | (b2 << 16) | (b3 << 24))
        else:
            word = U64(0)
            for k in range(4):
                pos = p + U64(k)
                byte = U64(0)
                if pos < length:
                    byte = U64(data[base + pos])
                elif pos == length:
                    byte = U64(marker)
                shift = U64(24 - 8 * k) if big else U64(8 * k)
                word = word | (byte << shift)
            M[i, lane] = U32(word)


@jit
def decode_block64(
    data: Any, base: Any, length: Any, start: Any, big: Any, marker: Any, M: Any, lane: Any
) -> None:
    """Decode one 128-byte block of a message into 64-bit words M[0:16, lane], as decode_block32."""
    for i in range(16):
        p = start + U64(8 * i)
        word = U64(0)
        if p + U64(8) <= length:
            q = base + p
            for k in range(8):
                shift = U64(56 - 8 * k) if big else U64(8 * k)
                word = word | (U64(data[q + U64(k)]) << shift)
        else:
            for k in range(8):
                pos = p + U64(k)
                byte = U64(0)
                if pos < length:
                    byte = U64(data[base + pos])
                elif pos == length:
                    byte = U64(marker)
                shift = U64(56 - 8 * k) if big else U64(8 * k)
                word = word | (byte << shift)
        M[i, lane] = word
