"""Plain-Python BLAKE2sp and BLAKE2bp (the truth for the compiled tree kernels).

The construction follows the BLAKE2 specification's parallel modes exactly as described in
lane-hashing.md §6.3: 8 BLAKE2s leaves (BLAKE2sp) or 4 BLAKE2b leaves (BLAKE2bp) take the message's
blocks round-robin, and a root node hashes the leaf digests.  Every node is an ordinary BLAKE2 hash
whose parameter block is written out field by field, so keyed trees and any output length are
expressed directly (``hashlib`` cannot express a root that declares a key length without absorbing
a key block).
"""

from __future__ import annotations

from dataclasses import dataclass

from twocats.hashes import by_name
from twocats.lanes.reference import blake2_compress

__all__ = [
    "BLAKE2B",
    "BLAKE2S",
    "Blake2Variant",
    "blake2_node",
    "blake2bp",
    "blake2sp",
    "leaf_inputs",
    "node_parameter_block",
]


@dataclass(frozen=True)
class Blake2Variant:
    """The constants that distinguish BLAKE2s from BLAKE2b."""

    name: str
    word_bits: int
    rounds: int
    rotations: tuple[int, ...]
    iv: tuple[int, ...]
    leaves: int

    @property
    def block_bytes(self) -> int:
        """Bytes per compression block (64 or 128)."""
        return 16 * self.word_bits // 8

    @property
    def max_digest(self) -> int:
        """Largest digest and key length in bytes (32 or 64)."""
        return self.word_bits

    @property
    def param_bytes(self) -> int:
        """Size of the parameter block in bytes (32 or 64)."""
        return 8 * self.word_bits // 8


# The IVs and rotations come from the one table of hash facts.
BLAKE2S = Blake2Variant(
    "blake2s",
    32,
    10,
    by_name("blake2s").rotations,
    by_name("blake2s").iv,
    8,
)
BLAKE2B = Blake2Variant(
    "blake2b",
    64,
    12,
    by_name("blake2b").rotations,
    by_name("blake2b").iv,
    4,
)


def _compress(
    v: Blake2Variant, h: list[int], block: bytes, counter: int, last: bool, last_node: bool
) -> None:
    """Apply the BLAKE2 compression function F to the chaining value ``h`` in place."""
    blake2_compress(by_name(v.name), h, block, counter, last, last_node)


def node_parameter_block(
    v: Blake2Variant, digest_size: int, key_size: int, node_offset: int, node_depth: int
) -> bytes:
    """Return the parameter block of one node of the parallel tree (fanout = leaves, depth 2).

    Layout: digest_length, key_length, fanout, depth, leaf_length (4 bytes), node_offset (6 bytes
    for BLAKE2s, 8 for BLAKE2b), node_depth, inner_length, then zeros for the reserved field, salt
    and personalization.
    """
    offset_bytes = 6 if v is BLAKE2S else 8
    block = bytes([digest_size, key_size, v.leaves, 2]) + bytes(4)
    block += node_offset.to_bytes(offset_bytes, "little") + bytes([node_depth, v.max_digest])
    return block + bytes(v.param_bytes - len(block))


def blake2_node(
    v: Blake2Variant, params: bytes, data: bytes, key: bytes, last_node: bool, out_len: int
) -> bytes:
    """Hash ``data`` as one BLAKE2 node with an explicit parameter block.

    When ``key`` is non-empty it is absorbed first as one zero-padded block, as in keyed BLAKE2.
    The key length field is whatever ``params`` says, so a root can declare a key it does not
    absorb.
    """
    wb = v.word_bits // 8
    h = [iv ^ int.from_bytes(params[wb * i : wb * i + wb], "little") for i, iv in enumerate(v.iv)]
    stream = (key + bytes(v.block_bytes - len(key)) if key else b"") + data
    bb = v.block_bytes
    nblocks = max(1, -(-len(stream) // bb))
    for b in range(nblocks):
        chunk = stream[b * bb : (b + 1) * bb]
        final = b == nblocks - 1
        counter = len(stream) if final else (b + 1) * bb
        _compress(v, h, chunk + bytes(bb - len(chunk)), counter, final, final and last_node)
    return b"".join(w.to_bytes(wb, "little") for w in h)[:out_len]


def leaf_inputs(v: Blake2Variant, data: bytes) -> list[bytes]:
    """Split ``data`` round-robin by blocks: block k goes to leaf k mod (number of leaves)."""
    bb = v.block_bytes
    stride = bb * v.leaves
    return [
        b"".join(data[s + i * bb : s + (i + 1) * bb] for s in range(0, len(data), stride))
        for i in range(v.leaves)
    ]


def _tree(v: Blake2Variant, data: bytes, key: bytes, digest_size: int) -> bytes:
    """Hash ``data`` with the parallel BLAKE2 tree of variant ``v``."""
    leaves = [
        blake2_node(
            v,
            node_parameter_block(v, digest_size, len(key), i, 0),
            part,
            key,
            i == v.leaves - 1,
            v.max_digest,
        )
        for i, part in enumerate(leaf_inputs(v, data))
    ]
    root_params = node_parameter_block(v, digest_size, len(key), 0, 1)
    return blake2_node(v, root_params, b"".join(leaves), b"", True, digest_size)


def blake2sp(data: bytes, key: bytes = b"", digest_size: int = 32) -> bytes:
    """Return BLAKE2sp of ``data`` (1 <= digest_size <= 32, key of at most 32 bytes)."""
    return _tree(BLAKE2S, data, key, digest_size)


def blake2bp(data: bytes, key: bytes = b"", digest_size: int = 64) -> bytes:
    """Return BLAKE2bp of ``data`` (1 <= digest_size <= 64, key of at most 64 bytes)."""
    return _tree(BLAKE2B, data, key, digest_size)
