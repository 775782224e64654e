"""``twocats tune``: choose parameters whose verification, N at once, fits a time budget here.

The options and messages of the command; the measurement and the search are
:mod:`twocats.perf.tune`, the settings to paste :mod:`twocats.cli._settings`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Final

import click

from twocats._units import format_size
from twocats.cli._common import (
    ProgressLines,
    UsageFailure,
    backend_option,
    emit_json,
    info,
    json_option,
    params_document,
    progress_wanted,
)
from twocats.cli._options import DURATION, SIZE
from twocats.cli._settings import FRAMEWORKS, settings_files
from twocats.params import VARIANTS, Params
from twocats.perf.tune import (
    FINAL_VERIFICATIONS,
    MARGIN,
    MAX_STEPS_DOWN,
    LoadTiming,
    ServerBounds,
    Trial,
    cores_needed,
    default_server_memory,
    final_check,
    max_lanes,
    measure_under_load,
    per_verification_memory,
    search,
    smallest_mem_cost,
    step_down,
)

__all__ = ["choice_reasons", "fit_notes", "tune_command"]


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


#: The frameworks as their own documentation spells them.
_NAMES: Final = {"django": "Django", "pwdlib": "pwdlib", "passlib": "passlib"}


def choice_reasons(
    isa: str,
    params: Params,
    concurrent: int,
    *,
    lanes_given: bool = False,
    parallelism_given: bool = False,
) -> list[str]:
    """Explain the lanes, the hash type and the threads chosen."""
    from twocats._machine import usable_cpus
    from twocats.perf.tune import lanes_for_isa
    from twocats.profiles import DEFAULT

    lanes, width = params.lanes, lanes_for_isa(isa)
    if lanes_given:
        why_lanes = f"lanes {lanes}: as given by --lanes"
    elif lanes < width:
        why_lanes = (
            f"lanes {lanes}: {_django_column()}; {isa} would take "
            f"{width}, one 32-bit lane per vector element"
        )
    else:
        why_lanes = (
            f"lanes {lanes}: one 32-bit lane per vector element of {isa}, so each step of the "
            "fill uses whole registers"
        )
    if params.hash_type == "blake2b":
        why_hash = "hash blake2b: more than 8 lanes need a hash with 16 state words; blake2s has 8"
    else:
        why_hash = "hash blake2s: 8 lanes or fewer fit its 8 state words"
    default = (
        f"(the default profile uses {DEFAULT.hash_type} with {DEFAULT.lanes} lanes, which suits "
        "every machine with 256-bit vectors)"
    )
    cpus = usable_cpus()
    why_threads = (
        f"parallelism {params.parallelism}: as given by --parallelism"
        if parallelism_given
        else f"parallelism {params.parallelism}: {_plural(cpus, 'usable CPU')} shared by "
        f"{concurrent} verification{'s' if concurrent != 1 else ''} at once"
    )
    return [why_lanes, f"{why_hash} {default}", why_threads]


def _django_column() -> str:
    """What Django's storage allows, in words."""
    from twocats.integrations.stored import MAX_STORED_LENGTH

    return f"Django's {MAX_STORED_LENGTH}-character password column holds 32-byte outputs only"


def fit_notes(params: Params) -> tuple[list[str], list[str]]:
    """Say where hashes of `params` fit, and warn where they fall short; (notes, warnings).

    The notes name Django's password column and the limits of 'twocats verify' (with the
    options that raise them); the warning says when the memory is below the least the docs
    recommend, the interactive profile's.
    """
    from twocats.cli._limits import verify_limits, verify_options
    from twocats.profiles import INTERACTIVE

    notes = [_django_fit(params)]
    options = verify_options(params)
    if options:
        default = format_size(verify_limits(None).max_memory)
        notes.append(
            f"twocats verify (and a server with the default profile) needs {' '.join(options)}: "
            f"above its default limits ({default})"
        )
    else:
        notes.append("twocats verify: within its default limits")
    warnings = []
    if params.mem_cost < INTERACTIVE.mem_cost:
        warnings.append(
            f"{format_size(params.memory_bytes)} is below {format_size(INTERACTIVE.memory_bytes)}, "
            "the least memory the docs recommend (the interactive profile, RFC 9106's second "
            "recommendation)"
        )
    return notes, warnings


def _django_fit(params: Params) -> str:
    """Say whether Django's hasher can store hashes of `params` in its password column."""
    from twocats.integrations.stored import MAX_STORED_LENGTH, longest_stored

    longest = longest_stored(params)
    if longest <= MAX_STORED_LENGTH:
        return (
            f"Django: fits its {MAX_STORED_LENGTH}-character password column ({longest} "
            "characters at most)"
        )
    return (
        f"Django: does not fit its {MAX_STORED_LENGTH}-character password column ({longest} "
        f"characters; a {params.output_size}-byte output never fits): use --for django, or "
        "--lanes 8 or fewer, for blake2s"
    )


@dataclasses.dataclass(frozen=True)
class _Question:
    """What tune was asked: the budget, the load and the memory, and the framework."""

    budget: float
    concurrent: int
    server_memory: int
    max_memory: int
    hash_memory: int
    framework: str | None

    def words(self) -> str:
        target = f", for {_NAMES[self.framework]}" if self.framework else ""
        return (
            f"{self.concurrent} verification{'s' if self.concurrent != 1 else ''} at once within "
            f"{format_size(self.server_memory)}, each within {self.budget * 1000:g} ms (95th "
            f"percentile){target}"
        )


@click.command("tune")
@click.option(
    "--time",
    "budget",
    type=DURATION,
    default="250ms",
    show_default=True,
    help="Time one verification may take while --concurrent run at once (its 95th "
    "percentile), e.g. 250ms or 0.5s.",
)
@click.option(
    "--max-memory",
    type=SIZE,
    default="1GiB",
    show_default=True,
    help="The most memory one hash may use, e.g. 1GiB.",
)
@click.option(
    "--concurrent",
    type=click.IntRange(1, 4096),
    default=None,
    help="Verifications the server runs at once (default: the cores this process may use).",
)
@click.option(
    "--server-memory",
    type=SIZE,
    default=None,
    help="Memory the server gives to hashing, shared by the --concurrent verifications "
    "(default: half of the machine's), e.g. 4GiB.",
)
@click.option(
    "--for",
    "framework",
    type=click.Choice(FRAMEWORKS),
    default=None,
    help="Choose only what the framework's adapter stores (django: its 128-character column) "
    "and print its settings, with the hasher's bounds.",
)
@click.option(
    "--lanes",
    default="auto",
    show_default=True,
    type=click.Choice(["auto", "1", "2", "4", "8", "16"]),
    help="SIMD lanes; auto takes the vector width of the simd backend's instruction set, at "
    "most what --for allows.",
)
@click.option(
    "--parallelism",
    default="auto",
    show_default=True,
    help="Threads per hash; auto shares the cores this process may use among the --concurrent "
    "verifications (at least 1 each).",
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
    concurrent: int | None,
    server_memory: int | None,
    framework: str | None,
    lanes: str,
    parallelism: str,
    variant: str,
    backend: str | None,
    as_json: bool,
) -> None:
    """Choose parameters whose verification, --concurrent at once, fits --time on this machine.

    The budget is the latency a server's users see: each candidate is verified by --concurrent
    threads at once, as many as the server admits, and its 95th percentile (with the median
    beside it) is what must fit.  One hash may use at most --max-memory and its share of
    --server-memory, so the memory of all of them at once stays within it.  Picks lanes from the
    SIMD width (and what --for's framework stores), threads from the cores shared by the
    concurrent verifications, the largest memory that fits the time and that limit, then the
    multiply chain (and time_cost for the 2014 variants) with the time left, aiming at 85% of
    the budget; a final measurement of 120 verifications steps the choice down if it misses
    twice.  Prints the parameters and why, what the final measurement found, where hashes of
    them fit, and the settings to paste: the parameters with the hasher's bounds
    (max_concurrency --concurrent, max_total_memory --server-memory, timeout --time), for
    --for's framework or the core PasswordHasher.  Where even the cheapest parameters miss the
    budget, it says how many cores would make it fit, and exits with status 1.  Progress goes to
    standard error: every trial on a terminal, a line every few seconds otherwise.  The process
    holds --concurrent work areas of the candidate measured, within --server-memory, plus about
    200 MiB for the interpreter and the kernels.
    """
    from twocats._machine import load_average, machine_memory, usable_cpus
    from twocats.perf.tune import start_params
    from twocats.simd.registry import resolve_backend, simd_isa

    resolved = resolve_backend(backend)
    isa = simd_isa() if resolved == "simd" else f"none ({resolved} backend)"
    if parallelism != "auto" and not (parallelism.isdigit() and 1 <= int(parallelism) <= 255):
        raise UsageFailure("--parallelism must be auto or a number from 1 to 255")
    if lanes != "auto" and int(lanes) > max_lanes(framework):
        raise UsageFailure(
            f"--for django: {_django_column()}: give --lanes {max_lanes(framework)} or fewer"
        )
    concurrent = usable_cpus() if concurrent is None else concurrent
    if server_memory is None:
        server_memory = default_server_memory(concurrent, max_memory)
    machine = machine_memory()
    if machine is not None and server_memory > machine:
        raise UsageFailure(
            f"--server-memory {format_size(server_memory)} is more than this machine's memory "
            f"({format_size(machine)})"
        )
    hash_memory = per_verification_memory(max_memory, server_memory, concurrent)
    base = start_params(
        isa,
        variant=variant,
        lanes=None if lanes == "auto" else int(lanes),
        parallelism=None if parallelism == "auto" else int(parallelism),
        concurrent=concurrent,
        framework=framework,
    )
    smallest = 1024 << smallest_mem_cost(base)
    if hash_memory < smallest:
        if max_memory < server_memory // concurrent:
            short, least = f"--max-memory {format_size(max_memory)}", smallest
        else:
            short = (
                f"--server-memory {format_size(server_memory)} shared by --concurrent {concurrent}"
            )
            least = smallest * concurrent
        raise UsageFailure(
            f"{short} leaves {format_size(hash_memory)} per verification, below the smallest "
            f"useful memory ({format_size(smallest)}) for these settings: it would need at "
            f"least {format_size(least)}"
        )
    question = _Question(budget, concurrent, server_memory, max_memory, hash_memory, framework)
    load_before = load_average()
    _prepare_kernel(resolved, base)
    info(
        f"tuning for {question.words()}: each trial verifies {concurrent} at once, for about "
        "a second or more"
    )
    verbose = progress_wanted()
    lines = ProgressLines()
    last: list[LoadTiming] = []

    def measure(params: Params, verifications: int | None = None) -> float:
        wanted = {} if verifications is None else {"verifications": verifications}
        last[:] = [measure_under_load(params, resolved, concurrent, **wanted)]
        return last[0].p95

    def report(trial: Trial) -> None:
        time_cost = trial.params.time_cost
        extra = "" if time_cost is None else f", time_cost {time_cost}"
        line = (
            f"mem_cost {trial.params.mem_cost} ({format_size(trial.params.memory_bytes)}), "
            f"multiplies {trial.params.multiplies}{extra}: 95th percentile "
            f"{trial.seconds * 1000:.1f} ms, median {last[0].median * 1000:.1f} ms"
        )
        if verbose:
            info(f"  {line}")
        else:
            lines(f"tuning: tried {line}")

    best, limit, trials = search(base, budget * MARGIN, hash_memory, measure, report)
    lines(f"tuning: final check of {FINAL_VERIFICATIONS} verifications, {concurrent} at once")
    params, seconds, steps = final_check(
        best.params, budget, lambda candidate: measure(candidate, FINAL_VERIFICATIONS)
    )
    loads = (load_before, load_average())
    run = _Run(question, isa, resolved, params, last[0], steps, limit, loads, tuple(trials))
    document = run.document()
    if seconds > budget:
        _nothing_fits(run, document, as_json)
    bounds = ServerBounds(concurrent, server_memory, round(budget, 6))
    notes, warnings = fit_notes(params)
    # The one warning is of memory below the recommended: say what that memory would take.
    warnings = [f"{line}; {_recommended_memory(run)}" for line in warnings]
    reasons = choice_reasons(
        isa,
        params,
        concurrent,
        lanes_given=lanes != "auto",
        parallelism_given=parallelism != "auto",
    )
    reasons.append(_memory_reason(run))
    files = settings_files(framework, document["phc_prefix"], bounds)
    document.update(
        bounds=bounds.document(),
        settings={"for": framework, "files": [{"where": w, "text": t} for w, t in files]},
        reasons=reasons,
        fits=notes,
        warnings=warnings,
        usage={"cli": f"twocats hash --params '{document['phc_prefix']}'"},
    )
    if as_json:
        emit_json(document)
        return
    _print_human(run, document)


def _prepare_kernel(backend: str, params: Params) -> None:
    """Make the fill kernel ready, in a child process, saying so when that is not instant.

    The compiler then never adds its memory to the work areas measured here.
    """
    import time

    from twocats.password import Kernels

    kernels = Kernels(backend, ())
    if kernels.loads_now(params):
        return
    info("loading the fill kernel (numba compiles it once for this machine, then caches it)")
    started = time.perf_counter()
    kernels.prepare(params, None)
    info(f"fill kernel ready in {time.perf_counter() - started:.1f} s")


@dataclasses.dataclass(frozen=True)
class _Run:
    """What a run of tune found: its machine, its answer and the answer's final measurement."""

    question: _Question
    isa: str
    backend: str
    params: Params
    final: LoadTiming
    steps: int
    limit: str
    loads: tuple[float | None, float | None]
    trials: tuple[Trial, ...]

    def document(self) -> dict[str, Any]:
        """The JSON-ready figures of the run, whether its answer fits the budget or not."""
        from twocats.phc import encode_params

        question, params, final = self.question, self.params, self.final
        return {
            "isa": self.isa,
            "backend": self.backend,
            "for": question.framework,
            "budget_seconds": question.budget,
            "max_memory": question.max_memory,
            "within_budget": final.p95 <= question.budget,
            "params": params_document(params),
            "phc_prefix": encode_params(params),
            "verify_seconds": final.p95,
            "verify_median_seconds": final.median,
            "under_load": final.document(),
            "steps_down": self.steps,
            "limited_by": self.limit,
            "server": {
                "concurrent": question.concurrent,
                "server_memory": question.server_memory,
                "max_memory_per_verification": question.hash_memory,
                "memory_at_concurrent": question.concurrent * params.memory_bytes,
            },
            "load_average": {"before": self.loads[0], "after": self.loads[1]},
            "trials": [trial.document() for trial in self.trials],
        }


def _cores_advice(
    cpu_per_verification: float, question: _Question, memory: str, *, estimated: bool = False
) -> str:
    """Say how many cores `question`'s verifications of `memory` would need, and whether the
    machine has them (then the time went to waiting behind other work)."""
    from twocats._machine import load_average, usable_cpus

    cores = cores_needed(cpu_per_verification, question.concurrent, question.budget)
    cpus = usable_cpus()
    how = ", estimated from this run's" if estimated else ""
    need = (
        f"{question.concurrent} at once of {memory} need about {_plural(cores, 'core')} as "
        f"fast as these ({cpu_per_verification * 1000:.1f} ms of CPU each{how}) to end within "
        f"{question.budget * MARGIN * 1000:g} ms"
    )
    if cores > cpus:
        return f"{need}; this process may use {cpus}"
    load = load_average()
    busy = "" if load is None else f" (load average {load:.1f})"
    return (
        f"{need}, and this process may use {cpus}: on cores free of other jobs it would fit; "
        f"here other work held them{busy}"
    )


def _nothing_fits(run: _Run, document: dict[str, Any], as_json: bool) -> None:
    """Say that no parameters fit the budget, and what would; exit with status 1."""
    question, params, final = run.question, run.params, run.final
    cheapest = step_down(params) is None
    what = (
        "even the cheapest parameters"
        if cheapest
        else f"the parameters after {MAX_STEPS_DOWN} steps down"
    )
    memory = format_size(params.memory_bytes)
    found = (
        f"{what} ({memory}, multiplies {params.multiplies}) take {final.p95 * 1000:.1f} ms at "
        f"the 95th percentile with {question.concurrent} at once (median "
        f"{final.median * 1000:.1f} ms), over the {question.budget * 1000:g} ms budget"
    )
    would = _cores_advice(final.cpu_per_verification, question, memory)
    cores = cores_needed(final.cpu_per_verification, question.concurrent, question.budget)
    document.update(advice={"found": found, "cores_needed": cores, "would_fit": would})
    if as_json:
        emit_json(document)
    else:
        click.echo(f"Question:     {question.words()}")
        click.echo(f"No fit:       {found}")
        click.echo(f"What would:   {would}")
    raise click.exceptions.Exit(1)


def _recommended_memory(run: _Run) -> str:
    """What verifying the recommended memory within the budget would take.

    The CPU time is estimated from this run's, in proportion to the memory.
    """
    from twocats.profiles import INTERACTIVE

    scale = INTERACTIVE.memory_bytes / run.params.memory_bytes
    cpu = run.final.cpu_per_verification * scale
    return _cores_advice(cpu, run.question, format_size(INTERACTIVE.memory_bytes), estimated=True)


def _memory_reason(run: _Run) -> str:
    """Say what stopped the memory: the time budget, or which memory limit."""
    question = run.question
    memory = format_size(run.params.memory_bytes)
    if run.limit != "memory":
        return f"memory {memory}: the most whose 95th percentile fits the time"
    by_share = question.server_memory // question.concurrent <= question.max_memory
    if by_share:
        cap = (
            f"--server-memory {format_size(question.server_memory)} shared by "
            f"--concurrent {question.concurrent}"
        )
    else:
        cap = f"--max-memory {format_size(question.max_memory)}"
    left = " (the time left went to the multiply chain)" if run.final.p95 < question.budget else ""
    return f"memory {memory}: the most {cap} allows{left}"


def _print_human(run: _Run, document: dict[str, Any]) -> None:
    """Print the answer for a person, every line true for this run."""
    from twocats._machine import usable_cpus

    question, params, final, steps = run.question, run.params, run.final, run.steps

    cpus = _plural(usable_cpus(), "usable CPU")
    memory = format_size(params.memory_bytes)
    extra = "" if params.time_cost is None else f", time_cost {params.time_cost}"
    stepped = "" if not steps else f", after {_plural(steps, 'step')} down"
    bounds = document["bounds"]
    total = format_size(bounds["max_total_memory"])
    at_once = format_size(question.concurrent * params.memory_bytes)
    files = document["settings"]["files"]
    where = " and ".join(item["where"] for item in files)
    shown = " then ".join(f"{load:.1f}" for load in run.loads if load is not None)
    lines: list[tuple[str, str]] = [
        ("Machine:", f"{run.isa}, {cpus}, backend {run.backend}"),
        ("Question:", question.words()),
        (
            "Parameters:",
            (
                f"variant {params.variant}, hash {params.hash_type}, lanes {params.lanes}, "
                f"parallelism {params.parallelism}"
            ),
        ),
        ("", f"mem_cost {params.mem_cost} ({memory}), multiplies {params.multiplies}{extra}"),
        *(("Why:" if index == 0 else "", line) for index, line in enumerate(document["reasons"])),
        ("PHC prefix:", document["phc_prefix"]),
        (
            "Measured:",
            (
                f"{question.concurrent} at once: 95th percentile {final.p95 * 1000:.1f} ms, median "
                f"{final.median * 1000:.1f} ms ({final.verifications} verifications in "
                f"{final.seconds:.1f} s{stepped})"
            ),
        ),
        (
            "",
            (
                f"{final.per_second:.1f} verifications per second, "
                f"{final.cpu_per_verification * 1000:.1f} ms of CPU each"
            ),
        ),
        (
            "Server:",
            (
                f"{question.concurrent} x {memory} = {at_once} at once, within --server-memory "
                f"{format_size(question.server_memory)}"
            ),
        ),
        *(("Fits:" if index == 0 else "", line) for index, line in enumerate(document["fits"])),
        *(("Warning:", line) for line in document["warnings"]),
        (
            "Bounds:",
            (
                f"max_concurrency {bounds['max_concurrency']}, max_total_memory {total}, "
                f"timeout {bounds['timeout']:g} s: a login beyond {question.concurrent} at once "
                "waits at most the budget for a slot, then is refused as busy"
            ),
        ),
        (
            "Settings:",
            "paste into the code that makes the hasher:"
            if files[0]["where"] == "Python"
            else f"paste into {where}:",
        ),
    ]
    for title, line in lines:
        click.echo(f"{title:14}{line}")
    for item in files:
        click.echo()
        if item["where"] != "Python":
            click.echo(f"# {item['where']}")
        click.echo(item["text"])
    click.echo()
    click.echo(f"{'Use it:':14}{document['usage']['cli']}")
    if shown:
        click.echo(
            f"{'Load:':14}load average {shown} on {cpus}: other jobs' work is part of the "
            "times measured"
        )
