"""Tuning: how ``twocats tune`` measures a parameter set and searches for one that fills a budget.

The procedure follows the usual calibration loop (RFC 9106 section 4, the argon2 specification's
section 9): fix the lanes from the SIMD width and the threads from the cores, then take the largest
memory that fits the budget and the memory limit, then spend what time is left on compute hardness
(the multiply chain, and ``time_cost`` in the variants that have it).  Every figure is the median of
:data:`REPEATS` verifications through :class:`~twocats.PasswordHasher`, after a warm-up call that
compiles the kernels and maps the memory, in CPU time per thread: on an idle machine the time a
server pays per login, and on a busy one the same figure without the waits for a core.

A shared machine makes timings noisy, so the search aims at :data:`MARGIN` of the budget, judges
each memory and multiply candidate by a Theil-Sen line through every timing of its kind (one
disturbed timing moves neither the line nor the choice), and the chosen set is timed again at the
end: if it misses the budget it is stepped down (one multiply
less, else half the memory) and timed again, so the parameters printed met the budget in their own
final check.  Each candidate's work area is freed before the next one is measured, so the process
stays within ``--max-memory`` plus the interpreter and the compiled kernels (about 200 MiB).

A server verifies several logins at once, so the memory is chosen for all of them (RFC 9106
section 4 starts from the memory the server can give to hashing): with ``concurrent``
verifications at once and ``server_memory`` for hashing, one hash gets at most
``server_memory // concurrent`` (:func:`per_verification_memory`), and each hash's threads share
the cores (:func:`start_params`).  Once chosen, the set is verified by ``concurrent`` threads at
once for :data:`THROUGHPUT_SECONDS` (:func:`measure_throughput`), which gives the verifications
per second the machine sustains with it and the wall-clock time of each under that load.
"""

from __future__ import annotations

import dataclasses
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any, Final

from twocats._machine import machine_memory, usable_cpus
from twocats.exceptions import InvalidParametersError
from twocats.params import BOUNDS, Params

__all__ = [
    "BASE_MULTIPLIES",
    "FIRST_MEM_COST",
    "MARGIN",
    "REPEATS",
    "THROUGHPUT_SECONDS",
    "Throughput",
    "Trial",
    "VerifyTiming",
    "default_server_memory",
    "final_check",
    "fitted_choice",
    "lanes_for_isa",
    "measure_throughput",
    "measure_verify",
    "per_verification_memory",
    "search",
    "smallest_mem_cost",
    "start_params",
    "step_down",
]

#: Smallest memory cost tried: 1 MiB.
FIRST_MEM_COST: Final = 10

#: Multiplies used while the memory is chosen (the reference's own default).
BASE_MULTIPLIES: Final = 2

#: Timed repetitions per candidate (the median is used).
REPEATS: Final = 5

#: A candidate this many times over the budget ends the multiplies search: longer chains only cost
#: more.
CLEARLY_OVER: Final = 1.25

#: The share of the budget the search aims at, leaving room for noise in the final check.
MARGIN: Final = 0.85

#: The most times the final check steps the parameters down before giving up.
MAX_STEPS_DOWN: Final = 8

#: Seconds the concurrent verifications of :func:`measure_throughput` start within (each thread
#: then finishes the verification it is in).
THROUGHPUT_SECONDS: Final = 1.0

#: The password every tuning verification checks.
_PASSWORD: Final = b"twocats tune"


def lanes_for_isa(isa: str) -> int:
    """Return the lane count matching the vector width the ``simd`` backend compiles for.

    A lane is one 32-bit word, so a 512-bit register holds 16 lanes, a 256-bit one 8 and a 128-bit
    one 4.  Without a known vector unit the reference's default of 8 is kept.
    """
    if isa.startswith("AVX-512"):
        return 8 if "256-bit preferred" in isa else 16
    if isa.startswith(("AVX2", "AVX ")):
        return 8
    if isa.startswith(("SSE", "SSSE3")):
        return 4
    return 8


def start_params(
    isa: str,
    *,
    variant: str = "2015",
    lanes: int | None = None,
    parallelism: int | None = None,
    concurrent: int = 1,
) -> Params:
    """Return the parameters a search starts from on this machine.

    ``lanes`` default to the vector width of ``isa`` (:func:`lanes_for_isa`) and ``parallelism``
    to the CPUs this process may use shared by the `concurrent` verifications that run at once
    (at least 1 each); more than 8 lanes need blake2b's 16 state words.
    """
    lanes = lanes_for_isa(isa) if lanes is None else lanes
    if parallelism is None:
        parallelism = min(max(1, usable_cpus() // concurrent), BOUNDS["parallelism"][1])
    return Params(
        variant=variant,
        hash_type="blake2b" if lanes > 8 else "blake2s",
        mem_cost=FIRST_MEM_COST,
        multiplies=BASE_MULTIPLIES,
        lanes=lanes,
        parallelism=parallelism,
    )


@dataclasses.dataclass(frozen=True)
class VerifyTiming:
    """The time of one verification: ``seconds`` (CPU per thread) and the wall-clock time."""

    seconds: float
    wall_seconds: float


def measure_verify(params: Params, backend: str | None, repeats: int = REPEATS) -> VerifyTiming:
    """Time one verification with `params`: medians of `repeats` calls after a warm-up call.

    ``seconds`` is the process's CPU time (user and system) per call divided by the threads that
    can run at once (``parallelism``, at most the cores): on an idle machine that is the
    wall-clock time, and on a busy one it leaves out the waits for a core that other jobs cause,
    so that repeated runs agree.
    """
    from twocats.hasher import PasswordHasher

    threads = min(params.parallelism, usable_cpus())
    hasher = PasswordHasher.from_params(params, max_memory=params.memory_bytes, backend=backend)
    try:
        encoded = hasher.hash(_PASSWORD)
        cpus, walls = [], []
        for _ in range(repeats):
            started, cpu_started = time.perf_counter(), time.process_time()
            hasher.verify(encoded, _PASSWORD)
            walls.append(time.perf_counter() - started)
            cpus.append((time.process_time() - cpu_started) / threads)
    finally:
        # Free the work area now, not when the collector gets round to the hasher.
        hasher.release()
    return VerifyTiming(statistics.median(cpus), statistics.median(walls))


def default_server_memory(concurrent: int, max_memory: int) -> int:
    """Return the memory a server gives to hashing by default: half of what the machine can give.

    Where the platform does not say, `concurrent` hashes of `max_memory` each.
    """
    memory = machine_memory()
    return concurrent * max_memory if memory is None else memory // 2


def per_verification_memory(max_memory: int, server_memory: int, concurrent: int) -> int:
    """Return the most memory one hash may use: `max_memory`, and its share of `server_memory`."""
    return min(max_memory, server_memory // concurrent)


@dataclasses.dataclass(frozen=True)
class Throughput:
    """What `concurrent` threads verifying at once achieved: the count in `seconds`, and the
    median wall-clock time of one verification under that load."""

    concurrent: int
    verifications: int
    seconds: float
    median_wall_seconds: float

    @property
    def per_second(self) -> float:
        """Verifications per second."""
        return self.verifications / self.seconds


def measure_throughput(
    params: Params,
    backend: str | None,
    concurrent: int,
    seconds: float = THROUGHPUT_SECONDS,
) -> Throughput:
    """Verify with `params` on `concurrent` threads at once for about `seconds`.

    Each thread verifies once untimed (its work area is mapped then), then all start together
    and begin verifications until `seconds` have passed; the time counted ends when the last one
    is done, so the run lasts at most `seconds` plus one verification.  The hasher admits all of
    them at once, with `concurrent` work areas.
    """
    from twocats.hasher import PasswordHasher
    from twocats.kdf.geometry import work_memory

    hasher = PasswordHasher.from_params(
        params,
        max_memory=params.memory_bytes,
        max_concurrency=concurrent,
        max_total_memory=concurrent * work_memory(params),
        backend=backend,
    )
    window: list[float] = []

    def open_window() -> None:
        window.append(time.perf_counter())

    start = threading.Barrier(concurrent, action=open_window)
    walls: list[list[float]] = [[] for _ in range(concurrent)]
    ends = [0.0] * concurrent
    errors: list[BaseException] = []

    def verify_in_turn(index: int) -> None:
        try:
            hasher.verify(encoded, _PASSWORD)
            start.wait()
            deadline = window[0] + seconds
            while time.perf_counter() < deadline:
                began = time.perf_counter()
                hasher.verify(encoded, _PASSWORD)
                walls[index].append(time.perf_counter() - began)
            ends[index] = time.perf_counter()
        except BaseException as error:  # re-raised in the calling thread
            errors.append(error)
            start.abort()

    try:
        encoded = hasher.hash(_PASSWORD)
        threads = [
            threading.Thread(target=verify_in_turn, args=(index,), name=f"tune-{index}")
            for index in range(concurrent)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        hasher.release()
    if errors:
        raise errors[0]
    every = [wall for thread_walls in walls for wall in thread_walls]
    return Throughput(concurrent, len(every), max(ends) - window[0], statistics.median(every))


def step_down(params: Params) -> Params | None:
    """Return the next cheaper parameter set: one multiply less, else half the memory."""
    if params.multiplies > 0:
        return dataclasses.replace(params, multiplies=params.multiplies - 1)
    if params.mem_cost > FIRST_MEM_COST:
        smaller = params.mem_cost - 1
        return dataclasses.replace(params, mem_cost=smaller, start_mem_cost=smaller)
    return None


def final_check(
    params: Params, budget: float, measure: Callable[[Params], float]
) -> tuple[Params, float, int]:
    """Time `params` again and step them down until they meet `budget`.

    Returns the parameters, their time, and how many steps down it took.
    """
    seconds = measure(params)
    steps = 0
    while seconds > budget and steps < MAX_STEPS_DOWN:
        cheaper = step_down(params)
        if cheaper is None:
            break
        params, steps = cheaper, steps + 1
        seconds = measure(params)
    return params, seconds, steps


@dataclasses.dataclass
class Trial:
    """One timed parameter set."""

    params: Params
    seconds: float

    def document(self) -> dict[str, Any]:
        """The trial as a JSON-ready dict."""
        return {
            "mem_cost": self.params.mem_cost,
            "multiplies": self.params.multiplies,
            "time_cost": self.params.time_cost,
            "seconds": self.seconds,
        }


def _theil_sen(points: list[tuple[float, float]]) -> Callable[[float], float]:
    """Return the Theil-Sen line through (x, y) points, which needs at least two distinct x.

    The slope is the median of the slopes between every two points, so that one timing disturbed
    by a neighbour moves neither the line nor the choices made with it.
    """
    slope = statistics.median(
        (y2 - y1) / (x2 - x1)
        for index, (x1, y1) in enumerate(points)
        for x2, y2 in points[index + 1 :]
    )
    intercept = statistics.median(y - slope * x for x, y in points)
    return lambda x: intercept + slope * x


def fitted_choice(points: list[Trial], budget: float) -> Trial:
    """Return the trial with the most multiplies whose fitted time is within `budget`.

    The fit is a Theil-Sen line through (multiplies, seconds) of every point; the first point is
    kept if no other fits.
    """
    if len(points) < 2:
        return points[0]
    line = _theil_sen([(float(p.params.multiplies), p.seconds) for p in points])
    fitting = [p for p in points[1:] if line(p.params.multiplies) <= budget]
    return max(fitting, key=lambda point: point.params.multiplies, default=points[0])


def _fits_in_memory_line(points: list[Trial], budget: float) -> bool:
    """Whether the last memory point is within `budget` by a Theil-Sen line through all of them."""
    line = _theil_sen([(float(p.params.memory_bytes), p.seconds) for p in points])
    return line(points[-1].params.memory_bytes) <= budget


def smallest_mem_cost(base: Params) -> int:
    """Return the smallest memory cost that is still memory-hard for `base`'s blocks and threads."""
    mem_cost = FIRST_MEM_COST
    while mem_cost < 30 and (1024 << mem_cost) < 4 * base.parallelism * base.block_size:
        mem_cost += 1
    return mem_cost


def search(
    base: Params,
    budget: float,
    max_memory: int,
    measure: Callable[[Params], float],
    report: Callable[[Trial], None],
) -> tuple[Trial, str, list[Trial]]:
    """Return the chosen trial, what limited it ("time" or "memory"), and every trial run."""
    trials: list[Trial] = []

    def trial(params: Params) -> Trial:
        result = Trial(params, measure(params))
        trials.append(result)
        report(result)
        return result

    def with_memory(mem_cost: int) -> Params:
        return dataclasses.replace(base, mem_cost=mem_cost, start_mem_cost=mem_cost)

    mem_cost = smallest_mem_cost(base)
    if (1024 << mem_cost) > max_memory:
        raise InvalidParametersError(
            f"max_memory is below the smallest useful memory ({1024 << mem_cost} bytes) for "
            "these settings"
        )
    best = trial(with_memory(mem_cost))
    limit = "time"
    # Double the memory while the doubled time is likely to fit and the limit allows it.  A
    # candidate is judged by a line fitted through every memory timing, not by its own alone.
    memory_points = [best]
    while True:
        if mem_cost >= 30 or (1024 << (mem_cost + 1)) > max_memory:
            limit = "memory"
            break
        if 2 * best.seconds > 1.25 * budget:
            break
        candidate = trial(with_memory(mem_cost + 1))
        memory_points.append(candidate)
        if not _fits_in_memory_line(memory_points, budget):
            break
        best, mem_cost = candidate, mem_cost + 1
    if len(memory_points) == 1 and best.seconds > budget:
        # Even the smallest memory is too slow: shed compute hardness instead.
        for multiplies in range(base.multiplies - 1, -1, -1):
            candidate = trial(dataclasses.replace(best.params, multiplies=multiplies))
            best = candidate
            if candidate.seconds <= budget:
                break
        return best, "time", trials
    # Spend the rest of the budget on the multiply chain.  Every chain length is timed until one
    # is clearly over, and the choice follows a line fitted through all of them (the final check
    # catches a line that is too kind).
    points = [best]
    for multiplies in range(best.params.multiplies + 1, BOUNDS["multiplies"][1] + 1):
        points.append(trial(dataclasses.replace(best.params, multiplies=multiplies)))
        if points[-1].seconds > CLEARLY_OVER * budget:
            break
    best = fitted_choice(points, budget)
    # Then on time_cost.
    if best.params.time_cost is not None:
        for time_cost in range(best.params.time_cost + 1, 31):
            candidate = trial(dataclasses.replace(best.params, time_cost=time_cost))
            if candidate.seconds > budget:
                break
            best = candidate
    return best, limit, trials
