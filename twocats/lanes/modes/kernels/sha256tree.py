"""The SHA-2 tree drivers: j-lanes SHA-256, mh_sha256, and j-pointers bound per word size."""

from __future__ import annotations

from typing import Any

import numpy as np

from twocats.lanes._generated.sha256 import SHA256_IV, sha256_lanes
from twocats.lanes._generated.sha512 import sha512_lanes
from twocats.lanes._words import U32, U64, load_word, padded_word
from twocats.lanes.modes._generated.sha256tree import sha256_lanes_x8
from twocats.lanes.modes.widths import SHA256_NARROW
from twocats.simd._jit import variants

__all__ = ["sha256_jlanes", "sha256_mh", "sha256_pointers", "sha512_pointers"]

# The globals of the pointers driver (SHA-256's; only the bound copies below run).
#: Bytes in a word, the word type and bytes in a block.
WB = 4
WORD = np.uint32
BLOCK = 64
#: The lane kernels: up to NARROW lanes, and any number of lanes.
NARROW = SHA256_NARROW
narrow = sha256_lanes_x8
wide = sha256_lanes


@variants  # type: ignore[call-overload]
def sha256_jlanes(
    data: Any,
    length: Any,
    j: Any,
    iv: Any,
    out: Any,
    H: Any,
    M: Any,
    T: Any,
    F: Any,
    sizes: Any,
    blocks: Any,
) -> None:
    """Hash the j lanes of j-lanes SHA-256; out[k] receives lane k's 8 state words.

    Lane k is the message made of the 32-bit words k, k + j, k + 2j, ... of data[0:length] (the
    last word may be partial); each lane is padded as its own SHA-256 message and starts from the
    8 words ``iv``.

    The lanes' state is the caller's zeroed scratch, as wide as the lane kernel that runs them
    (``SHA256_NARROW`` lanes for up to that many, else j): ``H`` (8, width) and ``M`` (16,
    width) words, ``T`` (width, 64-bit) and ``F`` (width), and per lane its ``sizes`` and
    ``blocks`` (j, 64-bit).
    """
    lanes = U64(j)
    # Up to SHA256_NARROW lanes run on the narrow kernel (extra lanes idle), more on the wide one.
    width = H.shape[1]
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
                    M[i, k] = U32(load_word(data, row + U64(4 * k), 4, True))
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
                    M[i, k] = U32(load_word(data, q, 4, True))
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
def sha256_mh(data: Any, length: Any, out: Any, H: Any, M: Any, T: Any, F: Any) -> None:
    """Hash data[0:length] with the 16 segments of Intel's mh_sha256; out[s] gets segment s.

    Segment s takes the 32-bit words s, s + 16, s + 32, ... of the message after one global
    padding to a multiple of 1024 bytes (0x80, zeros, the 64-bit big-endian bit length).
    ``H`` (8, 16), ``M`` (16, 16), ``T`` (16, 64-bit) and ``F`` (16) are the caller's zeroed
    scratch.
    """
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
                    M[i, s] = U32(load_word(data, base + U64(4 * (16 * i + s)), 4, True))
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
def sha2_pointers(
    data: Any,
    starts: Any,
    lengths: Any,
    iv: Any,
    out: Any,
    H: Any,
    M: Any,
    T: Any,
    F: Any,
    blocks: Any,
) -> None:
    """Hash each message data[starts[m]:starts[m] + lengths[m]] with SHA-2 from ``iv``.

    The messages run in lanes, all of them at once; out[m] receives message m's 8 state words.
    Up to NARROW messages run on the lane kernel ``narrow`` (extra lanes idle), more on ``wide``.
    The lanes' state is the caller's zeroed scratch, as wide as the kernel that runs them:
    ``H`` (8, width) and ``M`` (16, width) words, ``T`` (width, 64-bit), ``F`` (width), and
    per message its ``blocks`` (64-bit).
    """
    count = starts.shape[0]
    width = H.shape[1]
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
                    M[i, k] = WORD(load_word(data, base + pos + U64(WB * i), WB, True))
            else:
                for i in range(16):
                    M[i, k] = WORD(padded_word(data, base, pos + U64(WB * i), size, WB, True, 0x80))
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
