"""dataclasses.replace on a profile: the documented pattern changes the memory both ways."""

from __future__ import annotations

import dataclasses

import pytest

from twocats import InvalidParametersError, profiles
from twocats.params import Params


@pytest.mark.parametrize("mem_cost", [10, 16, 20, 22])
def test_replacing_both_costs_changes_the_memory_either_way(mem_cost: int) -> None:
    """replace(p, mem_cost=m, start_mem_cost=m) is the profile at memory m, up or down."""
    changed = dataclasses.replace(profiles.MODERATE, mem_cost=mem_cost, start_mem_cost=mem_cost)
    assert changed == Params(mem_cost=mem_cost, multiplies=profiles.MODERATE.multiplies)
    assert changed.memory_bytes == 1024 << mem_cost


def test_mem_cost_alone_keeps_the_start_level() -> None:
    """mem_cost alone copies the old start level: up, an upgraded shape; down, refused."""
    larger = dataclasses.replace(profiles.MODERATE, mem_cost=20)
    assert (larger.mem_cost, larger.start_mem_cost) == (20, 18)
    with pytest.raises(InvalidParametersError, match=r"start_mem_cost must be from 0 to mem_cost"):
        dataclasses.replace(profiles.MODERATE, mem_cost=10)
