"""The memory an attacker holds: blocks kept until the last step that reads them.

The attacker computes the nodes in the graph's order, one step each.  A node it keeps is held from
the step that makes it to the last step that reads it: as an input of that step (its reference,
the block it overwrites, or its previous block when the hardware no longer holds that), or as an
input of a dropped node that a step recomputes.  Where the read is data-dependent the attacker
cannot know it in advance: a node that a data-dependent reference might still read is held until
its slot is overwritten (the defender's horizon, ``Graph.dies``); a node only data-independent
references read is dropped right after its last read, which the attacker computes beforehand from
the public addresses (Corrigan-Gibbs, Boneh and Schechter's observation, "Balloon hashing",
2016).  A dropped node still to be recomputed may need a small state besides its inputs
(``Graph.state_bytes``, TwoCats' lane states); that state is held, at its fraction of a block,
until the node's last recomputation.

Memory is counted between steps, in blocks: after step ``j`` the attacker holds every kept node
``k <= j`` with a read after ``j``.  The defender holds every node until its slot is overwritten,
so its peak is the graph's ``memory_blocks``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import numpy.typing as npt

from twocats.perf.tradeoff.graphs import Graph

__all__ = ["Memory", "attacker_memory", "defender_memory", "held", "needed_until", "pinned"]


@dataclasses.dataclass(frozen=True)
class Memory:
    """Blocks held between steps: the peak, and the mean over every step of the graph."""

    peak: float
    mean: float


def needed_until(graph: Graph, kept: npt.NDArray[np.bool_]) -> npt.NDArray[np.int32]:
    """The last step that reads each node (see the module text), when ``kept`` nodes are stored."""
    from twocats.perf.tradeoff._live import needed_until_kernel

    need: npt.NDArray[np.int32] = needed_until_kernel(
        graph.prev, graph.ref, graph.old, graph.prev_held, kept, pinned(graph), graph.outputs
    )
    return need


def pinned(graph: Graph) -> npt.NDArray[np.int32]:
    """Per node, the last step whose data-dependent reference might read it (-1: none)."""
    from twocats.perf.tradeoff._live import pinned_nodes

    horizon: npt.NDArray[np.int32] = pinned_nodes(graph.independent, graph.dies)
    return horizon


def held(
    graph: Graph, kept: npt.NDArray[np.bool_], need: npt.NDArray[np.int32]
) -> npt.NDArray[np.float64]:
    """Blocks held after each step, dropped nodes' states counted at their share of a block."""
    from twocats.perf.tradeoff._live import held_counts

    weight = np.float64(graph.state_bytes / graph.block_bytes)
    counts: npt.NDArray[np.float64] = held_counts(need, kept, weight)
    return counts


def attacker_memory(graph: Graph, kept: npt.NDArray[np.bool_]) -> Memory:
    """The peak and mean blocks held by an attacker that stores the ``kept`` nodes."""
    counts = held(graph, kept, needed_until(graph, kept))
    return Memory(float(counts.max()), float(counts.mean()))


def defender_memory(graph: Graph) -> Memory:
    """The peak and mean blocks the defender holds: every node until its slot is overwritten."""
    kept = np.ones(graph.nodes, dtype=np.bool_)
    counts = held(graph, kept, graph.dies)
    return Memory(float(counts.max()), float(counts.mean()))
