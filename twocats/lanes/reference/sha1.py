"""Plain-Python SHA-1 (FIPS 180-4), the truth for SHA-1 in the lanes.

SHA-1 is offered only for legacy integrity checks (for example, verifying old manifests); it is
broken for collision resistance and is never used for passwords.  Its IV, round constants and
rotations come from :data:`twocats.hashes.SHA1`.
"""

from __future__ import annotations

from twocats.hashes import SHA1

__all__ = ["sha1", "sha1_compress", "sha1_pad"]

_MASK32 = 0xFFFFFFFF
_ROTATE_A, _ROTATE_B, _ROTATE_W = SHA1.rotations


def _rotl(x: int, n: int) -> int:
    """Rotate a 32-bit value left by n bits."""
    return ((x << n) | (x >> (32 - n))) & _MASK32


def _f(t: int, b: int, c: int, d: int) -> int:
    """The round function of round ``t``: choose, parity, majority, parity (20 rounds each)."""
    if t < 20:
        return (b & c) | (~b & d)
    if 40 <= t < 60:
        return (b & c) | (b & d) | (c & d)
    return b ^ c ^ d


def sha1_compress(h: list[int], block: bytes) -> None:
    """Apply the SHA-1 compression function to the 5-word state ``h`` in place."""
    w = [int.from_bytes(block[i : i + 4], "big") for i in range(0, 64, 4)]
    for t in range(16, 80):
        w.append(_rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], _ROTATE_W))
    a, b, c, d, e = h
    for t in range(80):
        f = _f(t, b, c, d) & _MASK32
        a, b, c, d, e = (
            (_rotl(a, _ROTATE_A) + f + e + SHA1.k[t // 20] + w[t]) & _MASK32,
            a,
            _rotl(b, _ROTATE_B),
            c,
            d,
        )
    for i, v in enumerate((a, b, c, d, e)):
        h[i] = (h[i] + v) & _MASK32


def sha1_pad(data: bytes) -> bytes:
    """Return ``data`` with the SHA-1/SHA-256 padding: 0x80, zeros, 64-bit big-endian bit length."""
    return data + b"\x80" + bytes(-(len(data) + 9) % 64) + (8 * len(data)).to_bytes(8, "big")


def sha1(data: bytes | bytearray | memoryview) -> bytes:
    """Return the SHA-1 digest of ``data``."""
    h = list(SHA1.iv)
    padded = sha1_pad(bytes(data))
    for start in range(0, len(padded), 64):
        sha1_compress(h, padded[start : start + 64])
    return b"".join(v.to_bytes(4, "big") for v in h)
