"""twocats.perf.tune: the measurement under load, the percentile, the cores and the search."""

from __future__ import annotations

import time

import pytest

from twocats.params import Params
from twocats.perf.tune import (
    LoadTiming,
    ServerBounds,
    cores_needed,
    max_lanes,
    measure_under_load,
    percentile,
    search,
    start_params,
    step_down,
)


def test_under_load_every_timed_verification_ran_with_all_at_once() -> None:
    """Three threads time at least 30 verifications over 0.1 s, all within the window."""
    params = Params(mem_cost=10, multiplies=0, lanes=8, parallelism=1)
    started = time.perf_counter()
    load = measure_under_load(params, None, 3, verifications=30, min_seconds=0.1)
    elapsed = time.perf_counter() - started
    assert load.concurrent == 3
    assert load.verifications >= 30
    assert 0.1 <= load.seconds < elapsed
    assert all(0 < wall <= load.seconds for wall in load.walls)
    assert 0 < load.median <= load.p95 <= max(load.walls)
    assert load.per_second >= load.verifications / load.seconds
    assert load.cpu_per_verification > 0
    assert load.document()["p95_seconds"] == load.p95


def test_the_percentile_is_the_nearest_rank() -> None:
    """The 95th percentile of 1..100 is 95, of 1..20 is 19, of one value that value."""
    assert percentile([float(value) for value in range(100, 0, -1)], 0.95) == 95.0
    assert percentile([float(value) for value in range(1, 21)], 0.95) == 19.0
    assert percentile([3.0], 0.95) == 3.0
    timing = LoadTiming(2, tuple(float(value) for value in range(1, 21)), 1.0, 20.0, 0.5)
    assert (timing.median, timing.p95) == (10.5, 19.0)


@pytest.mark.parametrize(
    ("cpu", "concurrent", "budget", "cores"),
    [(0.05, 8, 0.25, 2), (0.1, 8, 0.25, 4), (0.01, 1, 0.25, 1), (0.2125, 1, 0.25, 1)],
)
def test_cores_needed_share_the_cpu_time_within_the_aimed_budget(
    cpu: float, concurrent: int, budget: float, cores: int
) -> None:
    """N verifications of c seconds of CPU need N c / (0.85 budget) cores, rounded up."""
    assert cores_needed(cpu, concurrent, budget) == cores


def test_django_holds_eight_lanes_at_most_the_others_any() -> None:
    """--for django caps the lanes at 8 (blake2s), the other frameworks do not."""
    assert max_lanes("django") == 8
    assert max_lanes("pwdlib") == max_lanes("passlib") == max_lanes(None) == 16
    django = start_params("AVX-512 (znver4)", framework="django")
    assert (django.lanes, django.hash_type) == (8, "blake2s")
    assert start_params("AVX-512 (znver4)").lanes == 16


def test_step_down_stops_at_the_smallest_memory_hard_set() -> None:
    """One multiply less, else half the memory, and None at the cheapest memory-hard set."""
    params = Params(mem_cost=11, multiplies=1, lanes=8, parallelism=1)
    lower = step_down(params)
    assert lower == Params(mem_cost=11, multiplies=0, lanes=8, parallelism=1)
    assert lower is not None
    assert step_down(lower) == Params(mem_cost=10, multiplies=0, lanes=8, parallelism=1)
    assert step_down(Params(mem_cost=10, multiplies=0, lanes=8, parallelism=1)) is None
    wide = Params(mem_cost=12, multiplies=0, lanes=8, parallelism=64, strict=False)
    assert step_down(wide) is None


def test_a_disturbed_timing_is_taken_again_before_it_stops_the_memory() -> None:
    """A once-only spike that would stop the memory's growth is timed again, and it grows on."""
    base = Params(mem_cost=10, multiplies=2, lanes=8, parallelism=1)
    spiked: list[int] = []

    def measure(params: Params) -> float:
        seconds = params.memory_bytes / 1e9
        if params.mem_cost == 11 and not spiked:
            spiked.append(1)
            return 0.2
        return seconds

    best, _, trials = search(base, 0.25, 1 << 30, measure, lambda trial: None)
    assert [trial.params.mem_cost for trial in trials].count(11) == 2
    assert best.params.mem_cost > 11


def test_the_bounds_are_the_hashers_arguments() -> None:
    """ServerBounds' document names the PasswordHasher arguments they are."""
    bounds = ServerBounds(8, 2 << 30, 0.25)
    assert bounds.document() == {
        "max_concurrency": 8,
        "max_total_memory": 2 << 30,
        "timeout": 0.25,
    }


def test_a_fixed_wait_beside_the_work_does_not_stop_the_memory_early() -> None:
    """With 0.12 s of waiting in every timing, the memory still grows as far as the budget."""
    base = Params(mem_cost=10, multiplies=2, lanes=8, parallelism=1)

    def measure(params: Params) -> float:
        return 0.12 + params.memory_bytes / 4e9 * (1 + 0.1 * params.multiplies)

    best, limit, _ = search(base, 0.25, 1 << 40, measure, lambda trial: None)
    # 256 MiB takes 0.12 + 0.081 s, 512 MiB 0.12 + 0.161 s: over the budget.
    assert (best.params.mem_cost, limit) == (18, "time")
