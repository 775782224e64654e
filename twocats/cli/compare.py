"""``twocats compare``: TwoCats against argon2id and scrypt on this machine.

The options and messages of the command; the measurement is :mod:`twocats.perf.compare`.  Every
option, ``--plot``'s need for matplotlib included, is checked before anything is measured.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import click

from twocats._extras import install_hint
from twocats.cli._common import (
    UsageFailure,
    backend_option,
    emit_json,
    info,
    json_option,
    progress_wanted,
)
from twocats.cli._options import SIZE

if TYPE_CHECKING:
    from twocats.perf.compare import Row
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
@click.option(
    "--memory",
    type=SIZE,
    default="256MiB",
    show_default=True,
    help="Memory of the equal-memory comparison (rounded down to a power of two KiB).",
)
@click.option(
    "--parallelism",
    type=click.IntRange(1, 255),
    default=2,
    show_default=True,
    help="Threads for TwoCats and argon2id (scrypt's hashlib runs its p serially; p=1 is used).",
)
@click.option(
    "--runs", type=click.IntRange(1, 50), default=3, show_default=True, help="Timed runs per row."
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
    help="Also run the best published trade-off attack on each equal-time row's graph.",
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
    memory: int,
    parallelism: int,
    runs: int,
    plot: str | None,
    attacker: bool,
    speedups: tuple[str, ...],
    chain_bound: float | None,
    backend: str | None,
    as_json: bool,
) -> None:
    """Compare TwoCats with argon2id and scrypt at equal memory and at equal time.

    With --attacker, the equal-time rows are attacked too: for TwoCats (and its side-channel-
    resistant mode) and argon2id (and Argon2i) at the memory each fills, the best published
    trade-off attack (twocats tradeoff), its gain E and the attacker's cost per guess relative to
    argon2id (memory / (E * speed-up)); the speed-ups are assumptions, 1 unless given.
    """
    from twocats._machine import load_average
    from twocats.perf.compare import (
        attacker_comparison,
        compare_params,
        format_table,
        run_comparison,
    )
    from twocats.perf.peers import SCRYPT_MAX_MEMORY, busy_note
    from twocats.simd.registry import resolve_backend, simd_isa

    mem_cost = (memory // 1024).bit_length() - 1
    if mem_cost < 10:
        raise UsageFailure("--memory must be at least 1MiB")
    if plot is not None:
        _check_plot_target(plot)
    assumptions = _assumptions(speedups, chain_bound)
    resolved = resolve_backend(backend)
    params = compare_params(mem_cost, parallelism, simd_isa() if resolved == "simd" else "")
    verbose = progress_wanted()

    def report(row: Row) -> None:
        if verbose:
            milliseconds = row.seconds * 1000
            info(f"  {row.comparison}: {row.algorithm} {row.parameters}: {milliseconds:.1f} ms")

    rows = run_comparison(params, resolved, runs, report)
    if verbose and params.memory_bytes > SCRYPT_MAX_MEMORY:
        info("  equal memory: scrypt skipped (hashlib.scrypt allows less than 2 GiB)")
    attacked = []
    if attacker:

        def announce(name: str) -> None:
            if verbose:
                info(f"  attacker: the trade-off attacks on {name}")

        attacked = attacker_comparison(params, rows, assumptions, report=announce)
    load = load_average()
    if plot is not None:
        from twocats.perf.compare_plot import plot_rows

        plot_rows(rows, plot, runs, load)
    if as_json:
        document = {
            "backend": resolved,
            "runs": runs,
            "load_average": load,
            "rows": [row.document() for row in rows],
        }
        if attacker:
            document["attacker"] = [row.document() for row in attacked]
        emit_json(document)
        return
    click.echo(format_table(rows, runs))
    if attacker:
        from twocats.perf.tradeoff.attacker import format_attacker_table

        click.echo()
        click.echo(format_attacker_table(attacked))
    busy = busy_note()
    if busy:
        info(f"note: {busy}: the times include waiting for a core; rerun when it is idle")
    if plot is not None:
        info(f"plot written to {plot}")
