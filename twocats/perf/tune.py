"""Tuning: how ``twocats tune`` measures a parameter set and searches for one that fits a budget.

The budget is the latency a server's users see: the wall-clock time of one verification while
``concurrent`` verifications run at once on this machine, as they do in a server that admits that
many (:func:`measure_under_load`).  Every candidate is measured that way: ``concurrent`` threads
verify through one bounded :class:`~twocats.PasswordHasher` until at least
:data:`SEARCH_VERIFICATIONS` verifications and :data:`MIN_SECONDS` have passed, and the figure
judged is the 95th percentile of their times (:func:`percentile`), with the median beside it.
On a shared machine the other jobs' load is part of what the users would see, so it is part of
the figure; the load average before and after is reported with it.

The search follows the usual calibration loop (RFC 9106 section 4, the argon2 specification's
section 9): fix the lanes from the SIMD width (and what the framework stores, :func:`max_lanes`)
and the threads from the cores shared by the concurrent verifications, then take the largest
memory that fits the budget and the memory limit, then spend what time is left on compute
hardness (the multiply chain, and ``time_cost`` in the variants that have it).  It aims at
:data:`MARGIN` of the budget, judges each memory and multiply candidate by a Theil-Sen line
through every timing of its kind (one disturbed timing moves neither the line nor the choice),
and a timing that would stop the memory's growth is taken twice.  The chosen set is measured
again, with :data:`FINAL_VERIFICATIONS` verifications: if its 95th percentile misses the budget
twice it is stepped down (one multiply less, else half the memory) and measured again, so the
parameters printed met the budget in their own final check.  Where even the cheapest set misses
it, :func:`cores_needed` says how many cores would make it fit.

A server verifies several logins at once, so the memory is chosen for all of them (RFC 9106
section 4 starts from the memory the server can give to hashing): with ``concurrent``
verifications at once and ``server_memory`` for hashing, one hash gets at most
``server_memory // concurrent`` (:func:`per_verification_memory`), and each hash's threads share
the cores (:func:`start_params`).  The process holds ``concurrent`` work areas of the candidate
measured, and frees them before the next one.
"""

from __future__ import annotations

import dataclasses
import math
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
    "FINAL_VERIFICATIONS",
    "FIRST_MEM_COST",
    "MARGIN",
    "MAX_STEPS_DOWN",
    "MIN_SECONDS",
    "SEARCH_VERIFICATIONS",
    "LoadTiming",
    "ServerBounds",
    "Trial",
    "cores_needed",
    "default_server_memory",
    "final_check",
    "fitted_choice",
    "lanes_for_isa",
    "max_lanes",
    "measure_under_load",
    "per_verification_memory",
    "percentile",
    "search",
    "smallest_mem_cost",
    "start_params",
    "step_down",
]

#: Smallest memory cost tried: 1 MiB.
FIRST_MEM_COST: Final = 10

#: Multiplies used while the memory is chosen (the reference's own default).
BASE_MULTIPLIES: Final = 2

#: Verifications timed per candidate of the search, at least.
SEARCH_VERIFICATIONS: Final = 48

#: Verifications timed in the final check of the choice, at least.
FINAL_VERIFICATIONS: Final = 120

#: Seconds a measurement lasts at least, however quick its verifications: long enough that a
#: burst of other work is a part of the window, not all of it.
MIN_SECONDS: Final = 1.0

#: A candidate this many times over the budget ends the multiplies search: longer chains only cost
#: more.
CLEARLY_OVER: Final = 1.25

#: The share of the budget the search aims at, leaving room for noise in the final check.
MARGIN: Final = 0.85

#: The most times the final check steps the parameters down before giving up.
MAX_STEPS_DOWN: Final = 8

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


def max_lanes(framework: str | None) -> int:
    """Return the most lanes a framework's stored hashes allow.

    Django stores hashes in a 128-character column, which a 64-byte output (blake2b, needed by
    more than 8 lanes) never fits; pwdlib and passlib hand back strings of any length.
    """
    return 8 if framework == "django" else BOUNDS["lanes"][1]


def start_params(
    isa: str,
    *,
    variant: str = "2015",
    lanes: int | None = None,
    parallelism: int | None = None,
    concurrent: int = 1,
    framework: str | None = None,
) -> Params:
    """Return the parameters a search starts from on this machine.

    ``lanes`` default to the vector width of ``isa`` (:func:`lanes_for_isa`), at most what the
    `framework` stores (:func:`max_lanes`), and ``parallelism`` to the CPUs this process may use
    shared by the `concurrent` verifications that run at once (at least 1 each); more than 8
    lanes need blake2b's 16 state words.
    """
    lanes = min(lanes_for_isa(isa), max_lanes(framework)) if lanes is None else lanes
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


def default_server_memory(concurrent: int, max_memory: int) -> int:
    """Return the memory a server gives to hashing by default: half of what the machine can give.

    Where the platform does not say, `concurrent` hashes of `max_memory` each.
    """
    memory = machine_memory()
    return concurrent * max_memory if memory is None else memory // 2


def per_verification_memory(max_memory: int, server_memory: int, concurrent: int) -> int:
    """Return the most memory one hash may use: `max_memory`, and its share of `server_memory`."""
    return min(max_memory, server_memory // concurrent)


def percentile(values: list[float], share: float) -> float:
    """Return the nearest-rank percentile `share` (0.95 for the 95th) of `values`."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


@dataclasses.dataclass(frozen=True)
class LoadTiming:
    """What `concurrent` threads verifying at once measured.

    `walls` are the wall-clock times of the verifications timed, in `seconds` of window during
    which the machine completed `per_second` verifications per second, each taking
    `cpu_per_verification` seconds of CPU (all its threads).
    """

    concurrent: int
    walls: tuple[float, ...]
    seconds: float
    per_second: float
    cpu_per_verification: float

    @property
    def verifications(self) -> int:
        """The verifications timed."""
        return len(self.walls)

    @property
    def median(self) -> float:
        """The median wall-clock time of one verification under the load."""
        return statistics.median(self.walls)

    @property
    def p95(self) -> float:
        """The 95th percentile wall-clock time of one verification under the load."""
        return percentile(list(self.walls), 0.95)

    def document(self) -> dict[str, float | int]:
        """The figures as a JSON-ready dict."""
        return {
            "concurrent": self.concurrent,
            "verifications": self.verifications,
            "seconds": self.seconds,
            "median_seconds": self.median,
            "p95_seconds": self.p95,
            "verifications_per_second": self.per_second,
            "cpu_seconds_per_verification": self.cpu_per_verification,
        }


def measure_under_load(
    params: Params,
    backend: str | None,
    concurrent: int,
    verifications: int = SEARCH_VERIFICATIONS,
    min_seconds: float = MIN_SECONDS,
) -> LoadTiming:
    """Time verifications with `params` while `concurrent` of them run at once.

    The threads share one hasher that admits all of them at once (``concurrent`` work areas).
    Each verifies once untimed (its work area is mapped then), then all start together and time
    the verifications they start until, together, they have timed `verifications` and
    `min_seconds` have passed.  Every verification started before then is timed, however long
    it takes, and the threads done with theirs go on verifying, untimed, until the last timed
    one ends, so that every timed verification ran with `concurrent` at once.  The CPU time per
    verification counts every verification the window saw, the untimed ones included.
    """
    from twocats.kdf.geometry import work_memory
    from twocats.password import PasswordHasher

    hasher = PasswordHasher.from_params(
        params,
        max_memory=params.memory_bytes,
        max_concurrency=concurrent,
        max_total_memory=concurrent * work_memory(params),
        backend=backend,
    )
    lock = threading.Lock()
    walls: list[float] = []
    timed_ends: list[float] = []
    ended: list[float] = []
    opened: list[float] = []
    state = {"timing": True, "timed_running": 0}

    def open_window() -> None:
        opened[:] = [time.perf_counter(), time.process_time()]

    start = threading.Barrier(concurrent, action=open_window)
    errors: list[BaseException] = []

    def verify_in_turn() -> None:
        try:
            hasher.verify(encoded, _PASSWORD)
            start.wait()
            while True:
                with lock:
                    timed = bool(state["timing"])
                    if not timed and not state["timed_running"]:
                        return
                    state["timed_running"] += timed
                began = time.perf_counter()
                hasher.verify(encoded, _PASSWORD)
                finished = time.perf_counter()
                with lock:
                    ended.append(finished)
                    if timed:
                        state["timed_running"] -= 1
                        walls.append(finished - began)
                        timed_ends.append(finished)
                        enough = len(walls) >= verifications
                        if enough and finished - opened[0] >= min_seconds:
                            state["timing"] = False
        except BaseException as error:  # re-raised in the calling thread
            errors.append(error)
            with lock:
                state["timing"], state["timed_running"] = False, 0
            start.abort()

    try:
        encoded = hasher.hash(_PASSWORD)
        threads = [
            threading.Thread(target=verify_in_turn, name=f"tune-{index}")
            for index in range(concurrent)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        cpu = time.process_time() - opened[1] if opened else 0.0
    finally:
        # Free the work areas now, not when the collector gets round to the hasher.
        hasher.release()
    if errors:
        raise errors[0]
    # The window ends with the last timed verification; the untimed ones that ended in it count
    # in the verifications per second, as they ran in it.
    last = max(timed_ends)
    seconds = last - opened[0]
    done = sum(1 for finish in ended if finish <= last)
    return LoadTiming(concurrent, tuple(walls), seconds, done / seconds, cpu / len(ended))


@dataclasses.dataclass(frozen=True)
class ServerBounds:
    """The hasher's bounds for a server tuned for `max_concurrency` verifications at once.

    `max_total_memory` is the memory the server gives to hashing (room for the verifications
    at once, and for older stored hashes of more memory), and `timeout` how long a login beyond
    them waits for a slot: the budget, so that it is answered within about twice the budget, or
    refused as busy.
    """

    max_concurrency: int
    max_total_memory: int
    timeout: float

    def document(self) -> dict[str, float | int]:
        """The bounds as a JSON-ready dict, by the hasher's argument names."""
        return dataclasses.asdict(self)


def cores_needed(cpu_per_verification: float, concurrent: int, budget: float) -> int:
    """Return the fewest cores on which `concurrent` verifications at once each fit `budget`.

    Each verification needs `cpu_per_verification` seconds of CPU (all its threads); done at
    once, they need that many times `concurrent` within the budget (less its :data:`MARGIN`
    for the spread between verifications), on cores as fast as these.
    """
    return max(1, math.ceil(concurrent * cpu_per_verification / (budget * MARGIN)))


def step_down(params: Params) -> Params | None:
    """Return the next cheaper parameter set: one multiply less, else half the memory.

    None when `params` are the cheapest the search tries (no multiply, the smallest memory).
    """
    if params.multiplies > 0:
        return dataclasses.replace(params, multiplies=params.multiplies - 1)
    if params.mem_cost > smallest_mem_cost(params):
        smaller = params.mem_cost - 1
        return dataclasses.replace(params, mem_cost=smaller, start_mem_cost=smaller)
    return None


def final_check(
    params: Params, budget: float, measure: Callable[[Params], float]
) -> tuple[Params, float, int]:
    """Time `params` again and step them down until they meet `budget`.

    A set that misses is timed once more before it is stepped down, and judged by that second
    timing: one disturbed by other work does not cost the chain or the memory.  Returns the
    parameters, their (last) time, and how many steps down it took.
    """
    seconds = measure(params)
    steps = 0
    while seconds > budget:
        seconds = measure(params)
        cheaper = step_down(params)
        if seconds <= budget or cheaper is None or steps == MAX_STEPS_DOWN:
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


def _doubled(points: list[Trial]) -> float:
    """The time expected at twice the last memory point's memory.

    Twice its time from one point; from more, the Theil-Sen line through all of them, which
    keeps a fixed part of the time (a wait for a core behind other work) from being doubled too.
    """
    if len(points) < 2:
        return 2 * points[-1].seconds
    line = _theil_sen([(float(p.params.memory_bytes), p.seconds) for p in points])
    return line(2 * points[-1].params.memory_bytes)


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

    def confirmed(point: Trial) -> Trial:
        """The lower of `point` and a second timing of its parameters: a timing disturbed by
        other work is taken again before it ends the memory's growth."""
        again = trial(point.params)
        return again if again.seconds < point.seconds else point

    best = trial(with_memory(mem_cost))
    limit = "time"
    # Double the memory while the doubled time is likely to fit and the limit allows it.  A
    # candidate is judged by a line fitted through every memory timing, not by its own alone,
    # and a timing that would stop the growth is taken twice.
    memory_points = [best]
    while True:
        if mem_cost >= 30 or (1024 << (mem_cost + 1)) > max_memory:
            limit = "memory"
            break
        if _doubled(memory_points) > 1.25 * budget:
            best = memory_points[-1] = confirmed(best)
            if _doubled(memory_points) > 1.25 * budget:
                break
        candidate = trial(with_memory(mem_cost + 1))
        memory_points.append(candidate)
        if not _fits_in_memory_line(memory_points, budget):
            candidate = memory_points[-1] = confirmed(candidate)
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
