"""``twocats upgrade-db``: raise the cost of every TwoCats hash in a database table, on Dask.

A thin skin over :func:`twocats.bulk.upgrade_table`; the target is given as for ``twocats
upgrade`` and read as :class:`twocats.password.Target` says (``--mem-cost N`` alone, or an exact
set).  The module imports SQLAlchemy and Dask only when the command runs.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from twocats._extras import MissingExtraError
from twocats.bulk.limits import DEFAULT_BATCH_SIZE, MAX_BATCH_SIZE
from twocats.cli._common import (
    EXIT_ATTENTION,
    ProgressLines,
    UsageFailure,
    backend_option,
    emit_json,
    info,
    json_option,
    progress_wanted,
)
from twocats.cli._options import SIZE, build_target, params_options

if TYPE_CHECKING:
    from distributed import Security

    from twocats.bulk import BulkReport

#: The environment variable that can hold DATABASE_URL, to keep a database password out of argv.
URL_ENV = "TWOCATS_DATABASE_URL"

#: Exit status of a run aborted midway (the database was lost); the partial counts are printed.
EXIT_ABORTED = 3

_TLS_FILE = click.Path(exists=True, dir_okay=False, readable=True)


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
    type=click.IntRange(1, MAX_BATCH_SIZE),
    default=DEFAULT_BATCH_SIZE,
    show_default=True,
    help="Rows read at a time, and the most rows upgraded and written back in one transaction "
    "(a batch is about 3 s of the workers' work at the target cost, measured as the job runs, "
    "so that a stop or a crash loses little).",
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
    help="Run on an existing Dask cluster, e.g. tls://10.0.0.5:8786, instead of a local one "
    "(use TLS: see --tls-ca-file).",
)
@click.option(
    "--tls-ca-file",
    type=_TLS_FILE,
    default=None,
    help="With --scheduler tls://...: the CA certificate the cluster's certificates are signed "
    "with (PEM). Give --tls-cert and --tls-key too, or none of the three to use the "
    "distributed.comm.tls section of Dask's configuration.",
)
@click.option(
    "--tls-cert",
    type=_TLS_FILE,
    default=None,
    help="With --scheduler: this client's certificate (PEM), signed by the CA.",
)
@click.option(
    "--tls-key",
    type=_TLS_FILE,
    default=None,
    help="With --scheduler: the private key of --tls-cert (PEM, readable by this user only).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Only count the rows by kind, and estimate the duration: the workers are started and "
    "a few upgrades timed on them; nothing is written.",
)
@click.option(
    "--max-memory",
    type=SIZE,
    default=None,
    help="Refuse stored hashes asking for more memory than this, e.g. 4GiB: they are counted as "
    "failed, never computed (default: twice the target's memory, and at most half of what "
    "the machine can give). Each upgrade uses the target's memory.",
)
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
    tls_ca_file: str | None,
    tls_cert: str | None,
    tls_key: str | None,
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

    The local Dask cluster started for the job speaks TLS with credentials made for this run
    alone, and its workers get neither the database URL nor $TWOCATS_DATABASE_URL: they only see
    hash strings. Every result is checked, and a few per batch computed again, before anything is
    written; a batch with a wrong result is not written and is counted as failed. With
    --scheduler, give a tls:// address and --tls-ca-file, --tls-cert and --tls-key (or Dask's
    distributed.comm.tls configuration): a tcp:// cluster is open to anyone who reaches it.

    Exit status: 0 done, every TwoCats hash within reach at the target (with --dry-run: can be
    raised to it); 1 done, but some rows failed, need the password, changed meanwhile or have a
    NULL key, which no update can name (the report says which); 2 bad input, or refused before
    anything was written; 3 aborted midway (the database or the Dask cluster was lost): the
    counts up to then are printed, every row holds its old or its new value, and a rerun
    finishes the job; 130 or 143 stopped by SIGINT (Ctrl-C) or SIGTERM: the upgrades already
    made are written, the rest of the batches in flight dropped, one line says how many rows
    were written, and a rerun resumes.
    """
    # Nothing started from here on needs the variable; the job's workers must not inherit it.
    os.environ.pop(URL_ENV, None)
    if workers is not None and scheduler is not None:
        raise UsageFailure("--workers and --scheduler cannot be used together")
    target = build_target(options)
    try:
        from twocats.bulk import JobAbortedError, upgrade_table
    except MissingExtraError as error:
        # The error names the missing package, the bulk extra and how to install it.
        raise UsageFailure(f"upgrade-db: {error}") from None
    security = _scheduler_security(scheduler, tls_ca_file, tls_cert, tls_key)
    try:
        with _stop_on_signals() as (stop, received), _progress(dry_run=dry_run) as progress:
            report = upgrade_table(
                database_url,
                table,
                key_column=key_column,
                hash_column=hash_column,
                target=target.params,
                mem_cost=target.mem_cost if target.params is None else None,
                scheduler=scheduler,
                security=security,
                workers=workers,
                batch_size=batch_size,
                dry_run=dry_run,
                max_memory=max_memory,
                backend=backend,
                progress=progress,
                stop=stop,
            )
    except JobAbortedError as aborted:
        _emit(aborted.report, as_json=as_json)
        info(
            f"Error: aborted midway: {aborted.report.aborted}; the counts are those up to then, "
            "every row holds its old or its new value, and a rerun finishes the job"
        )
        raise click.exceptions.Exit(EXIT_ABORTED) from None
    if report.stopped:
        _stopped(report, received[0], as_json=as_json)
    _emit(report, as_json=as_json)
    if report.attention:
        info(
            f"exit status {EXIT_ATTENTION}: {report.attention} rows are not at the target "
            "(see above)"
        )
        raise click.exceptions.Exit(EXIT_ATTENTION)


@contextmanager
def _stop_on_signals() -> Iterator[tuple[threading.Event, list[int]]]:
    """Turn SIGINT and SIGTERM into a request to stop while the block runs.

    Yields the event the job watches and the list of the signals received, in order.
    """
    stop = threading.Event()
    received: list[int] = []

    def request_stop(signum: int, frame: object) -> None:
        received.append(signum)
        stop.set()

    previous = {
        signum: signal.signal(signum, request_stop) for signum in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        yield stop, received
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _stopped(report: BulkReport, signum: int, *, as_json: bool) -> None:
    """Say what a job stopped by the signal `signum` did, and exit with 128 + `signum`."""
    if as_json:
        emit_json(report.document())
    name = signal.Signals(signum).name
    info(
        f"stopped by {name}: {report.upgraded} rows written ({report.written_at_stop} of them "
        "upgraded in the batches in flight), every other row unchanged; a rerun resumes where "
        "this one stopped"
    )
    raise click.exceptions.Exit(128 + signum)


def _scheduler_security(
    scheduler: str | None, ca_file: str | None, cert: str | None, key: str | None
) -> Security | None:
    """Return the TLS credentials given for --scheduler (None: Dask's configuration's)."""
    given = [name for name, path in (("ca-file", ca_file), ("cert", cert), ("key", key)) if path]
    if given and scheduler is None:
        raise UsageFailure("--tls-ca-file, --tls-cert and --tls-key go with --scheduler")
    if given and len(given) < 3:
        raise UsageFailure("give all of --tls-ca-file, --tls-cert and --tls-key, or none")
    if scheduler is not None and not scheduler.startswith("tls://"):
        info(
            f"warning: --scheduler {scheduler} is not TLS: any process that reaches it can read "
            "the hashes and run code on its workers (every result is still checked before it "
            "is written)"
        )
    if not given:
        return None
    from twocats.bulk.credentials import client_security

    return client_security(str(ca_file), str(cert), str(key))


def _emit(report: BulkReport, *, as_json: bool) -> None:
    """Write the report on standard output, as JSON or as lines of text."""
    if as_json:
        emit_json(report.document())
    else:
        _print_report(report)


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
    from twocats.bulk import FAILURE_REASONS
    from twocats.password import describe_differences

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
    if report.no_key:
        lines.append(
            f"no key: {report.no_key} (rows whose key is NULL, which no update can name: "
            "neither read nor written)"
        )
    lines += [
        f"failed: {count}: {reason} ({FAILURE_REASONS.get(reason, reason)})"
        for reason, count in sorted(report.failed.items())
    ]
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
    elif report.aborted is None and report.workers:
        info(f"done in {report.seconds:.1f} s on {report.workers} workers")
    elif report.aborted is None:
        info(f"done in {report.seconds:.1f} s: nothing to upgrade, no worker started")
    for line in lines:
        click.echo(line)
