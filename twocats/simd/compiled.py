"""Single-message hashing callable from other nopython kernels.

This module imports numba (through ``twocats.simd._jit``), so import it lazily, from kernel modules
only.  Usage inside a kernel::

    from twocats.simd.compiled import hash_bytes, DIGEST_SIZES

    @variants
    def kernel(msg, out):
        hash_bytes(np.uint32(2), msg, out)     # SHA-256 of msg (uint8[::1]) into out[0:32]

``hash_bytes(hash_type, msg, out)`` computes the standard, unkeyed hash with its default digest
length (codes: 0 BLAKE2s/32 bytes, 1 BLAKE2b/64, 2 SHA-256/32, 3 SHA-512/64) of a C-contiguous
uint8 array of any length and writes the digest to ``out[0:S]``; ``out`` must be a C-contiguous
uint8 array with at least S elements (unchecked, like every kernel).

The single-state compression functions it is built on live in ``twocats.simd._generated.<hash>``
(re-exported here) and may be called directly: ``blake2s_compress(h, m, t, f)`` and
``blake2b_compress(h, m, t, f)`` (``t`` the uint64 byte count after the block, ``f`` all ones for
the last block, else zero), and ``sha256_compress(h, m)`` and ``sha512_compress(h, m)`` (``m``
holds decoded big-endian words).
The block decoders ``decode_block32`` and ``decode_block64`` are shared with the multi-buffer
kernels.  All these functions compile in the "scalar" vectorizer mode (see ``twocats.simd._jit``).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from twocats.simd._generated.blake2b import blake2b_compress
from twocats.simd._generated.blake2s import blake2s_compress
from twocats.simd._generated.sha256 import sha256_compress
from twocats.simd._generated.sha512 import sha512_compress
from twocats.simd._jit import jit
from twocats.simd._words import decode_block32, decode_block64

__all__ = [
    "DIGEST_SIZES",
    "blake2b_compress",
    "blake2s_compress",
    "decode_block32",
    "decode_block64",
    "hash_bytes",
    "sha256_compress",
    "sha512_compress",
]

#: Digest size in bytes per hash code.
DIGEST_SIZES = (32, 64, 32, 64)

# Kernel arguments: numba types them at run time; for mypy they are numpy arrays and integers.
Array = npt.NDArray[Any]
Word = int | np.unsignedinteger[Any]

U8 = np.uint8
U32 = np.uint32
U64 = np.uint64

_BLAKE2S_IV = np.array(
    [
        0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A,
        0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19,
    ],
    dtype=np.uint32,
)
_SHA256_IV = _BLAKE2S_IV.copy()
_BLAKE2B_IV = np.array(
    [
        0x6A09E667F3BCC908, 0xBB67AE8584CAA73B, 0x3C6EF372FE94F82B, 0xA54FF53A5F1D36F1,
        0x510E527FADE682D1, 0x9B05688C2B3E6C1F, 0x1F83D9ABFB41BD6B, 0x5BE0CD19137E2179,
    ],
    dtype=np.uint64,
)
_SHA512_IV = _BLAKE2B_IV.copy()
# BLAKE2 parameter block word 0 of an unkeyed default-length hash: fanout 1, depth 1, digest size.
_BLAKE2S_PARAM = U32(0x01010020)
_BLAKE2B_PARAM = U64(0x01010040)
_ONES32 = U32(0xFFFFFFFF)
_ONES64 = U64(0xFFFFFFFFFFFFFFFF)
_ZERO32 = U32(0)
_ZERO64 = U64(0)


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


@jit
def _blake2s(msg: Array, out: Array) -> None:
    h = _BLAKE2S_IV.copy()
    h[0] = U32(h[0] ^ _BLAKE2S_PARAM)
    m = np.empty((16, 1), dtype=np.uint32)
    words = m.reshape(16)
    n = U64(msg.size)
    nblocks = max(U64(1), (n + U64(63)) // U64(64))
    for b in range(nblocks):
        start = U64(b) * U64(64)
        decode_block32(msg, U64(0), n, start, False, _ZERO32, m, 0)
        last = U64(b) + U64(1) == nblocks
        blake2s_compress(h, words, min(start + U64(64), n), _ONES32 if last else _ZERO32)
    _store_words32(h, False, out)


@jit
def _blake2b(msg: Array, out: Array) -> None:
    h = _BLAKE2B_IV.copy()
    h[0] = h[0] ^ _BLAKE2B_PARAM
    m = np.empty((16, 1), dtype=np.uint64)
    words = m.reshape(16)
    n = U64(msg.size)
    nblocks = max(U64(1), (n + U64(127)) // U64(128))
    for b in range(nblocks):
        start = U64(b) * U64(128)
        decode_block64(msg, U64(0), n, start, False, _ZERO64, m, 0)
        last = U64(b) + U64(1) == nblocks
        blake2b_compress(h, words, min(start + U64(128), n), _ONES64 if last else _ZERO64)
    _store_words64(h, False, out)


@jit
def _sha256(msg: Array, out: Array) -> None:
    h = _SHA256_IV.copy()
    m = np.empty((16, 1), dtype=np.uint32)
    words = m.reshape(16)
    n = U64(msg.size)
    nblocks = (n + U64(72)) // U64(64)
    for b in range(nblocks):
        start = U64(b) * U64(64)
        decode_block32(msg, U64(0), n, start, True, U32(0x80), m, 0)
        if U64(b) + U64(1) == nblocks:
            m[14, 0] = U32(n >> U64(29))
            m[15, 0] = U32(n << U64(3))
        sha256_compress(h, words)
    _store_words32(h, True, out)


@jit
def _sha512(msg: Array, out: Array) -> None:
    h = _SHA512_IV.copy()
    m = np.empty((16, 1), dtype=np.uint64)
    words = m.reshape(16)
    n = U64(msg.size)
    nblocks = (n + U64(144)) // U64(128)
    for b in range(nblocks):
        start = U64(b) * U64(128)
        decode_block64(msg, U64(0), n, start, True, U64(0x80), m, 0)
        if U64(b) + U64(1) == nblocks:
            m[14, 0] = n >> U64(61)
            m[15, 0] = n << U64(3)
        sha512_compress(h, words)
    _store_words64(h, True, out)


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
