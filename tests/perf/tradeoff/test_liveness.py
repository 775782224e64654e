"""Liveness: the last read of each node, and the blocks an attacker holds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import tradeoff_oracles as oracles
from tests.support.tradeoff_graphs import random_graph
from twocats.perf.tradeoff import graphs, liveness
from twocats.perf.tradeoff.graphs import Graph
from twocats.profiles import CHEAPEST


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 120), st.floats(0.0, 1.0))
def test_last_reads_equal_the_walk_on_any_graph(seed: int, nodes: int, share: float) -> None:
    """The compiled last reads equal the oracle's walk through every read, whatever is kept."""
    graph = random_graph(seed, nodes)
    kept = np.random.default_rng(seed).random(nodes) < share
    need = liveness.needed_until(graph, kept)
    assert need.tolist() == oracles.needed_until_reference(graph, kept.tolist())


@pytest.mark.parametrize(
    "graph",
    [graphs.argon2("argon2id", 64, 2, 2, 0), graphs.twocats(CHEAPEST, 3)],
    ids=lambda graph: graph.name,
)
def test_last_reads_equal_the_walk_on_real_graphs(graph: Graph) -> None:
    """On hybrid Argon2id and TwoCats graphs too, with every third node kept."""
    kept = np.arange(graph.nodes) % 3 == 0
    need = liveness.needed_until(graph, kept)
    assert need.tolist() == oracles.needed_until_reference(graph, kept.tolist())


def test_a_chain_that_keeps_everything_holds_one_block() -> None:
    """Each block read only by the next one: one block held after each step, two at the end."""
    graph = graphs.power(1.0, 16, 0)
    chain = graphs.Graph(
        "chain",
        graph.prev,
        np.full(16, -1, dtype=np.int32),
        graph.old,
        np.zeros(16, dtype=np.bool_),
        np.ones(16, dtype=np.bool_),
        graph.dies,
        graph.outputs,
        16,
        1024,
        graph.core,
    )
    memory = liveness.attacker_memory(chain, np.ones(16, dtype=np.bool_))
    assert (memory.peak, memory.mean) == (1.0, 1.0)


def test_dropped_twocats_blocks_hold_their_start_states() -> None:
    """A dropped TwoCats block still to be recomputed counts its lane states' share of a block."""
    graph = graphs.twocats(CHEAPEST, 0)
    kept = np.zeros(graph.nodes, dtype=np.bool_)
    need = liveness.needed_until(graph, kept)
    counts = liveness.held(graph, kept, need)
    waiting = sum(1 for k in range(graph.nodes) if need[k] > k)
    total = sum(min(int(need[k]), graph.nodes) - k for k in range(graph.nodes) if need[k] > k)
    assert waiting > 0
    assert counts.sum() == pytest.approx(total * graph.state_bytes / graph.block_bytes)
