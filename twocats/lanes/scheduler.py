"""The lane scheduler of the lane hashes: many messages of any lengths on one lane kernel.

Only the lane compressions are generated (``twocats/lanes/_generated/<hash>.py``); this scheduler is
ordinary kernel source, bound once per lane hash (:data:`twocats.hashes.LANE_HASHES`) with
:meth:`~twocats.simd._jit.Variants.specialise`: its globals in capitals (the word type, byte order,
block size, IV and parameter word) and ``lanes``, the lane compression.  numba freezes globals into
the machine code, so each hash's build branches only where its own facts lead.  The values given
here are BLAKE2s's and only let the unbound source read as Python; :data:`SCHEDULERS` holds the
bound kernel of every hash, and only those run.

Kernel code only: importing this module imports numba.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
from numba.np.numpy_support import carray

from twocats.hashes import LANE_HASHES, HashFacts
from twocats.lanes._blocks import no_groups, transposed_groups
from twocats.lanes._generated import blake2s
from twocats.lanes._words import bswap32, bswap64, pointer
from twocats.simd._jit import PerBackend, Variants, variants
from twocats.simd.isa import VECTOR_BITS

__all__ = ["SCHEDULERS"]

U32 = np.uint32
U64 = np.uint64

# The globals bound per hash type (these are BLAKE2s's).
#: Whether the hash is BLAKE2 (byte counter and final flag) rather than SHA-1 or SHA-2 (length
#: padding).
BLAKE2 = True
#: Whether message words are big-endian (SHA-1, SHA-2) rather than little-endian (BLAKE2).
BIG_ENDIAN = False
#: The word type, the bytes in a word and in a block.
WORD = np.uint32
WB = 4
#: The shift of each byte of a word as loaded (in the word's byte order; WB entries are used).
SHIFTS = (0, 8, 16, 24, 0, 0, 0, 0)
BLOCK = 64
#: A word with every bit set (BLAKE2's final-block flag).
ONES = U32(0xFFFFFFFF)
#: The words of the chaining value (SHA-1 has 5), the initial one, and the word xored into its
#: first word (BLAKE2's parameter block).
CHAIN = 8
IV = blake2s.BLAKE2S_IV
PARAM = U32(0x01010020)
#: The lane compression, and the byte swap of one word.
lanes = blake2s.blake2s_lanes
bswap = bswap32
#: Bound per backend: the lanes one vector holds (1 in the scalar build), and the decode of whole
#: blocks in groups of that many lanes (none in the scalar build).
STEP = VECTOR_BITS // 32
decode_groups = transposed_groups


@variants  # type: ignore[call-overload]
def advance(T: Any, width: Any, step: Any) -> None:
    """Add ``step`` to T[0..width-1]: in the simd build with whole vectors, which the BLAKE2
    compressions then load without waiting for the stores to reach the cache."""
    for lane in range(width):
        T[lane] = T[lane] + step


@variants(vectorize=False)  # type: ignore[arg-type]
def lanes_many(
    addresses: Any,
    lengths: Any,
    order: Any,
    count: Any,
    out: Any,
    H: Any,
    M: Any,
    T: Any,
    F: Any,
    meta: Any,
) -> None:
    """Hash ``count`` messages, up to ``nlanes`` at a time in lock-step, into ``out``.

    Message i is lengths[i] bytes at address addresses[i] (the caller keeps its buffer alive and
    unchanged during the call); out[i] (a row of 8 words) receives its digest in the digest's
    byte order, in its first CHAIN words.  The messages go onto the lanes in the order of
    ``order`` (indices), or in index order when ``order`` is empty: longest first keeps the
    lanes busy to the end.

    Free lanes take the next waiting messages; a lane whose message ends is freed by moving the
    last busy lane into it, so that lanes 0..active-1 are always the busy ones.  The compression
    runs the busy lanes rounded up to whole vectors (STEP lanes, where the lanes allow): an idle
    lane in a vector costs nothing, while a lane past the last whole vector runs alone, at about
    the cost of a whole vector.  Until some lane reaches a block that is not whole or is its
    last, every step only decodes and compresses; then one step looks at each lane (padding,
    the final flag) and retires the lanes whose messages ended.  Each lane reads its message where
    it lies (no joined copy): whole blocks through ``decode_groups`` (the simd build's
    transposing decode) and the plain loop, the padded last blocks word by word.  Decoding,
    padding and lane starts are spelled out here rather than called, because numba
    reference-counts every array passed to a function that LLVM has not inlined yet.  This
    driver's own loops compile without the vectorizers in both builds (vectorized, the decoding
    loop ran at half speed); the simd build still calls the simd lane kernel and the vector
    decode.

    The lanes' state is the caller's (``twocats.lanes.primitives._lane_scratch``), so
    that the compiled code allocates nothing and can be built ahead of time: ``H`` (8, nlanes)
    and ``M`` (16, nlanes) words, ``T`` (nlanes) byte counters, ``F`` (nlanes) final flags and
    ``meta`` (5, nlanes): per lane the message address, length, next block, number of blocks and
    message index.  Before each step's decode, T[lane] holds where the lane's block starts.
    """
    nlanes = H.shape[1]
    ordered = order.shape[0] > 0
    active = 0
    waiting = 0
    # The bytes of the messages not yet on a lane.
    queued = U64(0)
    for i in range(count):
        queued += U64(lengths[i])
    while True:
        # Refill no more lanes than it takes to finish the rest alongside the longest message on
        # a lane (in whole vectors): more would only make each step dearer.
        longest = U64(0)
        rest = queued // U64(BLOCK) + U64(count - waiting)
        for lane in range(active):
            left = meta[3, lane] - meta[2, lane]
            longest = max(longest, left)
            rest += left
        limit = nlanes
        if longest:
            wanted = (rest + longest - U64(1)) // longest
            vectors = int((wanted + U64(STEP - 1)) // U64(STEP))
            limit = min(nlanes, max(1, vectors) * STEP)
        # Put waiting messages on the free lanes active..limit-1.
        while active < limit and waiting < count:
            index = order[waiting] if ordered else waiting
            length = U64(lengths[index])
            queued -= length
            for i in range(CHAIN):
                H[i, active] = IV[i]
            H[0, active] = H[0, active] ^ PARAM
            meta[0, active] = U64(addresses[index])
            meta[1, active] = length
            meta[2, active] = U64(0)
            if BLAKE2:
                meta[3, active] = max(U64(1), (length + U64(BLOCK - 1)) // U64(BLOCK))
            else:
                # The padding adds a 0x80 byte and a length of two words.
                meta[3, active] = (length + U64(BLOCK + 2 * WB)) // U64(BLOCK)
            meta[4, active] = U64(index)
            active += 1
            waiting += 1
        if active == 0:
            break
        width = min(nlanes, (active + STEP - 1) // STEP * STEP)
        # The run: how many steps every busy lane reads a whole block that is not its last.
        run = U64(0xFFFFFFFFFFFFFFFF)
        for lane in range(active):
            done = meta[2, lane]
            T[lane] = done * U64(BLOCK)
            F[lane] = WORD(0)
            # SHA-1 and SHA-2 end in at least one padded block, BLAKE2 in its flagged last one.
            whole = meta[3, lane] - U64(1) if BLAKE2 else meta[1, lane] // U64(BLOCK)
            run = min(run, max(whole, done) - done)
        for step in range(run + U64(1)):
            # Whole blocks a vector of lanes at a time (simd build), the others word by word,
            # byte-swapped where the hash's words are big-endian (x86 and ARMv8 load unaligned
            # words).
            for lane in range(decode_groups(M, meta, T, width, BIG_ENDIAN), width):
                if T[lane] + U64(BLOCK) <= meta[1, lane]:
                    at = pointer(meta[0, lane] + T[lane])  # type: ignore[call-arg, var-annotated]
                    block = carray(at, (16,), WORD)
                    for i in range(16):
                        M[i, lane] = bswap(block[i]) if BIG_ENDIAN else block[i]
            if step < run:
                # BLAKE2's byte counter after the block; where the next block starts.
                advance(T, width, U64(BLOCK))
            else:
                for lane in range(active):
                    meta[2, lane] = meta[2, lane] + run
                    length = meta[1, lane]
                    start = T[lane]
                    if start + U64(BLOCK) > length:
                        message = pointer(meta[0, lane])  # type: ignore[call-arg, var-annotated]
                        data = carray(message, (max(length, U64(1)),), np.uint8)
                        for i in range(16):
                            p = start + U64(WB * i)
                            if p + U64(WB) <= length:
                                q = p
                                word = (
                                    (U64(data[q]) << U64(SHIFTS[0]))
                                    | (U64(data[q + U64(1)]) << U64(SHIFTS[1]))
                                    | (U64(data[q + U64(2)]) << U64(SHIFTS[2]))
                                    | (U64(data[q + U64(3)]) << U64(SHIFTS[3]))
                                )
                                if WB == 8:
                                    word = word | (
                                        (U64(data[q + U64(4)]) << U64(SHIFTS[4]))
                                        | (U64(data[q + U64(5)]) << U64(SHIFTS[5]))
                                        | (U64(data[q + U64(6)]) << U64(SHIFTS[6]))
                                        | (U64(data[q + U64(7)]) << U64(SHIFTS[7]))
                                    )
                                M[i, lane] = WORD(word)
                            elif p >= length:
                                # The word lies wholly past the end of the message; SHA-2's padding
                                # marker opens the word that starts exactly at the end.
                                if not BLAKE2 and p == length:
                                    M[i, lane] = WORD(U64(0x80) << U64(8 * (WB - 1)))
                                else:
                                    M[i, lane] = WORD(0)
                            else:
                                word = U64(0)
                                for k in range(WB):
                                    pos = p + U64(k)
                                    byte = U64(0)
                                    if pos < length:
                                        byte = U64(data[pos])
                                    elif pos == length and not BLAKE2:
                                        byte = U64(0x80)
                                    shift = 8 * (WB - 1 - k) if BIG_ENDIAN else 8 * k
                                    word = word | (byte << U64(shift))
                                M[i, lane] = WORD(word)
                    last = meta[2, lane] + U64(1) == meta[3, lane]
                    if BLAKE2:
                        T[lane] = min(start + U64(BLOCK), length)
                        F[lane] = ONES if last else WORD(0)
                    elif last:
                        # The message length in bits, big-endian in the last two words.
                        M[14, lane] = WORD(length >> U64(8 * WB - 3))
                        M[15, lane] = WORD(length << U64(3))
            lanes(H, M, T, F, width)
        # Retire finished lanes: store the digest and free the lane by moving the last busy lane
        # into it (that lane has not been advanced yet, so the slot is examined again).
        lane = 0
        while lane < active:
            done = meta[2, lane] + U64(1)
            if done < meta[3, lane]:
                meta[2, lane] = done
                lane += 1
                continue
            row = meta[4, lane]
            for i in range(CHAIN):
                out[row, i] = bswap(H[i, lane]) if BIG_ENDIAN else H[i, lane]
            active -= 1
            for i in range(CHAIN):
                H[i, lane] = H[i, active]
            for i in range(5):
                meta[i, lane] = meta[i, active]


def _shifts(facts: HashFacts) -> tuple[int, ...]:
    """The shift of each byte of a word as loaded, padded with zeros to eight entries."""
    nbytes = facts.word_bytes
    order = range(nbytes - 1, -1, -1) if facts.big_endian else range(nbytes)
    return (*(8 * k for k in order), *(0,) * (8 - nbytes))


def _bind(facts: HashFacts) -> Variants:
    """The scheduler of one hash type, on that hash's lane compression."""
    module = importlib.import_module(f"twocats.lanes._generated.{facts.name}")
    word = np.uint32 if facts.word_bits == 32 else np.uint64
    param = 0x01010000 | facts.digest_size if facts.is_blake2 else 0
    return lanes_many.specialise(
        facts.name,
        BLAKE2=facts.is_blake2,
        BIG_ENDIAN=facts.big_endian,
        WORD=word,
        WB=facts.word_bytes,
        SHIFTS=_shifts(facts),
        BLOCK=facts.block_bytes,
        ONES=word(~word(0)),
        CHAIN=facts.chain_words,
        IV=getattr(module, f"{facts.name.upper()}_IV"),
        PARAM=word(param),
        lanes=getattr(module, f"{facts.name}_lanes"),
        bswap=bswap32 if facts.word_bits == 32 else bswap64,
        STEP=PerBackend(simd=VECTOR_BITS // facts.word_bits, scalar=1),
        decode_groups=PerBackend(simd=transposed_groups, scalar=no_groups),
    )


#: The bound scheduler of every lane hash, by name.
SCHEDULERS = {facts.name: _bind(facts) for facts in LANE_HASHES}
