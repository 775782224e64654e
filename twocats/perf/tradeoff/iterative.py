"""The attack on an iterative compression function, on TwoCats' real block hash.

The Argon2 specification ("Attack on iterative compression function") shows that a compression
function that makes its output sub-block by sub-block, each from the previous one and the inputs'
sub-blocks at the same place, lets a trade-off attacker pipeline recomputations: a missing block
that is a recomputation tree of depth D costs ``(D + s)`` sub-block latencies instead of
``D * s``, so the attacker wins whenever ``D(q) <= s (q - 1)``.

TwoCats' ``hashBlocks`` (twocats.md section 9, ``src/twocats-ref.c`` in waywardgeek/twocats) has
that structure at the granularity of one row of ``lanes`` words: row ``j`` of the new block is
``rotl((state + prev row) ^ ref row, 8)`` of the lane states left by row ``j - 1``.  The reference
block is read in order.  The previous block is read in order in the data-independent slices and,
in the password-dependent slices, sub-block by sub-block, each sub-block chosen by the first word
of the reference block's sub-block at the same place.  The multiply chain runs beside the rows
from the block's start state and meets the state only at the block's end, so recomputing a block
whose start state is kept takes no multiplication at all.

The model, exact at the level of rows: the attacker keeps the blocks the ranking attack keeps
(:mod:`.ranking`, same q) and every dropped block's start state (counted in alpha at its share of a
block).  A dropped block's sub-block ``b`` can start when its sub-block ``b - 1`` is done and the
first rows of the inputs' sub-blocks it reads are ready, then takes one step per row; since each
sub-block's rows follow one another, the finishing step of every sub-block of every dropped block
describes its timing completely, and these are computed once per block in graph order.  The chosen
sub-blocks of the previous block are drawn per seed (they depend on the password).  A forward step
whose reference is data-dependent takes the longer of its rows and its multiply chain; the
defender's step takes the longer of the block's rows and the chain.  With the chain left out
(``multiply_latency = 0``), D is the rows' pipeline alone; with it, a recomputation that finishes
within the chain's time costs the attacker nothing.  Steps whose reference is data-independent
count 1, as everywhere (:mod:`.model`).

Argon2's G is not iterative at this granularity: its output is P applied to the rows of
``R = X xor Y`` and then to the columns, so no output word is known before every word of both
inputs is, and a recomputation tree of depth D takes D whole calls of G.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from twocats.exceptions import InvalidParametersError
from twocats.perf.tradeoff import ranking
from twocats.perf.tradeoff.graphs import Graph
from twocats.perf.tradeoff.model import Result, Row, mean_rows, result_of

__all__ = ["DEFAULT_MULTIPLY_LATENCY", "MAX_TIMED_SUB_BLOCKS", "attack", "depth"]

#: One 32x32-bit multiplication (with its XOR), in row steps (an add and an XOR): the Argon2
#: specification puts a multiplication at 4 to 5 additions' latency in an ASIC.
DEFAULT_MULTIPLY_LATENCY: Final = 4.0

#: The most sub-block times held for one level (32-bit each: 128 MiB).
MAX_TIMED_SUB_BLOCKS: Final = 1 << 25


def check(graph: Graph) -> None:
    """Refuse a graph whose compression is not TwoCats' iterative block hash, or too large."""
    if not graph.layouts:
        raise InvalidParametersError(
            f"the iterative attack needs TwoCats' block hash; {graph.name} has none "
            "(Argon2's G mixes whole blocks)"
        )
    for layout in graph.layouts:
        if layout.repeats > 1:
            raise InvalidParametersError(
                "the iterative attack does not model the March 2014 version's repeated block "
                "hash (time cost above 0)"
            )
        if (layout.end - layout.first) * layout.sub_blocks > MAX_TIMED_SUB_BLOCKS:
            raise InvalidParametersError(
                f"the iterative attack times every sub-block of a level: at most "
                f"{MAX_TIMED_SUB_BLOCKS} per level; lower --blocks"
            )


def depth(graph: Graph, kept: npt.NDArray[np.bool_], multiply_latency: float, seed: int) -> float:
    """D of the iterative attack: the forward steps' mean time over the defender's (module text)."""
    from twocats.perf.tradeoff._iterative import level_times

    total = 0.0
    for layout in graph.layouts:
        chain = round(layout.steps * layout.chain * multiply_latency)
        total += level_times(
            graph.prev,
            graph.ref,
            graph.prev_held,
            graph.independent,
            kept,
            np.int64(layout.first),
            np.int64(layout.end),
            np.int64(layout.steps),
            np.int64(layout.sub_blocks),
            np.int64(chain),
            np.int64(seed),
        )
    return total / graph.nodes


def attack(
    build: Callable[[int], Graph],
    seeds: Sequence[int],
    multiply_latency: float = DEFAULT_MULTIPLY_LATENCY,
    report: Callable[[int, int], None] = lambda done, total: None,
    memory_bytes: int | None = None,
) -> Result:
    """Run the iterative attack on each seed's graph for every q of the ranking attack."""
    if not (0.0 <= multiply_latency <= 1000.0):
        raise InvalidParametersError(
            f"the multiply latency must be from 0 to 1000 row steps; got {multiply_latency}"
        )

    def built(seed: int) -> Graph:
        graph = build(seed)
        check(graph)
        return graph

    def measure(graph: Graph, seed: int, q: int, run: ranking.Forward) -> Row:
        base = ranking.point(graph, q, run).row
        iterative = depth(graph, run.kept, multiply_latency, seed)
        return Row(base.alpha, base.C, iterative, {**base.extra, "D_blocks": base.D})

    graph, runs = ranking.seeded_sweeps(built, seeds, measure, report)
    rows = sorted(mean_rows(runs), key=lambda row: (row.alpha, row.extra["q"]))
    layout = graph.layouts[-1]
    return result_of(
        "iterative",
        graph,
        len(runs),
        rows,
        memory_bytes,
        figures={
            "steps_per_block": layout.steps,
            "sub_blocks": layout.sub_blocks,
            "multiplications_per_step": layout.chain,
            "multiply_latency": multiply_latency,
        },
        notes=(
            "D in the defender's block times, timed row by row; C in block calls",
            "alpha counts the dropped blocks' kept start states at their share of a block",
        ),
    )
