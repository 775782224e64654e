"""Word-level helpers shared by the hash kernels: byte swaps, and message words read and padded.

Kernel code only (imports numba through ``twocats.simd._jit``).  Every function is a ``jit`` kernel
in the "scalar" vectorizer mode and may be called from any other kernel.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
from numba import types
from numba.extending import intrinsic

from twocats.simd._jit import jit

__all__ = ["U8", "U32", "U64", "bswap32", "bswap64", "load_word", "padded_word", "pointer"]

if sys.byteorder != "little":
    raise ImportError("twocats kernels assume a little-endian host")

#: The word types of the kernels, short to keep kernel source readable.
U8 = np.uint8
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
def load_word(data: Any, q: Any, nbytes: Any, big_endian: Any) -> Any:
    """Return the ``nbytes``-byte word at data[q] (a byte array) in the given byte order."""
    word = U64(0)
    for t in range(nbytes):
        shift = 8 * (nbytes - 1 - t) if big_endian else 8 * t
        word |= U64(data[q + U64(t)]) << U64(shift)
    return word


@jit
def padded_word(
    data: Any, base: Any, pos: Any, length: Any, nbytes: Any, big_endian: Any, pad: Any
) -> Any:
    """Return the word at offset ``pos`` of a message's padded last block.

    The message is data[base:base + length]; the byte at offset ``length`` is ``pad`` (0x80 for
    SHA-1, SHA-2 and LSH, the domain byte for Keccak, 0 for BLAKE2) and the bytes after it are
    zero.
    """
    word = U64(0)
    for t in range(nbytes):
        p = pos + U64(t)
        byte = U64(0)
        if p < length:
            byte = U64(data[base + p])
        elif p == length:
            byte = U64(pad)
        shift = 8 * (nbytes - 1 - t) if big_endian else 8 * t
        word |= byte << U64(shift)
    return word


@intrinsic
def pointer(typingctx: Any, address: Any) -> Any:
    """The address held in a 64-bit integer, as a pointer that ``numba.carray`` can view."""
    signature = types.voidptr(types.uint64)

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        return builder.inttoptr(args[0], context.get_value_type(types.voidptr))

    return signature, codegen
