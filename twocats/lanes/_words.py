"""Word-level helpers shared by the hash kernels: byte swaps.

Kernel code only (imports numba through ``twocats.simd._jit``).  Every function is a ``jit`` kernel
in the "scalar" vectorizer mode and may be called from any other kernel.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from twocats.simd._jit import jit

__all__ = ["bswap32", "bswap64"]

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
