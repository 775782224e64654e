"""The Keccak sponge over 4 or 8 states in lock-step, bound once per state count.

Every Keccak kernel the modes call is here, the generated permutations included.
"""

from __future__ import annotations

from typing import Any

from numba.np.numpy_support import carray

from twocats.lanes._words import U8, U64, load_word, padded_word, pointer
from twocats.lanes.modes._generated import keccak
from twocats.lanes.modes.kernels.refill import move_lane, start_lane
from twocats.simd._jit import variants

__all__ = ["keccak_sponge_x4", "keccak_sponge_x8", "keccak_x4", "keccak_x8"]

#: States hashed in lock-step, and their permutation (placeholders: only bound copies run).
K = 4
permute = keccak.keccak_x4


@variants  # type: ignore[call-overload]
def keccak_sponge(
    addresses: Any,
    lengths: Any,
    order: Any,
    rate: Any,
    first: Any,
    domain: Any,
    out: Any,
    S: Any,
    message: Any,
    step: Any,
    blocks: Any,
    steps: Any,
) -> None:
    """Run the Keccak sponge on many messages, up to K at a time, one message per state.

    Message m is lengths[m] bytes at address addresses[m], read where it lies (the caller keeps it
    alive and unchanged during the call); out[m] receives its first out.shape[1] output bytes.
    Messages go onto the states in the given order (longest first keeps the states busy to the
    end), and a state whose message is done takes the next at once: a freed state is filled by
    moving the last busy one into it, so states 0..active-1 are the busy ones.
    ``rate`` is the rate in bytes (a multiple of 8), ``first`` the first round (0 for Keccak-f,
    12 for TurboSHAKE) and ``domain`` the first padding byte (domain bits followed by the first
    bit of pad10*1).

    Each state takes one step per permutation: a step absorbs a block, or, after the last block,
    squeezes, so a message with more output than one rate squeezes on in lock-step with the
    others absorbing.

    The states are the caller's (``S``, 25 * K words), as is each state's bookkeeping (K words
    each: its message, the step it is at, its blocks and its steps in all), so that the compiled
    code allocates nothing and can be built ahead of time.
    """
    count = order.shape[0]
    outlen = U64(out.shape[1])
    rate64 = U64(rate)
    words = rate64 // U64(8)
    squeezes = max(U64(1), (outlen + rate64 - U64(1)) // rate64)
    active = 0
    waiting = 0
    while True:
        while active < K and waiting < count:
            # The message, the domain byte and the final bit, in blocks of ``rate`` bytes.
            start_lane(order, waiting, lengths, rate64, message, step, blocks, active)
            steps[active] = blocks[active] + squeezes - U64(1)
            for i in range(25):
                S[i * K + active] = U64(0)
            active += 1
            waiting += 1
        if active == 0:
            break
        for k in range(active):
            b = step[k]
            if b >= blocks[k]:
                continue
            m = message[k]
            length = U64(lengths[m])
            at = pointer(U64(addresses[m]))  # type: ignore[call-arg, var-annotated]
            data = carray(at, (max(length, U64(1)),), U8)
            pos = b * rate64
            if b + U64(1) < blocks[k]:
                for w in range(words):
                    S[w * U64(K) + U64(k)] ^= load_word(data, pos + U64(8) * w, 8, False)
            else:
                # The last block: the message tail, the domain byte, zeros, and the final bit.
                for w in range(words):
                    tail = pos + U64(8) * w
                    word = padded_word(data, U64(0), tail, length, 8, False, domain)
                    S[w * U64(K) + U64(k)] ^= word
                S[(words - U64(1)) * U64(K) + U64(k)] ^= U64(0x80) << U64(56)
        permute(S, first)
        # Squeeze the states past their last block; retire those whose output is complete.
        k = 0
        while k < active:
            b = step[k]
            if b + U64(1) >= blocks[k]:
                m = message[k]
                done = (b + U64(1) - blocks[k]) * rate64
                take = min(rate64, outlen - done)
                for j in range(take):
                    word = S[(U64(j) // U64(8)) * U64(K) + U64(k)]
                    out[m, done + U64(j)] = U8((word >> (U64(8) * (U64(j) % U64(8)))) & U64(0xFF))
            if b + U64(1) < steps[k]:
                step[k] = b + U64(1)
                k += 1
                continue
            # The last busy state moves here and is examined in this slot next.
            active -= 1
            move_lane(message, step, blocks, k, active)
            steps[k] = steps[active]
            for i in range(25):
                S[i * K + k] = S[i * K + active]


keccak_sponge_x4 = keccak_sponge.specialise("x4", K=4, permute=keccak.keccak_x4)
keccak_sponge_x8 = keccak_sponge.specialise("x8", K=8, permute=keccak.keccak_x8)
# The permutations the modes call from Python, beside the sponges (their checks: the modes').
keccak_x4 = keccak.keccak_x4
keccak_x8 = keccak.keccak_x8
