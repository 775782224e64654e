"""``twocats compare``: TwoCats against argon2id and scrypt on this machine.

The options and messages of the command; the measurement is :mod:`twocats.perf.compare`.  Every
option, ``--plot``'s need for matplotlib included, is checked before anything is measured.
TwoCats' parameters are those of ``hash`` (``--profile``, ``--params`` and the parameter
options; the default profile by default).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import click

from twocats._extras import install_hint
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
from twocats.cli._options import DURATION, build_params, params_options

if TYPE_CHECKING:
    from twocats.perf.compare import EqualTime
    from twocats.perf.tradeoff.attacker import Assumptions

__all__ = ["compare_command"]


def _check_plot_target(path: str) -> None:
    """Refuse a --plot that cannot be drawn or written, before anything is measured."""
    from twocats.perf.compare_plot import pyplot

    try:
        pyplot()
    except ImportError:
        raise UsageFailure(f"--plot needs matplotlib ({install_hint('bench')})") from None
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        raise UsageFailure(f"--plot: cannot write into the folder {folder}")


def _assumptions(speedups: tuple[str, ...], chain_bound: float | None) -> Assumptions:
    """Read --asic-speedup ALGORITHM=FACTOR and --chain-bound, refusing bad values up front."""
    from twocats.exceptions import InvalidParametersError
    from twocats.perf.tradeoff.attacker import Assumptions

    factors = {}
    for item in speedups:
        name, _, value = item.partition("=")
        try:
            factors[name] = float(value)
        except ValueError:
            raise UsageFailure(f"--asic-speedup {item!r}: FACTOR must be a number") from None
    try:
        return Assumptions(factors, chain_bound)
    except InvalidParametersError as error:
        raise UsageFailure(f"--asic-speedup/--chain-bound: {error}") from None


@click.command("compare")
@params_options
@click.option(
    "--time-limit",
    type=DURATION,
    default="60s",
    show_default=True,
    help="Start no round that would end later than this after the start (calibration "
    "included); a busy machine may reach it before the interval is within ±10%.",
)
@click.option(
    "--min-rounds",
    type=click.IntRange(2, 1000),
    default=5,
    show_default=True,
    help="Rounds to run at least, however narrow the interval.",
)
@click.option(
    "--plot",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Also draw the two comparisons into this PNG file (needs matplotlib).",
)
@click.option(
    "--attacker",
    is_flag=True,
    help="Also run the best published trade-off attack on each equal-time memory's graph.",
)
@click.option(
    "--asic-speedup",
    "speedups",
    multiple=True,
    metavar="ALGORITHM=FACTOR",
    help="--attacker: an ASIC's speed-up over this machine for one algorithm (default 1 each).",
)
@click.option(
    "--chain-bound",
    type=click.FloatRange(0.001, 1000),
    default=None,
    metavar="NS",
    help="--attacker: cap TwoCats' speed-up by its multiply chain, if a multiplication takes NS.",
)
@backend_option
@json_option
def compare_command(
    time_limit: float,
    min_rounds: int,
    plot: str | None,
    attacker: bool,
    speedups: tuple[str, ...],
    chain_bound: float | None,
    backend: str | None,
    as_json: bool,
    **options: Any,
) -> None:
    """Compare TwoCats with argon2id and scrypt at equal memory and at equal time.

    TwoCats runs with the parameters given (--profile, --params or the parameter options; the
    default profile by default) through a PasswordHasher, as a server runs it; argon2id (one
    pass) uses the same memory and threads, scrypt (r=8, p=1) the same memory.  After a
    calibration that finds the argon2id memory and the scrypt N that take TwoCats' time, every
    configuration is timed once per round, in an order rotated from round to round, by the wall
    clock and by CPU time.  Each round gives the equal-time ratio, the memory TwoCats fills over
    the memory argon2id fills in the same CPU time; rounds go on until its 95% confidence
    interval is within ±10%, or until --time-limit, and the ratio is printed with its interval
    (and a note when the machine was too busy to narrow it that far).

    With --attacker, the equal-time memories are attacked too: for TwoCats (and its side-channel-
    resistant mode) and argon2id (and Argon2i) at the memory each fills, the best published
    trade-off attack (twocats tradeoff), its gain E and the attacker's cost per guess relative to
    argon2id (memory / (E * speed-up)); the speed-ups are assumptions, 1 unless given.
    """
    from twocats._machine import load_average
    from twocats.perf.compare import (
        TARGET,
        Rounds,
        attacker_comparison,
        check_comparable,
        format_equal_time,
        format_table,
        run_comparison,
    )
    from twocats.perf.peers import SCRYPT_MAX_MEMORY
    from twocats.phc import encode_params
    from twocats.simd.registry import resolve_backend

    params = build_params(options)
    check_comparable(params)
    if (speedups or chain_bound is not None) and not attacker:
        raise UsageFailure("--asic-speedup and --chain-bound apply to --attacker only")
    assumptions = _assumptions(speedups, chain_bound)
    if plot is not None:
        _check_plot_target(plot)
    resolved = resolve_backend(backend)
    verbose = progress_wanted()
    lines = ProgressLines()
    load_before = load_average()
    info(
        f"comparing {encode_params(params)} with argon2id and scrypt: calibrating, then rounds "
        f"until the equal-time ratio is within ±{TARGET:.0%} (at most {time_limit:g} s)"
    )

    def report(equal_time: EqualTime) -> None:
        cpu = equal_time.cpu
        line = (
            f"round {cpu.rounds}: equal-time ratio {cpu.ratio:.2f} "
            f"(±{cpu.half_width:.1%}, wanted ±{TARGET:.0%})"
        )
        if verbose:
            info(f"  {line}")
        else:
            lines(f"compare: {line}")

    comparison = run_comparison(params, resolved, Rounds(min_rounds, time_limit), report)
    rows = comparison.rows
    if params.memory_bytes > SCRYPT_MAX_MEMORY:
        info("equal memory: scrypt left out (hashlib.scrypt allows less than 2 GiB)")
    attacked = []
    if attacker:

        def announce(name: str) -> None:
            if verbose:
                info(f"  attacker: the trade-off attacks on {name}")

        attacked = attacker_comparison(
            params,
            comparison.equal_time,
            report=announce,
            assumptions=assumptions,
            seconds=rows[0].seconds,
        )
    load = load_average()
    busy = _busy_note(comparison.equal_time, load_before, load, time_limit)
    if plot is not None:
        from twocats.perf.compare_plot import plot_rows

        plot_rows(rows, plot, comparison.rounds, load)
    if as_json:
        document = {
            "backend": resolved,
            "params": params_document(params),
            "phc_prefix": encode_params(params),
            "runs": comparison.rounds,
            "seconds": comparison.seconds,
            "time_limit": time_limit,
            "load_average_start": load_before,
            "load_average": load,
            "equal_time": comparison.equal_time.document(),
            "busy": busy,
            "rows": [row.document() for row in rows],
        }
        if attacker:
            document["attacker"] = [row.document() for row in attacked]
        emit_json(document)
        return
    click.echo(format_table(rows, comparison.rounds))
    click.echo()
    for line in format_equal_time(comparison):
        click.echo(line)
    if attacker:
        from twocats.perf.tradeoff.attacker import format_attacker_table

        click.echo()
        click.echo(format_attacker_table(attacked))
    if busy is not None:
        info(f"note: {busy}")
    if plot is not None:
        info(f"plot written to {plot}")


def _busy_note(
    equal_time: EqualTime, before: float | None, after: float | None, time_limit: float
) -> str | None:
    """Say when the interval stayed wider than wanted, and how loaded the machine was."""
    from twocats._machine import usable_cpus

    if equal_time.reached:
        return None
    loads = [load for load in (before, after) if load is not None]
    load = f" (load average {max(loads):.1f} on {usable_cpus()} usable CPUs)" if loads else ""
    return (
        f"the machine was too busy{load} to narrow the equal-time ratio to "
        f"±{equal_time.target:.0%} within --time-limit {time_limit:g} s: its interval is "
        f"±{equal_time.cpu.half_width:.1%}; rerun when it is quieter, or give --time-limit more"
    )
