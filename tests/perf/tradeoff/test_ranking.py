"""The ranking attack: the compiled pass against its plain truth, and the published figures."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import tradeoff_oracles as oracles
from tests.support.tradeoff_graphs import random_graph
from twocats.perf.tradeoff import graphs, liveness, ranking
from twocats.perf.tradeoff.graphs import Graph
from twocats.profiles import CHEAPEST
from twocats.simd import _jit

#: The published-figure checks run 2^16-block graphs: seconds compiled, minutes in plain Python.
compiled_only = pytest.mark.skipif(
    bool(_jit.config.DISABLE_JIT), reason="compiled kernels only (NUMBA_DISABLE_JIT is set)"
)

#: The Argon2 specification's table tab:generic3 (1-pass Argon2d): alpha -> (C, D).
ARGON2D_TABLE = {
    1 / 2: (1.5, 1.5),
    1 / 3: (4.0, 2.8),
    1 / 4: (20.2, 5.5),
    1 / 5: (344.0, 10.3),
    1 / 6: (4660.0, 17.0),
}

#: The same specification's tab:comp-alpha and tab:depth-alpha, row gamma = 1 (uniform).
POWER1_TABLE = {
    1 / 2: (1.6, 1.6),
    1 / 3: (2.9, 2.5),
    1 / 4: (7.3, 4.0),
    1 / 5: (16.4, 5.8),
    1 / 6: (59.0, 8.7),
}


def _same(graph: Graph, q: int) -> None:
    fast = ranking.forward(graph, q)
    kept, total_cost, total_depth = oracles.forward_reference(graph, q)
    assert fast.kept.tolist() == kept
    assert (fast.total_cost, fast.total_depth) == (total_cost, total_depth)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 300), st.integers(1, 40))
def test_kernel_equals_reference_on_any_graph(seed: int, nodes: int, q: int) -> None:
    """The compiled pass keeps the same nodes at the same cost and depth as the plain one."""
    _same(random_graph(seed, nodes), q)


@pytest.mark.parametrize(
    "graph",
    [
        graphs.argon2("argon2d", 512, 2, 4, 7),
        graphs.argon2("argon2id", 256, 3, 1, 8),
        graphs.argon2("argon2i", 256, 3, 1, 8, version="1.2.1"),
        graphs.power(3.0, 500, 9),
        graphs.twocats(CHEAPEST, 10),
    ],
    ids=lambda graph: graph.name,
)
def test_kernel_equals_reference_on_the_real_graphs(graph: Graph) -> None:
    """On small Argon2, power and TwoCats graphs both implementations agree for every q tried."""
    for q in ranking.q_values(graph.nodes):
        _same(graph, q)


def test_alpha_is_peak_memory_over_the_defenders() -> None:
    """alpha is the attacker's peak held blocks over memory_blocks, not stored over nodes."""
    graph = graphs.argon2("argon2i", 256, 3, 1, 0, version="1.2.1")
    point = ranking.point(graph, 1)
    assert point.stored == graph.nodes
    peak = liveness.attacker_memory(graph, np.ones(graph.nodes, dtype=np.bool_)).peak
    assert point.row.alpha == peak / graph.memory_blocks < 1
    assert point.row.extra["stored"] == 1.0


def test_data_independent_steps_count_depth_one() -> None:
    """On Argon2i every step's depth is 1 whatever is dropped; Argon2d's grows."""
    known = ranking.point(graphs.argon2("argon2i", 1024, 1, 1, 0), 8)
    unknown = ranking.point(graphs.argon2("argon2d", 1024, 1, 1, 0), 8)
    assert known.row.D == 1.0
    assert unknown.row.D > 1.0
    assert known.row.C > 1.0


def _close(value: float | None, published: float, factor: float) -> bool:
    return value is not None and published / factor <= value <= published * factor


@compiled_only
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_argon2d_one_pass_reproduces_the_published_table(seed: int) -> None:
    """On 2^16-block 1-pass Argon2d, C and D lie within 1.5x of tab:generic3 (2.5x at alpha 1/6)."""
    result = ranking.attack(lambda s: graphs.argon2("argon2d", 1 << 16, 1, 1, s), [seed])
    for alpha, (c, d) in ARGON2D_TABLE.items():
        factor = 2.5 if alpha < 0.19 else 1.5
        measured_c = ranking.at_alpha(result.rows, alpha, "C")
        measured_d = ranking.at_alpha(result.rows, alpha, "D")
        assert _close(measured_c, c, factor), (alpha, measured_c, c)
        assert _close(measured_d, d, factor), (alpha, measured_d, d)


@compiled_only
@pytest.mark.parametrize("seed", [0, 1])
def test_uniform_power_graph_reproduces_the_published_tables(seed: int) -> None:
    """On the gamma = 1 graph, C and D lie within 1.5x of tab:comp-alpha and tab:depth-alpha."""
    result = ranking.attack(lambda s: graphs.power(1.0, 1 << 16, s), [seed])
    for alpha, (c, d) in POWER1_TABLE.items():
        measured_c = ranking.at_alpha(result.rows, alpha, "C")
        measured_d = ranking.at_alpha(result.rows, alpha, "D")
        assert _close(measured_c, c, 1.5), (alpha, measured_c, c)
        assert _close(measured_d, d, 1.5), (alpha, measured_d, d)
