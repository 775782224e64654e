"""``Hv``, the state hash the fill kernels run once per block.

``Hv(words, value)`` hashes the W words of a region state and one 32-bit value (twocats.md §2); the
message is at most 68 bytes, one compression block for every hash type.  It runs once per block,
between the block's last row and the next block's first multiply, so its latency adds to every
block: the BLAKE2 compressions are unrolled with the work vector in locals (generated, in
``_generated/compress.py``), and no array is sliced (see below).  The SHA-2 compressions, which
the fill's table of goals does not use, are plain loops over the rounds, which compile in a
fraction of the time.  The constants come from :mod:`twocats.hashes`.

There is one function per hash type, so that a kernel links only the compression it uses.  The
compressions (``blake2s_compress`` etc.) are public so that tests can run them on messages of every
length against hashlib; their ``h`` and ``m`` offsets are uint64.  Usage inside a kernel (``w32``
and ``w64`` are scratch arrays of :data:`SCRATCH_WORDS` words; the digest's W words are left at
``w32[DIGEST_AT:]``)::

    STATE_HASHES[hash_code](big_endian, states, p, value, w32, w64)

It imports numba (through ``twocats.simd._jit``); import it lazily, from kernel modules only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from twocats.hashes import HASHES, SCRATCH_WORDS
from twocats.kdf.fill._generated.compress import blake2b_compress, blake2s_compress
from twocats.kdf.fill.args import DIGEST_AT
from twocats.simd._jit import jit

__all__ = [
    "SCRATCH_WORDS",
    "STATE_HASHES",
    "blake2b_compress",
    "blake2s_compress",
    "hv_blake2b",
    "hv_blake2s",
    "hv_sha256",
    "hv_sha512",
    "sha256_compress",
    "sha512_compress",
]


U32 = np.uint32
U64 = np.uint64

_BLAKE2S, _BLAKE2B, _SHA256, _SHA512 = HASHES
_IV32 = np.array(_BLAKE2S.iv, dtype=np.uint32)
_IV64 = np.array(_BLAKE2B.iv, dtype=np.uint64)
_K32 = np.array(_SHA256.k, dtype=np.uint32)
_K64 = np.array(_SHA512.k, dtype=np.uint64)
# BLAKE2 parameter block word 0 of an unkeyed hash: fanout 1, depth 1, the digest size.
_PARAM32 = U32(0x01010000 | _BLAKE2S.digest_size)
_PARAM64 = U64(0x01010000 | _BLAKE2B.digest_size)
# Message bytes of Hv: W words and the 4-byte value.
_HV_BYTES32 = 4 * _BLAKE2S.state_words + 4
_HV_BYTES64 = 4 * _BLAKE2B.state_words + 4


@jit
def sha256_compress(w: Any, h: Any, m: Any) -> None:
    """SHA-256 compression of the decoded block w[m:m+16] into w[h:h+8], overwriting the block."""
    a, b, c, d = w[h], w[h + 1], w[h + 2], w[h + 3]
    e, f, g, hh = w[h + 4], w[h + 5], w[h + 6], w[h + 7]
    for t in range(64):
        if t >= 16:
            x, y = w[m + ((t - 15) & 15)], w[m + ((t - 2) & 15)]
            s0 = ((x >> U32(7)) | (x << U32(25))) ^ ((x >> U32(18)) | (x << U32(14)))
            s0 = s0 ^ (x >> U32(3))
            s1 = ((y >> U32(17)) | (y << U32(15))) ^ ((y >> U32(19)) | (y << U32(13)))
            s1 = s1 ^ (y >> U32(10))
            w[m + (t & 15)] = U32(w[m + (t & 15)] + U32(s0) + w[m + ((t - 7) & 15)] + U32(s1))
        big1 = ((e >> U32(6)) | (e << U32(26))) ^ ((e >> U32(11)) | (e << U32(21)))
        big1 = U32(big1 ^ ((e >> U32(25)) | (e << U32(7))))
        t1 = U32(hh + big1 + U32(g ^ (e & (f ^ g))) + _K32[t] + w[m + (t & 15)])
        big0 = ((a >> U32(2)) | (a << U32(30))) ^ ((a >> U32(13)) | (a << U32(19)))
        big0 = U32(big0 ^ ((a >> U32(22)) | (a << U32(10))))
        t2 = U32(big0 + U32((a & b) ^ (c & (a ^ b))))
        hh, g, f, e = g, f, e, U32(d + t1)
        d, c, b, a = c, b, a, U32(t1 + t2)
    for i, x in enumerate((a, b, c, d, e, f, g, hh)):
        w[h + i] = U32(w[h + i] + x)


@jit
def sha512_compress(w: Any, h: Any, m: Any) -> None:
    """SHA-512 compression of the decoded block w[m:m+16] into w[h:h+8], overwriting the block."""
    a, b, c, d = w[h], w[h + 1], w[h + 2], w[h + 3]
    e, f, g, hh = w[h + 4], w[h + 5], w[h + 6], w[h + 7]
    for t in range(80):
        if t >= 16:
            x, y = w[m + ((t - 15) & 15)], w[m + ((t - 2) & 15)]
            s0 = ((x >> U64(1)) | (x << U64(63))) ^ ((x >> U64(8)) | (x << U64(56)))
            s0 = s0 ^ (x >> U64(7))
            s1 = ((y >> U64(19)) | (y << U64(45))) ^ ((y >> U64(61)) | (y << U64(3)))
            s1 = s1 ^ (y >> U64(6))
            w[m + (t & 15)] = w[m + (t & 15)] + s0 + w[m + ((t - 7) & 15)] + s1
        big1 = ((e >> U64(14)) | (e << U64(50))) ^ ((e >> U64(18)) | (e << U64(46)))
        big1 = big1 ^ ((e >> U64(41)) | (e << U64(23)))
        t1 = hh + big1 + (g ^ (e & (f ^ g))) + _K64[t] + w[m + (t & 15)]
        big0 = ((a >> U64(28)) | (a << U64(36))) ^ ((a >> U64(34)) | (a << U64(30)))
        big0 = big0 ^ ((a >> U64(39)) | (a << U64(25)))
        t2 = big0 + ((a & b) ^ (c & (a ^ b)))
        hh, g, f, e = g, f, e, d + t1
        d, c, b, a = c, b, a, t1 + t2
    for i, x in enumerate((a, b, c, d, e, f, g, hh)):
        w[h + i] = w[h + i] + x


@jit
def _message_word(x: Any, swap: Any) -> Any:
    """A 32-bit word as the hash reads it: byte-swapped when the two byte orders differ."""
    x = U32(x & U64(0xFFFFFFFF))
    if not swap:
        return x
    return U32(
        ((x >> U32(24)) & U32(0xFF))
        | ((x >> U32(8)) & U32(0xFF00))
        | ((x << U32(8)) & U32(0xFF0000))
        | ((x << U32(24)) & U32(0xFF000000))
    )


@jit
def _message32(swap: Any, states: Any, p: Any, value: Any, w: Any) -> None:
    """Lay out the Hv message of a 32-bit hash in w[8:24] and its IV in w[0:8]."""
    for k in range(8):
        w[8 + k] = _message_word(U64(states[p, k]), swap)
        w[16 + k] = U32(0)
        w[k] = _IV32[k]
    w[16] = _message_word(U64(value), swap)


@jit
def _message64(sha: Any, swap: Any, states: Any, p: Any, value: Any, w: Any) -> None:
    """Lay out the Hv message of a 64-bit hash in w[8:24] and its IV in w[0:8]."""
    for k in range(8):
        lo = U64(_message_word(U64(states[p, 2 * k]), swap))
        hi = U64(_message_word(U64(states[p, 2 * k + 1]), swap))
        w[8 + k] = (lo << U64(32)) | hi if sha else lo | (hi << U64(32))
        w[16 + k] = U64(0)
        w[k] = _IV64[k]
    w[16] = U64(_message_word(U64(value), swap))


@jit
def _digest32(swap: Any, w: Any, out: Any) -> None:
    for k in range(8):
        out[DIGEST_AT + k] = _message_word(U64(w[k]), swap)


@jit
def _digest64(sha: Any, swap: Any, w: Any, out: Any) -> None:
    for k in range(16):
        shift = U64(32) * U64((k & 1) ^ 1 if sha else k & 1)
        out[DIGEST_AT + k] = _message_word(w[k >> 1] >> shift, swap)


# Each state hash below computes ``Hv(states[p], value)`` and leaves the W words of the digest in
# ``w32[DIGEST_AT:DIGEST_AT + W]``: ``value`` is hashed as 4 little-endian bytes (big-endian for
# the March 2014 version) and the digest is read back as words in the same order.  A word's bytes
# are read by BLAKE2 little-endian and by SHA-2 big-endian, hence ``swap``.  Arrays are passed
# whole and indexed: a slice would be a new array whose reference counting costs locked
# instructions, which wait for every store of the fill still in flight.


@jit
def hv_blake2s(big_endian: Any, states: Any, p: Any, value: Any, w32: Any, w64: Any) -> None:
    """Hv with BLAKE2s (``w64`` unused)."""
    _message32(big_endian, states, p, value, w32)
    w32[0] = U32(w32[0] ^ _PARAM32)
    blake2s_compress(w32, U64(0), U64(8), _HV_BYTES32, True)
    _digest32(big_endian, w32, w32)


@jit
def hv_sha256(big_endian: Any, states: Any, p: Any, value: Any, w32: Any, w64: Any) -> None:
    """Hv with SHA-256 (``w64`` unused)."""
    swap = not big_endian
    _message32(swap, states, p, value, w32)
    w32[17] = U32(0x80000000)
    w32[23] = U32(_HV_BYTES32 * 8)
    sha256_compress(w32, 0, 8)
    _digest32(swap, w32, w32)


@jit
def hv_blake2b(big_endian: Any, states: Any, p: Any, value: Any, w32: Any, w64: Any) -> None:
    """Hv with BLAKE2b (``w32`` holds the digest's words only)."""
    _message64(False, big_endian, states, p, value, w64)
    w64[0] = w64[0] ^ _PARAM64
    blake2b_compress(w64, U64(0), U64(8), _HV_BYTES64, True)
    _digest64(False, big_endian, w64, w32)


@jit
def hv_sha512(big_endian: Any, states: Any, p: Any, value: Any, w32: Any, w64: Any) -> None:
    """Hv with SHA-512 (``w32`` holds the digest's words only)."""
    swap = not big_endian
    _message64(True, swap, states, p, value, w64)
    w64[16] = (w64[16] << U64(32)) | U64(0x80000000)
    w64[23] = U64(_HV_BYTES64 * 8)
    sha512_compress(w64, 0, 8)
    _digest64(True, swap, w64, w32)


#: The state hash of each hash code.
STATE_HASHES = (hv_blake2s, hv_blake2b, hv_sha256, hv_sha512)
