"""The parameter strategy builds valid sets by construction and still reaches the whole domain."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import Phase, find, given, settings

from tests.support.strategies import param_sets
from twocats import phc
from twocats.hashes import HASH_TYPES
from twocats.params import BOUNDS, VARIANTS, Params

#: What the strategy must be able to draw: every variant and hash type, and each bound.
TARGETS: dict[str, Callable[[Params], bool]] = {
    **{f"variant {v}": (lambda p, v=v: p.variant == v) for v in VARIANTS},
    **{f"hash type {h}": (lambda p, h=h: p.hash_type == h) for h in HASH_TYPES},
    **{
        f"{name} = {bound}": (lambda p, name=name, bound=bound: getattr(p, name) == bound)
        for name in ("mem_cost", "multiplies", "parallelism", "block_size", "overwrite_cost")
        for bound in BOUNDS[name]
    },
    "start_mem_cost = 0": lambda p: p.start_mem_cost == 0 and p.mem_cost > 0,
    "time_cost = 30": lambda p: p.time_cost == BOUNDS["time_cost"][1],
    "lanes = 1": lambda p: p.lanes == 1,
    "lanes = 16": lambda p: p.lanes == 16,
    "sub_block_size = 4": lambda p: p.sub_block_size == 4,
    "sub_block_size = block_size = 1 MiB": lambda p: p.sub_block_size == 1 << 20,
    "2014-03 sub_block_size = 32": lambda p: p.variant == "2014-03" and p.sub_block_size == 32,
    "hash_size = MIN_OUTPUT_BYTES": lambda p: p.hash_size == phc.MIN_OUTPUT_BYTES,
    "hash_size = 255": lambda p: p.hash_size == 255,
    "side-channel resistant": lambda p: p.side_channel_resistant,
}


@pytest.mark.parametrize("target", TARGETS)
def test_strategy_reaches(target: str) -> None:
    """param_sets draws a parameter set with this property (an edge of the valid domain)."""
    found = find(
        param_sets(min_hash_size=phc.MIN_OUTPUT_BYTES),
        TARGETS[target],
        settings=settings(
            max_examples=20_000, database=None, derandomize=True, phases=[Phase.generate]
        ),
    )
    assert TARGETS[target](found)


@settings(max_examples=300, suppress_health_check=())
@given(param_sets())
def test_strategy_never_filters(params: Params) -> None:
    """Every draw is valid as drawn: every health check stays on and nothing is rejected."""
    assert Params(**{f: getattr(params, f) for f in params.__dataclass_fields__}) == params
