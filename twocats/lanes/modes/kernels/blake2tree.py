"""The BLAKE2sp and BLAKE2bp driver: a message's leaves in lanes, then its root."""

from __future__ import annotations

from typing import Any

import numpy as np

from twocats.lanes._words import U8, U32, U64, load_word, padded_word
from twocats.lanes.modes._generated import blake2tree
from twocats.lanes.reference.blake2tree import BLAKE2B, BLAKE2S, Blake2Variant
from twocats.simd._jit import variants

__all__ = ["blake2bp_hash", "blake2sp_hash"]

# The globals bound per variant (placeholders: only the bound copies below run).
#: Leaves hashed in lock-step, bytes in a word, the word type and bytes in a block.
K = 8
WB = 4
WORD = np.uint32
BLOCK = 64
#: A word with every bit set (the final-block flag), and the leaves' compression.
ONES = U32(0xFFFFFFFF)
permute = blake2tree.blake2s_tree_lanes


@variants  # type: ignore[call-overload]
def blake2p_hash(
    data: Any,
    length: Any,
    init: Any,
    key: Any,
    keyed: Any,
    out: Any,
    H: Any,
    M: Any,
    T: Any,
    F0: Any,
    F1: Any,
    saved: Any,
    total: Any,
    blocks: Any,
) -> None:
    """Hash data[0:length] with BLAKE2sP or BLAKE2bP; out receives out.shape[0] digest bytes.

    The K leaves run in lanes.  init holds the initial chaining values: rows 0..K-1 for the
    leaves, row K for the root (each the IV xor the node's parameter block).  With ``keyed``
    every leaf first absorbs the BLOCK-byte key block whose words are ``key``.

    The leaves' state is the caller's zeroed scratch, so that the compiled code allocates
    nothing: the chaining values ``H`` (8 * K words), message words ``M`` (16 * K), counters
    ``T`` (K, 64-bit), flags ``F0`` and ``F1`` (K), the leaf digests ``saved`` (8 * K), and per
    leaf its bytes ``total`` and ``blocks`` (K, 64-bit).
    """
    length = U64(length)
    key_bytes = U64(BLOCK) if keyed else U64(0)
    most = U64(0)
    for k in range(K):
        tail = length % U64(512)
        part = U64(0)
        if tail > U64(BLOCK * k):
            part = min(U64(BLOCK), tail - U64(BLOCK * k))
        total[k] = key_bytes + U64(BLOCK) * (length // U64(512)) + part
        blocks[k] = max(U64(1), (total[k] + U64(BLOCK - 1)) // U64(BLOCK))
        most = max(most, blocks[k])
        for i in range(8):
            H[i * K + k] = init[k, i]
    for b in range(most):
        for k in range(K):
            if b >= blocks[k]:
                continue
            if keyed and b == U64(0):
                for i in range(16):
                    M[i * K + k] = key[i]
            else:
                stride = b - U64(1) if keyed else b
                start = U64(512) * stride + U64(BLOCK * k)
                if start + U64(BLOCK) <= length:
                    for i in range(16):
                        M[i * K + k] = WORD(load_word(data, start + U64(WB * i), WB, False))
                else:
                    # The last leaf block is zero-padded (BLAKE2 marks the end with its flags).
                    for i in range(16):
                        word = padded_word(data, U64(0), start + U64(WB * i), length, WB, False, 0)
                        M[i * K + k] = WORD(word)
            last = b + U64(1) == blocks[k]
            T[k] = min(U64(BLOCK) * (b + U64(1)), total[k])
            F0[k] = ONES if last else WORD(0)
            F1[k] = ONES if last and k == K - 1 else WORD(0)
        permute(H, M, T, F0, F1)
        for k in range(K):
            if b + U64(1) == blocks[k]:
                for i in range(8):
                    saved[i * K + k] = H[i * K + k]
    # The root: lane 0 hashes the leaf digests, two per block; the other lanes idle.
    for i in range(8):
        H[i * K] = init[K, i]
    root_blocks = K * 8 * WB // BLOCK
    for r in range(root_blocks):
        for i in range(8):
            M[i * K] = saved[i * K + 2 * r]
            M[(i + 8) * K] = saved[i * K + 2 * r + 1]
        last = r == root_blocks - 1
        T[0] = U64(BLOCK * (r + 1))
        F0[0] = ONES if last else WORD(0)
        F1[0] = ONES if last else WORD(0)
        permute(H, M, T, F0, F1)
    for j in range(out.shape[0]):
        word = U64(H[(j // WB) * K])
        out[j] = U8((word >> U64(8 * (j % WB))) & U64(0xFF))


def _blake2(v: Blake2Variant, word: Any, lanes: Any) -> Any:
    """The BLAKE2 parallel-tree driver bound to one variant."""
    return blake2p_hash.specialise(
        v.name,
        K=v.leaves,
        WB=v.word_bits // 8,
        WORD=word,
        BLOCK=v.block_bytes,
        ONES=word(~word(0)),
        permute=lanes,
    )


blake2sp_hash = _blake2(BLAKE2S, np.uint32, blake2tree.blake2s_tree_lanes)
blake2bp_hash = _blake2(BLAKE2B, np.uint64, blake2tree.blake2b_tree_lanes)
