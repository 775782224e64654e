"""The Keccak sponge over 4 or 8 states in lock-step, bound once per state count."""

from __future__ import annotations

from typing import Any

import numpy as np

from twocats.lanes._words import U8, U64, group_blocks, load_word, padded_word
from twocats.lanes.modes._generated import keccak
from twocats.simd._jit import variants

__all__ = ["keccak_sponge_x4", "keccak_sponge_x8"]

#: States hashed in lock-step, and their permutation (placeholders: only bound copies run).
K = 4
permute = keccak.keccak_x4


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
        most = group_blocks(lengths, order, group, active, rate64, 0, blocks)
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
                        S[w * U64(K) + U64(k)] ^= load_word(data, base + pos + U64(8) * w, 8, False)
                else:
                    # The last block: the message tail, the domain byte, zeros, and the final bit.
                    for w in range(words):
                        tail = pos + U64(8) * w
                        S[w * U64(K) + U64(k)] ^= padded_word(
                            data, base, tail, length, 8, False, domain
                        )
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
