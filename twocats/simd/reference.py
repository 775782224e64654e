"""Plain-Python BLAKE2s, BLAKE2b, SHA-256 and SHA-512: slow, obvious, and the definition of truth.

Only the standard unkeyed hashes with their default digest lengths are needed by twocats, so that is
all this module offers::

    from twocats.simd import reference

    reference.sha256(b"abc").hex()           # 'ba7816bf...'
    reference.digest("blake2s", b"abc")      # by algorithm name

The round constants and initial values are derived here from their definitions (the first bits of
the fractional parts of square and cube roots of the first primes), not copied from a table, so
they also check the tables of the generated kernels.  Throughput is around a megabyte per second;
use it for tests and small inputs.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["ALGORITHMS", "BytesLike", "blake2b", "blake2s", "digest", "sha256", "sha512"]

#: What the hashes accept (anything bytes() can copy).
BytesLike = bytes | bytearray | memoryview


def _primes(count: int) -> list[int]:
    """Return the first ``count`` primes."""
    found: list[int] = []
    candidate = 2
    while len(found) < count:
        if all(candidate % p for p in found if p * p <= candidate):
            found.append(candidate)
        candidate += 1
    return found


def _iroot(n: int, k: int) -> int:
    """Return the integer k-th root of n: the largest r with r**k <= n."""
    r = 1 << ((n.bit_length() + k - 1) // k)
    while True:
        s = ((k - 1) * r + n // r ** (k - 1)) // k
        if s >= r:
            break
        r = s
    while r**k > n:
        r -= 1
    while (r + 1) ** k <= n:
        r += 1
    return r


def _fraction_bits(p: int, root: int, bits: int) -> int:
    """The first ``bits`` bits of the fractional part of the ``root``-th root of ``p``."""
    return _iroot(p << (root * bits), root) & ((1 << bits) - 1)


_PRIMES = _primes(80)
_IV32 = tuple(_fraction_bits(p, 2, 32) for p in _PRIMES[:8])
_IV64 = tuple(_fraction_bits(p, 2, 64) for p in _PRIMES[:8])
_K32 = tuple(_fraction_bits(p, 3, 32) for p in _PRIMES[:64])
_K64 = tuple(_fraction_bits(p, 3, 64) for p in _PRIMES[:80])

_SIGMA = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
    (14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3),
    (11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4),
    (7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8),
    (9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13),
    (2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9),
    (12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11),
    (13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10),
    (6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5),
    (10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0),
)


def _rotr(x: int, n: int, bits: int) -> int:
    return ((x >> n) | (x << (bits - n))) & ((1 << bits) - 1)


def _blake2(data: bytes, bits: int, rounds: int, rotations: tuple[int, int, int, int]) -> bytes:
    """BLAKE2 (RFC 7693) with ``bits``-bit words, unkeyed, with the full-length digest."""
    mask = (1 << bits) - 1
    word = bits // 8
    block = 16 * word
    out_len = 8 * word
    iv = _IV32 if bits == 32 else _IV64
    h = list(iv)
    h[0] ^= 0x01010000 | out_len  # parameter block: digest length, no key, fanout 1, depth 1
    r1, r2, r3, r4 = rotations

    def compress(chunk: bytes, counter: int, last: bool) -> None:
        m = [int.from_bytes(chunk[i : i + word], "little") for i in range(0, block, word)]
        v = h + list(iv)
        v[12] ^= counter & mask
        v[13] ^= counter >> bits
        if last:
            v[14] ^= mask

        def g(a: int, b: int, c: int, d: int, x: int, y: int) -> None:
            v[a] = (v[a] + v[b] + x) & mask
            v[d] = _rotr(v[d] ^ v[a], r1, bits)
            v[c] = (v[c] + v[d]) & mask
            v[b] = _rotr(v[b] ^ v[c], r2, bits)
            v[a] = (v[a] + v[b] + y) & mask
            v[d] = _rotr(v[d] ^ v[a], r3, bits)
            v[c] = (v[c] + v[d]) & mask
            v[b] = _rotr(v[b] ^ v[c], r4, bits)

        for r in range(rounds):
            s = _SIGMA[r % 10]
            g(0, 4, 8, 12, m[s[0]], m[s[1]])
            g(1, 5, 9, 13, m[s[2]], m[s[3]])
            g(2, 6, 10, 14, m[s[4]], m[s[5]])
            g(3, 7, 11, 15, m[s[6]], m[s[7]])
            g(0, 5, 10, 15, m[s[8]], m[s[9]])
            g(1, 6, 11, 12, m[s[10]], m[s[11]])
            g(2, 7, 8, 13, m[s[12]], m[s[13]])
            g(3, 4, 9, 14, m[s[14]], m[s[15]])
        for i in range(8):
            h[i] ^= v[i] ^ v[i + 8]

    # Every block but the last is compressed as it stands; the last (possibly partial, possibly the
    # only and empty) block is zero-padded and flagged.
    full = max(0, (len(data) - 1) // block)
    for i in range(full):
        compress(data[i * block : (i + 1) * block], (i + 1) * block, False)
    tail = data[full * block :]
    compress(tail + bytes(block - len(tail)), len(data), True)
    return b"".join(x.to_bytes(word, "little") for x in h)


def _sha2(data: bytes, bits: int) -> bytes:
    """SHA-256 (``bits`` 32) or SHA-512 (``bits`` 64) as in FIPS 180-4."""
    mask = (1 << bits) - 1
    word = bits // 8
    block = 16 * word
    if bits == 32:
        k, rounds = _K32, 64
        big0, big1, small0, small1 = (2, 13, 22), (6, 11, 25), (7, 18, 3), (17, 19, 10)
    else:
        k, rounds = _K64, 80
        big0, big1, small0, small1 = (28, 34, 39), (14, 18, 41), (1, 8, 7), (19, 61, 6)
    h = list(_IV32 if bits == 32 else _IV64)

    # Padding: a one bit, zeros, and the message length in bits in the last 2 * word bytes.
    length_field = 2 * word
    padded = data + b"\x80"
    padded += bytes(-(len(padded) + length_field) % block)
    padded += (8 * len(data)).to_bytes(length_field, "big")

    def rot3(x: int, amounts: tuple[int, int, int]) -> int:
        return _rotr(x, amounts[0], bits) ^ _rotr(x, amounts[1], bits) ^ _rotr(x, amounts[2], bits)

    def small(x: int, amounts: tuple[int, int, int]) -> int:
        return _rotr(x, amounts[0], bits) ^ _rotr(x, amounts[1], bits) ^ (x >> amounts[2])

    for start in range(0, len(padded), block):
        w = [int.from_bytes(padded[i : i + word], "big") for i in range(start, start + block, word)]
        for t in range(16, rounds):
            s0, s1 = small(w[t - 15], small0), small(w[t - 2], small1)
            w.append((s1 + w[t - 7] + s0 + w[t - 16]) & mask)
        a, b, c, d, e, f, g, hh = h
        for t in range(rounds):
            t1 = (hh + rot3(e, big1) + ((e & f) ^ (~e & g)) + k[t] + w[t]) & mask
            t2 = (rot3(a, big0) + ((a & b) ^ (a & c) ^ (b & c))) & mask
            hh, g, f, e, d, c, b, a = g, f, e, (d + t1) & mask, c, b, a, (t1 + t2) & mask
        h = [(x + y) & mask for x, y in zip(h, (a, b, c, d, e, f, g, hh), strict=True)]
    return b"".join(x.to_bytes(word, "big") for x in h)


def blake2s(data: BytesLike) -> bytes:
    """BLAKE2s-256 of ``data``."""
    return _blake2(bytes(data), 32, 10, (16, 12, 8, 7))


def blake2b(data: BytesLike) -> bytes:
    """BLAKE2b-512 of ``data``."""
    return _blake2(bytes(data), 64, 12, (32, 24, 16, 63))


def sha256(data: BytesLike) -> bytes:
    """SHA-256 of ``data``."""
    return _sha2(bytes(data), 32)


def sha512(data: BytesLike) -> bytes:
    """SHA-512 of ``data``."""
    return _sha2(bytes(data), 64)


#: The reference function of each algorithm, in hash-code order.
ALGORITHMS: dict[str, Callable[[BytesLike], bytes]] = {
    "blake2s": blake2s,
    "blake2b": blake2b,
    "sha256": sha256,
    "sha512": sha512,
}


def digest(algorithm: str, data: BytesLike) -> bytes:
    """Return the digest of ``data`` under ``algorithm`` (a key of :data:`ALGORITHMS`)."""
    return ALGORITHMS[algorithm](data)
