"""The low-storage attack: keep every block, but only until its last read.

Corrigan-Gibbs, Boneh and Schechter ("Balloon hashing", 2016) observed that an Argon2i attacker
knows every reference in advance and can therefore drop each block right after the last step that
reads it; the Argon2 specification's "Memory optimization attack" computes the memory this leaves
(its L^r and L^t, the mean memory over a pass as a fraction of the defender's).  In version 1.2.1
a later pass replaced the block it overwrote; version 1.3 XORs it into the new one, so every block
of an earlier pass is read when it is overwritten, and only the last pass (all of a 1-pass hash)
gains.

Here every node is computed once, in order (C = D = 1), and held as :mod:`.liveness` says: until
its last read where only data-independent references read it, until it is overwritten otherwise.
alpha is the peak over the defender's memory; the figures add the mean memory of the attacker and
of the defender over the whole hash and over each pass (or TwoCats level), and the two advantages
the specification quotes: the defender's mean memory over the attacker's, and the peaks' ratio.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from twocats.exceptions import InvalidParametersError
from twocats.perf.tradeoff import liveness
from twocats.perf.tradeoff.graphs import Graph
from twocats.perf.tradeoff.model import Result, Row, result_of

__all__ = ["attack", "measure"]


def _phases(graph: Graph) -> list[tuple[int, int]]:
    """The passes of an Argon2 or power graph, or the levels of a TwoCats graph, as node ranges."""
    if graph.layouts:
        return [(layout.first, layout.end) for layout in graph.layouts]
    size = graph.memory_blocks
    return [(start, min(start + size, graph.nodes)) for start in range(0, graph.nodes, size)]


def measure(graph: Graph) -> tuple[Row, dict[str, Any]]:
    """The attack on one graph: its row and its memory figures."""
    kept = np.ones(graph.nodes, dtype=np.bool_)
    mine = liveness.held(graph, kept, liveness.needed_until(graph, kept))
    theirs = liveness.held(graph, kept, graph.dies)
    memory = graph.memory_blocks
    phases = _phases(graph)
    figures = {
        "alpha_mean": float(mine.mean()) / memory,
        "defender_mean": float(theirs.mean()) / memory,
        "advantage_mean": float(theirs.mean() / mine.mean()),
        "advantage_peak": float(theirs.max() / mine.max()),
        "L_by_pass": [float(mine[a:b].mean()) / memory for a, b in phases],
        "defender_by_pass": [float(theirs[a:b].mean()) / memory for a, b in phases],
    }
    return Row(float(mine.max()) / memory, 1.0, 1.0, {}), figures


def _mean(values: Sequence[Any]) -> Any:
    if isinstance(values[0], list):
        return [_mean(column) for column in zip(*values, strict=True)]
    return sum(values) / len(values)


def attack(
    build: Callable[[int], Graph],
    seeds: Sequence[int],
    report: Callable[[int, int], None] = lambda done, total: None,
    memory_bytes: int | None = None,
) -> Result:
    """The attack on the graph of each seed; every figure the mean over the seeds."""
    if not seeds:
        raise InvalidParametersError("seeds must name at least one seed")
    rows, figures = [], []
    graph: Graph | None = None
    for index, seed in enumerate(seeds):
        graph = build(seed)
        row, figure = measure(graph)
        rows.append(row)
        figures.append(figure)
        report(index + 1, len(seeds))
    assert graph is not None
    merged = {key: _mean([figure[key] for figure in figures]) for key in figures[0]}
    alpha = sum(row.alpha for row in rows) / len(rows)
    return result_of(
        "low-storage",
        graph,
        len(rows),
        [Row(alpha, 1.0, 1.0, {})],
        memory_bytes,
        figures=merged,
        notes=("alpha is the peak; alpha_mean and L_by_pass the mean memory over the defender's",),
    )
