"""Plain-Python BLAKE2s, BLAKE2b, SHA-256, SHA-512 and SHA-1: slow, obvious, and the truth.

Only the standard unkeyed hashes with their default digest lengths are needed by twocats, so that is
all this module offers::

    from twocats.lanes import reference

    reference.sha256(b"abc").hex()           # 'ba7816bf...'
    reference.digest("blake2s", b"abc")      # by algorithm name

Every constant (initial values, round constants, rotations, SIGMA) comes from the one table of hash
facts, :mod:`twocats.hashes`, which derives the IVs and round constants from their definitions (the
first bits of the fractional parts of square and cube roots of the first primes); the tests check
these references against hashlib.  Throughput is around a megabyte per second; use it for tests and
small inputs.

The references of the lane modes are the submodules, each written from its specification only (no
numpy, no numba): ``keccak`` (SHA-3, SHAKE, cSHAKE, TurboSHAKE, KangarooTwelve, ParallelHash),
``blake2tree`` (BLAKE2sp, BLAKE2bp), ``lsh`` (LSH-256, LSH-512) and ``sha256tree`` (j-lanes,
mh_sha256, j-pointers).  Legacy SHA-1, a lane primitive like the others, is the submodule
``sha1``.
"""

from __future__ import annotations

from collections.abc import Callable

from twocats.hashes import SIGMA, HashFacts, by_name
from twocats.lanes.reference.sha1 import sha1

__all__ = [
    "FUNCTIONS",
    "BytesLike",
    "blake2_compress",
    "blake2b",
    "blake2s",
    "digest",
    "painted",
    "sha1",
    "sha256",
    "sha512",
]

#: What the hashes accept (anything bytes() can copy).
BytesLike = bytes | bytearray | memoryview


def painted(*lengths: int) -> list[bytes]:
    """Messages of the given lengths painted ``i % 251``: the known input every compiled lane
    kernel hashes, before it is first used, to agree with these references."""
    return [(bytes(range(251)) * (n // 251 + 1))[:n] for n in lengths]


def _rotr(x: int, n: int, bits: int) -> int:
    return ((x >> n) | (x << (bits - n))) & ((1 << bits) - 1)


def blake2_compress(
    facts: HashFacts, h: list[int], block: bytes, counter: int, last: bool, last_node: bool = False
) -> None:
    """Apply the BLAKE2 compression F to the chaining value ``h`` in place (RFC 7693 §3.2).

    ``counter`` is the number of bytes hashed after this block, ``last`` marks the final block and
    ``last_node`` the last node of a tree level (BLAKE2sp/bp).
    """
    bits = facts.word_bits
    mask = (1 << bits) - 1
    word = facts.word_bytes
    r1, r2, r3, r4 = facts.rotations
    m = [int.from_bytes(block[i : i + word], "little") for i in range(0, facts.block_bytes, word)]
    v = h + list(facts.iv)
    v[12] ^= counter & mask
    v[13] ^= counter >> bits
    if last:
        v[14] ^= mask
    if last_node:
        v[15] ^= mask

    def g(a: int, b: int, c: int, d: int, x: int, y: int) -> None:
        v[a] = (v[a] + v[b] + x) & mask
        v[d] = _rotr(v[d] ^ v[a], r1, bits)
        v[c] = (v[c] + v[d]) & mask
        v[b] = _rotr(v[b] ^ v[c], r2, bits)
        v[a] = (v[a] + v[b] + y) & mask
        v[d] = _rotr(v[d] ^ v[a], r3, bits)
        v[c] = (v[c] + v[d]) & mask
        v[b] = _rotr(v[b] ^ v[c], r4, bits)

    for r in range(facts.rounds):
        s = SIGMA[r % 10]
        for j, (a, b, c, d) in enumerate(_G_WORDS):
            g(a, b, c, d, m[s[2 * j]], m[s[2 * j + 1]])
    for i in range(8):
        h[i] ^= v[i] ^ v[i + 8]


# The state words of the eight G calls of a BLAKE2 round: four columns, then four diagonals.
_G_WORDS = (
    (0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15),
    (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14),
)  # fmt: skip


def _blake2(data: bytes, facts: HashFacts) -> bytes:
    """BLAKE2 (RFC 7693), unkeyed, with the full-length digest."""
    block = facts.block_bytes
    h = list(facts.iv)
    h[0] ^= 0x01010000 | facts.digest_size  # parameter block: digest length, no key, fanout 1
    # Every block but the last is compressed as it stands; the last (possibly partial, possibly the
    # only and empty) block is zero-padded and flagged.
    full = max(0, (len(data) - 1) // block)
    for i in range(full):
        blake2_compress(facts, h, data[i * block : (i + 1) * block], (i + 1) * block, False)
    tail = data[full * block :]
    blake2_compress(facts, h, tail + bytes(block - len(tail)), len(data), True)
    return b"".join(x.to_bytes(facts.word_bytes, "little") for x in h)


def _sha2(data: bytes, facts: HashFacts) -> bytes:
    """SHA-256 or SHA-512 as in FIPS 180-4."""
    bits, rounds, k = facts.word_bits, facts.rounds, facts.k
    mask = (1 << bits) - 1
    word = facts.word_bytes
    block = facts.block_bytes
    r = facts.rotations
    big0, big1, small0, small1 = r[0:3], r[3:6], r[6:9], r[9:12]
    h = list(facts.iv)

    # Padding: a one bit, zeros, and the message length in bits in the last 2 * word bytes.
    length_field = 2 * word
    padded = data + b"\x80"
    padded += bytes(-(len(padded) + length_field) % block)
    padded += (8 * len(data)).to_bytes(length_field, "big")

    def rot3(x: int, amounts: tuple[int, ...]) -> int:
        return _rotr(x, amounts[0], bits) ^ _rotr(x, amounts[1], bits) ^ _rotr(x, amounts[2], bits)

    def small(x: int, amounts: tuple[int, ...]) -> int:
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
    return _blake2(bytes(data), by_name("blake2s"))


def blake2b(data: BytesLike) -> bytes:
    """BLAKE2b-512 of ``data``."""
    return _blake2(bytes(data), by_name("blake2b"))


def sha256(data: BytesLike) -> bytes:
    """SHA-256 of ``data``."""
    return _sha2(bytes(data), by_name("sha256"))


def sha512(data: BytesLike) -> bytes:
    """SHA-512 of ``data``."""
    return _sha2(bytes(data), by_name("sha512"))


#: The reference function of each lane hash, in hash-code order.
FUNCTIONS: dict[str, Callable[[BytesLike], bytes]] = {
    "blake2s": blake2s,
    "blake2b": blake2b,
    "sha256": sha256,
    "sha512": sha512,
    "sha1": sha1,
}


def digest(algorithm: str, data: BytesLike) -> bytes:
    """Return the digest of ``data`` under ``algorithm`` (a key of :data:`FUNCTIONS`)."""
    return FUNCTIONS[algorithm](data)
