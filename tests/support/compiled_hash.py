"""A whole-message hash built on the compressions of ``twocats.kdf.fill.statehash``, for tests.

``hash_bytes(hash_type, msg, out)`` computes the standard, unkeyed hash with its default digest
length (codes: 0 BLAKE2s/32 bytes, 1 BLAKE2b/64, 2 SHA-256/32, 3 SHA-512/64) of a C-contiguous uint8
array of any length and writes the digest to ``out[0:S]``.  Compared with hashlib on messages of
every length, it checks the rolled compressions the fill's state hash runs (which hashes one block
only) on many blocks, counters and paddings.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from twocats.hashes import HASHES
from twocats.kdf.fill.statehash import (
    blake2b_compress,
    blake2s_compress,
    sha256_compress,
    sha512_compress,
)
from twocats.simd._jit import jit

__all__ = ["hash_bytes"]

#: Digest size in bytes per hash code.

# Kernel arguments: numba types them at run time; for mypy they are numpy arrays and integers.
Array = npt.NDArray[Any]
Word = int | np.unsignedinteger[Any]

U8 = np.uint8
U32 = np.uint32
U64 = np.uint64

_BLAKE2S_IV = np.array(HASHES[0].iv, dtype=np.uint32)
_SHA256_IV = np.array(HASHES[2].iv, dtype=np.uint32)
_BLAKE2B_IV = np.array(HASHES[1].iv, dtype=np.uint64)
_SHA512_IV = np.array(HASHES[3].iv, dtype=np.uint64)
# BLAKE2 parameter block word 0 of an unkeyed default-length hash: fanout 1, depth 1, digest size.
_BLAKE2S_PARAM = U32(0x01010020)
_BLAKE2B_PARAM = U64(0x01010040)
_ZERO32 = U32(0)
_ZERO64 = U64(0)


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


@jit
def _store_words32(h: Array, big: bool, out: Array) -> None:
    for i in range(8):
        x = h[i]
        for k in range(4):
            shift = 24 - 8 * k if big else 8 * k
            out[4 * i + k] = U8((x >> shift) & 0xFF)


@jit
def _store_words64(h: Array, big: bool, out: Array) -> None:
    for i in range(8):
        x = h[i]
        for k in range(8):
            shift = U64(56 - 8 * k) if big else U64(8 * k)
            out[8 * i + k] = U8((x >> shift) & U64(0xFF))


# Each whole-message hash keeps the chaining value and the block in one array of 24 words, as the
# compressions take them: h = w[0:8], the block M[:, 0] = w[8:24].


@jit
def _blake2s(msg: Array, out: Array) -> None:
    w = np.zeros(24, dtype=np.uint32)
    w[0:8] = _BLAKE2S_IV
    w[0] = U32(w[0] ^ _BLAKE2S_PARAM)
    m = w[8:24].reshape((16, 1))
    n = U64(msg.size)
    nblocks = max(U64(1), (n + U64(63)) // U64(64))
    for b in range(nblocks):
        start = U64(b) * U64(64)
        decode_block32(msg, U64(0), n, start, False, _ZERO32, m, 0)
        last = U64(b) + U64(1) == nblocks
        blake2s_compress(w, U64(0), U64(8), min(start + U64(64), n), last)
    _store_words32(w, False, out)


@jit
def _blake2b(msg: Array, out: Array) -> None:
    w = np.zeros(24, dtype=np.uint64)
    w[0:8] = _BLAKE2B_IV
    w[0] = w[0] ^ _BLAKE2B_PARAM
    m = w[8:24].reshape((16, 1))
    n = U64(msg.size)
    nblocks = max(U64(1), (n + U64(127)) // U64(128))
    for b in range(nblocks):
        start = U64(b) * U64(128)
        decode_block64(msg, U64(0), n, start, False, _ZERO64, m, 0)
        last = U64(b) + U64(1) == nblocks
        blake2b_compress(w, U64(0), U64(8), min(start + U64(128), n), last)
    _store_words64(w, False, out)


@jit
def _sha256(msg: Array, out: Array) -> None:
    w = np.zeros(24, dtype=np.uint32)
    w[0:8] = _SHA256_IV
    m = w[8:24].reshape((16, 1))
    n = U64(msg.size)
    nblocks = (n + U64(72)) // U64(64)
    for b in range(nblocks):
        start = U64(b) * U64(64)
        decode_block32(msg, U64(0), n, start, True, U32(0x80), m, 0)
        if U64(b) + U64(1) == nblocks:
            m[14, 0] = U32(n >> U64(29))
            m[15, 0] = U32(n << U64(3))
        sha256_compress(w, U64(0), U64(8))
    _store_words32(w, True, out)


@jit
def _sha512(msg: Array, out: Array) -> None:
    w = np.zeros(24, dtype=np.uint64)
    w[0:8] = _SHA512_IV
    m = w[8:24].reshape((16, 1))
    n = U64(msg.size)
    nblocks = (n + U64(144)) // U64(128)
    for b in range(nblocks):
        start = U64(b) * U64(128)
        decode_block64(msg, U64(0), n, start, True, U64(0x80), m, 0)
        if U64(b) + U64(1) == nblocks:
            m[14, 0] = n >> U64(61)
            m[15, 0] = n << U64(3)
        sha512_compress(w, U64(0), U64(8))
    _store_words64(w, True, out)


@jit
def hash_bytes(hash_type: Word, msg: Array, out: Array) -> None:
    """Write the digest of ``msg`` under hash code ``hash_type`` (0..3) into ``out[0:S]``."""
    if hash_type == 0:
        _blake2s(msg, out)
    elif hash_type == 1:
        _blake2b(msg, out)
    elif hash_type == 2:
        _sha256(msg, out)
    else:
        _sha512(msg, out)
