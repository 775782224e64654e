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
    help="Also run the ranking trade-off attack on each equal-time row's graph (C, D, E).",
)
@backend_option
@json_option
def compare_command(
    memory: int,
    parallelism: int,
    runs: int,
    plot: str | None,
    attacker: bool,
    backend: str | None,
    as_json: bool,
) -> None:
    """Compare TwoCats with argon2id and scrypt at equal memory and at equal time.

    With --attacker, the equal-time rows are attacked too: for TwoCats (and its side-channel-
    resistant mode) and argon2id (and Argon2i) at the memory each fills, the ranking trade-off
    attack's best time-area product alpha*D, its gain E and the attacker's cost per guess relative
    to argon2id (memory / E), assuming the attacker speeds every hash up alike.
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
                info(f"  attacker: ranking trade-off attack on {name}")

        attacked = attacker_comparison(params, rows, report=announce)
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
