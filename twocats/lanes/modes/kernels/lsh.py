"""The LSH-256 and LSH-512 drivers: many messages in lock-step, or one alone."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba.np.numpy_support import carray

from twocats.lanes._words import U8, U64, load_word, padded_word, pointer
from twocats.lanes.modes._generated import lsh
from twocats.lanes.modes.kernels.refill import move_lane, start_lane
from twocats.lanes.modes.widths import LSH_WIDTH
from twocats.simd._jit import variants

__all__ = ["lsh256_many_x8", "lsh256_one", "lsh512_many_x8", "lsh512_one"]

# The globals bound per word size (placeholders: only the bound copies below run).
#: Lanes hashed in lock-step.
K = LSH_WIDTH
#: Bytes in a word, the word type and bytes in a block.
WB = 4
WORD = np.uint32
BLOCK = 128
#: The lane compression, and the single-message compression.
permute = lsh.lsh256_lanes_x8
compress = lsh.lsh256_compress


@variants  # type: ignore[call-overload]
def lsh_many(
    addresses: Any,
    lengths: Any,
    order: Any,
    iv: Any,
    out: Any,
    CV: Any,
    M: Any,
    even: Any,
    odd: Any,
    message: Any,
    step: Any,
    blocks: Any,
) -> None:
    """Hash many messages with LSH, up to K at a time in lock-step, one message per lane.

    Message m is lengths[m] bytes at address addresses[m], read where it lies (the caller keeps it
    alive and unchanged during the call); out[m] receives the first out.shape[1] bytes of its
    digest.  ``iv`` is the 16-word IV of that digest length.  Messages go onto the
    lanes in the given order (longest first keeps the lanes busy to the end), and a lane whose
    message ends takes the next at once: a freed lane is filled by moving the last busy one into
    it, so lanes 0..active-1 are the busy ones.

    The lanes' state is the caller's, so that the compiled code allocates nothing: the chaining
    values ``CV`` (16 * K words), the message words ``M`` (32 * K) and the rounds' scratch
    ``even`` and ``odd`` (16 * K each), and per lane its message, the block it is at and its
    blocks in all (K words each).
    """
    count = order.shape[0]
    outlen = out.shape[1]
    block = U64(BLOCK)
    active = 0
    waiting = 0
    while True:
        while active < K and waiting < count:
            # The message and the 0x80 byte, in blocks.
            start_lane(order, waiting, lengths, block, message, step, blocks, active)
            for i in range(16):
                CV[i * K + active] = iv[i]
            active += 1
            waiting += 1
        if active == 0:
            break
        for k in range(active):
            m = message[k]
            length = U64(lengths[m])
            at = pointer(U64(addresses[m]))  # type: ignore[call-arg, var-annotated]
            data = carray(at, (max(length, U64(1)),), U8)
            b = step[k]
            pos = b * block
            if b + U64(1) < blocks[k]:
                for i in range(32):
                    M[i * K + k] = WORD(load_word(data, pos + U64(WB * i), WB, False))
            else:
                # The last block: the message tail, then 0x80, then zeros.
                for i in range(32):
                    tail = pos + U64(WB * i)
                    M[i * K + k] = WORD(padded_word(data, U64(0), tail, length, WB, False, 0x80))
        permute(CV, M, even, odd)
        # Retire the lanes past their last block: write the digest, move the last busy lane in.
        k = 0
        while k < active:
            b = step[k] + U64(1)
            if b < blocks[k]:
                step[k] = b
                k += 1
                continue
            m = message[k]
            for j in range(outlen):
                i = j // WB
                word = CV[i * K + k] ^ CV[(i + 8) * K + k]
                out[m, j] = U8((U64(word) >> U64(8 * (j % WB))) & U64(0xFF))
            active -= 1
            move_lane(message, step, blocks, k, active)
            for i in range(16):
                CV[i * K + k] = CV[i * K + active]


@variants  # type: ignore[call-overload]
def lsh_one(data: Any, length: Any, iv: Any, out: Any, CV: Any, M: Any) -> None:
    """Hash data[0:length] with LSH (single-message kernel); out receives the digest.

    ``CV`` (16 words) and ``M`` (32 words) are the caller's scratch.
    """
    length = U64(length)
    block = U64(BLOCK)
    for i in range(16):
        CV[i] = iv[i]
    blocks = length // block + U64(1)
    for b in range(blocks):
        pos = b * block
        if b + U64(1) < blocks:
            for i in range(32):
                M[i] = WORD(load_word(data, pos + U64(WB * i), WB, False))
        else:
            for i in range(32):
                M[i] = WORD(padded_word(data, U64(0), pos + U64(WB * i), length, WB, False, 0x80))
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
