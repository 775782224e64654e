"""``twocats tune``: choose parameters that fill a time budget on this machine.

The options and messages of the command; the measurement and the search are
:mod:`twocats.perf.tune`.
"""

from __future__ import annotations

import click

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
from twocats.hasher_kernels import compile_in_child
from twocats.params import VARIANTS, Params
from twocats.perf.tune import (
    MARGIN,
    REPEATS,
    THROUGHPUT_SECONDS,
    Throughput,
    Trial,
    VerifyTiming,
    default_server_memory,
    final_check,
    measure_throughput,
    measure_verify,
    per_verification_memory,
    search,
    smallest_mem_cost,
)

__all__ = ["choice_reasons", "fit_notes", "tune_command"]


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


def fit_notes(params: Params) -> tuple[list[str], list[str]]:
    """Say where hashes of `params` fit, and warn where they fall short; (notes, warnings).

    The notes name Django's password column and the limits of 'twocats verify' (with the
    options that raise them); the warning says when the memory is below the least the docs
    recommend, the interactive profile's.
    """
    from twocats._units import format_size
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
            "recommendation): give --time more, or use --profile interactive"
        )
    return notes, warnings


def _django_fit(params: Params) -> str:
    """Say whether Django's hasher can store hashes of `params` in its password column."""
    try:
        from twocats.integrations.django.hashers import (
            MAX_STORED_LENGTH,
            TwoCatsPasswordHasher,
            longest_stored,
        )
    except ImportError:
        return "Django: not checked (Django is not installed)"
    longest = longest_stored(params, len(TwoCatsPasswordHasher().salt()))
    if longest <= MAX_STORED_LENGTH:
        return (
            f"Django: fits its {MAX_STORED_LENGTH}-character password column ({longest} "
            "characters at most)"
        )
    return (
        f"Django: does not fit its {MAX_STORED_LENGTH}-character password column ({longest} "
        f"characters; a {params.output_size}-byte output never fits): use --lanes 8 or fewer, "
        "for blake2s"
    )


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
    lanes: str,
    parallelism: str,
    variant: str,
    backend: str | None,
    as_json: bool,
) -> None:
    """Measure this machine and choose parameters that fill a time budget.

    Tunes for a server that runs --concurrent verifications at once within --server-memory: one
    hash may use at most --max-memory and its share of --server-memory, so the memory of all of
    them at once stays within it.  Picks lanes from the SIMD width, threads from the cores shared
    by the concurrent verifications, the largest memory that fits both the time and that limit,
    then the multiply chain (and time_cost for the 2014 variants) with the time left, aiming at
    85% of the budget; a final timing steps the choice down if it misses.  Then --concurrent
    threads verify with the result at once for about a second: the verifications per second
    the machine sustains, and how long each takes under that load.  Prints the parameters and
    why, how long a verification takes, the memory at --concurrent at once, the throughput,
    where hashes of them fit (Django's password column, the default limits of 'twocats verify'
    and the options that raise them), a warning below the least memory the docs recommend, and
    how to use the result: 'twocats hash --params' and the Python line.  The throughput run
    holds --concurrent work areas, within --server-memory; the search one at a time, plus about
    200 MiB for the interpreter and the kernels.  Progress goes to standard error: every trial
    on a terminal, a line every few seconds otherwise.
    """
    from twocats._machine import load_average, machine_memory, usable_cpus
    from twocats._units import format_size
    from twocats.perf.peers import busy_note
    from twocats.perf.tune import start_params
    from twocats.phc import encode_params
    from twocats.simd.registry import resolve_backend, simd_isa

    resolved = resolve_backend(backend)
    isa = simd_isa() if resolved == "simd" else f"none ({resolved} backend)"
    if parallelism != "auto" and not (parallelism.isdigit() and 1 <= int(parallelism) <= 255):
        raise UsageFailure("--parallelism must be auto or a number from 1 to 255")
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
    )
    smallest = 1024 << smallest_mem_cost(base)
    if hash_memory < min(max_memory, smallest):
        raise UsageFailure(
            f"--server-memory {format_size(server_memory)} shared by --concurrent {concurrent} "
            f"leaves {format_size(hash_memory)} per verification, below the smallest useful "
            f"memory ({format_size(smallest)}) for these settings"
        )
    lane_count, threads, hash_type = base.lanes, base.parallelism, base.hash_type
    verbose = progress_wanted()
    lines = ProgressLines()
    info(f"tuning on {isa}, {threads} threads, backend {resolved}: the first run compiles")
    # The kernel compiles in a child process, so that the compiler's memory never adds to the
    # work areas of the verifications measured here.
    compile_in_child(resolved, base)

    def report(trial: Trial) -> None:
        time_cost = trial.params.time_cost
        extra = "" if time_cost is None else f", time_cost {time_cost}"
        line = (
            f"mem_cost {trial.params.mem_cost} ({_mib(trial.params.memory_bytes)}), "
            f"multiplies {trial.params.multiplies}{extra}: {trial.seconds * 1000:.1f} ms"
        )
        if verbose:
            info(f"  {line}")
        else:
            lines(f"tuning: tried {line}")

    last: list[VerifyTiming] = []

    def measure(params: Params) -> float:
        last[:] = [measure_verify(params, resolved)]
        return last[0].seconds

    best, limit, trials = search(base, budget * MARGIN, hash_memory, measure, report)
    params, seconds, steps = final_check(best.params, budget, measure)
    wall = last[0].wall_seconds
    lines(f"tuning: {concurrent} verifications at once for {THROUGHPUT_SECONDS:g} s")
    load_run = measure_throughput(params, resolved, concurrent)
    prefix = encode_params(params)
    rate = params.memory_bytes / seconds
    load = load_average()
    reasons = choice_reasons(isa, lane_count, hash_type, lanes != "auto")
    fits, warnings = fit_notes(params)
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
                "server": _server_document(server_memory, hash_memory, params, load_run),
                "load_average": load,
                "reasons": reasons,
                "fits": fits,
                "warnings": warnings,
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
    click.echo(f"Fits:         {fits[0]}")
    for line in fits[1:]:
        click.echo(f"              {line}")
    for line in warnings:
        click.echo(f"Warning:      {line}")
    stepped = "" if not steps else f", after {steps} step(s) down in the final check"
    click.echo(
        f"Verification: {seconds * 1000:.1f} ms of CPU per thread (median of {REPEATS}{stepped}), "
        f"{wall * 1000:.1f} ms wall-clock; {rate / (1 << 30):.2f} GiB of memory filled per second"
    )
    at_once = concurrent * params.memory_bytes
    click.echo(
        f"Server:       {concurrent} at once: {concurrent} x {_mib(params.memory_bytes)} = "
        f"{_mib(at_once)}, within --server-memory {format_size(server_memory)} "
        f"({format_size(hash_memory)} per verification at most)"
    )
    click.echo(
        f"Throughput:   {load_run.per_second:.1f} verifications per second with {concurrent} at "
        f"once ({load_run.verifications} in {load_run.seconds:.2f} s), "
        f"{load_run.median_wall_seconds * 1000:.1f} ms wall-clock each (median)"
    )
    if seconds > budget:
        click.echo("Note:         even the cheapest set tried is over the budget")
    if load_run.median_wall_seconds > budget:
        click.echo(
            f"Note:         with {concurrent} at once a verification takes longer than the budget "
            f"(it waits for a core or for memory bandwidth); lower --concurrent, or give --time "
            "less"
        )
    click.echo(f"Use it:       {usage[0]}")
    for line in usage[1:]:
        click.echo(f"              {line}")
    busy = busy_note()
    if busy:
        click.echo(
            f"Note:         {busy}: the choice rests on CPU time, but the wall-clock time "
            "includes waiting for a core"
        )
    if limit == "memory" and seconds < 0.8 * budget:
        click.echo("Note:         --max-memory caps the memory; raise it to use the whole budget")


def _server_document(
    server_memory: int, hash_memory: int, params: Params, load_run: Throughput
) -> dict[str, float | int]:
    """The server's figures as a JSON-ready dict."""
    return {
        "concurrent": load_run.concurrent,
        "server_memory": server_memory,
        "max_memory_per_verification": hash_memory,
        "memory_at_concurrent": load_run.concurrent * params.memory_bytes,
        "verifications_per_second": load_run.per_second,
        "verifications": load_run.verifications,
        "seconds": load_run.seconds,
        "median_wall_seconds": load_run.median_wall_seconds,
    }


def _mib(nbytes: int) -> str:
    if nbytes >= 1 << 30:
        return f"{nbytes / (1 << 30):g} GiB"
    return f"{nbytes / (1 << 20):g} MiB"
