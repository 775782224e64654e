"""Plain-Python truths for the trade-off attacks' compiled kernels (test-only code).

Each oracle computes what its kernel computes in the most direct way: the ranking attack's forward
pass with a heap and a set, liveness by following each read, TwoCats' block timing row by row with
a memoised recursion, and the depth-reducing schedule as an explicit list of steps whose pebbles
are checked to be in place before every computation.
"""

from __future__ import annotations

import functools
import heapq
import sys
from collections.abc import Iterator

import numpy as np

from twocats.perf.tradeoff._iterative import sub_block_choice
from twocats.perf.tradeoff.graphs import BlockLayout, Graph

__all__ = [
    "depth_left_reference",
    "forward_reference",
    "layered_set_reference",
    "level_times_reference",
    "needed_until_reference",
    "pebbling_reference",
]


def _inputs(graph: Graph, node: int) -> Iterator[int]:
    """The previous block, the reference and the overwritten block of ``node`` (those present)."""
    for parent in (int(graph.prev[node]), int(graph.ref[node]), int(graph.old[node])):
        if parent >= 0:
            yield parent


def forward_reference(graph: Graph, q: int) -> tuple[list[bool], float, float]:
    """The ranking attack's forward pass: kept flags, total cost and total depth."""
    n = graph.nodes
    prev, ref, old = graph.prev.tolist(), graph.ref.tolist(), graph.old.tolist()
    held, known = graph.prev_held.tolist(), graph.independent.tolist()
    top = n // q
    cost = [0.0] * n
    depth = [0] * n
    kept = [False] * n
    ranked: list[tuple[float, int]] = []
    in_top: set[int] = set()
    total_cost, total_depth = 0.0, 0.0

    def of(node: int) -> tuple[float, int]:
        return (cost[node], depth[node]) if node >= 0 else (0.0, 0)

    for i in range(n):
        (prev_cost, prev_depth), (ref_cost, ref_depth) = of(prev[i]), of(ref[i])
        old_cost, old_depth = of(old[i])
        step_cost = 1.0 + ref_cost + old_cost
        step_depth = max(ref_depth, old_depth)
        if not held[i]:
            step_cost += prev_cost
            step_depth = max(step_depth, prev_depth)
        total_cost += step_cost
        total_depth += 1.0 if known[i] else float(1 + step_depth)
        if i % q == 0 or (ref[i] >= 0 and ref[i] in in_top):
            kept[i] = True
            continue
        cost[i] = 1.0 + prev_cost + ref_cost + old_cost
        depth[i] = 1 + max(prev_depth, ref_depth, old_depth)
        if top <= 0:
            continue
        entry = (cost[i], i)
        if len(ranked) < top:
            heapq.heappush(ranked, entry)
            in_top.add(i)
        elif entry > ranked[0]:
            in_top.discard(heapq.heapreplace(ranked, entry)[1])
            in_top.add(i)
    return kept, total_cost, total_depth


def needed_until_reference(graph: Graph, kept: list[bool]) -> list[int]:
    """The last step reading each node, found by walking every read back through dropped nodes."""
    n = graph.nodes
    need = [-1] * n

    def read(node: int, step: int) -> None:
        # A read of a dropped node is a recomputation: its own inputs are read at that step.
        # A node already read at this step or later has passed the read on already.
        if need[node] >= step:
            return
        need[node] = step
        if not kept[node]:
            for parent in _inputs(graph, node):
                read(parent, step)

    for step in range(n):
        for parent in (int(graph.ref[step]), int(graph.old[step])):
            if parent >= 0:
                read(parent, step)
        if graph.prev[step] >= 0 and not graph.prev_held[step]:
            read(int(graph.prev[step]), step)
        if not graph.independent[step]:
            # A data-dependent step may read any node whose slot is not yet overwritten.
            for node in range(step):
                if graph.dies[node] > step:
                    read(node, step)
    for node in graph.outputs.tolist():
        read(node, n)
    return need


def level_times_reference(
    graph: Graph, kept: list[bool], layout: BlockLayout, chain_steps: int, seed: int
) -> float:
    """The iterative attack's time sum for one level, every row of every block timed."""
    steps, sub_blocks = layout.steps, layout.sub_blocks
    rows = steps // sub_blocks
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20 * graph.nodes + 1000))

    def source_row(node: int, row: int) -> int:
        """The row of the previous block that ``row`` of ``node`` reads."""
        if graph.independent[node]:
            return row
        chosen = int(sub_block_choice(seed, node, row // rows, sub_blocks))
        return chosen * rows + row % rows

    def ready(node: int, row: int) -> int:
        return 0 if node < 0 or kept[node] else timing(node, False)[row]

    @functools.cache
    def timing(node: int, prev_at_hand: bool) -> tuple[int, ...]:
        done, out = 0, []
        for row in range(steps):
            start = max(done, ready(int(graph.ref[node]), row))
            if not prev_at_hand:
                start = max(start, ready(int(graph.prev[node]), source_row(node, row)))
            done = start + 1
            out.append(done)
        return tuple(out)

    total = 0.0
    for node in range(layout.first, layout.end):
        if graph.independent[node]:
            total += 1.0
            continue
        last = timing(node, bool(graph.prev_held[node]))[-1]
        total += max(last, chain_steps) / max(steps, chain_steps)
    return total


def layered_set_reference(graph: Graph, horizon: list[int], layer: int, gap: int) -> list[bool]:
    """Pinned nodes, and nodes with an input in their layer outside their run."""
    return [
        horizon[v] >= 0
        or any(p // layer == v // layer and p // gap != v // gap for p in _inputs(graph, v))
        for v in range(graph.nodes)
    ]


def depth_left_reference(graph: Graph, removed: list[bool]) -> int:
    """The longest path avoiding the removed nodes, by brute-force search from each node."""

    @functools.cache
    def longest(node: int) -> int:
        below = [longest(p) for p in _inputs(graph, node) if not removed[p]]
        return 1 + max(below, default=0)

    return max((longest(v) for v in range(graph.nodes) if not removed[v]), default=0)


def pebbling_reference(
    graph: Graph,
    removed: list[bool],
    horizon: list[int],
    interval: int,
    keep: int,
) -> tuple[float, int, int, int]:
    """The light and balloon schedule as explicit steps; checked, then measured.

    Returns (block-ticks held, calls, balloon ticks, deepest balloon) after checking that every
    computation finds each input it needs held (or, for a previous block the hardware holds, the
    block computed just before in its lane) and that every node is computed in order once by the
    light phase.
    """
    n = graph.nodes
    steps: list[list[tuple[int, int]]] = []  # per tick: (node, placement id)
    placements: list[list[int]] = []  # [node, first tick, last tick]
    light: dict[int, int] = {}  # node -> its light placement
    balloon_ticks, deepest, calls = 0, 0, 0

    def place(node: int, tick: int) -> int:
        placements.append([node, tick, tick])
        return len(placements) - 1

    def use(placement: int, node: int, tick: int) -> None:
        assert placements[placement][0] == node
        assert placements[placement][1] < tick, "an input used before it was computed"
        placements[placement][2] = max(placements[placement][2], tick)

    def needs(v: int, in_light: bool) -> list[int]:
        found = [int(graph.ref[v]), int(graph.old[v])]
        if not (in_light and graph.prev_held[v]):
            found.append(int(graph.prev[v]))
        return [x for x in found if x >= 0]

    for k in range(-(-n // interval)):
        low, high = k * interval, min(n, (k + 1) * interval)
        hold = (k - keep) * interval
        wanted = {
            x for v in range(low, high) for x in needs(v, True) if x < hold and not removed[x]
        }
        members = set(wanted)
        frontier = list(wanted)
        while frontier:
            a = frontier.pop()
            for y in needs(a, False):
                if not removed[y] and y not in members:
                    members.add(y)
                    frontier.append(y)
        children: dict[int, list[int]] = {a: [] for a in members}
        for a in members:
            for y in needs(a, False):
                if y in members:
                    children[y].append(a)

        @functools.cache
        def height(a: int, children: dict[int, list[int]] = children) -> int:
            return 1 + max((height(c) for c in children[a]), default=-1)

        depth = 1 + max((height(a) for a in members), default=-1)
        start = len(steps)
        steps.extend([] for _ in range(depth))
        balloon: dict[int, int] = {}
        for a in sorted(members):
            tick = start + depth - 1 - height(a)
            balloon[a] = place(a, tick)
            steps[tick].append((a, balloon[a]))
        for a in sorted(members, key=lambda node: -height(node)):
            tick = placements[balloon[a]][1]
            for y in needs(a, False):
                use(balloon[y] if y in members else light[y], y, tick)
        balloon_ticks += depth
        deepest = max(deepest, depth)
        calls += len(members)
        for v in range(low, high):
            tick = len(steps)
            for x in needs(v, True):
                use(balloon[x] if x in wanted else light[x], x, tick)
            if graph.prev_held[v] and graph.prev[v] >= 0:
                assert int(graph.prev[v]) in light, "the previous block was never computed"
            light[v] = place(v, tick)
            steps.append([(v, light[v])])
    end = len(steps)
    for node in graph.outputs.tolist():
        placements[light[node]][2] = end
    tick_of = {v: placements[light[v]][1] for v in range(n)}
    for v in range(n):
        if horizon[v] > v:
            placements[light[v]][2] = max(placements[light[v]][2], tick_of[horizon[v]])
    assert sorted(light) == list(range(n))
    assert [placements[light[v]][1] for v in range(n)] == sorted(tick_of.values())
    # Count the pebbles held after each tick, one tick at a time.
    held_after = np.zeros(end + 1, dtype=np.int64)
    for _node, first, last in placements:
        held_after[first:last] += 1
    return float(held_after.sum()), n + calls, balloon_ticks, deepest
