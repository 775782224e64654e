"""The compiled ranking attack: one pass over a graph's nodes for one storage parameter q.

Kernel code only (imports numba through ``twocats.simd._jit``).  The plain-Python truth it must
equal on every graph is ``tests/support/tradeoff_oracles.py``; :mod:`.ranking` documents the
attack.  The top set is a binary min-heap ordered by (cost, node), so that equal
costs are ranked by node number in both implementations.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from twocats.simd._jit import jit

__all__ = ["simulate_kernel"]

I64 = np.int64
F64 = np.float64


@jit
def _below(costs: Any, nodes: Any, a: Any, b: Any) -> bool:
    """Whether heap entry ``a`` ranks below entry ``b`` in the (cost, node) order."""
    if costs[a] != costs[b]:
        return bool(costs[a] < costs[b])
    return bool(nodes[a] < nodes[b])


@jit
def _swap(costs: Any, nodes: Any, a: Any, b: Any) -> None:
    costs[a], costs[b] = costs[b], costs[a]
    nodes[a], nodes[b] = nodes[b], nodes[a]


@jit
def _sift_up(costs: Any, nodes: Any, at: Any) -> None:
    while at > I64(0):
        parent = (at - I64(1)) // I64(2)
        if not _below(costs, nodes, at, parent):
            break
        _swap(costs, nodes, at, parent)
        at = parent


@jit
def _sift_down(costs: Any, nodes: Any, size: Any) -> None:
    at = I64(0)
    while True:
        smallest = at
        left = I64(2) * at + I64(1)
        right = left + I64(1)
        if left < size and _below(costs, nodes, left, smallest):
            smallest = left
        if right < size and _below(costs, nodes, right, smallest):
            smallest = right
        if smallest == at:
            return
        _swap(costs, nodes, at, smallest)
        at = smallest


@jit
def simulate_kernel(
    prev: Any, ref: Any, old: Any, prev_held: Any, independent: Any, q: Any, top: Any
) -> Any:
    """Return (kept flags, total forward cost, total forward depth)."""
    n = prev.shape[0]
    cost = np.zeros(n, dtype=F64)
    depth = np.zeros(n, dtype=I64)
    in_top = np.zeros(n, dtype=np.bool_)
    kept = np.zeros(n, dtype=np.bool_)
    heap_costs = np.empty(max(top, I64(1)), dtype=F64)
    heap_nodes = np.empty(max(top, I64(1)), dtype=I64)
    size = I64(0)
    total_cost = F64(0.0)
    total_depth = F64(0.0)
    for i in range(n):
        p = prev[i]
        r = ref[i]
        o = old[i]
        ref_cost = F64(0.0)
        ref_depth = I64(0)
        if r >= 0:
            ref_cost = cost[r]
            ref_depth = depth[r]
        old_cost = F64(0.0)
        old_depth = I64(0)
        if o >= 0:
            old_cost = cost[o]
            old_depth = depth[o]
        prev_cost = F64(0.0)
        prev_depth = I64(0)
        if p >= 0:
            prev_cost = cost[p]
            prev_depth = depth[p]
        # The forward pass: the block is computed once, its dropped inputs recomputed.
        step_cost = F64(1.0) + ref_cost + old_cost
        step_depth = max(ref_depth, old_depth)
        if not prev_held[i]:
            step_cost += prev_cost
            step_depth = max(step_depth, prev_depth)
        total_cost += step_cost
        # A data-independent reference is recomputed ahead of time: the step does not wait.
        total_depth += F64(1) if independent[i] else F64(1 + step_depth)
        if i % q == I64(0) or (r >= 0 and in_top[r]):
            kept[i] = True
            continue
        # A dropped block costs its own call plus recomputing its inputs when needed later.
        mine = F64(1.0) + prev_cost + ref_cost + old_cost
        cost[i] = mine
        depth[i] = I64(1) + max(prev_depth, ref_depth, old_depth)
        if top <= I64(0):
            continue
        if size < top:
            heap_costs[size] = mine
            heap_nodes[size] = i
            in_top[i] = True
            _sift_up(heap_costs, heap_nodes, size)
            size += I64(1)
        elif mine >= heap_costs[0]:
            # (mine, i) outranks the heap's least entry: i is the newest node.
            in_top[heap_nodes[0]] = False
            heap_costs[0] = mine
            heap_nodes[0] = i
            in_top[i] = True
            _sift_down(heap_costs, heap_nodes, size)
    return kept, total_cost, total_depth
