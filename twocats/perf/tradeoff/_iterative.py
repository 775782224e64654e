"""Compiled timing of TwoCats' block hash, row by row, for the iterative-compression attack.

Kernel code only (imports numba through ``twocats.simd._jit``); :mod:`.iterative` documents the
model, and ``tests/support/tradeoff_oracles.py`` holds the row-by-row truth this kernel must equal.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from twocats.simd._jit import jit

__all__ = ["level_times", "sub_block_choice"]

I32 = np.int32
I64 = np.int64
F64 = np.float64
U64 = np.uint64

#: Times are capped here so that they stay in 32 bits (a step this late has long lost anyway).
_CAP = I64(1 << 30)


@jit
def _mix(x: Any) -> Any:
    """SplitMix64's finaliser: a well-spread 64-bit value from ``x``."""
    z = x + U64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> U64(30))) * U64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> U64(27))) * U64(0x94D049BB133111EB)
    return z ^ (z >> U64(31))


@jit
def sub_block_choice(seed: Any, node: Any, sub_block: Any, sub_blocks: Any) -> Any:
    """The sub-block of the previous block that ``sub_block`` of a password-dependent node reads.

    It stands for the first word of the reference block's sub-block, which only the password
    decides: one fixed pseudo-random draw per (seed, node, sub-block).
    """
    word = _mix((U64(seed) << U64(48)) ^ (U64(node) << U64(20)) ^ U64(sub_block))
    return I64(word & U64(sub_blocks - 1))


@jit
def _arrival(
    times: Any, delta: Any, node: Any, first: Any, kept: Any, sub_block: Any, rows: Any
) -> Any:
    """The step at which the first row of ``sub_block`` of input ``node`` is ready.

    0 for a stored block (or none); ``b * rows + 1 + delta`` for a block whose rows all come
    ``delta`` steps late; otherwise read from the block's own sub-block times.
    """
    if node < 0 or kept[node]:
        return I64(0)
    late = I64(delta[node - first])
    if late >= 0:
        return sub_block * rows + I64(1) + late
    return I64(times[node - first, sub_block]) - rows + I64(1)


@jit
def _lateness(
    delta: Any, p: Any, r: Any, prev_ready: Any, permuted: Any, first: Any, kept: Any
) -> Any:
    """How late every row of a block is, when that is the same for all rows; -1 when it is not.

    That holds when each dropped input is itself uniformly late and the previous block, if
    dropped, is read in order: row ``j`` then waits for the inputs' row ``j`` alone.
    """
    late = I64(0)
    if r >= 0 and not kept[r]:
        behind = I64(delta[r - first])
        if behind < 0:
            return I64(-1)
        late = max(late, behind + I64(1))
    if p >= 0 and not prev_ready and not kept[p]:
        behind = I64(delta[p - first])
        if behind < 0 or permuted:
            return I64(-1)
        late = max(late, behind + I64(1))
    return min(late, _CAP)


@jit
def _finish(
    times: Any,
    delta: Any,
    out: Any,
    at: Any,
    node: Any,
    p: Any,
    r: Any,
    prev_ready: Any,
    first: Any,
    kept: Any,
    sub_blocks: Any,
    rows: Any,
    seed: Any,
) -> Any:
    """Fill ``out[at]`` with the finishing step of each sub-block of ``node``; return the last.

    Sub-block ``b`` starts when the block's previous sub-block is done and the first rows of
    sub-block ``b`` of the reference and of the chosen sub-block of the previous block are ready,
    then takes ``rows`` steps.  ``prev_ready`` says the previous block is at hand (the forward
    pass's own register).
    """
    done = I64(0)
    for b in range(sub_blocks):
        start = max(done, _arrival(times, delta, r, first, kept, I64(b), rows))
        if not prev_ready:
            chosen = sub_block_choice(seed, node, b, sub_blocks)
            start = max(start, _arrival(times, delta, p, first, kept, chosen, rows))
        done = min(start + rows, _CAP)
        out[at, b] = I32(done)
    return done


@jit
def level_times(
    prev: Any,
    ref: Any,
    held: Any,
    independent: Any,
    kept: Any,
    first: Any,
    end: Any,
    steps: Any,
    sub_blocks: Any,
    chain_steps: Any,
    seed: Any,
) -> Any:
    """Return the sum over the level's nodes of the forward step's time over the defender's.

    Times are in row steps.  A block whose reference is data-independent is recomputed ahead of
    time and counts 1; the others take the longer of their rows and their multiply chain
    (``chain_steps`` row steps, 0 to leave it out), the defender the longer of ``steps`` and the
    chain.
    """
    rows = I64(steps // sub_blocks)
    count = end - first
    times = np.zeros((count, sub_blocks), dtype=I32)
    delta = np.full(count, I32(-1), dtype=I32)
    scratch = np.zeros((1, sub_blocks), dtype=I32)
    defender = F64(max(steps, chain_steps))
    total = F64(0.0)
    for node in range(first, end):
        p = I64(prev[node])
        r = I64(ref[node])
        permuted = not independent[node]
        if independent[node]:
            total += F64(1.0)
        else:
            # The forward step: the previous block is in the core unless the hardware lost it.
            late = _lateness(delta, p, r, held[node], permuted, first, kept)
            if late >= 0:
                last = min(steps + late, _CAP)
            else:
                last = _finish(
                    times, delta, scratch, 0, node, p, r, held[node], first, kept,
                    sub_blocks, rows, seed,
                )  # fmt: skip
            total += F64(max(last, chain_steps)) / defender
        if kept[node]:
            continue
        # A dropped block, recomputed later from its kept start state and its inputs.
        late = _lateness(delta, p, r, False, permuted, first, kept)
        delta[node - first] = I32(late)
        if late < 0:
            _finish(
                times, delta, times, node - first, node, p, r, False, first, kept,
                sub_blocks, rows, seed,
            )  # fmt: skip
    return total
