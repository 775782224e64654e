"""Multi-buffer SHA-1: the driver that schedules and pads SHA1_WIDTH messages, one per lane."""

from __future__ import annotations

from typing import Any

import numpy as np

from twocats.lanes._words import U8, U32, U64, group_blocks, load_word, padded_word
from twocats.lanes.modes._generated.sha1 import sha1_lanes_x8
from twocats.lanes.modes.widths import SHA1_WIDTH
from twocats.lanes.reference.sha1 import SHA1_IV as _SHA1_IV
from twocats.simd._jit import variants

__all__ = ["sha1_many_x8"]

SHA1_IV = np.array(_SHA1_IV, dtype=np.uint32)


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
        for k in range(SHA1_WIDTH):
            for i in range(5):
                H[i * SHA1_WIDTH + k] = SHA1_IV[i]
        most = group_blocks(lengths, order, group, active, 64, 8, blocks)
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
                        M[i * SHA1_WIDTH + k] = U32(
                            load_word(data, base + pos + U64(4 * i), 4, True)
                        )
                else:
                    # A padding block: the message tail, 0x80, zeros, and in the last block
                    # the 64-bit big-endian bit length.
                    for i in range(16):
                        word = padded_word(data, base, pos + U64(4 * i), length, 4, True, 0x80)
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
