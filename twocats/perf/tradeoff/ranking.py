"""The ranking trade-off attack of Biryukov and Khovratovich on a block dependency graph.

"Tradeoff cryptanalysis of memory-hard functions" (ASIACRYPT 2015, ePrint 2015/227), as the
Argon2 specification summarises it in "Ranking tradeoff attack".  An attacker computes the blocks
in order, as the defender does, but keeps only some of them; a dropped block that is read later
is recomputed from its inputs, recursively, from the blocks that were kept.  For a storage
parameter q the attacker

1. keeps every q-th block (node ``i`` with ``i mod q == 0``);
2. knows every block's reference and *access complexity*: the number of compression calls that
   recomputing it takes, ``1 + cost(prev) + cost(ref)`` for a dropped block and 0 for a kept one
   (a recomputation tree, so a block needed twice is counted twice);
3. ranks the dropped blocks seen so far and tracks the ``nodes // q`` of highest access complexity
   (ties go to the newer block);
4. keeps block ``i`` as well when its reference is one of those top-ranked blocks, so that the
   expensive block is recomputed once, for ``i``, and never again through ``i``.

The memory fraction ``alpha`` is the share of blocks kept, which follows from q only through the
graph (step 4): it is measured, not chosen.  Each block is computed once in the forward pass, at a
cost of one call plus the recomputation of its reference (and of its previous block where the
hardware no longer holds it).  The computational penalty ``C`` is the mean of that cost over all
blocks; the depth penalty ``D`` is the mean length of the forward step measured in sequential
calls, one plus the depth of the recomputation tree, ``depth = 1 + max(depth(prev), depth(ref))``
for a dropped block, because an attacker with enough cores recomputes the branches of a tree in
parallel.  ``alpha * D`` is then the attacker's time-area product relative to the defender's,
and ``E = max 1 / (alpha * D)`` its best gain (the specification's E_max).
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

import numpy as np

from twocats.exceptions import InvalidParametersError
from twocats.perf.tradeoff.graphs import Graph

__all__ = [
    "COST_LIMIT",
    "Attack",
    "Point",
    "Row",
    "at_alpha",
    "attack",
    "q_values",
    "simulate",
    "simulate_reference",
]

#: A graph's sweep stops at the first q whose computational penalty exceeds this many calls per
#: block.
COST_LIMIT: Final = float(1 << 40)


@dataclasses.dataclass(frozen=True)
class Point:
    """The attack with one q on one graph: blocks kept, and the totals over the forward pass."""

    q: int
    nodes: int
    stored: int
    total_cost: float
    total_depth: float
    deepest: int

    @property
    def alpha(self) -> float:
        """The memory fraction: blocks kept over blocks computed."""
        return self.stored / self.nodes

    @property
    def computation(self) -> float:
        """C: compression calls per block, relative to the defender's one."""
        return self.total_cost / self.nodes

    @property
    def depth(self) -> float:
        """D: sequential calls per block, relative to the defender's one."""
        return self.total_depth / self.nodes


def simulate_reference(graph: Graph, q: int) -> Point:
    """The attack with storage parameter ``q``, written plainly: the truth for :func:`simulate`."""
    n = graph.nodes
    prev, ref, held = graph.prev.tolist(), graph.ref.tolist(), graph.prev_held.tolist()
    top = n // q
    cost = [0.0] * n
    depth = [0] * n
    ranked: list[tuple[float, int]] = []
    in_top: set[int] = set()
    stored, total_cost, total_depth, deepest = 0, 0.0, 0.0, 0
    for i in range(n):
        p, r = prev[i], ref[i]
        ref_cost, ref_depth = (cost[r], depth[r]) if r >= 0 else (0.0, 0)
        prev_cost, prev_depth = (cost[p], depth[p]) if p >= 0 else (0.0, 0)
        step_cost, step_depth = 1.0 + ref_cost, ref_depth
        if not held[i]:
            step_cost += prev_cost
            step_depth = max(step_depth, prev_depth)
        total_cost += step_cost
        total_depth += float(1 + step_depth)
        deepest = max(deepest, 1 + step_depth)
        if i % q == 0 or (r >= 0 and r in in_top):
            stored += 1
            continue
        cost[i] = 1.0 + prev_cost + ref_cost
        depth[i] = 1 + max(prev_depth, ref_depth)
        if top <= 0:
            continue
        entry = (cost[i], i)
        if len(ranked) < top:
            heapq.heappush(ranked, entry)
            in_top.add(i)
        elif entry > ranked[0]:
            in_top.discard(heapq.heapreplace(ranked, entry)[1])
            in_top.add(i)
    return Point(q, n, stored, total_cost, total_depth, deepest)


def simulate(graph: Graph, q: int) -> Point:
    """The attack with storage parameter ``q`` on ``graph``, compiled (see the module text)."""
    from twocats.perf.tradeoff._kernel import simulate_kernel

    if q < 1:
        raise InvalidParametersError(f"q must be at least 1; got {q}")
    stored, total_cost, total_depth, deepest = simulate_kernel(
        graph.prev, graph.ref, graph.prev_held, np.int64(q), np.int64(graph.nodes // q)
    )
    return Point(q, graph.nodes, int(stored), float(total_cost), float(total_depth), int(deepest))


def q_values(nodes: int) -> list[int]:
    """The storage parameters tried: 1, then about 12 % apart up to a quarter of the blocks."""
    values = [1, 2, 3, 4, 5, 6, 7, 8]
    q = 8.0
    while q * 1.12 <= nodes / 4:
        q *= 1.12
        if round(q) > values[-1]:
            values.append(round(q))
    return [value for value in values if value <= max(1, nodes // 4)]


@dataclasses.dataclass(frozen=True)
class Row:
    """One storage parameter, every figure the mean over the seeds."""

    q: int
    alpha: float
    C: float
    D: float
    alpha_d: float

    def document(self) -> dict[str, Any]:
        """The row as a JSON-ready dict (``alpha_D`` is alpha * D)."""
        return {"q": self.q, "alpha": self.alpha, "C": self.C, "D": self.D, "alpha_D": self.alpha_d}


@dataclasses.dataclass(frozen=True)
class Attack:
    """The attack on one graph family: rows ordered by alpha, and the best gain E."""

    graph: str
    blocks: int
    nodes: int
    seeds: int
    rows: tuple[Row, ...]

    @property
    def E(self) -> float:
        """The largest time-area gain ``1 / (alpha * D)`` over the rows (at least 1: q = 1)."""
        return max(1.0 / row.alpha_d for row in self.rows)

    @property
    def best(self) -> Row:
        """The row of the smallest time-area product."""
        return min(self.rows, key=lambda row: row.alpha_d)

    def document(self) -> dict[str, Any]:
        """The attack as a JSON-ready dict (the ``twocats tradeoff --json`` document)."""
        return {
            "graph": self.graph,
            "blocks": self.blocks,
            "seeds": self.seeds,
            "rows": [row.document() for row in self.rows],
            "E": self.E,
        }


def _mean(values: Iterable[float]) -> float:
    items = list(values)
    return sum(items) / len(items)


def _sweep(graph: Graph, values: Sequence[int], step: Callable[[], None]) -> list[Point]:
    """The attack on one graph for each q of ``values``, up to the first over the cost limit."""
    points = []
    for q in values:
        point = simulate(graph, q)
        step()
        if not math.isfinite(point.computation):
            break
        points.append(point)
        if point.computation > COST_LIMIT:
            break
    return points


def attack(
    build: Callable[[int], Graph],
    seeds: Sequence[int],
    report: Callable[[int, int], None] = lambda done, total: None,
) -> Attack:
    """Run the attack on the graph ``build(seed)`` of each seed, for every q of :func:`q_values`.

    The graphs are built and attacked one at a time, so memory holds one graph.  Each graph's
    sweep over q stops after the first q whose computational penalty exceeds :data:`COST_LIMIT`
    (or becomes infinite in floating point); a row is reported for each q every graph reached.
    ``report(done, total)`` is called after each (seed, q) step, for a progress bar.
    """
    if not seeds:
        raise InvalidParametersError("seeds must name at least one seed")
    sweeps: list[list[Point]] = []
    name, blocks, nodes = "", 0, 0
    values: list[int] = []
    done = 0

    def step() -> None:
        nonlocal done
        done += 1
        report(done, len(values) * len(seeds))

    for index, seed in enumerate(seeds):
        graph = build(seed)
        if index == 0:
            name, blocks, nodes = graph.name, graph.memory_blocks, graph.nodes
            values = q_values(nodes)
        sweeps.append(_sweep(graph, values, step))
        # A sweep that stopped early skips its remaining steps in the progress count.
        done = (index + 1) * len(values)
        report(done, len(values) * len(seeds))
        del graph
    reached = min(len(points) for points in sweeps)
    rows = []
    for column in range(reached):
        points = [sweep[column] for sweep in sweeps]
        rows.append(
            Row(
                points[0].q,
                _mean(p.alpha for p in points),
                _mean(p.computation for p in points),
                _mean(p.depth for p in points),
                _mean(p.alpha * p.depth for p in points),
            )
        )
    ordered = tuple(sorted(rows, key=lambda row: (row.alpha, row.q)))
    return Attack(name, blocks, nodes, len(sweeps), ordered)


def at_alpha(rows: Sequence[Row], alpha: float, field: str) -> float | None:
    """Read ``field`` ("C" or "D") at memory fraction ``alpha`` by log-log interpolation.

    Returns None where no two rows bracket ``alpha`` (the attack did not reach it).
    """
    ordered = sorted(rows, key=lambda row: row.alpha)
    for low, high in itertools.pairwise(ordered):
        if low.alpha <= alpha <= high.alpha and low.alpha < high.alpha:
            y0, y1 = math.log(getattr(low, field)), math.log(getattr(high, field))
            span = math.log(high.alpha) - math.log(low.alpha)
            t = (math.log(alpha) - math.log(low.alpha)) / span
            return math.exp(y0 + t * (y1 - y0))
    return None
