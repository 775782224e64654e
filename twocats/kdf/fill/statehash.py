"""``Hv``, the state hash the fill kernels run once per block, with rolled compression loops.

``Hv(words, value)`` hashes the W words of a region state and one 32-bit value (twocats.md §2); the
message is at most 68 bytes, one compression block for every hash type.  It runs once per block,
between the block's last row and the next block's first multiply, so its latency adds to every
block: the BLAKE2 work vector lives in locals (the rounds stay a loop, which compiles in a
fraction of the time of unrolled code), and no array is sliced (see below).  The constants come
from :mod:`twocats.hashes`.

There is one function per hash type, so that a kernel links only the compression it uses.  The
compressions (``blake2s_compress`` etc.) are public so that tests can run them on messages of every
length against hashlib.  Usage inside a kernel (``w32`` and ``w64`` are scratch arrays of
:data:`SCRATCH_WORDS` words; the digest's W words are left at ``w32[DIGEST_AT:]``)::

    STATE_HASHES[hash_code](big_endian, states, p, value, w32, w64)

It imports numba (through ``twocats.simd._jit``); import it lazily, from kernel modules only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from twocats.hashes import HASHES, SCRATCH_WORDS, SIGMA
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
_SIGMA = np.array(SIGMA, dtype=np.intp)
# BLAKE2 parameter block word 0 of an unkeyed hash: fanout 1, depth 1, the digest size.
_PARAM32 = U32(0x01010000 | _BLAKE2S.digest_size)
_PARAM64 = U64(0x01010000 | _BLAKE2B.digest_size)
# Message bytes of Hv: W words and the 4-byte value.
_HV_BYTES32 = 4 * _BLAKE2S.state_words + 4
_HV_BYTES64 = 4 * _BLAKE2B.state_words + 4


_R1, _R2, _R3, _R4 = _BLAKE2S.rotations
_Q1, _Q2, _Q3, _Q4 = _BLAKE2B.rotations


@jit
def _g32(a: Any, b: Any, c: Any, d: Any, x: Any, y: Any) -> Any:
    """BLAKE2s mixing function G on four state words and two message words."""
    a = U32(a + b + x)
    z = U32(d ^ a)
    d = U32((z >> U32(_R1)) | (z << U32(32 - _R1)))
    c = U32(c + d)
    z = U32(b ^ c)
    b = U32((z >> U32(_R2)) | (z << U32(32 - _R2)))
    a = U32(a + b + y)
    z = U32(d ^ a)
    d = U32((z >> U32(_R3)) | (z << U32(32 - _R3)))
    c = U32(c + d)
    z = U32(b ^ c)
    return a, U32((z >> U32(_R4)) | (z << U32(32 - _R4))), c, d


@jit
def _g64(a: Any, b: Any, c: Any, d: Any, x: Any, y: Any) -> Any:
    """BLAKE2b mixing function G on four state words and two message words."""
    a = a + b + x
    z = d ^ a
    d = (z >> U64(_Q1)) | (z << U64(64 - _Q1))
    c = c + d
    z = b ^ c
    b = (z >> U64(_Q2)) | (z << U64(64 - _Q2))
    a = a + b + y
    z = d ^ a
    d = (z >> U64(_Q3)) | (z << U64(64 - _Q3))
    c = c + d
    z = b ^ c
    return a, (z >> U64(_Q4)) | (z << U64(64 - _Q4)), c, d


@jit
def _g(wide: Any, a: Any, b: Any, c: Any, d: Any, x: Any, y: Any) -> Any:
    """G of BLAKE2b if ``wide`` (a constant), else of BLAKE2s."""
    if wide:
        return _g64(a, b, c, d, x, y)
    return _g32(a, b, c, d, x, y)


@jit
def _blake2_compress(
    wide: Any, w: Any, h: Any, m: Any, iv: Any, rounds: Any, t0: Any, t1: Any, last: Any
) -> None:
    """BLAKE2 compression of the block w[m:m+16] into w[h:h+8] (BLAKE2b if ``wide``).

    ``t0`` and ``t1`` are the words of the byte counter, ``last`` the final-block flag word.  The
    work vector lives in sixteen locals, so that its words never make a round trip through
    memory, and the message words are read where they lie (those loads do not wait for the
    rounds).
    """
    v0, v1, v2, v3 = w[h], w[h + 1], w[h + 2], w[h + 3]
    v4, v5, v6, v7 = w[h + 4], w[h + 5], w[h + 6], w[h + 7]
    v8, v9, v10, v11, v15 = iv[0], iv[1], iv[2], iv[3], iv[7]
    v12, v13, v14 = iv[4] ^ t0, iv[5] ^ t1, iv[6] ^ last
    for r in range(rounds):
        s = _SIGMA[r % 10]
        v0, v4, v8, v12 = _g(wide, v0, v4, v8, v12, w[m + s[0]], w[m + s[1]])
        v1, v5, v9, v13 = _g(wide, v1, v5, v9, v13, w[m + s[2]], w[m + s[3]])
        v2, v6, v10, v14 = _g(wide, v2, v6, v10, v14, w[m + s[4]], w[m + s[5]])
        v3, v7, v11, v15 = _g(wide, v3, v7, v11, v15, w[m + s[6]], w[m + s[7]])
        v0, v5, v10, v15 = _g(wide, v0, v5, v10, v15, w[m + s[8]], w[m + s[9]])
        v1, v6, v11, v12 = _g(wide, v1, v6, v11, v12, w[m + s[10]], w[m + s[11]])
        v2, v7, v8, v13 = _g(wide, v2, v7, v8, v13, w[m + s[12]], w[m + s[13]])
        v3, v4, v9, v14 = _g(wide, v3, v4, v9, v14, w[m + s[14]], w[m + s[15]])
    w[h] = w[h] ^ v0 ^ v8
    w[h + 1] = w[h + 1] ^ v1 ^ v9
    w[h + 2] = w[h + 2] ^ v2 ^ v10
    w[h + 3] = w[h + 3] ^ v3 ^ v11
    w[h + 4] = w[h + 4] ^ v4 ^ v12
    w[h + 5] = w[h + 5] ^ v5 ^ v13
    w[h + 6] = w[h + 6] ^ v6 ^ v14
    w[h + 7] = w[h + 7] ^ v7 ^ v15


@jit
def blake2s_compress(w: Any, h: Any, m: Any, t: Any, last: Any) -> None:
    """BLAKE2s compression of the block w[m:m+16] into w[h:h+8], ``t`` bytes hashed after it.

    ``last`` marks the final block.
    """
    t0 = U32(U64(t) & U64(0xFFFFFFFF))
    t1 = U32(U64(t) >> U64(32))
    _blake2_compress(False, w, h, m, _IV32, 10, t0, t1, U32(0xFFFFFFFF) if last else U32(0))


@jit
def blake2b_compress(w: Any, h: Any, m: Any, t: Any, last: Any) -> None:
    """BLAKE2b compression of the block w[m:m+16] into w[h:h+8], as :func:`blake2s_compress`."""
    flag = U64(0xFFFFFFFFFFFFFFFF) if last else U64(0)
    _blake2_compress(True, w, h, m, _IV64, 12, U64(t), U64(0), flag)


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
    blake2s_compress(w32, 0, 8, _HV_BYTES32, True)
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
    blake2b_compress(w64, 0, 8, _HV_BYTES64, True)
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
