"""The bulk upgrade job: survey the table, then upgrade it batch by batch on Dask workers.

The job reads the table twice, both times in key order with keyset pages:

1. The survey counts the rows by kind (see :mod:`twocats.bulk.rows`; the target is read as
   :class:`twocats.password.Target` says).  A dry run then starts the workers as the run would,
   times a few upgrades on them, and estimates the run's duration with these fixed costs included.
2. The run judges each page again (rows may have changed since the survey), sends the rows to
   upgrade to the workers in batches of a few seconds of their work (:mod:`twocats.bulk.pace`),
   each batch as a few tasks per worker, and writes each batch's results back in one transaction
   with compare-and-swap (:meth:`twocats.bulk.table.StoredHashTable.swap`).  At most
   :data:`PAGES_IN_FLIGHT` batches are between sending and writing at any time, so the memory of
   this process does not grow with the table, and progress counts rows as their tasks finish.

Nothing a worker returns is written unchecked (:mod:`twocats.bulk.checks`): a result that is not
the stored hash's upgrade, or a recomputed one that differs, refuses its whole batch.

The job is idempotent: a rerun after a crash or a kill at any point finds the upgraded rows at the
target and skips them.  A database or cluster lost mid-run raises :class:`JobAbortedError` with
the counts so far.  A job asked to stop (its ``stop`` event set, as ``twocats upgrade-db`` does on
SIGINT and SIGTERM) writes the rows of the batches in flight whose tasks have finished (checked
as ever), cancels the other tasks, shuts its cluster down and returns its counts with ``stopped``
set: a stop loses at most the unfinished tasks, a crash the batches in flight.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from twocats._extras import missing_extra

try:
    from sqlalchemy import exc as sa_exc
except ImportError as error:
    raise missing_extra(__name__, error, "bulk") from None

from twocats.bulk import reasons
from twocats.bulk import rows as kinds
from twocats.bulk.checks import is_upgrade_of, recomputed_equal
from twocats.bulk.limits import DEFAULT_BATCH_SIZE, MAX_BATCH_SIZE
from twocats.bulk.pace import Pace
from twocats.bulk.rows import Verdict, judge
from twocats.bulk.table import AmbiguousKeyError, StoredHashTable, open_table
from twocats.bulk.workers import UpgradePlugin, Workers, open_workers, upgrade_chunk
from twocats.exceptions import DatabaseError, InvalidParametersError, TwoCatsError
from twocats.params import Params
from twocats.password import MAX_HASHERS, Difference, Target, Upgraders, count_differences

if TYPE_CHECKING:
    from distributed import Client, Future, Security

    from twocats.password import PasswordHasher

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "MAX_BATCH_SIZE",
    "PAGES_IN_FLIGHT",
    "BulkReport",
    "DatabaseError",
    "JobAbortedError",
    "upgrade_table",
]

#: Batches sent but not yet written back, at most: enough to keep the workers busy while this
#: process checks and writes one batch and reads the next.
PAGES_IN_FLIGHT: Final = 2

#: Upgrades timed on the workers for a dry run's estimate, at most.
SAMPLE_ROWS: Final = 8

#: Called as rows are done (read and skipped, or their upgrade's task finished) with (rows done,
#: rows in the table at the survey), at least every STOP_POLL_SECONDS while the job waits.
Progress = Callable[[int, int], None]

#: Seconds between two looks at the stop event while the workers' results are awaited.
STOP_POLL_SECONDS: Final = 0.1


@dataclass
class BulkReport:
    """The counts of a bulk upgrade (or of a dry run's survey).

    ``current`` counts the rows at or above the target; ``needs_password`` the rows that differ
    from a full target in other parameters, and ``needs_password_by`` the same rows by their
    differences (see :func:`twocats.password.count_differences`);
    ``other`` counts the untouched values by kind (argon2, bcrypt, pbkdf2, scrypt, empty,
    malformed); ``failed`` counts the rows that could not be upgraded, by reason (the keys of
    :data:`twocats.bulk.reasons.FAILURE_REASONS`).  ``no_key`` counts the rows whose key is NULL,
    which no update can name: they are neither read nor written, and are not in ``rows``.
    ``aborted`` says why a run stopped early; ``stopped`` is True when the job was asked to stop
    (the counts are those up to then, and a rerun resumes), and ``written_at_stop`` counts the
    rows of the batches in flight then that were written, their tasks having finished (they are
    in ``upgraded`` too).
    """

    dry_run: bool
    target: str = ""
    rows: int = 0
    to_upgrade: int = 0
    upgraded: int = 0
    current: int = 0
    needs_password: int = 0
    needs_password_by: dict[tuple[Difference, ...], int] = field(default_factory=dict)
    conflicts: int = 0
    no_key: int = 0
    other: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)
    workers: int = 0
    seconds: float = 0.0
    startup_seconds: float | None = None
    seconds_per_upgrade: float | None = None
    estimated_seconds: float | None = None
    aborted: str | None = None
    stopped: bool = False
    written_at_stop: int = 0

    @property
    def failures(self) -> int:
        """The number of rows that failed."""
        return sum(self.failed.values())

    @property
    def attention(self) -> int:
        """The rows that may be left below the target: failed, needing the password, changed
        meanwhile, or with a NULL key."""
        return self.failures + self.needs_password + self.conflicts + self.no_key

    def document(self) -> dict[str, Any]:
        """The report as a JSON-ready dict."""
        document = {
            name: getattr(self, name)
            for name in (
                "dry_run",
                "target",
                "rows",
                "to_upgrade",
                "upgraded",
                "current",
                "needs_password",
                "conflicts",
                "no_key",
                "other",
                "failed",
                "workers",
                "seconds",
            )
        }
        document["needs_password_by"] = [
            {
                "rows": count,
                "differences": [
                    {"parameter": item.name, "stored": item.stored, "target": item.target}
                    for item in differences
                ],
            }
            for differences, count in self.needs_password_by.items()
        ]
        if self.dry_run:
            for name in ("startup_seconds", "seconds_per_upgrade", "estimated_seconds"):
                document[name] = getattr(self, name)
        document["aborted"] = self.aborted
        document["stopped"] = self.stopped
        if self.stopped:
            document["written_at_stop"] = self.written_at_stop
        return document

    def _count(self, verdict: Verdict) -> None:
        """Count one judged row, except those to upgrade (counted when their result is in)."""
        self.rows += 1
        if verdict.kind == kinds.CURRENT:
            self.current += 1
        elif verdict.kind == kinds.NEEDS_PASSWORD:
            self.needs_password += 1
            count_differences(self.needs_password_by, verdict.differences)
        elif verdict.kind == kinds.REFUSED:
            self._fail(verdict.reason or reasons.UPGRADE_FAILED, 1)
        elif verdict.kind != kinds.UPGRADE:
            self.other[verdict.kind] = self.other.get(verdict.kind, 0) + 1

    def _fail(self, reason: str, count: int) -> None:
        self.failed[reason] = self.failed.get(reason, 0) + count


class JobAbortedError(DatabaseError):
    """The database, or the Dask cluster, was lost mid-run; :attr:`report` holds the counts.

    Every row holds its old value or its new one, and a rerun finishes the job.
    """

    def __init__(self, report: BulkReport) -> None:
        super().__init__(report.aborted)
        self.report = report


class _StoppedError(TwoCatsError):
    """The job's stop event was set: nothing more is read, computed or written."""

    def __init__(self) -> None:
        super().__init__("the job was asked to stop")


def _check_stop(stop: threading.Event | None) -> None:
    """Raise :class:`_StoppedError` if `stop` is set."""
    if stop is not None and stop.is_set():
        raise _StoppedError


class _ClusterLostError(TwoCatsError):
    """The job's Dask client was closed: no later page can be upgraded."""

    def __init__(self) -> None:
        super().__init__("the Dask cluster went away")


# One row to upgrade: (key, value as read, verdict).
_Row = tuple[Any, str, Verdict]


@dataclass
class _Batch:
    """A batch between sending and writing: its rows, and one future per task of them."""

    rows: list[_Row]
    futures: list[Future[Any]]
    #: The rows of each task, in the order of `futures`.
    sizes: list[int]
    #: When it was sent, on the job's clock.
    sent: float

    def finished_rows(self) -> int:
        """The rows of its tasks that have finished."""
        pairs = zip(self.futures, self.sizes, strict=True)
        return sum(size for future, size in pairs if future.done())

    def finished_part(self) -> _Batch:
        """The batch of its tasks that finished with a result, and of their rows."""
        rows: list[_Row] = []
        futures: list[Future[Any]] = []
        sizes: list[int] = []
        start = 0
        for future, size in zip(self.futures, self.sizes, strict=True):
            if future.status == "finished":
                rows += self.rows[start : start + size]
                futures.append(future)
                sizes.append(size)
            start += size
        return _Batch(rows, futures, sizes, self.sent)


def _check_arguments(
    batch_size: int, client: Client | None, scheduler: str | None, workers: int | None
) -> None:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int):
        raise InvalidParametersError("batch_size must be an integer")
    if not 1 <= batch_size <= MAX_BATCH_SIZE:
        raise InvalidParametersError(f"batch_size must be from 1 to {MAX_BATCH_SIZE}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)):
        raise InvalidParametersError("workers must be an integer")
    if workers is not None and workers < 1:
        raise InvalidParametersError("workers must be at least 1")
    if sum(given is not None for given in (client, scheduler, workers)) > 1:
        raise InvalidParametersError("give at most one of client, scheduler and workers")


def _judged(
    table: StoredHashTable, upgraders: Upgraders, batch_size: int, stop: threading.Event | None
) -> Iterator[list[tuple[Any, Any, Verdict]]]:
    """Yield each page's rows with their verdicts; stop before a page if `stop` is set."""
    try:
        for page in table.pages(batch_size):
            _check_stop(stop)
            yield [(key, value, judge(value, upgraders)) for key, value in page]
    except sa_exc.SQLAlchemyError as error:
        raise DatabaseError(f"reading the table failed: {table.error_text(error)}") from None


def _null_keys(table: StoredHashTable) -> int:
    """Return the number of rows of `table` whose key is NULL."""
    try:
        return table.null_keys()
    except sa_exc.SQLAlchemyError as error:
        raise DatabaseError(f"reading the table failed: {table.error_text(error)}") from None


@dataclass
class _Survey:
    """What the survey found besides the counts: a sample to time, the families to warm up."""

    sample: list[str] = field(default_factory=list)
    families: dict[Params, None] = field(default_factory=dict)


def _survey(
    table: StoredHashTable,
    upgraders: Upgraders,
    batch_size: int,
    report: BulkReport,
    stop: threading.Event | None,
) -> _Survey:
    """Count the table's rows by kind into `report`; return a sample and the families found."""
    found = _Survey()
    for page in _judged(table, upgraders, batch_size, stop):
        for _, _, verdict in page:
            report._count(verdict)
            if verdict.kind != kinds.UPGRADE or verdict.stored is None:
                continue
            report.to_upgrade += 1
            if len(found.sample) < SAMPLE_ROWS:
                found.sample.append(verdict.stored.phc)
            if verdict.upgrader is not None and len(found.families) < MAX_HASHERS:
                found.families[verdict.upgrader] = None
    return found


def _submit(
    workers: Workers, plugin_name: str, hashes: list[str], chunk: int | None = None
) -> list[Future[Any]]:
    """Send the PHC strings to upgrade to the workers, `chunk` per task (default: one task per
    worker)."""
    size = chunk or max(1, -(-len(hashes) // workers.count))
    try:
        return [
            workers.client.submit(
                upgrade_chunk, plugin_name, hashes[start : start + size], pure=False
            )
            for start in range(0, len(hashes), size)
        ]
    except Exception:
        if workers.client.status != "running":
            raise _ClusterLostError from None
        raise


def _send(workers: Workers, plugin_name: str, rows: list[_Row], chunk: int) -> _Batch:
    """Send a batch of rows to upgrade, `chunk` rows per task."""
    hashes = [verdict.stored.phc for _, _, verdict in rows if verdict.stored is not None]
    futures = _submit(workers, plugin_name, hashes, chunk)
    sizes = [len(hashes[start : start + chunk]) for start in range(0, len(hashes), chunk)]
    return _Batch(rows, futures, sizes, time.perf_counter())


def _checked(
    rows: list[_Row], results: object, upgraders: Upgraders, workers: Sequence[str] = ()
) -> tuple[list[tuple[Any, str, str]], int] | None:
    """Return a page's changes to write and its rows the workers could not upgrade.

    Returns None if any result is not the upgrade of its row's hash, or a recomputed one differs
    (one of each worker's, ``workers`` naming the worker of each row, is recomputed).
    """
    if not isinstance(results, list) or len(results) != len(rows):
        return None
    changes: list[tuple[Any, str, str]] = []
    upgrades: list[tuple[PasswordHasher, str, str]] = []
    upgraded_by: list[str] = []
    failed = 0
    for index, ((key, old, verdict), result) in enumerate(zip(rows, results, strict=True)):
        new = result[0] if isinstance(result, tuple) and len(result) == 2 else False
        if new is None:
            failed += 1
            continue
        target = verdict.upgrader
        if verdict.stored is None or verdict.decoded is None or target is None:
            return None
        if not is_upgrade_of(new, verdict.decoded, target.mem_cost):
            return None
        changes.append((key, old, verdict.stored.with_phc(new)))
        upgrades.append((upgraders(target), verdict.stored.phc, new))
        upgraded_by.append(workers[index] if index < len(workers) else "")
    if not recomputed_equal(upgrades, upgraded_by):
        return None
    return changes, failed


def _await(
    futures: list[Future[Any]], stop: threading.Event | None, tick: Callable[[], None]
) -> None:
    """Wait until every one of `futures` is done, calling `tick` as each finishes and at least
    every :data:`STOP_POLL_SECONDS`; raise :class:`_StoppedError` once `stop` is set."""
    news = threading.Event()
    for future in futures:
        # Dask calls it in a thread of its own.
        future.add_done_callback(lambda _: news.set())
    while True:
        _check_stop(stop)
        tick()
        if all(future.done() for future in futures):
            return
        news.wait(STOP_POLL_SECONDS)
        news.clear()


def _row_workers(workers: Workers, batch: _Batch) -> list[str]:
    """The worker that holds each row's result, as the scheduler records it ("" if unknown)."""
    try:
        holders = workers.client.who_has(batch.futures)
    except Exception:
        return []
    row_workers: list[str] = []
    for future, size in zip(batch.futures, batch.sizes, strict=True):
        held = holders.get(future.key) or ("",)
        row_workers += [str(held[0])] * size
    return row_workers


def _write(
    workers: Workers,
    batch: _Batch,
    table: StoredHashTable,
    upgraders: Upgraders,
    report: BulkReport,
) -> None:
    """Collect a batch's upgrades, check them, and write them back in one transaction."""
    try:
        results = [result for chunk in workers.client.gather(batch.futures) for result in chunk]
    except Exception:
        # A worker died or the cluster went away: nothing of this batch was written.
        report._fail(reasons.WORKER_FAILED, len(batch.rows))
        if workers.client.status != "running":
            raise _ClusterLostError from None
        return
    checked = _checked(batch.rows, results, upgraders, _row_workers(workers, batch))
    if checked is None:
        report._fail(reasons.RESULT_REFUSED, len(batch.rows))
        return
    changes, failed = checked
    if failed:
        report._fail(reasons.UPGRADE_FAILED, failed)
    try:
        conflicts = table.swap(changes)
    except AmbiguousKeyError:
        report._fail(reasons.KEY_NOT_UNIQUE, len(changes))
        return
    except sa_exc.SQLAlchemyError as error:
        raise DatabaseError(f"writing a batch failed: {table.error_text(error)}") from None
    report.conflicts += conflicts
    report.upgraded += len(changes) - conflicts


def _start(workers: Workers, upgraders: Upgraders, families: dict[Params, None]) -> str:
    """Register the upgrade plugin on `workers` (building and warming up hashers); its name."""
    plugin = UpgradePlugin(
        upgraders.target,
        families=tuple(families),
        max_memory=upgraders.limits.max_memory,
        max_work=upgraders.limits.max_work,
        backend=upgraders.backend,
        fill_threads=workers.fill_threads,
    )
    workers.client.register_plugin(plugin, name=plugin.name)
    return plugin.name


def _estimate(
    workers: Workers, plugin_name: str, sample: list[str], report: BulkReport, survey: float
) -> None:
    """Time `sample` upgraded on `workers`; estimate the run's duration into `report`.

    The estimate adds the workers' start (``report.startup_seconds``), the upgrades, and the
    table read twice (`survey` seconds each: the run's survey and the run itself).
    """
    started = time.perf_counter()
    workers.client.gather(_submit(workers, plugin_name, sample))
    rounds = -(-len(sample) // workers.count)
    report.seconds_per_upgrade = (time.perf_counter() - started) / max(1, rounds)
    upgrades = report.seconds_per_upgrade * -(-report.to_upgrade // workers.count)
    report.estimated_seconds = 2 * survey + (report.startup_seconds or 0.0) + upgrades


def _batches(
    table: StoredHashTable,
    upgraders: Upgraders,
    batch_size: int,
    report: BulkReport,
    stop: threading.Event | None,
    pace: Pace,
) -> Iterator[tuple[int, list[_Row]]]:
    """Read the table and yield (rows skipped since the last batch, the next batch of rows to
    upgrade), each batch of the size `pace` gives when it is cut; every row is counted into
    `report`."""
    queue: list[_Row] = []
    skipped = 0
    # None after the last page: whatever is left goes, however few.
    for judged in itertools.chain(_judged(table, upgraders, batch_size, stop), [None]):
        for key, value, verdict in judged or ():
            report._count(verdict)
            if verdict.kind == kinds.UPGRADE:
                report.to_upgrade += 1
                queue.append((key, value, verdict))
            else:
                skipped += 1
        while queue and (judged is None or len(queue) >= pace.size()):
            size = pace.size()
            yield skipped, queue[:size]
            del queue[:size]
            skipped = 0
    if skipped:
        yield skipped, []


def _run(
    table: StoredHashTable,
    upgraders: Upgraders,
    workers: Workers,
    plugin_name: str,
    batch_size: int,
    report: BulkReport,
    progress: Progress | None,
    total: int,
    stop: threading.Event | None,
) -> None:
    """Upgrade the table on `workers`, counting every row into `report`.

    If `stop` is set, the rows of the batches in flight whose tasks finished are written, the
    other tasks cancelled, and :class:`_StoppedError` raised.
    """
    pace = Pace(workers.count, batch_size)
    pending: collections.deque[_Batch] = collections.deque()
    # Rows skipped, or in batches written (or failed).
    done = 0

    def tell() -> None:
        if progress is not None:
            now = done + sum(batch.finished_rows() for batch in pending)
            progress(now, max(total, now))

    def finish_oldest() -> None:
        nonlocal done
        batch = pending[0]
        _await(batch.futures, stop, tell)
        pace.finished(len(batch.rows), batch.sent, time.perf_counter())
        _write(workers, batch, table, upgraders, report)
        pending.popleft()
        done += len(batch.rows)

    tell()
    try:
        for skipped, rows in _batches(table, upgraders, batch_size, report, stop, pace):
            done += skipped
            if rows:
                pending.append(_send(workers, plugin_name, rows, pace.chunk(len(rows))))
            tell()
            while len(pending) >= PAGES_IN_FLIGHT:
                finish_oldest()
        while pending:
            finish_oldest()
        tell()
    except _StoppedError:
        # The upgrades already made are kept; the rows of unfinished tasks keep their old values,
        # and a rerun upgrades them.
        before = report.upgraded
        for batch in pending:
            part = batch.finished_part()
            if part.rows:
                _write(workers, part, table, upgraders, report)
        report.written_at_stop = report.upgraded - before
        workers.client.cancel([future for batch in pending for future in batch.futures])
        raise


def upgrade_table(
    url: str,
    table: str,
    *,
    key_column: str,
    hash_column: str,
    target: Params | None = None,
    mem_cost: int | None = None,
    client: Client | None = None,
    scheduler: str | None = None,
    security: Security | None = None,
    workers: int | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    dry_run: bool = False,
    max_memory: int | None = None,
    backend: str | None = None,
    progress: Progress | None = None,
    stop: threading.Event | None = None,
) -> BulkReport:
    """Raise every upgradable TwoCats hash in a database table to a target, without passwords.

    Give the target as `mem_cost` alone (each stored hash's own parameters at that memory cost:
    every hash below it is raised) or as `target`, a full parameter set (hashes that differ from
    it in other parameters than the memory cost need the password and are only counted, by
    parameter); see :class:`twocats.password.Target`.  Rows at or above the target's memory cost are
    counted as current.

    :param url: an SQLAlchemy database URL (``sqlite:///users.db``; ``postgresql://`` uses
        psycopg 3).
    :param table: the table; `key_column` must be its primary key or a unique key, `hash_column`
        a text column of bare PHC strings or prefixed ones (Django's ``twocats$``).
    :param client: a Dask client to run on; or `scheduler`, the address of a cluster to connect
        to (with the TLS credentials of `security`, or else of Dask's configuration); or
        `workers`, the number of processes of a new local cluster (default: one per usable
        core), which only this job can use.
    :param batch_size: rows per page read, and the most rows in a batch: a batch holds a few
        seconds of the workers' work (:mod:`twocats.bulk.pace`) and is written back in one
        transaction.
    :param dry_run: only count the rows by kind and estimate the duration, from the workers'
        start (timed) and a few upgrades timed on them; nothing is written.
    :param max_memory: the hashers' memory limit (see :class:`~twocats.PasswordHasher`); stored
        hashes over its memory or work limits are counted as failed, never computed.
    :param progress: called as rows are done with (rows done, rows in the table).
    :param stop: once set (from a signal handler, say), the job stops within
        :data:`STOP_POLL_SECONDS` of a page boundary or of waiting for the workers: the rows of
        the batches in flight whose tasks finished are checked and written, the other tasks are
        cancelled, the cluster is shut down, and the report is returned with ``stopped`` set.
        Every row holds its old value or its new one, and a rerun resumes.

    Raises :class:`~twocats.exceptions.InvalidParametersError` for bad input (the target, the
    table, its columns, an unreachable database or cluster) before anything is written, and
    :class:`JobAbortedError` (a :class:`DatabaseError`) with the counts so far if the database or
    the cluster is lost during the run.
    """
    _check_arguments(batch_size, client, scheduler, workers)
    if mem_cost is not None and target is None:
        wanted = Target.memory(mem_cost)
    elif target is not None and mem_cost is None:
        wanted = Target.exactly(target)
    else:
        raise InvalidParametersError("give the target as exactly one of target and mem_cost")
    upgraders = Upgraders(wanted, max_memory=max_memory, backend=backend)
    if wanted.params is not None:
        # A target this machine cannot run is refused before the table is read.
        upgraders(wanted.params)
    started = time.perf_counter()
    survey = BulkReport(dry_run=True, target=str(wanted))
    report = survey
    stored = open_table(url, table, key_column, hash_column)
    try:
        survey.no_key = _null_keys(stored)
        found = _survey(stored, upgraders, batch_size, survey, stop)
        surveyed = time.perf_counter()
        if dry_run or survey.to_upgrade == 0:
            report = dataclasses.replace(survey, dry_run=dry_run)
        else:
            # The run counts every row again: rows may have changed since the survey.
            report = BulkReport(dry_run=False, target=str(wanted), no_key=survey.no_key)
        if survey.to_upgrade:
            with open_workers(
                client, scheduler=scheduler, security=security, workers=workers
            ) as pool:
                report.workers = pool.count
                _check_stop(stop)
                plugin_name = _start(pool, upgraders, found.families)
                _check_stop(stop)
                if dry_run:
                    report.startup_seconds = time.perf_counter() - surveyed
                    _estimate(pool, plugin_name, found.sample, report, surveyed - started)
                else:
                    _run(
                        stored, upgraders, pool, plugin_name, batch_size, report, progress,
                        survey.rows, stop,
                    )  # fmt: skip
    except _StoppedError:
        report = dataclasses.replace(report, dry_run=dry_run, stopped=True)
    except (DatabaseError, _ClusterLostError) as error:
        report = dataclasses.replace(report, dry_run=dry_run, aborted=str(error))
        report.seconds = time.perf_counter() - started
        raise JobAbortedError(report) from None
    finally:
        stored.close()
    report.seconds = time.perf_counter() - started
    return report
