"""The lane modes' kernel drivers: message scheduling, padding and output around the lane kernels.

Only the unrolled rounds are generated (``twocats/lanes/modes/_generated/``, from
:mod:`twocats.lanes.modes.codegen`); the drivers that feed them are ordinary kernel source.  A
driver shared by two word sizes or lane widths reads its word type, sizes and lane kernel from
module globals, and :meth:`~twocats.simd._jit.Variants.specialise` binds them once per hash below
(numba freezes globals into the machine code, so a bound size is as constant as a literal).  The
values given to those globals here only let the unbound source read as Python: only bound copies
run.

Importing this module imports numba; the mode modules import it on first use.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from twocats.lanes._generated.sha256 import SHA256_IV, sha256_lanes
from twocats.lanes._generated.sha512 import sha512_lanes
from twocats.lanes.modes._generated import blake2tree, keccak, lsh
from twocats.lanes.modes._generated.sha1 import sha1_lanes_x8
from twocats.lanes.modes._generated.sha256tree import sha256_lanes_x8
from twocats.lanes.modes.widths import LSH_WIDTH, SHA1_WIDTH, SHA256_NARROW
from twocats.lanes.reference.blake2tree import BLAKE2B, BLAKE2S, Blake2Variant
from twocats.lanes.reference.sha1 import SHA1_IV as _SHA1_IV
from twocats.simd._jit import variants

__all__ = [
    "blake2bp_hash",
    "blake2sp_hash",
    "keccak_sponge_x4",
    "keccak_sponge_x8",
    "lsh256_many_x8",
    "lsh256_one",
    "lsh512_many_x8",
    "lsh512_one",
    "sha1_many_x8",
    "sha256_jlanes",
    "sha256_mh",
    "sha256_pointers",
    "sha512_pointers",
]

U8 = np.uint8
U32 = np.uint32
U64 = np.uint64

# The globals bound per hash or width (placeholders: only the bound copies below run).
#: Lanes hashed in lock-step.
K = 4
#: Bytes in a word, and the word type.
WB = 8
WORD = np.uint64
#: Bytes in a block.
BLOCK = 136
#: A word with every bit set.
ONES = U64(0xFFFFFFFFFFFFFFFF)
#: The lane kernel (Keccak's permutation, LSH's or BLAKE2's compression over K lanes).
permute = keccak.keccak_x4
#: The single-message compression (LSH).
compress = lsh.lsh256_compress
#: The lane kernels of the SHA-2 pointers driver: up to NARROW lanes, and any number of lanes.
NARROW = SHA256_NARROW
narrow = sha256_lanes_x8
wide = sha256_lanes

SHA1_IV = np.array(_SHA1_IV, dtype=np.uint32)


@variants  # type: ignore[call-overload]
def keccak_sponge(
    data: Any, starts: Any, lengths: Any, order: Any, rate: Any, first: Any, domain: Any, out: Any
) -> None:
    """Run the Keccak sponge on many messages, K at a time, one message per state.

    Message m is data[starts[m]:starts[m] + lengths[m]]; out[m] receives its first out.shape[1]
    output bytes.  Messages are taken in the given order, K per group (sorting them by length
    keeps the lanes of a group equally busy).  ``rate`` is the rate in bytes (a multiple of 8),
    ``first`` the first round (0 for Keccak-f, 12 for TurboSHAKE) and ``domain`` the first padding
    byte (domain bits followed by the first bit of pad10*1).
    """
    count = order.shape[0]
    outlen = U64(out.shape[1])
    rate64 = U64(rate)
    words = rate64 // U64(8)
    S = np.zeros(25 * K, dtype=np.uint64)
    saved = np.zeros(25 * K, dtype=np.uint64)
    blocks = np.zeros(K, dtype=np.uint64)
    for group in range(0, count, K):
        active = min(K, count - group)
        S[:] = U64(0)
        most = U64(0)
        for k in range(active):
            blocks[k] = lengths[order[group + k]] // rate64 + U64(1)
            most = max(most, blocks[k])
        for b in range(most):
            for k in range(active):
                if b >= blocks[k]:
                    continue
                m = order[group + k]
                base = U64(starts[m])
                length = U64(lengths[m])
                pos = b * rate64
                if b + U64(1) < blocks[k]:
                    for w in range(words):
                        q = base + pos + U64(8) * w
                        word = U64(0)
                        for j in range(8):
                            word |= U64(data[q + U64(j)]) << U64(8 * j)
                        S[w * U64(K) + U64(k)] ^= word
                else:
                    # The last block: the message tail, the domain byte, zeros, and the final bit.
                    for w in range(words):
                        word = U64(0)
                        for j in range(8):
                            p = pos + U64(8) * w + U64(j)
                            byte = U64(0)
                            if p < length:
                                byte = U64(data[base + p])
                            elif p == length:
                                byte = U64(domain)
                            word |= byte << (U64(8) * U64(j))
                        S[w * U64(K) + U64(k)] ^= word
                    S[(words - U64(1)) * U64(K) + U64(k)] ^= U64(0x80) << U64(56)
            permute(S, first)
            for k in range(active):
                if b + U64(1) == blocks[k]:
                    for i in range(25):
                        saved[i * K + k] = S[i * K + k]
        S[:] = saved
        done = U64(0)
        while True:
            take = min(rate64, outlen - done)
            for k in range(active):
                m = order[group + k]
                for j in range(take):
                    word = S[(U64(j) // U64(8)) * U64(K) + U64(k)]
                    out[m, done + U64(j)] = U8((word >> (U64(8) * (U64(j) % U64(8)))) & U64(0xFF))
            done += take
            if done >= outlen:
                break
            permute(S, first)


keccak_sponge_x4 = keccak_sponge.specialise("x4", K=4, permute=keccak.keccak_x4)
keccak_sponge_x8 = keccak_sponge.specialise("x8", K=8, permute=keccak.keccak_x8)


@variants  # type: ignore[call-overload]
def lsh_many(data: Any, starts: Any, lengths: Any, order: Any, iv: Any, out: Any) -> None:
    """Hash many messages with LSH, K at a time in lock-step, one message per lane.

    Message m is data[starts[m]:starts[m] + lengths[m]]; out[m] receives the first out.shape[1]
    bytes of its digest.  ``iv`` is the 16-word IV of that digest length.  Messages are taken in
    the given order, K per group.
    """
    count = order.shape[0]
    outlen = out.shape[1]
    block = U64(BLOCK)
    CV = np.zeros(16 * K, dtype=WORD)
    M = np.zeros(32 * K, dtype=WORD)
    even = np.zeros(16 * K, dtype=WORD)
    odd = np.zeros(16 * K, dtype=WORD)
    saved = np.zeros(16 * K, dtype=WORD)
    blocks = np.zeros(K, dtype=np.uint64)
    for group in range(0, count, K):
        active = min(K, count - group)
        most = U64(0)
        for k in range(K):
            for i in range(16):
                CV[i * K + k] = iv[i]
        for k in range(active):
            blocks[k] = U64(lengths[order[group + k]]) // block + U64(1)
            most = max(most, blocks[k])
        for b in range(most):
            for k in range(active):
                if b >= blocks[k]:
                    continue
                m = order[group + k]
                base = U64(starts[m])
                length = U64(lengths[m])
                pos = b * block
                if b + U64(1) < blocks[k]:
                    for i in range(32):
                        q = base + pos + U64(WB * i)
                        word = U64(0)
                        for j in range(WB):
                            word |= U64(data[q + U64(j)]) << U64(8 * j)
                        M[i * K + k] = WORD(word)
                else:
                    # The last block: the message tail, then 0x80, then zeros.
                    for i in range(32):
                        word = U64(0)
                        for j in range(WB):
                            p = pos + U64(WB * i + j)
                            byte = U64(0)
                            if p < length:
                                byte = U64(data[base + p])
                            elif p == length:
                                byte = U64(0x80)
                            word |= byte << U64(8 * j)
                        M[i * K + k] = WORD(word)
            permute(CV, M, even, odd)
            for k in range(active):
                if b + U64(1) == blocks[k]:
                    for i in range(16):
                        saved[i * K + k] = CV[i * K + k]
        for k in range(active):
            m = order[group + k]
            for j in range(outlen):
                i = j // WB
                word = saved[i * K + k] ^ saved[(i + 8) * K + k]
                out[m, j] = U8((U64(word) >> U64(8 * (j % WB))) & U64(0xFF))


@variants  # type: ignore[call-overload]
def lsh_one(data: Any, length: Any, iv: Any, out: Any) -> None:
    """Hash data[0:length] with LSH (single-message kernel); out receives the digest."""
    length = U64(length)
    block = U64(BLOCK)
    CV = np.empty(16, dtype=WORD)
    M = np.empty(32, dtype=WORD)
    for i in range(16):
        CV[i] = iv[i]
    blocks = length // block + U64(1)
    for b in range(blocks):
        pos = b * block
        if b + U64(1) < blocks:
            for i in range(32):
                q = pos + U64(WB * i)
                word = U64(0)
                for j in range(WB):
                    word |= U64(data[q + U64(j)]) << U64(8 * j)
                M[i] = WORD(word)
        else:
            for i in range(32):
                word = U64(0)
                for j in range(WB):
                    p = pos + U64(WB * i + j)
                    byte = U64(0)
                    if p < length:
                        byte = U64(data[p])
                    elif p == length:
                        byte = U64(0x80)
                    word |= byte << U64(8 * j)
                M[i] = WORD(word)
        compress(CV, M)
    for j in range(out.shape[0]):
        i = j // WB
        out[j] = U8((U64(CV[i] ^ CV[i + 8]) >> U64(8 * (j % WB))) & U64(0xFF))


def _lsh(word: Any, lanes: Any, single: Any) -> dict[str, Any]:
    """The globals of the LSH drivers for one word type."""
    wb = np.dtype(word).itemsize
    return {
        "K": LSH_WIDTH,
        "WB": wb,
        "WORD": word,
        "BLOCK": 32 * wb,
        "permute": lanes,
        "compress": single,
    }


_LSH256 = _lsh(np.uint32, lsh.lsh256_lanes_x8, lsh.lsh256_compress)
_LSH512 = _lsh(np.uint64, lsh.lsh512_lanes_x8, lsh.lsh512_compress)
lsh256_many_x8 = lsh_many.specialise("lsh256", **_LSH256)
lsh512_many_x8 = lsh_many.specialise("lsh512", **_LSH512)
lsh256_one = lsh_one.specialise("lsh256", **_LSH256)
lsh512_one = lsh_one.specialise("lsh512", **_LSH512)


@variants  # type: ignore[call-overload]
def sha1_many_x8(data: Any, starts: Any, lengths: Any, order: Any, out: Any) -> None:
    """Hash many messages with SHA-1, SHA1_WIDTH at a time in lock-step, one message per lane.

    Message m is data[starts[m]:starts[m] + lengths[m]]; out[m] receives its 20-byte digest.
    Messages are taken in the given order, SHA1_WIDTH per group.
    """
    count = order.shape[0]
    H = np.zeros(5 * SHA1_WIDTH, dtype=np.uint32)
    M = np.zeros(16 * SHA1_WIDTH, dtype=np.uint32)
    saved = np.zeros(5 * SHA1_WIDTH, dtype=np.uint32)
    blocks = np.zeros(SHA1_WIDTH, dtype=np.uint64)
    for group in range(0, count, SHA1_WIDTH):
        active = min(SHA1_WIDTH, count - group)
        most = U64(0)
        for k in range(SHA1_WIDTH):
            for i in range(5):
                H[i * SHA1_WIDTH + k] = SHA1_IV[i]
        for k in range(active):
            blocks[k] = (U64(lengths[order[group + k]]) + U64(72)) // U64(64)
            most = max(most, blocks[k])
        for b in range(most):
            for k in range(active):
                if b >= blocks[k]:
                    continue
                m = order[group + k]
                base = U64(starts[m])
                length = U64(lengths[m])
                pos = b * U64(64)
                if pos + U64(64) <= length:
                    for i in range(16):
                        q = base + pos + U64(4 * i)
                        M[i * SHA1_WIDTH + k] = U32(
                            (U64(data[q]) << U64(24))
                            | (U64(data[q + U64(1)]) << U64(16))
                            | (U64(data[q + U64(2)]) << U64(8))
                            | U64(data[q + U64(3)])
                        )
                else:
                    # A padding block: the message tail, 0x80, zeros, and in the last block
                    # the 64-bit big-endian bit length.
                    for i in range(16):
                        word = U64(0)
                        for j in range(4):
                            p = pos + U64(4 * i + j)
                            byte = U64(0)
                            if p < length:
                                byte = U64(data[base + p])
                            elif p == length:
                                byte = U64(0x80)
                            word |= byte << U64(24 - 8 * j)
                        M[i * SHA1_WIDTH + k] = U32(word)
                    if b + U64(1) == blocks[k]:
                        M[14 * SHA1_WIDTH + k] = U32(length >> U64(29))
                        M[15 * SHA1_WIDTH + k] = U32((length << U64(3)) & U64(0xFFFFFFFF))
            sha1_lanes_x8(H, M)
            for k in range(active):
                if b + U64(1) == blocks[k]:
                    for i in range(5):
                        saved[i * SHA1_WIDTH + k] = H[i * SHA1_WIDTH + k]
        for k in range(active):
            m = order[group + k]
            for j in range(20):
                word = U64(saved[(j // 4) * SHA1_WIDTH + k])
                out[m, j] = U8((word >> U64(24 - 8 * (j % 4))) & U64(0xFF))


@variants  # type: ignore[call-overload]
def blake2p_hash(data: Any, length: Any, init: Any, key: Any, keyed: Any, out: Any) -> None:
    """Hash data[0:length] with BLAKE2sP or BLAKE2bP; out receives out.shape[0] digest bytes.

    The K leaves run in lanes.  init holds the initial chaining values: rows 0..K-1 for the
    leaves, row K for the root (each the IV xor the node's parameter block).  With ``keyed``
    every leaf first absorbs the BLOCK-byte key block whose words are ``key``.
    """
    H = np.zeros(8 * K, dtype=WORD)
    M = np.zeros(16 * K, dtype=WORD)
    T = np.zeros(K, dtype=np.uint64)
    F0 = np.zeros(K, dtype=WORD)
    F1 = np.zeros(K, dtype=WORD)
    saved = np.zeros(8 * K, dtype=WORD)
    total = np.zeros(K, dtype=np.uint64)
    blocks = np.zeros(K, dtype=np.uint64)
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
                        q = start + U64(WB * i)
                        word = U64(0)
                        for j in range(WB):
                            word |= U64(data[q + U64(j)]) << U64(8 * j)
                        M[i * K + k] = WORD(word)
                else:
                    for i in range(16):
                        word = U64(0)
                        for j in range(WB):
                            p = start + U64(WB * i + j)
                            if p < length:
                                word |= U64(data[p]) << U64(8 * j)
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


@variants  # type: ignore[call-overload]
def sha256_jlanes(data: Any, length: Any, j: Any, iv: Any, out: Any) -> None:
    """Hash the j lanes of j-lanes SHA-256; out[k] receives lane k's 8 state words.

    Lane k is the message made of the 32-bit words k, k + j, k + 2j, ... of data[0:length] (the
    last word may be partial); each lane is padded as its own SHA-256 message and starts from the
    8 words ``iv``.
    """
    lanes = U64(j)
    # Up to SHA256_NARROW lanes run on the narrow kernel (extra lanes idle), more on the wide one.
    width = SHA256_NARROW if j <= SHA256_NARROW else j
    H = np.empty((8, width), dtype=np.uint32)
    M = np.zeros((16, width), dtype=np.uint32)
    T = np.zeros(width, dtype=np.uint64)
    F = np.zeros(width, dtype=np.uint32)
    sizes = np.zeros(j, dtype=np.uint64)
    blocks = np.zeros(j, dtype=np.uint64)
    length = U64(length)
    words = (length + U64(3)) // U64(4)
    most = U64(0)
    for k in range(width):
        for i in range(8):
            H[i, k] = iv[i]
    for k in range(j):
        lane = U64(k)
        count = U64(0)
        if lane < words:
            count = (words - lane + lanes - U64(1)) // lanes
        size = U64(4) * count
        if count > U64(0) and length % U64(4) != U64(0) and (words - U64(1)) % lanes == lane:
            size -= U64(4) - length % U64(4)
        sizes[k] = size
        blocks[k] = (size + U64(72)) // U64(64)
        most = max(most, blocks[k])
    smallest = sizes[j - 1]
    for b in range(most):
        if b * U64(64) + U64(64) <= smallest:
            # Every lane has a full block here: read the message in order, j words at a time.
            for i in range(16):
                row = U64(4) * (b * U64(16) + U64(i)) * lanes
                for k in range(j):
                    q = row + U64(4 * k)
                    M[i, k] = U32(
                        (U64(data[q]) << U64(24))
                        | (U64(data[q + U64(1)]) << U64(16))
                        | (U64(data[q + U64(2)]) << U64(8))
                        | U64(data[q + U64(3)])
                    )
            if width == SHA256_NARROW:
                sha256_lanes_x8(H, M, T, F, width)
            else:
                sha256_lanes(H, M, T, F, width)
            continue
        for k in range(j):
            if b >= blocks[k]:
                continue
            lane = U64(k)
            size = sizes[k]
            pos = b * U64(64)
            if pos + U64(64) <= size:
                for i in range(16):
                    q = U64(4) * ((b * U64(16) + U64(i)) * lanes + lane)
                    M[i, k] = U32(
                        (U64(data[q]) << U64(24))
                        | (U64(data[q + U64(1)]) << U64(16))
                        | (U64(data[q + U64(2)]) << U64(8))
                        | U64(data[q + U64(3)])
                    )
            else:
                for i in range(16):
                    word = U64(0)
                    for t in range(4):
                        p = pos + U64(4 * i + t)
                        byte = U64(0)
                        if p < size:
                            byte = U64(data[U64(4) * ((p // U64(4)) * lanes + lane) + p % U64(4)])
                        elif p == size:
                            byte = U64(0x80)
                        word |= byte << U64(24 - 8 * t)
                    M[i, k] = U32(word)
                if b + U64(1) == blocks[k]:
                    M[14, k] = U32(size >> U64(29))
                    M[15, k] = U32((size << U64(3)) & U64(0xFFFFFFFF))
        if width == SHA256_NARROW:
            sha256_lanes_x8(H, M, T, F, width)
        else:
            sha256_lanes(H, M, T, F, width)
        for k in range(j):
            if b + U64(1) == blocks[k]:
                for i in range(8):
                    out[k, i] = H[i, k]


@variants  # type: ignore[call-overload]
def sha256_mh(data: Any, length: Any, out: Any) -> None:
    """Hash data[0:length] with the 16 segments of Intel's mh_sha256; out[s] gets segment s.

    Segment s takes the 32-bit words s, s + 16, s + 32, ... of the message after one global
    padding to a multiple of 1024 bytes (0x80, zeros, the 64-bit big-endian bit length).
    """
    H = np.empty((8, 16), dtype=np.uint32)
    M = np.zeros((16, 16), dtype=np.uint32)
    T = np.zeros(16, dtype=np.uint64)
    F = np.zeros(16, dtype=np.uint32)
    length = U64(length)
    tail = length % U64(1024)
    padded = length - tail + (U64(1024) if tail <= U64(1015) else U64(2048))
    bits = length << U64(3)
    for s in range(16):
        for i in range(8):
            H[i, s] = SHA256_IV[i]
    for b in range(padded // U64(1024)):
        base = b * U64(1024)
        if base + U64(1024) <= length:
            for i in range(16):
                for s in range(16):
                    q = base + U64(4 * (16 * i + s))
                    M[i, s] = U32(
                        (U64(data[q]) << U64(24))
                        | (U64(data[q + U64(1)]) << U64(16))
                        | (U64(data[q + U64(2)]) << U64(8))
                        | U64(data[q + U64(3)])
                    )
        else:
            for i in range(16):
                for s in range(16):
                    word = U64(0)
                    for t in range(4):
                        g = base + U64(4 * (16 * i + s) + t)
                        byte = U64(0)
                        if g < length:
                            byte = U64(data[g])
                        elif g == length:
                            byte = U64(0x80)
                        elif g >= padded - U64(8):
                            byte = (bits >> (U64(8) * (padded - U64(1) - g))) & U64(0xFF)
                        word |= byte << U64(24 - 8 * t)
                    M[i, s] = U32(word)
        # An int64, not the literal 16: the other callers pass an int64 width, and a literal would
        # compile the lane kernel a second time for its own signature.
        sha256_lanes(H, M, T, F, np.int64(16))
    for s in range(16):
        for i in range(8):
            out[s, i] = H[i, s]


@variants  # type: ignore[call-overload]
def sha2_pointers(data: Any, starts: Any, lengths: Any, iv: Any, out: Any) -> None:
    """Hash each message data[starts[m]:starts[m] + lengths[m]] with SHA-2 from ``iv``.

    The messages run in lanes, all of them at once; out[m] receives message m's 8 state words.
    Up to NARROW messages run on the lane kernel ``narrow`` (extra lanes idle), more on ``wide``.
    """
    count = starts.shape[0]
    width = NARROW if count <= NARROW else count
    H = np.empty((8, width), dtype=WORD)
    M = np.zeros((16, width), dtype=WORD)
    T = np.zeros(width, dtype=np.uint64)
    F = np.zeros(width, dtype=WORD)
    blocks = np.zeros(count, dtype=np.uint64)
    most = U64(0)
    for k in range(width):
        for i in range(8):
            H[i, k] = iv[i]
    for k in range(count):
        blocks[k] = (U64(lengths[k]) + U64(BLOCK + 2 * WB)) // U64(BLOCK)
        most = max(most, blocks[k])
    for b in range(most):
        for k in range(count):
            if b >= blocks[k]:
                continue
            base = U64(starts[k])
            size = U64(lengths[k])
            pos = b * U64(BLOCK)
            if pos + U64(BLOCK) <= size:
                for i in range(16):
                    q = base + pos + U64(WB * i)
                    word = U64(0)
                    for t in range(WB):
                        word |= U64(data[q + U64(t)]) << U64(8 * (WB - 1 - t))
                    M[i, k] = WORD(word)
            else:
                for i in range(16):
                    word = U64(0)
                    for t in range(WB):
                        p = pos + U64(WB * i + t)
                        byte = U64(0)
                        if p < size:
                            byte = U64(data[base + p])
                        elif p == size:
                            byte = U64(0x80)
                        word |= byte << U64(8 * (WB - 1 - t))
                    M[i, k] = WORD(word)
                if b + U64(1) == blocks[k]:
                    # The bit length, big-endian in the last two words (its top bits are zero).
                    M[14, k] = WORD(size >> U64(8 * WB - 3))
                    M[15, k] = WORD(size << U64(3))
        if width == NARROW:
            narrow(H, M, T, F, width)
        else:
            wide(H, M, T, F, width)
        for k in range(count):
            if b + U64(1) == blocks[k]:
                for i in range(8):
                    out[k, i] = H[i, k]


sha256_pointers = sha2_pointers.specialise(
    "sha256",
    WB=4,
    WORD=np.uint32,
    BLOCK=64,
    NARROW=SHA256_NARROW,
    narrow=sha256_lanes_x8,
    wide=sha256_lanes,
)
# SHA-512 has no narrow kernel: every message count runs on the general one.
sha512_pointers = sha2_pointers.specialise(
    "sha512", WB=8, WORD=np.uint64, BLOCK=128, NARROW=0, narrow=sha512_lanes, wide=sha512_lanes
)
