"""Compiled depth-reducing attack: the removed set, the depth left, and the schedule's cost.

Kernel code only (imports numba through ``twocats.simd._jit``); :mod:`.depth` documents the
attack, and ``tests/support/tradeoff_oracles.py`` holds the explicit pebbling this kernel's
figures must equal.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from twocats.simd._jit import jit

__all__ = ["layered_set", "remaining_depth", "schedule_cost"]

I32 = np.int32
I64 = np.int64
F64 = np.float64


@jit
def layered_set(prev: Any, ref: Any, old: Any, horizon: Any, layer: Any, gap: Any) -> Any:
    """The nodes held for good: pinned ones, and every node with an input in its layer of
    ``layer`` nodes but outside its run of ``gap`` nodes."""
    n = prev.shape[0]
    removed = np.zeros(n, dtype=np.bool_)
    for v in range(n):
        if horizon[v] >= 0:
            removed[v] = True
            continue
        for parent in (prev[v], ref[v], old[v]):
            if parent >= 0 and parent // layer == v // layer and parent // gap != v // gap:
                removed[v] = True
    return removed


@jit
def remaining_depth(prev: Any, ref: Any, old: Any, removed: Any) -> Any:
    """The number of nodes on the longest path that avoids the removed nodes."""
    n = prev.shape[0]
    depth = np.zeros(n, dtype=I32)
    deepest = I32(0)
    for v in range(n):
        if removed[v]:
            continue
        below = I32(0)
        for parent in (prev[v], ref[v], old[v]):
            if parent >= 0 and not removed[parent]:
                below = max(below, depth[parent])
        depth[v] = below + I32(1)
        deepest = max(deepest, depth[v])
    return deepest


@jit
def _tick_of(v: Any, interval: Any, starts: Any) -> Any:
    return starts[v // interval] + I64(v % interval)


@jit
def _extend(last_light: Any, x: Any, now: Any) -> Any:
    """Hold node ``x``'s light pebble until ``now``; return the block-ticks that adds."""
    if now <= last_light[x]:
        return F64(0.0)
    added = F64(now - last_light[x])
    last_light[x] = now
    return added


@jit
def schedule_cost(
    prev: Any,
    ref: Any,
    old: Any,
    held: Any,
    removed: Any,
    horizon: Any,
    outputs: Any,
    interval: Any,
    keep: Any,
    call_cost: Any,
    limit: Any,
) -> Any:
    """Run the light and balloon phases; return (block-ticks held, calls, balloon ticks, depth).

    See :mod:`twocats.perf.tradeoff.depth` for the schedule.  A tick is one sequential step; a
    block held after ticks ``a`` to ``b - 1`` costs ``b - a`` block-ticks.  The run stops early,
    returning calls of -1, once what it has held and computed so far (each call priced at
    ``call_cost`` block-ticks) costs more than ``limit``.  Each balloon phase is
    found in one sweep down the nodes: a node's children come after it, so when the sweep reaches
    a node its height (rounds before the phase ends) and its children's least height are final.
    """
    n = prev.shape[0]
    intervals = (n + interval - 1) // interval
    starts = np.zeros(intervals, dtype=I64)
    last_light = np.zeros(n, dtype=I64)
    stamp = np.full(n, I32(-1), dtype=I32)
    height = np.zeros(n, dtype=I32)
    lowest_child = np.zeros(n, dtype=I32)
    light_use = np.zeros(n, dtype=I32)
    sources = np.empty(n, dtype=I32)
    none = I32(1 << 30)
    held_ticks = F64(0.0)
    calls = I64(n)
    balloon_ticks = I64(0)
    deepest = I64(0)
    tick = I64(0)
    for k in range(intervals):
        low = k * interval
        high = min(n, low + interval)
        hold = (k - keep) * interval
        mark = I32(2 * k)
        source = I32(2 * k + 1)
        pending = I64(0)
        top = I64(-1)
        if hold > 0:
            # The interval's inputs that no longer stand are recomputed ...
            for v in range(low, high):
                for side in range(3):
                    x = ref[v] if side == 0 else (old[v] if side == 1 else prev[v])
                    if side == 2 and held[v]:
                        continue
                    if x < 0 or x >= hold or removed[x]:
                        continue
                    if stamp[x] != mark:
                        stamp[x] = mark
                        height[x] = I32(0)
                        lowest_child[x] = none
                        pending += 1
                        top = max(top, I64(x))
                    light_use[x] = I32(v - low)
        # ... with every ancestor outside the held set, heights and last reads found on the way.
        count = I64(0)
        used = I64(0)
        depth = I64(0)
        x = top
        while pending > 0:
            if stamp[x] == mark:
                pending -= 1
                count += 1
                h = height[x]
                depth = max(depth, I64(h) + 1)
                last = I64(-1)
                if lowest_child[x] != none:
                    last = I64(h - lowest_child[x])
                if light_use[x] >= 0:
                    last = max(last, I64(light_use[x]) + 1 + I64(h))
                held_ticks += F64(last)
                for side in range(3):
                    y = prev[x] if side == 0 else (ref[x] if side == 1 else old[x])
                    if y < 0:
                        continue
                    if removed[y]:
                        if stamp[y] != source:
                            stamp[y] = source
                            lowest_child[y] = h
                            sources[used] = y
                            used += 1
                        else:
                            lowest_child[y] = min(lowest_child[y], h)
                        continue
                    if stamp[y] != mark:
                        stamp[y] = mark
                        height[y] = h + I32(1)
                        lowest_child[y] = h
                        light_use[y] = I32(-1)
                        pending += 1
                    else:
                        height[y] = max(height[y], h + I32(1))
                        lowest_child[y] = min(lowest_child[y], h)
            x -= 1
        for at in range(used):
            y = sources[at]
            held_ticks += _extend(last_light, y, tick + depth - 1 - lowest_child[y])
        tick += depth
        balloon_ticks += depth
        deepest = max(deepest, depth)
        calls += count
        starts[k] = tick
        # The light phase: one node a tick, its inputs at hand.
        for v in range(low, high):
            now = tick + I64(v - low)
            last_light[v] = now
            for side in range(3):
                x = ref[v] if side == 0 else (old[v] if side == 1 else prev[v])
                if side == 2 and held[v]:
                    continue
                if x >= 0 and (x >= hold or removed[x]):
                    held_ticks += _extend(last_light, x, now)
        tick += I64(high - low)
        if held_ticks + call_cost * F64(calls) > limit:
            return held_ticks, I64(-1), balloon_ticks, deepest
    for o in outputs:
        held_ticks += _extend(last_light, o, tick)
    for v in range(n):
        if horizon[v] > v:
            held_ticks += _extend(last_light, v, _tick_of(horizon[v], interval, starts))
    return held_ticks, calls, balloon_ticks, deepest
