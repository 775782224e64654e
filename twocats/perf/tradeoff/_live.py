"""Compiled liveness: until which step each block is read, and how many blocks are held.

Kernel code only (imports numba through ``twocats.simd._jit``); :mod:`.liveness` documents the
rules and is the face the attacks call.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from twocats.simd._jit import jit

__all__ = ["held_counts", "needed_until_kernel", "pinned_nodes"]

I32 = np.int32
F64 = np.float64


@jit
def pinned_nodes(independent: Any, dies: Any) -> Any:
    """Per node, the last step before its slot is overwritten whose reference is data-dependent.

    -1 where no such step follows the node: only data-independent reads can reach it.
    """
    n = independent.shape[0]
    last_dependent = np.empty(n + 1, dtype=I32)
    last = I32(-1)
    for j in range(n):
        last_dependent[j] = last
        if not independent[j]:
            last = I32(j)
    last_dependent[n] = last
    horizon = np.full(n, I32(-1), dtype=I32)
    for k in range(n):
        reach = last_dependent[dies[k]]
        if reach > k:
            horizon[k] = reach
    return horizon


@jit
def needed_until_kernel(
    prev: Any,
    ref: Any,
    old: Any,
    held: Any,
    kept: Any,
    horizon: Any,
    outputs: Any,
) -> Any:
    """Return, per node, the last step that reads it (directly or to recompute a dropped node).

    ``horizon`` is :func:`pinned_nodes`'s: a data-dependent read may come up to that step.
    """
    n = prev.shape[0]
    need = np.full(n, I32(-1), dtype=I32)
    for o in outputs:
        need[o] = I32(n)
    for k in range(n - 1, -1, -1):
        if horizon[k] > need[k]:
            need[k] = horizon[k]
        step = I32(k)
        r = ref[k]
        if r >= 0 and need[r] < step:
            need[r] = step
        o = old[k]
        if o >= 0 and need[o] < step:
            need[o] = step
        p = prev[k]
        if p >= 0 and not held[k] and need[p] < step:
            need[p] = step
        if kept[k] or need[k] <= k:
            continue
        # A dropped node is recomputed when it is read last, from its own inputs.
        last_read = need[k]
        if p >= 0 and need[p] < last_read:
            need[p] = last_read
        if r >= 0 and need[r] < last_read:
            need[r] = last_read
        if o >= 0 and need[o] < last_read:
            need[o] = last_read
    return need


@jit
def held_counts(need: Any, kept: Any, dropped_weight: Any) -> Any:
    """Blocks held after each step: kept nodes count 1, dropped ones still to be read their weight.

    Node ``k`` is held after steps ``k`` to ``need[k] - 1``.
    """
    n = need.shape[0]
    change = np.zeros(n + 1, dtype=F64)
    for k in range(n):
        end = need[k]
        if end <= k:
            continue
        weight = F64(1.0) if kept[k] else dropped_weight
        change[k] += weight
        change[min(end, I32(n))] -= weight
    counts = np.empty(n, dtype=F64)
    running = F64(0.0)
    for j in range(n):
        running += change[j]
        counts[j] = running
    return counts
