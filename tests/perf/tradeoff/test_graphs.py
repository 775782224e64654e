"""The block dependency graphs: Argon2's real indexing, TwoCats' layout, and every node's flags."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from argon2.low_level import Type, hash_secret_raw

from tests.support.argon2_model import argon2_hash
from twocats.exceptions import InvalidParametersError
from twocats.kdf.reference import sliding_reverse
from twocats.perf.tradeoff import graphs
from twocats.perf.tradeoff.graphs import Graph
from twocats.profiles import CHEAPEST


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


def _all_graphs() -> list[Graph]:
    return [
        graphs.argon2("argon2i", 1024, 3, 4, 1),
        graphs.argon2("argon2d", 1024, 2, 1, 1, version="1.2.1"),
        graphs.power(2.0, 1024, 1),
        graphs.twocats(CHEAPEST, 1),
        graphs.twocats(dataclasses.replace(CHEAPEST, variant="2014", time_cost=2), 1),
    ]


@pytest.mark.parametrize("graph", _all_graphs(), ids=lambda graph: graph.name)
def test_graph_edges_point_backwards_and_slots_die_later(graph: Graph) -> None:
    """Every node reads only earlier nodes, and its slot is overwritten after it, if ever."""
    i = np.arange(graph.nodes)
    for inputs in (graph.prev, graph.ref, graph.old):
        assert np.all(inputs < i)
        assert np.all(inputs >= -1)
    assert np.all(graph.dies > i)
    assert np.all(graph.dies <= graph.nodes)


@pytest.mark.parametrize("graph", _all_graphs(), ids=lambda graph: graph.name)
def test_defender_peak_is_the_graphs_memory(graph: Graph) -> None:
    """Holding every node until its slot is overwritten peaks at the graph's memory_blocks."""
    from twocats.perf.tradeoff import liveness

    assert liveness.defender_memory(graph).peak == graph.memory_blocks


def test_argon2_version_1_3_xors_the_overwritten_block_and_1_2_1_does_not() -> None:
    """After the first pass a 1.3 node reads the node its slot held; that node dies then."""
    new = graphs.argon2("argon2i", 64, 2, 2, 0)
    replaced = graphs.argon2("argon2i", 64, 2, 2, 0, version="1.2.1")
    memory = new.memory_blocks
    assert np.all(new.old[:memory] == -1)
    second = np.arange(memory, 2 * memory)
    assert sorted(new.old[memory:].tolist()) == list(range(memory))
    assert np.all(new.dies[new.old[memory:]] == second)
    assert np.all(replaced.old == -1)
    assert np.array_equal(replaced.dies, new.dies)
    assert replaced.name.endswith(",v=1.2.1")


def test_addressing_flags_follow_the_kind() -> None:
    """Argon2i is data-independent, Argon2d dependent, Argon2id independent in 2 slices of 8."""
    assert graphs.argon2("argon2i", 64, 2, 1, 0).addressing == "independent"
    assert graphs.argon2("argon2d", 64, 2, 1, 0).addressing == "dependent"
    hybrid = graphs.argon2("argon2id", 64, 2, 1, 0)
    assert hybrid.addressing == "hybrid"
    assert hybrid.independent.tolist() == [True] * 32 + [False] * 96
    assert graphs.power(1.0, 64, 0).addressing == "dependent"


def test_twocats_data_independent_slice_uses_the_sliding_reverse() -> None:
    """A side-channel-resistant TwoCats graph with one region reads block sliding_reverse(i)."""
    params = dataclasses.replace(CHEAPEST, side_channel_resistant=True)
    graph = graphs.twocats(params, 0)
    assert graph.addressing == "independent"
    # The main level is the last 32 nodes (one region, 32 blocks), after the overwrite levels.
    main = graph.nodes - 32
    for i in range(1, 32):
        assert graph.ref[main + i] == main + sliding_reverse(i)
        assert graph.prev[main + i] == main + i - 1


def test_twocats_levels_die_at_the_next_level_and_carry_their_block_hash() -> None:
    """Each level's nodes die when the next level starts; its layout gives rows and sub-blocks."""
    params = dataclasses.replace(CHEAPEST, mem_cost=3, block_size=256, sub_block_size=64)
    graph = graphs.twocats(params, 0)
    assert graph.layouts[0].first == 0
    assert graph.layouts[-1].end == graph.nodes
    for layout, following in zip(graph.layouts, graph.layouts[1:], strict=False):
        assert layout.end == following.first
        assert np.all(graph.dies[layout.first : layout.end] == layout.end)
    main = graph.layouts[-1]
    assert (main.steps, main.sub_blocks, main.chain) == (256 // 4 // 8, 4, 2)
    assert graph.state_bytes == 32
    assert graph.block_bytes == 256
    # Hybrid: the first two slices of each level are data-independent, the last two are not.
    per = (main.end - main.first) // 4
    flags = graph.independent[main.first : main.end].tolist()
    assert flags == [True] * (2 * per) + [False] * (2 * per)


def test_twocats_repeated_slice_overwrites_its_blocks() -> None:
    """In the 2014 version a repeated last slice's blocks die when the next run rewrites them."""
    params = dataclasses.replace(CHEAPEST, variant="2014", time_cost=1)
    graph = graphs.twocats(params, 0)
    main = graph.layouts[-1]
    per = 8
    first_run = np.arange(main.first + 3 * per, main.first + 4 * per)
    assert np.all(graph.dies[first_run] == first_run + per)


def test_argon2_bad_version_is_refused() -> None:
    """An unknown version is a clear error."""
    with pytest.raises(InvalidParametersError, match="version"):
        graphs.argon2("argon2i", 64, 1, 1, 0, version="1.1")
