"""The iterative-compression attack: TwoCats' block hash timed row by row."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tests.support import tradeoff_oracles as oracles
from twocats.exceptions import InvalidParametersError
from twocats.params import Params
from twocats.perf.tradeoff import graphs, iterative, ranking
from twocats.perf.tradeoff._iterative import level_times
from twocats.perf.tradeoff.graphs import Graph

SMALL = [
    Params(mem_cost=6, multiplies=1, lanes=4, parallelism=1, block_size=256, sub_block_size=16),
    Params(mem_cost=6, multiplies=1, lanes=2, parallelism=2, block_size=128, sub_block_size=32),
    Params(
        mem_cost=6, multiplies=1, lanes=2, parallelism=2, block_size=128, sub_block_size=32,
        side_channel_resistant=True,
    ),
    Params(
        variant="2014", time_cost=2, mem_cost=6, multiplies=1, lanes=2, parallelism=2,
        block_size=128, sub_block_size=32,
    ),
]  # fmt: skip


def _kernel(graph: Graph, kept: np.ndarray, chain: int, seed: int) -> list[float]:
    times = []
    for layout in graph.layouts:
        bounds = (layout.first, layout.end, layout.steps, layout.sub_blocks, chain, seed)
        args = (graph.prev, graph.ref, graph.prev_held, graph.independent, kept)
        times.append(level_times(*args, *(np.int64(value) for value in bounds)))
    return times


@pytest.mark.parametrize("params", SMALL, ids=lambda params: repr(params)[:60])
@pytest.mark.parametrize("q", [1, 2, 3, 5, 9, 30])
@pytest.mark.parametrize("chain", [0, 40])
def test_kernel_equals_the_row_by_row_timing(params: Params, q: int, chain: int) -> None:
    """The sub-block times give exactly what timing every row of every block gives."""
    graph = graphs.twocats(params, 0)
    kept = ranking.forward(graph, q).kept
    expected = [
        oracles.level_times_reference(graph, kept.tolist(), layout, chain, 3)
        for layout in graph.layouts
    ]
    assert _kernel(graph, kept, chain, 3) == pytest.approx(expected, abs=1e-9)


def test_a_dropped_in_order_chain_pipelines_to_depth_plus_steps() -> None:
    """Blocks read in order: a dropped chain of depth D costs (D + s - 1) steps, not D * s."""
    params = dataclasses.replace(SMALL[0], side_channel_resistant=True)
    graph = graphs.twocats(params, 0)
    layout = graph.layouts[-1]
    steps = layout.steps
    # Make the main level's last block data-dependent and keep nothing but the level's start.
    independent = graph.independent.copy()
    last = layout.end - 1
    independent[last] = False
    chain = dataclasses.replace(
        graph,
        ref=np.where(np.arange(graph.nodes) == last, last - 1, -1).astype(np.int32),
        independent=independent,
    )
    kept = np.ones(graph.nodes, dtype=np.bool_)
    depth = 5
    kept[last - depth : last] = False
    kept[last - depth - 1] = True
    times = _kernel(chain, kept, 0, 0)
    blocks = layout.end - layout.first
    # Every other block counts 1; the last one's reference is a dropped chain of depth 5 whose
    # own previous blocks are dropped too: it finishes after depth + steps steps.
    assert times[-1] == pytest.approx(blocks - 1 + (depth + steps) / steps)


def test_the_multiply_chain_hides_short_recomputations() -> None:
    """With a long enough chain every step takes the chain's time: D is 1."""
    graph = graphs.twocats(SMALL[0], 0)
    kept = ranking.forward(graph, 3).kept
    without = iterative.depth(graph, kept, 0.0, 0)
    hidden = iterative.depth(graph, kept, 1000.0, 0)
    assert without > 1.0
    assert hidden == 1.0


def test_argon2_and_repeated_block_hashes_are_refused() -> None:
    """The attack needs TwoCats' block hash, once per block."""
    with pytest.raises(InvalidParametersError, match="G mixes whole blocks"):
        iterative.check(graphs.argon2("argon2i", 64, 1, 1, 0))
    march = Params(variant="2014-03", mem_cost=6, parallelism=1, block_size=256, time_cost=1)
    with pytest.raises(InvalidParametersError, match="March 2014"):
        iterative.check(graphs.twocats(march, 0))


def test_attack_rows_carry_the_block_level_depth() -> None:
    """Each row gives the ranking attack's block-level D beside the row-level one."""
    result = iterative.attack(lambda seed: graphs.twocats(SMALL[1], seed), [0, 1], 0.0)
    assert result.attack == "iterative"
    for row in result.rows:
        assert row.extra["D_blocks"] + 1e-12 >= row.D
    assert result.figures["sub_blocks"] == 4
