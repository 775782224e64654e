"""Plain-Python SHA-1 (FIPS 180-4), the truth for the multi-buffer SHA-1 kernel.

SHA-1 is offered only for legacy integrity checks (for example, verifying old manifests); it is
broken for collision resistance and is never used for passwords.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["SHA1_IV", "sha1", "sha1_compress", "sha1_many", "sha1_pad"]

_MASK32 = 0xFFFFFFFF
SHA1_IV = (0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0)


def _rotl(x: int, n: int) -> int:
    """Rotate a 32-bit value left by n bits."""
    return ((x << n) | (x >> (32 - n))) & _MASK32


def sha1_compress(h: list[int], block: bytes) -> None:
    """Apply the SHA-1 compression function to the 5-word state ``h`` in place."""
    w = [int.from_bytes(block[i : i + 4], "big") for i in range(0, 64, 4)]
    for t in range(16, 80):
        w.append(_rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1))
    a, b, c, d, e = h
    for t in range(80):
        if t < 20:
            f, k = (b & c) | (~b & d), 0x5A827999
        elif t < 40:
            f, k = b ^ c ^ d, 0x6ED9EBA1
        elif t < 60:
            f, k = (b & c) | (b & d) | (c & d), 0x8F1BBCDC
        else:
            f, k = b ^ c ^ d, 0xCA62C1D6
        a, b, c, d, e = (
            (_rotl(a, 5) + (f & _MASK32) + e + k + w[t]) & _MASK32,
            a,
            _rotl(b, 30),
            c,
            d,
        )
    for i, v in enumerate((a, b, c, d, e)):
        h[i] = (h[i] + v) & _MASK32


def sha1_pad(data: bytes) -> bytes:
    """Return ``data`` with the SHA-1/SHA-256 padding: 0x80, zeros, 64-bit big-endian bit length."""
    return data + b"\x80" + bytes(-(len(data) + 9) % 64) + (8 * len(data)).to_bytes(8, "big")


def sha1(data: bytes) -> bytes:
    """Return the SHA-1 digest of ``data``."""
    h = list(SHA1_IV)
    padded = sha1_pad(data)
    for start in range(0, len(padded), 64):
        sha1_compress(h, padded[start : start + 64])
    return b"".join(v.to_bytes(4, "big") for v in h)


def sha1_many(messages: Sequence[bytes]) -> list[bytes]:
    """Return the SHA-1 digest of each message (the multi-buffer result is the per-message hash)."""
    return [sha1(m) for m in messages]
