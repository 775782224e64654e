"""The trade-off simulator: graphs, the compiled attack against its reference, published figures."""

from __future__ import annotations

import json

import numpy as np
import pytest
from argon2.low_level import Type, hash_secret_raw
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.argon2_model import argon2_hash
from twocats.cli import main
from twocats.kdf.reference import sliding_reverse
from twocats.perf.tradeoff import graphs, ranking
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


def _random_graph(seed: int, nodes: int) -> Graph:
    """Any graph in order: each node continues node i - 1 or nothing and reads an earlier node."""
    rng = np.random.default_rng(seed)
    i = np.arange(nodes, dtype=np.int64)
    prev = np.where(rng.random(nodes) < 0.9, i - 1, -1)
    ref = np.where(rng.random(nodes) < 0.9, (rng.random(nodes) * i).astype(np.int64), -1)
    ref[0] = -1
    held = rng.random(nodes) < 0.8
    return Graph("random", prev, ref, held, nodes)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 300), st.integers(1, 40))
def test_kernel_equals_reference_on_any_graph(seed: int, nodes: int, q: int) -> None:
    """The compiled attack gives exactly the plain-Python reference's figures on random graphs."""
    graph = _random_graph(seed, nodes)
    assert ranking.simulate(graph, q) == ranking.simulate_reference(graph, q)


@pytest.mark.parametrize(
    "graph",
    [
        graphs.argon2("argon2d", 512, 2, 4, 7),
        graphs.argon2("argon2id", 256, 3, 1, 8),
        graphs.power(3.0, 500, 9),
        graphs.twocats(CHEAPEST, 10),
    ],
    ids=lambda graph: graph.name,
)
def test_kernel_equals_reference_on_the_real_graphs(graph: Graph) -> None:
    """On small Argon2, power and TwoCats graphs both implementations agree for every q tried."""
    for q in ranking.q_values(graph.nodes):
        assert ranking.simulate(graph, q) == ranking.simulate_reference(graph, q), q


@pytest.mark.parametrize(
    ("kind", "kind_type", "passes", "kib", "lanes"),
    [
        ("argon2d", Type.D, 1, 16, 1),
        ("argon2i", Type.I, 2, 32, 2),
        ("argon2id", Type.ID, 2, 16, 1),
    ],
)
def test_argon2_indexing_reproduces_argon2_cffi(
    kind: str, kind_type: Type, passes: int, kib: int, lanes: int
) -> None:
    """Argon2 filled with the graphs' G, addresses and reference columns gives argon2-cffi's tag."""
    mine = argon2_hash(kind, b"password", b"somesalt", passes, kib, lanes, 32)
    theirs = hash_secret_raw(
        b"password", b"somesalt", passes, kib, lanes, 32, kind_type, version=19
    )
    assert mine == theirs


def test_graph_edges_point_backwards() -> None:
    """Every node of every kind of graph reads only nodes computed before it."""
    for graph in (
        graphs.argon2("argon2i", 1024, 3, 4, 1),
        graphs.argon2("argon2d", 1024, 2, 1, 1),
        graphs.power(2.0, 1024, 1),
        graphs.twocats(CHEAPEST, 1),
    ):
        i = np.arange(graph.nodes)
        assert np.all(graph.prev < i), graph.name
        assert np.all(graph.ref < i), graph.name
        assert np.all(graph.prev >= -1), graph.name
        assert np.all(graph.ref >= -1), graph.name


def test_twocats_data_independent_slice_uses_the_sliding_reverse() -> None:
    """A side-channel-resistant TwoCats graph with one region reads block sliding_reverse(i)."""
    import dataclasses

    params = dataclasses.replace(CHEAPEST, side_channel_resistant=True)
    graph = graphs.twocats(params, 0)
    # The main level is the last 32 nodes (one region, 32 blocks), after the overwrite levels.
    main = graph.nodes - 32
    for i in range(1, 32):
        assert graph.ref[main + i] == main + sliding_reverse(i)
        assert graph.prev[main + i] == main + i - 1


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


def test_tradeoff_json_document() -> None:
    """--json prints graph, blocks, seeds, E and rows ordered by alpha (q, alpha, C, D, alpha_D)."""
    result = CliRunner().invoke(
        main, ["tradeoff", "argon2id:t=2,lanes=2", "--blocks", "2048", "--seeds", "2", "--json"]
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert set(document) == {"graph", "blocks", "seeds", "rows", "E"}
    assert document["graph"] == "argon2id:t=2,lanes=2"
    assert (document["blocks"], document["seeds"]) == (2048, 2)
    rows = document["rows"]
    assert all(set(row) == {"q", "alpha", "C", "D", "alpha_D"} for row in rows)
    alphas = [row["alpha"] for row in rows]
    assert alphas == sorted(alphas)
    assert alphas[-1] == 1.0
    assert document["E"] == max(1 / row["alpha_D"] for row in rows)
    assert all(row["C"] >= row["D"] >= 1 for row in rows)


def test_tradeoff_twocats_profile_and_human_output() -> None:
    """A TwoCats profile resized by --blocks runs, and the table ends with the line giving E."""
    result = CliRunner().invoke(main, ["tradeoff", "twocats:interactive", "--blocks", "1024"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("twocats:v=2015,m=14,p=2,hybrid: 1024 blocks")
    assert lines[-1].startswith("E = ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nosuchgraph"], "unknown graph"),
        (["argon2d", "--blocks", "4"], "--blocks"),
        (["argon2d", "--blocks", str(1 << 23)], "--blocks"),
        (["argon2d:t=0"], "t must be from 1 to 16"),
        (["power:x"], "GAMMA must be a number"),
        (["twocats:huge"], "not a profile"),
        (["twocats", "--blocks", "1000"], "power of two"),
        (["argon2d", "--seeds", "0"], "--seeds"),
    ],
)
def test_tradeoff_bad_input_is_a_usage_error(args: list[str], message: str) -> None:
    """An unknown graph or an out-of-range option gives one clear error line and exit status 2."""
    result = CliRunner().invoke(main, ["tradeoff", *args])
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert "Traceback" not in result.output
