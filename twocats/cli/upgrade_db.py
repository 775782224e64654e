"""``twocats upgrade-db``: raise the cost of every TwoCats hash in a database table, on Dask.

A thin skin over :func:`twocats.bulk.upgrade_table`; the target parameters are given as for
``twocats needs-rehash`` (``--profile``, ``--params PHC``, ``--mem-cost N`` and the other
parameter options).  The module imports SQLAlchemy and Dask only when the command runs.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from twocats._extras import install_hint
from twocats.cli._common import UsageFailure, emit_json, info, progress_wanted
from twocats.cli._options import (
    backend_option,
    build_params,
    json_option,
    max_memory_option,
    params_options,
)

if TYPE_CHECKING:
    from twocats.bulk import BulkReport

#: The environment variable that can hold DATABASE_URL, to keep a database password out of argv.
URL_ENV = "TWOCATS_DATABASE_URL"


@click.command("upgrade-db")
@click.argument("database_url", metavar="DATABASE_URL", envvar=URL_ENV)
@click.option("--table", required=True, help="The table holding the hashes.")
@click.option(
    "--key-column", required=True, help="Its primary key or a unique key (pages go in its order)."
)
@click.option("--hash-column", required=True, help="The text column holding the hashes.")
@params_options
@click.option(
    "--batch-size",
    type=click.IntRange(1, 100_000),
    default=1000,
    show_default=True,
    help="Rows read, and written back in one transaction, at a time.",
)
@click.option(
    "--workers",
    type=click.IntRange(1),
    default=None,
    help="Worker processes of the local Dask cluster (default: one per usable core).",
)
@click.option(
    "--scheduler",
    metavar="ADDRESS",
    default=None,
    help="Run on an existing Dask cluster, e.g. tcp://10.0.0.5:8786, instead of a local one.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Only count the rows by kind and estimate the duration from a few timed upgrades.",
)
@max_memory_option("1 GiB, or the target's need if larger")
@backend_option
@json_option
def upgrade_db_command(
    database_url: str,
    table: str,
    key_column: str,
    hash_column: str,
    batch_size: int,
    workers: int | None,
    scheduler: str | None,
    dry_run: bool,
    max_memory: int | None,
    backend: str | None,
    as_json: bool,
    **options: Any,
) -> None:
    """Raise every TwoCats hash in a database table to the target cost, on Dask.

    The passwords are not needed: only the memory cost rises.

    DATABASE_URL is an SQLAlchemy URL such as sqlite:///users.db or postgresql://user@host/db
    (or set $TWOCATS_DATABASE_URL, which keeps a database password out of the command line).
    Values may be bare PHC strings or carry a framework prefix such as Django's 'twocats$', which
    is kept. Other algorithms, empty and malformed values are left alone and counted; rows already
    at the target are skipped, so a rerun after an interruption finishes the job. Rows changed
    while the job runs are never overwritten (they are counted as conflicts).

    Exit status: 0 done, 1 some rows failed, 2 bad input.
    """
    if workers is not None and scheduler is not None:
        raise UsageFailure("--workers and --scheduler cannot be used together")
    target = build_params(options)
    try:
        from twocats.bulk import upgrade_table
    except ImportError as error:
        raise UsageFailure(
            f"upgrade-db needs the bulk extra ({install_hint('bulk')}): {error}"
        ) from None
    with _progress_bar(enabled=progress_wanted() and not dry_run) as progress:
        report = upgrade_table(
            database_url,
            table,
            key_column=key_column,
            hash_column=hash_column,
            target=target,
            scheduler=scheduler,
            workers=workers,
            batch_size=batch_size,
            dry_run=dry_run,
            max_memory=max_memory,
            backend=backend,
            progress=progress,
        )
    if as_json:
        emit_json(report.document())
    else:
        _print_report(report)
    if report.failures:
        raise click.exceptions.Exit(1)


@contextmanager
def _progress_bar(*, enabled: bool) -> Iterator[Callable[[int, int], None] | None]:
    """Yield a progress callback drawing a bar with rows/s and ETA on standard error."""
    if not enabled:
        yield None
        return
    started = time.perf_counter()
    with click.progressbar(
        length=1,
        label="upgrading",
        show_eta=True,
        show_pos=True,
        file=sys.stderr,
    ) as bar:
        shown = 0

        def update(done: int, total: int) -> None:
            nonlocal shown
            seconds = time.perf_counter() - started
            bar.label = f"upgrading, {done / seconds:.0f} rows/s" if seconds > 0 else "upgrading"
            bar.length = total
            bar.update(done - shown)
            shown = done

        yield update


def _print_report(report: BulkReport) -> None:
    """Write the report as lines of text on standard output."""
    lines = [f"rows: {report.rows}"]
    if report.dry_run:
        lines.append(f"to upgrade: {report.to_upgrade}")
    else:
        lines.append(f"upgraded: {report.upgraded}")
    lines += [
        f"already at the target: {report.current}",
        f"need the password (other parameters): {report.needs_password}",
    ]
    lines += [f"{kind}: {count} (left alone)" for kind, count in sorted(report.other.items())]
    if not report.dry_run:
        lines.append(f"conflicts (changed meanwhile, left alone): {report.conflicts}")
    lines += [f"failed: {count}: {reason}" for reason, count in sorted(report.failed.items())]
    if report.dry_run:
        if report.estimated_seconds is None:
            lines.append("estimated duration: nothing to time")
        else:
            lines.append(
                f"estimated duration: {report.estimated_seconds:.1f} s on {report.workers} "
                f"workers ({report.cpu_seconds_per_upgrade:.4f} CPU s per upgrade)"
            )
    else:
        info(f"done in {report.seconds:.1f} s on {report.workers} workers")
    for line in lines:
        click.echo(line)
