"""The ranking trade-off attack of Biryukov and Khovratovich on a block dependency graph.

"Tradeoff cryptanalysis of memory-hard functions" (ASIACRYPT 2015, ePrint 2015/227), as the
Argon2 specification summarises it in "Ranking tradeoff attack".  An attacker computes the blocks
in order, as the defender does, but keeps only some of them; a dropped block that is read later
is recomputed from its inputs, recursively, from the blocks that were kept.  For a storage
parameter q the attacker

1. keeps every q-th block (node ``i`` with ``i mod q == 0``);
2. knows every block's reference and *access complexity*: the number of compression calls that
   recomputing it takes, one plus the cost of its inputs (previous block, reference, and the block
   it overwrites in Argon2 1.3) for a dropped block and 0 for a kept one (a recomputation tree,
   so a block needed twice is counted twice);
3. ranks the dropped blocks seen so far and tracks the ``nodes // q`` of highest access complexity
   (ties go to the newer block);
4. keeps block ``i`` as well when its reference is one of those top-ranked blocks, so that the
   expensive block is recomputed once, for ``i``, and never again through ``i``.

Each block is computed once in the forward pass, at a cost of one call plus the recomputation of
its dropped inputs (and of its previous block where the hardware no longer holds it).  The
computational penalty ``C`` is the mean of that cost over all blocks.  The depth penalty ``D`` is
the mean length of the forward step in sequential calls: one plus the depth of the recomputation
tree (``1 + max`` over the inputs, an attacker with enough cores recomputing the branches in
parallel) where the reference is data-dependent, and one where it is data-independent, whose
recomputation the attacker starts ahead of time (:mod:`.model`).

The memory fraction ``alpha`` is the attacker's peak memory over the defender's
(:mod:`.liveness`): a kept block is held until its last read where only data-independent
references read it, and until it is overwritten otherwise.  It follows from q only through the
graph: it is measured, not chosen.  The gain is the specification's ``E`` (:mod:`.model`).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from twocats.exceptions import InvalidParametersError
from twocats.perf.tradeoff import liveness
from twocats.perf.tradeoff.graphs import Graph
from twocats.perf.tradeoff.model import Result, Row, mean_rows, result_of

__all__ = [
    "COST_LIMIT",
    "Forward",
    "Point",
    "at_alpha",
    "attack",
    "forward",
    "point",
    "q_values",
    "seeded_sweeps",
    "sweep",
]

#: A graph's sweep stops at the first q whose computational penalty exceeds this many calls per
#: block.
COST_LIMIT: Final = float(1 << 40)


@dataclasses.dataclass(frozen=True)
class Forward:
    """The forward pass with one q: which nodes are kept, and the totals of cost and depth."""

    kept: npt.NDArray[np.bool_]
    total_cost: float
    total_depth: float


@dataclasses.dataclass(frozen=True)
class Point:
    """The attack with one q on one graph: its peak memory and the forward pass's totals."""

    q: int
    nodes: int
    memory_blocks: int
    stored: int
    peak: float
    total_cost: float
    total_depth: float

    @property
    def row(self) -> Row:
        """alpha (peak over the defender's memory), C and D per block, q and the share stored."""
        return Row(
            self.peak / self.memory_blocks,
            self.total_cost / self.nodes,
            self.total_depth / self.nodes,
            {"q": self.q, "stored": self.stored / self.nodes},
        )


def forward(graph: Graph, q: int) -> Forward:
    """The forward pass with storage parameter ``q`` on ``graph``, compiled (module text)."""
    from twocats.perf.tradeoff._kernel import simulate_kernel

    if q < 1:
        raise InvalidParametersError(f"q must be at least 1; got {q}")
    kept, total_cost, total_depth = simulate_kernel(
        graph.prev,
        graph.ref,
        graph.old,
        graph.prev_held,
        graph.independent,
        np.int64(q),
        np.int64(graph.nodes // q),
    )
    return Forward(kept, float(total_cost), float(total_depth))


def point(graph: Graph, q: int, run: Forward | None = None) -> Point:
    """The attack with storage parameter ``q``: the forward pass and the memory it holds."""
    done = forward(graph, q) if run is None else run
    memory = liveness.attacker_memory(graph, done.kept)
    return Point(
        q,
        graph.nodes,
        graph.memory_blocks,
        int(np.count_nonzero(done.kept)),
        memory.peak,
        done.total_cost,
        done.total_depth,
    )


def q_values(nodes: int) -> list[int]:
    """The storage parameters tried: 1, then about 12 % apart up to a quarter of the blocks."""
    values = [1, 2, 3, 4, 5, 6, 7, 8]
    q = 8.0
    while q * 1.12 <= nodes / 4:
        q *= 1.12
        if round(q) > values[-1]:
            values.append(round(q))
    return [value for value in values if value <= max(1, nodes // 4)]


#: How a sweep turns one forward pass into a row: (graph, its seed, q, the pass) -> row.
Measure = Callable[[Graph, int, int, Forward], Row]


def sweep(
    graph: Graph,
    seed: int,
    values: Sequence[int],
    measure: Measure,
    step: Callable[[], None] = lambda: None,
) -> list[Row]:
    """``measure`` each q of ``values`` on one graph, up to the first over the cost limit."""
    rows = []
    for q in values:
        run = forward(graph, q)
        step()
        computation = run.total_cost / graph.nodes
        if not math.isfinite(computation):
            break
        rows.append(measure(graph, seed, q, run))
        if computation > COST_LIMIT:
            break
    return rows


def seeded_sweeps(
    build: Callable[[int], Graph],
    seeds: Sequence[int],
    measure: Measure,
    report: Callable[[int, int], None],
) -> tuple[Graph, list[list[Row]]]:
    """Sweep the graph of each seed; return the first graph (its facts) and every seed's rows.

    The graphs are built and attacked one at a time, so memory holds one graph at a time.
    ``report(done, total)`` is called after each (seed, q) step, for a progress bar.
    """
    if not seeds:
        raise InvalidParametersError("seeds must name at least one seed")
    runs: list[list[Row]] = []
    first: Graph | None = None
    values: list[int] = []
    done = 0

    def step() -> None:
        nonlocal done
        done += 1
        report(done, len(values) * len(seeds))

    for index, seed in enumerate(seeds):
        graph = build(seed)
        if first is None:
            values = q_values(graph.nodes)
        runs.append(sweep(graph, seed, values, measure, step))
        # A sweep that stopped early skips its remaining steps in the progress count.
        done = (index + 1) * len(values)
        report(done, len(values) * len(seeds))
        first = graph if first is None else first
        del graph
    assert first is not None
    return first, runs


def attack(
    build: Callable[[int], Graph],
    seeds: Sequence[int],
    report: Callable[[int, int], None] = lambda done, total: None,
    memory_bytes: int | None = None,
) -> Result:
    """Run the attack on the graph ``build(seed)`` of each seed, for every q of :func:`q_values`.

    Each graph's sweep over q stops after the first q whose computational penalty exceeds
    :data:`COST_LIMIT` (or becomes infinite in floating point); a row is reported for each q every
    graph reached, each figure the mean over the seeds, ordered by alpha.  beta prices the
    graph's core at ``memory_bytes`` (default: the graph's own memory).
    """
    graph, runs = seeded_sweeps(build, seeds, lambda g, _, q, run: point(g, q, run).row, report)
    rows = sorted(mean_rows(runs), key=lambda row: (row.alpha, row.extra["q"]))
    return result_of("ranking", graph, len(runs), rows, memory_bytes)


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
