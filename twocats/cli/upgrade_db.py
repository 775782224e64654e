"""``twocats upgrade-db``: raise the cost of every TwoCats hash in a database table, on Dask.

A thin skin over :func:`twocats.bulk.upgrade_table`; the target is given as for ``twocats
upgrade`` and read as :mod:`twocats.target` says (``--mem-cost N`` alone, or an exact set).  The
module imports SQLAlchemy and Dask only when the command runs.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from twocats._extras import install_hint
from twocats.cli._common import (
    EXIT_ATTENTION,
    ProgressLines,
    UsageFailure,
    emit_json,
    info,
    progress_wanted,
)
from twocats.cli._options import (
    backend_option,
    build_target,
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
    help="Only count the rows by kind, and estimate the duration: the workers are started and "
    "a few upgrades timed on them; nothing is written.",
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

    --mem-cost N alone raises each hash to memory cost N and keeps its other parameters;
    --profile, --params or any other parameter option names the exact target set (default: the
    default profile), and hashes that differ from it in other parameters need the password.
    The passwords are never needed for what is upgraded: only memory costs rise.

    DATABASE_URL is an SQLAlchemy URL such as sqlite:///users.db or postgresql://user@host/db
    (or set $TWOCATS_DATABASE_URL, which keeps a database password out of the command line).
    Values may be bare PHC strings or carry a framework prefix such as Django's 'twocats$', which
    is kept. Other algorithms, empty and malformed values are left alone and counted; rows at or
    above the target are skipped, so a rerun after an interruption finishes the job. Rows changed
    while the job runs are never overwritten (they are counted as conflicts).  Rows that need
    the password are counted by the parameters that differ.

    Exit status: 0 every TwoCats hash that can be reached is at the target (or, with --dry-run,
    can be raised to it); 1 done, but some rows failed, need the password or changed meanwhile
    (the report says which); 2 bad input, refused before anything was done; 3 the run was
    aborted midway (rows are old or new; a rerun finishes).
    """
    if workers is not None and scheduler is not None:
        raise UsageFailure("--workers and --scheduler cannot be used together")
    target = build_target(options)
    try:
        from twocats.bulk import upgrade_table
    except ImportError as error:
        raise UsageFailure(
            f"upgrade-db needs the bulk extra ({install_hint('bulk')}): {error}"
        ) from None
    with _progress(dry_run=dry_run) as progress:
        report = upgrade_table(
            database_url,
            table,
            key_column=key_column,
            hash_column=hash_column,
            target=target.params,
            mem_cost=target.mem_cost if target.params is None else None,
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
    if report.attention:
        info(
            f"exit status {EXIT_ATTENTION}: {report.attention} rows are not at the target "
            "(see above)"
        )
        raise click.exceptions.Exit(EXIT_ATTENTION)


@contextmanager
def _progress(*, dry_run: bool) -> Iterator[Callable[[int, int], None] | None]:
    """Yield the progress callback: a bar on a terminal, else a line now and then."""
    if dry_run:
        yield None
    elif progress_wanted():
        with _progress_bar() as update:
            yield update
    else:
        yield _progress_lines()


def _progress_lines() -> Callable[[int, int], None]:
    """Return a progress callback writing a line with rows/s and time left, now and then."""
    started = time.perf_counter()
    lines = ProgressLines()

    def update(done: int, total: int) -> None:
        seconds = time.perf_counter() - started
        rate = done / seconds if seconds > 0 else 0.0
        left = f", about {(total - done) / rate:.0f} s left" if rate > 0 else ""
        lines(f"upgrading: {done}/{total} rows, {rate:.0f} rows/s{left}")

    return update


@contextmanager
def _progress_bar() -> Iterator[Callable[[int, int], None]]:
    """Yield a progress callback drawing a bar with rows/s and ETA on standard error."""
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
    from twocats.target import describe_differences

    lines = [f"target: {report.target}", f"rows: {report.rows}"]
    if report.dry_run:
        lines.append(f"to upgrade: {report.to_upgrade}")
    else:
        lines.append(f"upgraded: {report.upgraded}")
    lines += [
        f"at or above the target: {report.current}",
        f"need the password: {report.needs_password}",
    ]
    for differences, count in report.needs_password_by.items():
        lines.append(
            f"  {count} rows differ in {describe_differences(differences)}: they need the "
            "password; they will be rehashed at the next login. To raise only their memory, "
            "run with --mem-cost alone."
        )
    lines += [f"{kind}: {count} (left alone)" for kind, count in sorted(report.other.items())]
    if not report.dry_run:
        lines.append(f"conflicts (changed meanwhile, left alone; rerun): {report.conflicts}")
    lines += [f"failed: {count}: {reason}" for reason, count in sorted(report.failed.items())]
    if report.rows == sum(report.other.values()):
        lines.append("no TwoCats hashes in the table: nothing to upgrade")
    if report.dry_run:
        if report.estimated_seconds is None:
            lines.append("estimated duration: nothing to upgrade")
        else:
            lines.append(
                f"estimated duration: {report.estimated_seconds:.1f} s on {report.workers} "
                f"workers ({report.startup_seconds:.1f} s to start them and load the kernels, "
                f"{report.seconds_per_upgrade:.4f} s per upgrade on a worker)"
            )
    elif report.workers:
        info(f"done in {report.seconds:.1f} s on {report.workers} workers")
    else:
        info(f"done in {report.seconds:.1f} s: nothing to upgrade, no worker started")
    for line in lines:
        click.echo(line)
