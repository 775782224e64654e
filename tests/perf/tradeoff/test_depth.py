"""The depth-reducing attack: the removed set, the depth left and the schedule's cost, exactly."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import tradeoff_oracles as oracles
from tests.support.tradeoff_graphs import random_graph
from twocats.perf.tradeoff import depth, graphs, liveness
from twocats.perf.tradeoff._depth import layered_set, remaining_depth, schedule_cost
from twocats.perf.tradeoff.graphs import Graph
from twocats.profiles import CHEAPEST
from twocats.simd import _jit

compiled_only = pytest.mark.skipif(
    bool(_jit.config.DISABLE_JIT), reason="compiled kernels only (NUMBA_DISABLE_JIT is set)"
)

SMALL_GRAPHS = [
    graphs.argon2("argon2i", 64, 1, 1, 0),
    graphs.argon2("argon2i", 64, 3, 2, 0),
    graphs.argon2("argon2i", 48, 2, 1, 0, version="1.2.1"),
    graphs.argon2("argon2id", 64, 2, 1, 3),
    graphs.twocats(dataclasses.replace(CHEAPEST, side_channel_resistant=True), 0),
    graphs.twocats(CHEAPEST, 5),
]


def _check(graph: Graph, layer: int, gap: int, interval: int, keep: int) -> None:
    horizon = liveness.pinned(graph)
    removed = layered_set(graph.prev, graph.ref, graph.old, horizon, layer, gap)
    assert removed.tolist() == oracles.layered_set_reference(graph, horizon.tolist(), layer, gap)
    assert remaining_depth(graph.prev, graph.ref, graph.old, removed) == (
        oracles.depth_left_reference(graph, removed.tolist())
    )
    fast = schedule_cost(
        graph.prev, graph.ref, graph.old, graph.prev_held, removed, horizon, graph.outputs,
        np.int64(interval), np.int64(keep), np.float64(0.0), np.float64(np.inf),
    )  # fmt: skip
    slow = oracles.pebbling_reference(graph, removed.tolist(), horizon.tolist(), interval, keep)
    assert (float(fast[0]), int(fast[1]), int(fast[2]), int(fast[3])) == slow


@pytest.mark.parametrize("graph", SMALL_GRAPHS, ids=lambda graph: graph.name)
@pytest.mark.parametrize(
    ("layer", "gap", "interval", "keep"),
    [(16, 4, 8, 1), (32, 2, 16, 2), (8, 1, 4, 1), (1 << 20, 1 << 20, 5, 1), (64, 8, 3, 4)],
)
def test_schedule_equals_the_checked_pebbling(
    graph: Graph, layer: int, gap: int, interval: int, keep: int
) -> None:
    """On small real graphs the compiled schedule's cost is the explicit, checked pebbling's."""
    _check(graph, layer, gap, interval, keep)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(2, 120),
    st.integers(1, 6),
    st.integers(0, 5),
    st.integers(1, 40),
    st.integers(1, 4),
)
def test_schedule_equals_the_checked_pebbling_on_any_graph(
    seed: int, nodes: int, gap_bits: int, extra_bits: int, interval: int, keep: int
) -> None:
    """On random graphs with three inputs per node the two agree for any parameters."""
    graph = random_graph(seed, nodes)
    gap = 1 << gap_bits
    _check(graph, gap << extra_bits if extra_bits else gap * 2, gap, interval, keep)


def test_a_held_graph_has_no_depth_and_a_chain_has_its_length() -> None:
    """Removing every node leaves depth 0; removing none of a chain leaves its length."""
    graph = graphs.power(1.0, 50, 0)
    chain = dataclasses.replace(graph, ref=np.full(50, -1, dtype=np.int32))
    none = np.zeros(50, dtype=np.bool_)
    assert remaining_depth(chain.prev, chain.ref, chain.old, none) == 50
    every = np.ones(50, dtype=np.bool_)
    assert remaining_depth(graph.prev, graph.ref, graph.old, every) == 0


def test_holding_everything_costs_the_low_storage_attacks_memory() -> None:
    """With every node held for good the schedule is the low-storage attack: no recomputation."""
    graph = graphs.argon2("argon2i", 256, 1, 1, 0)
    row = depth.evaluate(graph, depth.target(graph, graph.memory_bytes), None)
    assert row is not None
    assert row.C == 1.0
    assert row.extra["balloon_calls"] == 0.0
    from twocats.perf.tradeoff import lowstorage

    _, figures = lowstorage.measure(graph)
    assert row.alpha == pytest.approx(figures["alpha_mean"] / figures["defender_mean"])


def test_corollary_bound_is_the_published_formula() -> None:
    """Corollary 5.6: AT = 2 T^(7/4) (5 + t + ln T / 8), E = (T^2 / t) / AT."""
    import math

    t, blocks = 3, 1 << 20
    bound = depth.corollary_bound(t * blocks, t)
    total = t * blocks
    assert bound["AT"] == pytest.approx(2 * total**1.75 * (5 + t + math.log(total) / 8))
    assert bound["E"] == pytest.approx(total**2 / t / bound["AT"])
    assert bound["E"] < 1  # the specification's conclusion for t >= 3 at 2^20 blocks


@compiled_only
def test_search_beats_the_corollary_on_one_pass_argon2i() -> None:
    """On 2^16-block 1-pass Argon2i the best schedule found costs less than Corollary 5.6's AT."""
    result = depth.attack(lambda seed: graphs.argon2("argon2i", 1 << 16, 1, 1, seed), [0])
    assert result.figures["AT_over_corollary"]["priced_cores"] < 1
    assert result.gain == max(row.gain(result.beta) for row in result.rows)
    assert any(row.extra["balloon_calls"] > 0 for row in result.rows)
