"""The four TwoCats hashes as CUDA device functions, for messages of one state and one word.

Each ``digest_<name>(src, soff, value, with_value, dest, doff)`` writes the W words of
``H(bytes(src[soff:soff + W]) || LE32(value))`` to ``dest[doff:doff + W]``, or of
``H(bytes(src[soff:soff + W]))`` when ``with_value`` is False: ``Hv`` and ``Hs`` of twocats.md §2.
Both messages (at most 68 bytes) fit one compression block of every hash type.  ``dest`` may be
``src``: the message is read before the digest is written.  The constants come from
:mod:`twocats.hashes`; the compressions follow :mod:`twocats.kdf.fill.statehash`, written for the
device (scratch in local arrays, every integer pinned to an unsigned type).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from twocats.gpu._cuda import cuda, device
from twocats.hashes import HASHES, SIGMA

__all__ = ["DIGESTS", "digest_blake2b", "digest_blake2s", "digest_sha256", "digest_sha512"]

U32 = np.uint32
U64 = np.uint64

_BLAKE2S, _BLAKE2B, _SHA256, _SHA512 = HASHES
_IV32 = np.array(_BLAKE2S.iv, dtype=np.uint32)
_IV64 = np.array(_BLAKE2B.iv, dtype=np.uint64)
_K32 = np.array(_SHA256.k, dtype=np.uint32)
_K64 = np.array(_SHA512.k, dtype=np.uint64)
_SIGMA = np.array(SIGMA, dtype=np.int32)
_M32 = U64(0xFFFFFFFF)
# BLAKE2 parameter block word 0 of an unkeyed hash: fanout 1, depth 1, the digest size.
_PARAM32 = U32(0x01010000 | _BLAKE2S.digest_size)
_PARAM64 = U64(0x01010000 | _BLAKE2B.digest_size)


@device
def bswap32(x: Any) -> Any:
    """The 32-bit word ``x`` with its bytes in the opposite order."""
    x = U32(x)
    return U32(
        ((x >> U32(24)) & U32(0xFF))
        | ((x >> U32(8)) & U32(0xFF00))
        | ((x << U32(8)) & U32(0xFF0000))
        | ((x << U32(24)) & U32(0xFF000000))
    )


@device
def _rotr32(x: Any, n: Any) -> Any:
    return U32((U32(x) >> U32(n)) | (U32(x) << U32(32 - n)))


@device
def _rotr64(x: Any, n: Any) -> Any:
    return (x >> U64(n)) | (x << U64(64 - n))


@device
def _g32(v: Any, a: Any, b: Any, c: Any, d: Any, x: Any, y: Any) -> None:
    v[a] = U32(U32(v[a] + v[b]) + x)
    v[d] = _rotr32(U32(v[d] ^ v[a]), 16)
    v[c] = U32(v[c] + v[d])
    v[b] = _rotr32(U32(v[b] ^ v[c]), 12)
    v[a] = U32(U32(v[a] + v[b]) + y)
    v[d] = _rotr32(U32(v[d] ^ v[a]), 8)
    v[c] = U32(v[c] + v[d])
    v[b] = _rotr32(U32(v[b] ^ v[c]), 7)


@device
def _g64(v: Any, a: Any, b: Any, c: Any, d: Any, x: Any, y: Any) -> None:
    v[a] = v[a] + v[b] + x
    v[d] = _rotr64(v[d] ^ v[a], 32)
    v[c] = v[c] + v[d]
    v[b] = _rotr64(v[b] ^ v[c], 24)
    v[a] = v[a] + v[b] + y
    v[d] = _rotr64(v[d] ^ v[a], 16)
    v[c] = v[c] + v[d]
    v[b] = _rotr64(v[b] ^ v[c], 63)


@device
def _blake2_rounds(v: Any, m: Any, rounds: Any, wide: Any) -> None:
    """BLAKE2's rounds over the work vector ``v`` and the message block ``m``."""
    for r in range(rounds):
        s = r % 10
        for j in range(8):
            if j < 4:
                a, b, c, d = j, 4 + j, 8 + j, 12 + j
            else:
                a, b, c, d = j - 4, 4 + (j - 3) % 4, 8 + (j - 2) % 4, 12 + (j - 1) % 4
            x, y = m[_SIGMA[s, 2 * j]], m[_SIGMA[s, 2 * j + 1]]
            if wide:
                _g64(v, a, b, c, d, x, y)
            else:
                _g32(v, a, b, c, d, x, y)


@device
def digest_blake2s(src: Any, soff: Any, value: Any, with_value: Any, dest: Any, doff: Any) -> None:
    """BLAKE2s-256 of one state (and a word): see the module docstring."""
    m = cuda.local.array(16, np.uint32)
    v = cuda.local.array(16, np.uint32)
    for k in range(16):
        m[k] = U32(0)
    for k in range(8):
        m[k] = U32(src[soff + k])
        v[k] = _IV32[k]
        v[k + 8] = _IV32[k]
    nbytes = 32
    if with_value:
        m[8] = U32(value)
        nbytes = 36
    v[0] = U32(v[0] ^ _PARAM32)
    v[12] = U32(v[12] ^ U32(nbytes))
    v[14] = U32(v[14] ^ U32(0xFFFFFFFF))
    _blake2_rounds(v, m, 10, False)
    for k in range(8):
        h0 = _IV32[k] ^ _PARAM32 if k == 0 else _IV32[k]
        dest[doff + k] = U32(U32(h0) ^ v[k] ^ v[k + 8])


@device
def digest_blake2b(src: Any, soff: Any, value: Any, with_value: Any, dest: Any, doff: Any) -> None:
    """BLAKE2b-512 of one state (and a word): see the module docstring."""
    m = cuda.local.array(16, np.uint64)
    v = cuda.local.array(16, np.uint64)
    for k in range(16):
        m[k] = U64(0)
    for k in range(8):
        m[k] = U64(src[soff + 2 * k]) | (U64(src[soff + 2 * k + 1]) << U64(32))
        v[k] = _IV64[k]
        v[k + 8] = _IV64[k]
    nbytes = 64
    if with_value:
        m[8] = U64(U32(value))
        nbytes = 68
    v[0] = v[0] ^ _PARAM64
    v[12] = v[12] ^ U64(nbytes)
    v[14] = v[14] ^ U64(0xFFFFFFFFFFFFFFFF)
    _blake2_rounds(v, m, 12, True)
    for k in range(8):
        h0 = _IV64[k] ^ _PARAM64 if k == 0 else _IV64[k]
        h = h0 ^ v[k] ^ v[k + 8]
        dest[doff + 2 * k] = U32(h & _M32)
        dest[doff + 2 * k + 1] = U32(h >> U64(32))


@device
def _sha256_compress(h: Any, w: Any) -> None:
    a, b, c, d, e, f, g, hh = h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]
    for t in range(64):
        if t >= 16:
            x, y = w[(t - 15) & 15], w[(t - 2) & 15]
            s0 = U32(_rotr32(x, 7) ^ _rotr32(x, 18) ^ (x >> U32(3)))
            s1 = U32(_rotr32(y, 17) ^ _rotr32(y, 19) ^ (y >> U32(10)))
            w[t & 15] = U32(U32(U32(w[t & 15] + s0) + w[(t - 7) & 15]) + s1)
        big1 = U32(_rotr32(e, 6) ^ _rotr32(e, 11) ^ _rotr32(e, 25))
        choose = U32(g ^ (e & (f ^ g)))
        t1 = U32(U32(U32(U32(hh + big1) + choose) + _K32[t]) + w[t & 15])
        big0 = U32(_rotr32(a, 2) ^ _rotr32(a, 13) ^ _rotr32(a, 22))
        t2 = U32(big0 + U32((a & b) ^ (c & (a ^ b))))
        hh, g, f, e = g, f, e, U32(d + t1)
        d, c, b, a = c, b, a, U32(t1 + t2)
    h[0] = U32(h[0] + a)
    h[1] = U32(h[1] + b)
    h[2] = U32(h[2] + c)
    h[3] = U32(h[3] + d)
    h[4] = U32(h[4] + e)
    h[5] = U32(h[5] + f)
    h[6] = U32(h[6] + g)
    h[7] = U32(h[7] + hh)


@device
def _sha512_compress(h: Any, w: Any) -> None:
    a, b, c, d, e, f, g, hh = h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]
    for t in range(80):
        if t >= 16:
            x, y = w[(t - 15) & 15], w[(t - 2) & 15]
            s0 = _rotr64(x, 1) ^ _rotr64(x, 8) ^ (x >> U64(7))
            s1 = _rotr64(y, 19) ^ _rotr64(y, 61) ^ (y >> U64(6))
            w[t & 15] = w[t & 15] + s0 + w[(t - 7) & 15] + s1
        big1 = _rotr64(e, 14) ^ _rotr64(e, 18) ^ _rotr64(e, 41)
        t1 = hh + big1 + (g ^ (e & (f ^ g))) + _K64[t] + w[t & 15]
        big0 = _rotr64(a, 28) ^ _rotr64(a, 34) ^ _rotr64(a, 39)
        t2 = big0 + ((a & b) ^ (c & (a ^ b)))
        hh, g, f, e = g, f, e, d + t1
        d, c, b, a = c, b, a, t1 + t2
    h[0] = h[0] + a
    h[1] = h[1] + b
    h[2] = h[2] + c
    h[3] = h[3] + d
    h[4] = h[4] + e
    h[5] = h[5] + f
    h[6] = h[6] + g
    h[7] = h[7] + hh


@device
def digest_sha256(src: Any, soff: Any, value: Any, with_value: Any, dest: Any, doff: Any) -> None:
    """SHA-256 of one state (and a word): see the module docstring."""
    w = cuda.local.array(16, np.uint32)
    h = cuda.local.array(8, np.uint32)
    for k in range(16):
        w[k] = U32(0)
    for k in range(8):
        w[k] = bswap32(src[soff + k])
        h[k] = _IV32[k]
    nbytes = 32
    if with_value:
        w[8] = bswap32(value)
        w[9] = U32(0x80000000)
        nbytes = 36
    else:
        w[8] = U32(0x80000000)
    w[15] = U32(8 * nbytes)
    _sha256_compress(h, w)
    for k in range(8):
        dest[doff + k] = bswap32(h[k])


@device
def digest_sha512(src: Any, soff: Any, value: Any, with_value: Any, dest: Any, doff: Any) -> None:
    """SHA-512 of one state (and a word): see the module docstring."""
    w = cuda.local.array(16, np.uint64)
    h = cuda.local.array(8, np.uint64)
    for k in range(16):
        w[k] = U64(0)
    for k in range(8):
        hi = U64(bswap32(src[soff + 2 * k]))
        lo = U64(bswap32(src[soff + 2 * k + 1]))
        w[k] = (hi << U64(32)) | lo
        h[k] = _IV64[k]
    nbytes = 64
    if with_value:
        w[8] = (U64(bswap32(value)) << U64(32)) | U64(0x80000000)
        nbytes = 68
    else:
        w[8] = U64(0x8000000000000000)
    w[15] = U64(8 * nbytes)
    _sha512_compress(h, w)
    for k in range(8):
        dest[doff + 2 * k] = bswap32(U32(h[k] >> U64(32)))
        dest[doff + 2 * k + 1] = bswap32(U32(h[k] & _M32))


#: The digest of each hash code.
DIGESTS = (digest_blake2s, digest_blake2b, digest_sha256, digest_sha512)
