"""Independent oracles for the lane modes, written from the specifications for the tests.

Nothing here comes from twocats: the encodings of SP 800-185, the trees of RFC 9861 and of the
lane-hashing notes, and the splitting rules are written afresh, on the primitives of hashlib and
pycryptodome (cSHAKE, TurboSHAKE) only.  A test that compares twocats with one of these therefore
compares two separate implementations.
"""

from __future__ import annotations

import hashlib

from Crypto.Hash import TurboSHAKE128, TurboSHAKE256
from Crypto.Hash.cSHAKE128 import cSHAKE_XOF

#: KangarooTwelve's chunk size (RFC 9861 section 3).
KT_CHUNK = 8192


def _minimal_bytes(x: int) -> bytes:
    """``x`` big-endian in as few bytes as possible (at least one)."""
    return x.to_bytes(max(1, (x.bit_length() + 7) // 8), "big")


def left_encode(x: int) -> bytes:
    """SP 800-185 left_encode: the byte count, then ``x`` big-endian."""
    body = _minimal_bytes(x)
    return bytes([len(body)]) + body


def right_encode(x: int) -> bytes:
    """SP 800-185 right_encode: ``x`` big-endian, then the byte count."""
    body = _minimal_bytes(x)
    return body + bytes([len(body)])


def length_encode(x: int) -> bytes:
    """RFC 9861 length_encode: ``x`` big-endian without leading zeros, then its byte count."""
    body = x.to_bytes((x.bit_length() + 7) // 8, "big")
    return body + bytes([len(body)])


def parallelhash(
    data: bytes, block: int, length: int, custom: bytes, *, security: int, xof: bool
) -> bytes:
    """SP 800-185 ParallelHash128/256 (``security`` 128 or 256), or its XOF form."""
    shake = hashlib.shake_128 if security == 128 else hashlib.shake_256
    pieces = [data[start : start + block] for start in range(0, len(data), block)]
    z = left_encode(block)
    z += b"".join(shake(piece).digest(security // 4) for piece in pieces)
    z += right_encode(len(pieces)) + right_encode(0 if xof else 8 * length)
    return bytes(cSHAKE_XOF(z, custom, 2 * security, b"ParallelHash").read(length))


def kangarootwelve(data: bytes, custom: bytes, length: int, *, security: int) -> bytes:
    """RFC 9861 KT128 or KT256 (``security`` 128 or 256) on pycryptodome's TurboSHAKE."""
    turboshake = TurboSHAKE128 if security == 128 else TurboSHAKE256
    chaining = security // 4
    s = data + custom + length_encode(len(custom))
    if len(s) <= KT_CHUNK:
        return bytes(turboshake.new(domain=0x07, data=s).read(length))
    chunks = [s[start : start + KT_CHUNK] for start in range(0, len(s), KT_CHUNK)]
    node = chunks[0] + b"\x03" + bytes(7)
    node += b"".join(turboshake.new(domain=0x0B, data=c).read(chaining) for c in chunks[1:])
    node += length_encode(len(chunks) - 1) + b"\xff\xff"
    return bytes(turboshake.new(domain=0x06, data=node).read(length))


def round_robin(data: bytes, unit: int, ways: int) -> list[bytes]:
    """Deal ``data`` in pieces of ``unit`` bytes to ``ways`` parts: piece k goes to part k mod ways.

    This is the split of BLAKE2sp/bp (blocks to leaves) and of j-lanes (32-bit words to lanes).
    """
    pieces = [data[start : start + unit] for start in range(0, len(data), unit)]
    return [b"".join(pieces[part::ways]) for part in range(ways)]


def jpointers_slice_length(length: int, j: int, block: int, overhead: int) -> int:
    """The longest slice of at most length // j bytes whose padding (``overhead``) ends a block."""
    most = length // j
    return most - (most + overhead) % block


def blake2_tree(data: bytes, *, wide: bool) -> bytes:
    """Unkeyed full-length BLAKE2sp (or BLAKE2bp when ``wide``) from hashlib's tree parameters.

    BLAKE2sp deals 64-byte blocks to 8 BLAKE2s leaves, BLAKE2bp 128-byte blocks to 4 BLAKE2b
    leaves; the root hashes the leaves' digests.
    """
    ctor, size, block, fanout = (
        (hashlib.blake2b, 64, 128, 4) if wide else (hashlib.blake2s, 32, 64, 8)
    )
    tree = {"digest_size": size, "fanout": fanout, "depth": 2, "inner_size": size}
    leaves = [
        ctor(part, node_offset=i, node_depth=0, last_node=i == fanout - 1, **tree).digest()
        for i, part in enumerate(round_robin(data, block, fanout))
    ]
    return ctor(b"".join(leaves), node_offset=0, node_depth=1, last_node=True, **tree).digest()
