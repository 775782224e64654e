"""Random block dependency graphs for the trade-off kernels' differential tests (test-only)."""

from __future__ import annotations

import numpy as np

from twocats.perf.tradeoff.graphs import Graph
from twocats.perf.tradeoff.model import argon2_core

__all__ = ["random_graph"]


def random_graph(seed: int, nodes: int) -> Graph:
    """Any graph in order: each node may continue node i - 1, read and overwrite earlier nodes.

    Some references are data-independent, some slots are overwritten later, some previous
    blocks are lost by the hardware, and the last node is an output.
    """
    rng = np.random.default_rng(seed)
    i = np.arange(nodes, dtype=np.int64)
    prev = np.where(rng.random(nodes) < 0.9, i - 1, -1)
    ref = np.where(rng.random(nodes) < 0.9, (rng.random(nodes) * i).astype(np.int64), -1)
    old = np.where(rng.random(nodes) < 0.3, (rng.random(nodes) * i).astype(np.int64), -1)
    ref[0], old[0] = -1, -1
    dies = np.minimum(nodes, i + 1 + (rng.random(nodes) * nodes).astype(np.int64))
    held = rng.random(nodes) < 0.8
    independent = rng.random(nodes) < 0.7
    return Graph(
        "random",
        prev.astype(np.int32),
        ref.astype(np.int32),
        old.astype(np.int32),
        held,
        independent,
        dies.astype(np.int32),
        np.array([nodes - 1], dtype=np.int32),
        max(1, nodes // 2),
        1024,
        argon2_core(),
    )
