"""Plain-Python SHA-256 tree modes: j-lanes, Intel's mh_sha256 layout, and j-pointers.

* j-lanes (Gueron; lane-hashing.md §2.4): the message is read as 32-bit words; word w goes to lane
  w mod j; every lane is an ordinary SHA-256 message (own padding and length) started from
  ``leaf_iv``; the root is SHA-256 from ``root_iv`` over the j lane digests in lane order.  With
  the default IVs every step can be checked with ``hashlib``; the IVs are parameters so that the
  IVs proposed in the 2014 paper can be supplied without code changes.
* mh_sha256 (Intel ISA-L multi-hash, §2.2): 16 word-interleaved segments, but with one global
  padding of the whole message to a multiple of 1024 bytes, raw chaining values as segment digests,
  and a root over the segment words laid out word-major and little-endian.
* j-pointers (§2.2, the BIKE form): j contiguous slices whose length is chosen so that each slice's
  padding ends exactly on a block boundary, plus a short remainder hashed with the root; or j
  separate messages whose digests are hashed together.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from twocats.exceptions import InvalidParametersError
from twocats.hashes import by_name

__all__ = [
    "JLANES_WIDTHS",
    "JPOINTER_HASHES",
    "ROUND_CONSTANTS",
    "SHA256_IV",
    "jlanes_sha256",
    "jlanes_split",
    "jpointers",
    "jpointers_messages",
    "jpointers_slice_length",
    "mh_sha256",
    "sha256_compress",
    "sha256_pad",
    "sha256_with_iv",
]

_MASK32 = 0xFFFFFFFF

SHA256_IV = by_name("sha256").iv

JLANES_WIDTHS = (4, 8, 16)

# Hash name -> (block size, padding overhead: the 0x80 byte plus the length field), in bytes.
JPOINTER_HASHES = {"sha256": (64, 9), "sha384": (128, 17), "sha512": (128, 17)}


# The round constants: the first 32 fraction bits of the cube roots of the first 64 primes.
ROUND_CONSTANTS = by_name("sha256").k


def _rotr(x: int, n: int) -> int:
    """Rotate a 32-bit value right by n bits."""
    return ((x >> n) | (x << (32 - n))) & _MASK32


def sha256_compress(h: list[int], block: bytes) -> None:
    """Apply the SHA-256 compression function to the 8-word state ``h`` in place."""
    w = [int.from_bytes(block[i : i + 4], "big") for i in range(0, 64, 4)]
    for t in range(16, 64):
        s0 = _rotr(w[t - 15], 7) ^ _rotr(w[t - 15], 18) ^ (w[t - 15] >> 3)
        s1 = _rotr(w[t - 2], 17) ^ _rotr(w[t - 2], 19) ^ (w[t - 2] >> 10)
        w.append((w[t - 16] + s0 + w[t - 7] + s1) & _MASK32)
    a, b, c, d, e, f, g, hh = h
    for t in range(64):
        t1 = (
            hh
            + (_rotr(e, 6) ^ _rotr(e, 11) ^ _rotr(e, 25))
            + ((e & f) ^ (~e & g))
            + ROUND_CONSTANTS[t]
            + w[t]
        ) & _MASK32
        t2 = ((_rotr(a, 2) ^ _rotr(a, 13) ^ _rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) & _MASK32
        a, b, c, d, e, f, g, hh = (t1 + t2) & _MASK32, a, b, c, (d + t1) & _MASK32, e, f, g
    for i, v in enumerate((a, b, c, d, e, f, g, hh)):
        h[i] = (h[i] + v) & _MASK32


def sha256_pad(data: bytes) -> bytes:
    """Return ``data`` with SHA-256 padding: 0x80, zeros, the 64-bit big-endian bit length."""
    return data + b"\x80" + bytes(-(len(data) + 9) % 64) + (8 * len(data)).to_bytes(8, "big")


def sha256_with_iv(data: bytes, iv: Sequence[int] = SHA256_IV) -> bytes:
    """Return SHA-256 of ``data`` started from the chaining value ``iv`` (standard padding)."""
    h = list(iv)
    padded = sha256_pad(data)
    for start in range(0, len(padded), 64):
        sha256_compress(h, padded[start : start + 64])
    return b"".join(v.to_bytes(4, "big") for v in h)


def _check_iv(name: str, iv: Sequence[int]) -> None:
    """Reject an IV that is not eight 32-bit words."""
    if len(iv) != 8 or any(not 0 <= v <= _MASK32 for v in iv):
        raise InvalidParametersError(f"{name} must be 8 integers in [0, 2**32 - 1]")


def jlanes_split(data: bytes, j: int) -> list[bytes]:
    """Return the j lane messages: lane k holds the 32-bit words k, k + j, k + 2j, ... of data."""
    nwords = -(-len(data) // 4)
    return [b"".join(data[4 * w : 4 * w + 4] for w in range(k, nwords, j)) for k in range(j)]


def jlanes_sha256(
    data: bytes, j: int = 8, leaf_iv: Sequence[int] = SHA256_IV, root_iv: Sequence[int] = SHA256_IV
) -> bytes:
    """Return the j-lanes SHA-256 tree hash of ``data`` (j in 4, 8, 16)."""
    if j not in JLANES_WIDTHS:
        raise InvalidParametersError(f"j must be one of {JLANES_WIDTHS}")
    _check_iv("leaf_iv", leaf_iv)
    _check_iv("root_iv", root_iv)
    digests = [sha256_with_iv(lane, leaf_iv) for lane in jlanes_split(data, j)]
    return sha256_with_iv(b"".join(digests), root_iv)


def mh_sha256(data: bytes) -> bytes:
    """Return Intel's multi-hash SHA-256 (ISA-L ``mh_sha256``): 16 segments, global padding."""
    tail = len(data) % 1024
    pad_len = (1024 if tail <= 1015 else 2048) - tail
    padded = data + b"\x80" + bytes(pad_len - 9) + (8 * len(data)).to_bytes(8, "big")
    segments = [list(SHA256_IV) for _ in range(16)]
    for start in range(0, len(padded), 1024):
        for s, lane_block in enumerate(jlanes_split(padded[start : start + 1024], 16)):
            sha256_compress(segments[s], lane_block)
    root_input = b"".join(segments[s][i].to_bytes(4, "little") for i in range(8) for s in range(16))
    return hashlib.sha256(root_input).digest()


def _check_hash(hash_name: str) -> tuple[int, int]:
    """Return (block size, padding overhead) of a j-pointers hash, or raise for an unknown name."""
    try:
        return JPOINTER_HASHES[hash_name]
    except KeyError:
        allowed = ", ".join(JPOINTER_HASHES)
        raise InvalidParametersError(f"hash_name must be one of: {allowed}") from None


def jpointers_slice_length(length: int, j: int, hash_name: str = "sha256") -> int:
    """Return the slice length ls = B*floor((floor(la/j) - R)/B) + R, with R = B - overhead.

    This choice makes every slice end exactly where its padding fills the last block, so the j lanes
    are equally long and waste no padding block.  It needs floor(la/j) >= R.
    """
    block, overhead = _check_hash(hash_name)
    rem = block - overhead
    if j < 1:
        raise InvalidParametersError("j must be at least 1")
    if length // j < rem:
        raise InvalidParametersError(
            f"j-pointers slicing needs a message of at least j * {rem} bytes for {hash_name}"
        )
    return block * ((length // j - rem) // block) + rem


def jpointers(data: bytes, j: int = 8, hash_name: str = "sha256") -> bytes:
    """Return H(H(A_0) ‖ … ‖ H(A_{j-1}) ‖ Y): j padding-aligned slices A_i and a tail Y."""
    ls = jpointers_slice_length(len(data), j, hash_name)
    digests = [hashlib.new(hash_name, data[i * ls : (i + 1) * ls]).digest() for i in range(j)]
    return hashlib.new(hash_name, b"".join(digests) + data[j * ls :]).digest()


def jpointers_messages(messages: Sequence[bytes], hash_name: str = "sha256") -> bytes:
    """Return H(H(m_0) ‖ … ‖ H(m_{j-1})) for j separate messages (j-pointers over buffers)."""
    _check_hash(hash_name)
    return hashlib.new(
        hash_name, b"".join(hashlib.new(hash_name, m).digest() for m in messages)
    ).digest()
