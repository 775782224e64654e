"""twocats.perf.levels: the cells and levels a level run is planned with, without running one."""

from __future__ import annotations

import pytest

from twocats.exceptions import InvalidParametersError
from twocats.perf.levels import Cell, cell_grid, choose_levels, failed_levels


def test_the_cell_grid_has_every_combination_lanes_fastest() -> None:
    """cell_grid crosses every axis, lanes varying fastest and memory slowest."""
    cells = cell_grid("blake2b", [1, 8], [2], [10, 11], [1, 2])
    assert len(cells) == 8
    assert cells[:2] == [Cell("blake2b", 1, 2, 10, 1), Cell("blake2b", 8, 2, 10, 1)]
    assert cells[-1] == Cell("blake2b", 8, 2, 11, 2)


def test_a_level_this_cpu_cannot_run_is_refused_by_name() -> None:
    """choose_levels names the levels whose features the host lacks."""
    with pytest.raises(InvalidParametersError, match=r"cannot run avx2$"):
        choose_levels(["none", "avx2"], "+sse2,-avx2", baseline=True)
    assert [level.key for level in choose_levels(["none"], "", baseline=True)] == ["none"]


def test_the_default_levels_keep_sse2_only_with_the_baseline() -> None:
    """Without keys the host's default levels run, the SSE2 baseline only when asked for."""
    with_baseline = [level.key for level in choose_levels([], "+sse2,+avx2", baseline=True)]
    without = [level.key for level in choose_levels([], "+sse2,+avx2", baseline=False)]
    assert without == [key for key in with_baseline if key != "sse2"]
    assert "none" in without


def test_failed_levels_are_the_errors_and_the_failed_checks() -> None:
    """A level with an error or an unverified check fails; a verified one does not."""
    results = [
        {"level": "avx2", "check": {"verified": True}},
        {"level": "sse2", "check": {"verified": False}},
        {"level": "none", "error": "child process exited with status 1"},
    ]
    assert failed_levels(results) == ["sse2", "none"]
