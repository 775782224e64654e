"""``twocats tune``: choose parameters that fill a time budget on this machine.

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
"""

from __future__ import annotations

import dataclasses
import os
import statistics
import time
from collections.abc import Callable
from typing import Any, Final

import click

from twocats.cli._common import UsageFailure, emit_json, info, params_document, progress_wanted
from twocats.cli._options import DURATION, SIZE, backend_option, json_option
from twocats.params import BOUNDS, VARIANTS, Params

__all__ = [
    "VerifyTiming",
    "busy_note",
    "choice_reasons",
    "cpu_count",
    "final_check",
    "lanes_for_isa",
    "load_average",
    "measure_verify",
    "step_down",
    "tune_command",
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


def cpu_count() -> int:
    """Return the number of cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def load_average() -> float | None:
    """Return the one-minute load average, or None where the platform has none."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def busy_note(load: float) -> str:
    """Explain what a load above the core count does to the timings."""
    return (
        f"busy machine (load {load:.1f} on {cpu_count()} cores): the times include waiting for "
        "a core; rerun when it is idle"
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

    threads = min(params.parallelism, cpu_count())
    hasher = PasswordHasher.from_params(params, max_memory=params.memory_bytes, backend=backend)
    try:
        encoded = hasher.hash(b"twocats tune")
        cpus, walls = [], []
        for _ in range(repeats):
            started, cpu_started = time.perf_counter(), time.process_time()
            hasher.verify(encoded, b"twocats tune")
            walls.append(time.perf_counter() - started)
            cpus.append((time.process_time() - cpu_started) / threads)
    finally:
        # Free the work area now, not when the collector gets round to the hasher.
        hasher.release()
    return VerifyTiming(statistics.median(cpus), statistics.median(walls))


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


def choice_reasons(isa: str, lanes: int, hash_type: str, lanes_given: bool) -> list[str]:
    """Explain the lane count and the hash type chosen, against the default profile."""
    from twocats.profiles import DEFAULT

    if lanes_given:
        why_lanes = f"lanes {lanes}: as given by --lanes"
    else:
        why_lanes = (
            f"lanes {lanes}: one 32-bit lane per vector element of {isa}, so each step of the "
            "fill uses whole registers"
        )
    if hash_type == "blake2b":
        why_hash = "hash blake2b: more than 8 lanes need a hash with 16 state words; blake2s has 8"
    else:
        why_hash = "hash blake2s: 8 lanes or fewer fit its 8 state words"
    default = (
        f"(the default profile uses {DEFAULT.hash_type} with {DEFAULT.lanes} lanes, which suits "
        "every machine with 256-bit vectors)"
    )
    return [why_lanes, f"{why_hash} {default}"]


@dataclasses.dataclass
class _Trial:
    params: Params
    seconds: float

    def document(self) -> dict[str, Any]:
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


def _fitted_choice(points: list[_Trial], budget: float) -> _Trial:
    """Return the trial with the most multiplies whose fitted time is within `budget`.

    The fit is a Theil-Sen line through (multiplies, seconds) of every point; the first point is
    kept if no other fits.
    """
    if len(points) < 2:
        return points[0]
    line = _theil_sen([(float(p.params.multiplies), p.seconds) for p in points])
    fitting = [p for p in points[1:] if line(p.params.multiplies) <= budget]
    return max(fitting, key=lambda point: point.params.multiplies, default=points[0])


def _fits_in_memory_line(points: list[_Trial], budget: float) -> bool:
    """Whether the last memory point is within `budget` by a Theil-Sen line through all of them."""
    line = _theil_sen([(float(p.params.memory_bytes), p.seconds) for p in points])
    return line(points[-1].params.memory_bytes) <= budget


def _search(
    base: Params,
    budget: float,
    max_memory: int,
    measure: Callable[[Params], float],
    report: Callable[[_Trial], None],
) -> tuple[_Trial, str, list[_Trial]]:
    """Return the chosen trial, what limited it ("time" or "memory"), and every trial run."""
    trials: list[_Trial] = []

    def trial(params: Params) -> _Trial:
        result = _Trial(params, measure(params))
        trials.append(result)
        report(result)
        return result

    def with_memory(mem_cost: int) -> Params:
        return dataclasses.replace(base, mem_cost=mem_cost, start_mem_cost=mem_cost)

    # The smallest memory cost that is still memory-hard for these block and thread settings.
    mem_cost = FIRST_MEM_COST
    while mem_cost < 30 and (1024 << mem_cost) < 4 * base.parallelism * base.block_size:
        mem_cost += 1
    if (1024 << mem_cost) > max_memory:
        raise UsageFailure(
            f"--max-memory is below the smallest useful memory ({1024 << mem_cost} bytes) for "
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
    best = _fitted_choice(points, budget)
    # Then on time_cost.
    if best.params.time_cost is not None:
        for time_cost in range(best.params.time_cost + 1, 31):
            candidate = trial(dataclasses.replace(best.params, time_cost=time_cost))
            if candidate.seconds > budget:
                break
            best = candidate
    return best, limit, trials


@click.command("tune")
@click.option(
    "--time",
    "budget",
    type=DURATION,
    default="250ms",
    show_default=True,
    help="Time one verification may take, e.g. 250ms or 0.5s.",
)
@click.option(
    "--max-memory",
    type=SIZE,
    default="1GiB",
    show_default=True,
    help="The most memory one hash may use, e.g. 1GiB.",
)
@click.option(
    "--lanes",
    default="auto",
    show_default=True,
    type=click.Choice(["auto", "1", "2", "4", "8", "16"]),
    help="SIMD lanes; auto takes the vector width of the simd backend's instruction set.",
)
@click.option(
    "--parallelism",
    default="auto",
    show_default=True,
    help="Threads per hash; auto takes the cores this process may use.",
)
@click.option(
    "--variant",
    type=click.Choice(VARIANTS),
    default="2015",
    show_default=True,
    help="Algorithm version (2014 and 2014-03 also tune time_cost).",
)
@backend_option
@json_option
def tune_command(
    budget: float,
    max_memory: int,
    lanes: str,
    parallelism: str,
    variant: str,
    backend: str | None,
    as_json: bool,
) -> None:
    """Measure this machine and choose parameters that fill a time budget.

    Picks lanes from the SIMD width, threads from the cores, the largest memory that fits both the
    time and --max-memory, then the multiply chain (and time_cost for the 2014 variants) with the
    time left, aiming at 85% of the budget; a final timing steps the choice down if it misses.
    Prints the parameters and why, how long a verification takes, and how to use the result:
    'twocats hash --params' and the Python line.  Memory stays within --max-memory plus about
    200 MiB for the interpreter and the kernels.
    """
    from twocats.phc import encode_params
    from twocats.simd.registry import resolve_backend, simd_isa

    resolved = resolve_backend(backend)
    isa = simd_isa() if resolved == "simd" else f"none ({resolved} backend)"
    lane_count = lanes_for_isa(isa) if lanes == "auto" else int(lanes)
    if parallelism == "auto":
        threads = min(cpu_count(), 255)
    elif parallelism.isdigit() and 1 <= int(parallelism) <= 255:
        threads = int(parallelism)
    else:
        raise UsageFailure("--parallelism must be auto or a number from 1 to 255")
    hash_type = "blake2b" if lane_count > 8 else "blake2s"
    base = Params(
        variant=variant,
        hash_type=hash_type,
        mem_cost=FIRST_MEM_COST,
        multiplies=BASE_MULTIPLIES,
        lanes=lane_count,
        parallelism=threads,
    )
    verbose = progress_wanted()
    if verbose:
        info(f"tuning on {isa}, {threads} threads, backend {resolved}: the first run compiles")

    def report(trial: _Trial) -> None:
        if verbose:
            time_cost = trial.params.time_cost
            extra = "" if time_cost is None else f", time_cost {time_cost}"
            info(
                f"  mem_cost {trial.params.mem_cost} ({_mib(trial.params.memory_bytes)}), "
                f"multiplies {trial.params.multiplies}{extra}: {trial.seconds * 1000:.1f} ms"
            )

    last: list[VerifyTiming] = []

    def measure(params: Params) -> float:
        last[:] = [measure_verify(params, resolved)]
        return last[0].seconds

    best, limit, trials = _search(base, budget * MARGIN, max_memory, measure, report)
    params, seconds, steps = final_check(best.params, budget, measure)
    wall = last[0].wall_seconds
    prefix = encode_params(params)
    rate = params.memory_bytes / seconds
    load = load_average()
    reasons = choice_reasons(isa, lane_count, hash_type, lanes != "auto")
    usage = [
        f"twocats hash --params '{prefix}'",
        "from twocats import PasswordHasher",
        "from twocats.phc import decode_params",
        f"hasher = PasswordHasher.from_params(decode_params('{prefix}'))",
    ]
    if as_json:
        emit_json(
            {
                "isa": isa,
                "backend": resolved,
                "budget_seconds": budget,
                "max_memory": max_memory,
                "params": params_document(params),
                "phc_prefix": prefix,
                "verify_seconds": seconds,
                "verify_wall_seconds": wall,
                "steps_down": steps,
                "memory_filled_per_second": rate,
                "limited_by": limit,
                "load_average": load,
                "reasons": reasons,
                "usage": {"cli": usage[0], "python": "\n".join(usage[1:])},
                "trials": [trial.document() for trial in trials],
            }
        )
        return
    click.echo(f"Machine:      {isa}, {threads} threads, backend {resolved}")
    click.echo(f"Budget:       {budget * 1000:.0f} ms per verification, at most {_mib(max_memory)}")
    click.echo(
        f"Parameters:   variant {params.variant}, hash {params.hash_type}, lanes {params.lanes}, "
        f"parallelism {params.parallelism}"
    )
    extra = "" if params.time_cost is None else f", time_cost {params.time_cost}"
    click.echo(
        f"              mem_cost {params.mem_cost} ({_mib(params.memory_bytes)}), "
        f"multiplies {params.multiplies}{extra}"
    )
    click.echo(f"Why:          {reasons[0]}")
    click.echo(f"              {reasons[1]}")
    click.echo(f"PHC prefix:   {prefix}")
    stepped = "" if not steps else f", after {steps} step(s) down in the final check"
    click.echo(
        f"Verification: {seconds * 1000:.1f} ms of CPU per thread (median of {REPEATS}{stepped}), "
        f"{wall * 1000:.1f} ms wall-clock; {rate / (1 << 30):.2f} GiB of memory filled per second"
    )
    if seconds > budget:
        click.echo("Note:         even the cheapest set tried is over the budget")
    click.echo(f"Use it:       {usage[0]}")
    for line in usage[1:]:
        click.echo(f"              {line}")
    if load is not None and load > cpu_count():
        click.echo(
            f"Note:         busy machine (load {load:.1f} on {cpu_count()} cores): the choice "
            "rests on CPU time, but the wall-clock time includes waiting for a core"
        )
    if limit == "memory" and seconds < 0.8 * budget:
        click.echo("Note:         --max-memory caps the memory; raise it to use the whole budget")


def _mib(nbytes: int) -> str:
    if nbytes >= 1 << 30:
        return f"{nbytes / (1 << 30):g} GiB"
    return f"{nbytes / (1 << 20):g} MiB"
