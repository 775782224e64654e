"""``Hv``, the state hash the fill kernels run once per block, with rolled compression loops.

``Hv(words, value)`` hashes the W words of a region state and one 32-bit value (twocats.md §2); the
message is at most 68 bytes, one compression block for every hash type.  It runs once per block of
thousands of words, so it is off the hot path: the compressions here are plain loops over the
rounds, which compile in a fraction of the time of unrolled code and link cheaply into every fill
kernel.  The constants come from :mod:`twocats.hashes`.

There is one function per hash type, so that a kernel links only the compression it uses.  The
compressions (``blake2s_compress`` etc.) are public so that tests can run them on messages of every
length against hashlib.  Usage inside a kernel (``w32`` and ``w64`` are scratch arrays of
:data:`SCRATCH_WORDS` words)::

    STATE_HASHES[hash_code](big_endian, words, value, dest, offset, count, w32, w64)

It imports numba (through ``twocats.simd._jit``); import it lazily, from kernel modules only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from twocats.hashes import HASHES, SCRATCH_WORDS, SIGMA
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
_SIGMA = np.array(SIGMA, dtype=np.intp)
# The G calls of one BLAKE2 round: four columns, then four diagonals (state word indices).
_G_WORDS = np.array(
    [[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15],
     [0, 5, 10, 15], [1, 6, 11, 12], [2, 7, 8, 13], [3, 4, 9, 14]],
    dtype=np.intp,
)  # fmt: skip
# BLAKE2 parameter block word 0 of an unkeyed hash: fanout 1, depth 1, the digest size.
_PARAM32 = U32(0x01010000 | _BLAKE2S.digest_size)
_PARAM64 = U64(0x01010000 | _BLAKE2B.digest_size)
# Message bytes of Hv: W words and the 4-byte value.
_HV_BYTES32 = 4 * _BLAKE2S.state_words + 4
_HV_BYTES64 = 4 * _BLAKE2B.state_words + 4


@jit
def blake2s_compress(h: Any, m: Any, v: Any, t: Any, last: Any) -> None:
    """BLAKE2s compression of block m[0:16] into h[0:8], ``t`` bytes hashed after this block.

    ``v`` is a scratch array of 16 words; ``last`` marks the final block.
    """
    for i in range(8):
        v[i] = h[i]
        v[i + 8] = _IV32[i]
    v[12] = U32(v[12] ^ U32(U64(t) & U64(0xFFFFFFFF)))
    v[13] = U32(v[13] ^ U32(U64(t) >> U64(32)))
    if last:
        v[14] = U32(v[14] ^ U32(0xFFFFFFFF))
    for r in range(10):
        for j in range(8):
            a, b, c, d = _G_WORDS[j, 0], _G_WORDS[j, 1], _G_WORDS[j, 2], _G_WORDS[j, 3]
            x, y = m[_SIGMA[r, 2 * j]], m[_SIGMA[r, 2 * j + 1]]
            va = U32(v[a] + v[b] + x)
            z = U32(v[d] ^ va)
            vd = U32((z >> U32(16)) | (z << U32(16)))
            vc = U32(v[c] + vd)
            z = U32(v[b] ^ vc)
            vb = U32((z >> U32(12)) | (z << U32(20)))
            va = U32(va + vb + y)
            z = U32(vd ^ va)
            vd = U32((z >> U32(8)) | (z << U32(24)))
            vc = U32(vc + vd)
            z = U32(vb ^ vc)
            v[a], v[b], v[c], v[d] = va, U32((z >> U32(7)) | (z << U32(25))), vc, vd
    for i in range(8):
        h[i] = U32(h[i] ^ v[i] ^ v[i + 8])


@jit
def blake2b_compress(h: Any, m: Any, v: Any, t: Any, last: Any) -> None:
    """BLAKE2b compression of block m[0:16] into h[0:8], as :func:`blake2s_compress`."""
    for i in range(8):
        v[i] = h[i]
        v[i + 8] = _IV64[i]
    v[12] = v[12] ^ U64(t)
    if last:
        v[14] = v[14] ^ U64(0xFFFFFFFFFFFFFFFF)
    for r in range(12):
        for j in range(8):
            a, b, c, d = _G_WORDS[j, 0], _G_WORDS[j, 1], _G_WORDS[j, 2], _G_WORDS[j, 3]
            x, y = m[_SIGMA[r % 10, 2 * j]], m[_SIGMA[r % 10, 2 * j + 1]]
            va = v[a] + v[b] + x
            z = v[d] ^ va
            vd = (z >> U64(32)) | (z << U64(32))
            vc = v[c] + vd
            z = v[b] ^ vc
            vb = (z >> U64(24)) | (z << U64(40))
            va = va + vb + y
            z = vd ^ va
            vd = (z >> U64(16)) | (z << U64(48))
            vc = vc + vd
            z = vb ^ vc
            v[a], v[b], v[c], v[d] = va, (z >> U64(63)) | (z << U64(1)), vc, vd
    for i in range(8):
        h[i] = h[i] ^ v[i] ^ v[i + 8]


@jit
def sha256_compress(h: Any, w: Any) -> None:
    """SHA-256 compression of the decoded block w[0:16] into h[0:8]; w is overwritten."""
    a, b, c, d, e, f, g, hh = h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]
    for t in range(64):
        if t >= 16:
            x, y = w[(t - 15) & 15], w[(t - 2) & 15]
            s0 = ((x >> U32(7)) | (x << U32(25))) ^ ((x >> U32(18)) | (x << U32(14)))
            s0 = s0 ^ (x >> U32(3))
            s1 = ((y >> U32(17)) | (y << U32(15))) ^ ((y >> U32(19)) | (y << U32(13)))
            s1 = s1 ^ (y >> U32(10))
            w[t & 15] = U32(w[t & 15] + U32(s0) + w[(t - 7) & 15] + U32(s1))
        big1 = ((e >> U32(6)) | (e << U32(26))) ^ ((e >> U32(11)) | (e << U32(21)))
        big1 = U32(big1 ^ ((e >> U32(25)) | (e << U32(7))))
        t1 = U32(hh + big1 + U32(g ^ (e & (f ^ g))) + _K32[t] + w[t & 15])
        big0 = ((a >> U32(2)) | (a << U32(30))) ^ ((a >> U32(13)) | (a << U32(19)))
        big0 = U32(big0 ^ ((a >> U32(22)) | (a << U32(10))))
        t2 = U32(big0 + U32((a & b) ^ (c & (a ^ b))))
        hh, g, f, e = g, f, e, U32(d + t1)
        d, c, b, a = c, b, a, U32(t1 + t2)
    for i, x in enumerate((a, b, c, d, e, f, g, hh)):
        h[i] = U32(h[i] + x)


@jit
def sha512_compress(h: Any, w: Any) -> None:
    """SHA-512 compression of the decoded block w[0:16] into h[0:8]; w is overwritten."""
    a, b, c, d, e, f, g, hh = h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]
    for t in range(80):
        if t >= 16:
            x, y = w[(t - 15) & 15], w[(t - 2) & 15]
            s0 = ((x >> U64(1)) | (x << U64(63))) ^ ((x >> U64(8)) | (x << U64(56)))
            s0 = s0 ^ (x >> U64(7))
            s1 = ((y >> U64(19)) | (y << U64(45))) ^ ((y >> U64(61)) | (y << U64(3)))
            s1 = s1 ^ (y >> U64(6))
            w[t & 15] = w[t & 15] + s0 + w[(t - 7) & 15] + s1
        big1 = ((e >> U64(14)) | (e << U64(50))) ^ ((e >> U64(18)) | (e << U64(46)))
        big1 = big1 ^ ((e >> U64(41)) | (e << U64(23)))
        t1 = hh + big1 + (g ^ (e & (f ^ g))) + _K64[t] + w[t & 15]
        big0 = ((a >> U64(28)) | (a << U64(36))) ^ ((a >> U64(34)) | (a << U64(30)))
        big0 = big0 ^ ((a >> U64(39)) | (a << U64(25)))
        t2 = big0 + ((a & b) ^ (c & (a ^ b)))
        hh, g, f, e = g, f, e, d + t1
        d, c, b, a = c, b, a, t1 + t2
    for i, x in enumerate((a, b, c, d, e, f, g, hh)):
        h[i] = h[i] + x


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
def _message32(swap: Any, words: Any, value: Any, w: Any) -> None:
    """Lay out the Hv message of a 32-bit hash in w[8:24] and its IV in w[0:8]."""
    for k in range(8):
        w[8 + k] = _message_word(U64(words[k]), swap)
        w[16 + k] = U32(0)
        w[k] = _IV32[k]
    w[16] = _message_word(U64(value), swap)


@jit
def _message64(sha: Any, swap: Any, words: Any, value: Any, w: Any) -> None:
    """Lay out the Hv message of a 64-bit hash in w[8:24] and its IV in w[0:8]."""
    for k in range(8):
        lo = U64(_message_word(U64(words[2 * k]), swap))
        hi = U64(_message_word(U64(words[2 * k + 1]), swap))
        w[8 + k] = (lo << U64(32)) | hi if sha else lo | (hi << U64(32))
        w[16 + k] = U64(0)
        w[k] = _IV64[k]
    w[16] = U64(_message_word(U64(value), swap))


@jit
def _digest32(swap: Any, w: Any, dest: Any, offset: Any, count: Any) -> None:
    for k in range(count):
        dest[offset + k] = _message_word(U64(w[k]), swap)


@jit
def _digest64(sha: Any, swap: Any, w: Any, dest: Any, offset: Any, count: Any) -> None:
    for k in range(count):
        shift = U64(32) * U64((k & 1) ^ 1 if sha else k & 1)
        dest[offset + k] = _message_word(w[k >> 1] >> shift, swap)


# Each state hash below writes the first ``count`` words of ``Hv(words, value)`` to
# ``dest[offset:]``: ``value`` is hashed as 4 little-endian bytes (big-endian for the March 2014
# version) and the digest is read back as words in the same order.  ``dest`` may be ``words``.
# A word's bytes are read by BLAKE2 little-endian and by SHA-2 big-endian, hence ``swap``.


@jit
def hv_blake2s(
    big_endian: Any, words: Any, value: Any, dest: Any, offset: Any, count: Any, w32: Any, w64: Any
) -> None:
    """Hv with BLAKE2s (``w64`` unused)."""
    _message32(big_endian, words, value, w32)
    w32[0] = U32(w32[0] ^ _PARAM32)
    blake2s_compress(w32[0:8], w32[8:24], w32[24:40], _HV_BYTES32, True)
    _digest32(big_endian, w32, dest, offset, count)


@jit
def hv_sha256(
    big_endian: Any, words: Any, value: Any, dest: Any, offset: Any, count: Any, w32: Any, w64: Any
) -> None:
    """Hv with SHA-256 (``w64`` unused)."""
    swap = not big_endian
    _message32(swap, words, value, w32)
    w32[17] = U32(0x80000000)
    w32[23] = U32(_HV_BYTES32 * 8)
    sha256_compress(w32[0:8], w32[8:24])
    _digest32(swap, w32, dest, offset, count)


@jit
def hv_blake2b(
    big_endian: Any, words: Any, value: Any, dest: Any, offset: Any, count: Any, w32: Any, w64: Any
) -> None:
    """Hv with BLAKE2b (``w32`` unused)."""
    _message64(False, big_endian, words, value, w64)
    w64[0] = w64[0] ^ _PARAM64
    blake2b_compress(w64[0:8], w64[8:24], w64[24:40], _HV_BYTES64, True)
    _digest64(False, big_endian, w64, dest, offset, count)


@jit
def hv_sha512(
    big_endian: Any, words: Any, value: Any, dest: Any, offset: Any, count: Any, w32: Any, w64: Any
) -> None:
    """Hv with SHA-512 (``w32`` unused)."""
    swap = not big_endian
    _message64(True, swap, words, value, w64)
    w64[16] = (w64[16] << U64(32)) | U64(0x80000000)
    w64[23] = U64(_HV_BYTES64 * 8)
    sha512_compress(w64[0:8], w64[8:24])
    _digest64(True, swap, w64, dest, offset, count)


#: The state hash of each hash code.
STATE_HASHES = (hv_blake2s, hv_blake2b, hv_sha256, hv_sha512)
