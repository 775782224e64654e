"""Bulk upgrade of a database table on Dask, against a bare loop of PasswordHasher.upgrade.

``python -m bench bulk [--rows N] [--memory-rows N] [--out DIR] [--smoke]`` stores ``--rows``
hashes (default 20,000) in a table, and times in one run, side by side:

* a bare loop of :meth:`twocats.PasswordHasher.upgrade` over the same hashes in this process
  (timed at the start and again at the end; the mean of the two is the peer);
* :func:`twocats.bulk.upgrade_table` on SQLite and on PostgreSQL (a server started for the run,
  as the tests start it), with a local Dask cluster of 1 and of 2 worker processes (started
  before the timing: a cluster's start-up is not the job's).

Every job's table is checked to hold exactly the bare loop's outputs.  Goals: 2 workers at
least 1.8 times as fast as 1, and 1 worker within 15% of the bare loop (database and Dask
overhead), i.e. at least 0.87 times its speed, in wall-clock time and in CPU seconds (those of
every process of the job: this one, the workers and the PostgreSQL server), which other jobs on
a shared machine do not change.  Then the peak memory (maximum resident set) of a
fresh process making a dry run over a 10,000-row and a ``--memory-rows`` (default 1,000,000)
SQLite table shows that the client's memory does not grow with the table.

Each upgrade raises a 1 MiB hash with parallelism 1 to 8 MiB (about 2 ms of one core), so a hash
keeps one core busy and the job takes a few minutes.  The machine is shared: the load average
is recorded before and after each measure.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil
import sqlalchemy as sa
from distributed import Client, LocalCluster

from bench.harness import Report, load_average, load_text
from tests.support.pgserver import PostgresServer, find_bin_dir
from twocats._machine import usable_cpus
from twocats.bulk import upgrade_table
from twocats.bulk.table import database_url
from twocats.params import Params
from twocats.password import PasswordHasher
from twocats.perf.samples import Samples
from twocats.phc import encode_params
from twocats.profiles import CHEAPEST

__all__ = ["main", "run", "smoke"]

#: Goal: 2 workers over 1.
SCALING_GOAL = 1.8
#: Goal: 1 worker's speed over the bare loop's (within 15%: 1 / 1.15).
OVERHEAD_GOAL = 0.87

OLD = Params(mem_cost=10, parallelism=1)
TARGET = dataclasses.replace(OLD, mem_cost=13)
SMOKE_OLD = dataclasses.replace(CHEAPEST, mem_cost=3, start_mem_cost=3)
SMOKE_TARGET = dataclasses.replace(SMOKE_OLD, mem_cost=6)

BATCH_SIZE = 1000
INSERT_CHUNK = 50_000

# A fresh process that makes a dry run and prints its rows and its peak resident set (KiB).
_DRY_RUN = """
import resource, sys
from twocats.bulk import upgrade_table
from twocats.phc import decode_params
report = upgrade_table(sys.argv[1], "users", key_column="id", hash_column="password",
                       target=decode_params(sys.argv[2]), dry_run=True)
print(report.rows, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def _load() -> str:
    return load_text(load_average())


def _fill(url: str, hashes: Sequence[str], rows: int) -> None:
    """Create users(id, password) with `rows` rows, cycling through `hashes`."""
    engine = sa.create_engine(database_url(url))
    insert = sa.text("INSERT INTO users (id, password) VALUES (:id, :pw)")
    with engine.begin() as connection:
        connection.execute(
            sa.text("CREATE TABLE users (id INTEGER PRIMARY KEY, password VARCHAR(200))")
        )
        for start in range(0, rows, INSERT_CHUNK):
            stop = min(rows, start + INSERT_CHUNK)
            chunk = [{"id": key, "pw": hashes[key % len(hashes)]} for key in range(start, stop)]
            connection.execute(insert, chunk)
    engine.dispose()


def _values(url: str) -> list[str]:
    engine = sa.create_engine(database_url(url))
    with engine.connect() as connection:
        query = sa.text("SELECT password FROM users ORDER BY id")
        values = [row[0] for row in connection.execute(query)]
    engine.dispose()
    return values


class _Databases:
    """Fresh databases of each kind for each job: SQLite files, and PostgreSQL if it starts."""

    def __init__(self, directory: Path, postgres: PostgresServer | None) -> None:
        self.directory = directory
        self.postgres = postgres

    @property
    def kinds(self) -> list[str]:
        return ["sqlite", "postgresql"] if self.postgres else ["sqlite"]

    def new(self, kind: str) -> str:
        name = f"t_{uuid.uuid4().hex}"
        if kind == "sqlite":
            path = self.directory / f"{name}.db"
            path.touch()
            return f"sqlite:///{path}"
        assert self.postgres is not None
        admin = sa.create_engine(database_url(self.postgres.url), isolation_level="AUTOCOMMIT")
        with admin.connect() as connection:
            connection.execute(sa.text(f"CREATE DATABASE {name}"))
        admin.dispose()
        return self.postgres.database_url(name)


@contextmanager
def _postgres(notes: list[str]) -> Iterator[PostgresServer | None]:
    bin_dir = find_bin_dir()
    if bin_dir is None:
        notes.append("PostgreSQL is not installed: its rows are missing.")
        yield None
        return
    server = PostgresServer(bin_dir)
    try:
        server.start()
    except (OSError, subprocess.SubprocessError) as error:
        notes.append(f"PostgreSQL did not start ({error}): its rows are missing.")
        server.stop()
        yield None
        return
    try:
        yield server
    finally:
        server.stop()


def _server_cpu(server: PostgresServer | None) -> float:
    """Return the CPU seconds of the PostgreSQL server so far (with its exited backends)."""
    if server is None:
        return 0.0
    pid = int((server.data / "postmaster.pid").read_text().split()[0])
    postmaster = psutil.Process(pid)
    times = postmaster.cpu_times()
    total = times.user + times.system + times.children_user + times.children_system
    for child in postmaster.children():
        with contextlib.suppress(psutil.Error):
            child_times = child.cpu_times()
            total += child_times.user + child_times.system
    return total


def _cpu(client: Client, server: PostgresServer | None) -> float:
    """Return the CPU seconds so far of this process, `client`'s workers and the PostgreSQL server.

    The other cluster's idle workers are left out (each costs about 1% of a core); its idle
    scheduler, in this process, is not.
    """
    workers = sum(client.run(time.process_time).values())
    return time.process_time() + workers + _server_cpu(server)


def _bare_loop(hasher: PasswordHasher, hashes: Sequence[str]) -> tuple[float, float, list[str]]:
    """Return the wall and CPU seconds of upgrading `hashes` in a loop, and the outputs."""
    wall, cpu = time.perf_counter(), time.process_time()
    outputs = [hasher.upgrade(stored) for stored in hashes]
    return time.perf_counter() - wall, time.process_time() - cpu, outputs


def _job(url: str, client: Client, target: Params) -> Any:
    return upgrade_table(
        url, "users", key_column="id", hash_column="password", target=target, client=client,
        batch_size=BATCH_SIZE,
    )  # fmt: skip


def _peak_memory(url: str, target: Params) -> tuple[int, int]:
    """Return the rows and the peak resident set (bytes) of a dry run in a fresh process."""
    output = subprocess.run(
        [sys.executable, "-c", _DRY_RUN, url, encode_params(target)],
        check=True, capture_output=True, text=True, timeout=1800,
    ).stdout.split()  # fmt: skip
    return int(output[0]), int(output[1]) * 1024


def _cluster(workers: int) -> LocalCluster:
    return LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True,
        dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR,
    )  # fmt: skip


def _add_ratio(report: Report, label: str, value: float, goal: float) -> None:
    """Add a ratio computed here (from CPU seconds) in the harness's format."""
    report.ratios.append(
        {"label": label, "faster": "", "slower": "", "ratio": value, "goal": goal,
         "met": value >= goal}
    )  # fmt: skip


def run(*, rows: int, memory_rows: int, smoke: bool = False) -> Report:
    """Measure the jobs and the bare loop side by side; return the report."""
    old, target = (SMOKE_OLD, SMOKE_TARGET) if smoke else (OLD, TARGET)
    report = Report("bulk", "Bulk upgrade on Dask versus a bare loop of PasswordHasher.upgrade")
    maker = PasswordHasher.from_params(old)
    hashes = [maker.hash(f"password {key}") for key in range(rows)]
    hasher = PasswordHasher.from_params(target)
    hasher.upgrade(hashes[0])  # Loads the kernels before anything is timed.
    loads = [f"start: {_load()}"]
    cpu: dict[str, float] = {}
    walls: dict[str, float] = {}

    def record(key: str, wall: float, cpu_seconds: float, **fields: Any) -> None:
        walls[key], cpu[key] = wall, cpu_seconds
        loads.append(f"after {key}: {_load()}")
        report.record(
            key, Samples((wall,)), items=rows, mode=key, **fields, cpu_s=round(cpu_seconds, 2),
            cpu_per_wall_s=round(cpu_seconds / wall, 2),
        )  # fmt: skip

    with (
        tempfile.TemporaryDirectory() as directory,
        _postgres(report.notes) as server,
        _cluster(1) as one,
        _cluster(2) as two,
        Client(one) as client_one,
        Client(two) as client_two,
    ):
        databases = _Databases(Path(directory), server)
        clients = {1: client_one, 2: client_two}
        for count, client in clients.items():
            # Each cluster's workers load the kernels first, as they would at start-up.
            warm = databases.new("sqlite")
            _fill(warm, hashes[: 10 * count], 10 * count)
            _job(warm, client, target)
        wall, seconds, expected = _bare_loop(hasher, hashes)
        record("bare loop (start)", wall, seconds, database="", workers=1)
        for kind in databases.kinds:
            for count, client in clients.items():
                url = databases.new(kind)
                _fill(url, hashes, rows)
                before = _cpu(client, server)
                started = time.perf_counter()
                job = _job(url, client, target)
                wall = time.perf_counter() - started
                seconds = _cpu(client, server) - before
                if job.upgraded != rows or _values(url) != expected:
                    raise AssertionError(f"{kind}, {count} workers: the table is wrong")
                name = f"{kind}, {count} worker{'s' * (count > 1)}"
                record(name, wall, seconds, database=kind, workers=count)
        wall, seconds, _ = _bare_loop(hasher, hashes)
        record("bare loop (end)", wall, seconds, database="", workers=1)
        bare_wall = (walls["bare loop (start)"] + walls["bare loop (end)"]) / 2
        bare_cpu = (cpu["bare loop (start)"] + cpu["bare loop (end)"]) / 2
        report.record(
            "bare loop (mean)", Samples((bare_wall,)), items=rows, mode="bare loop (mean)",
            database="", workers=1, cpu_s=round(bare_cpu, 2),
            cpu_per_wall_s=round(bare_cpu / bare_wall, 2),
        )  # fmt: skip
        for kind in databases.kinds:
            report.ratio(f"{kind}: 2 workers / 1 worker, wall-clock", faster=f"{kind}, 2 workers",
                         slower=f"{kind}, 1 worker", goal=SCALING_GOAL)  # fmt: skip
            report.ratio(f"{kind}: 1 worker / bare loop, wall-clock", faster=f"{kind}, 1 worker",
                         slower="bare loop (mean)", goal=OVERHEAD_GOAL)  # fmt: skip
            _add_ratio(report, f"{kind}: 1 worker / bare loop, CPU seconds (all processes)",
                       bare_cpu / cpu[f"{kind}, 1 worker"], OVERHEAD_GOAL)  # fmt: skip
        peaks = []
        for table_rows in (min(10_000, memory_rows), memory_rows):
            url = databases.new("sqlite")
            _fill(url, hashes, table_rows)
            peaks.append(_peak_memory(url, target))
            loads.append(f"after the {table_rows}-row dry run: {_load()}")
    small, large = peaks
    report.notes += [
        (
            f"{rows} rows upgraded from mem_cost {old.mem_cost} to {target.mem_cost} "
            f"({encode_params(target)}), batches of {BATCH_SIZE}; every table ends equal to the "
            "bare loop's outputs.  Both clusters were started, and their workers had loaded the "
            "kernels in a small job, before anything was timed (a worker's start-up, not a "
            "job's)."
        ),
        (
            "A job's CPU seconds are those of this process (the client, both schedulers and "
            "SQLite), of the job's workers and of the PostgreSQL server; unlike wall-clock time "
            "they do not depend on how many cores other jobs leave free, so the CPU ratio "
            "measures the database and Dask overhead alone.  cpu_per_wall_s near 2 means two cores "
            "really worked at once."
        ),
        (
            f"Client peak memory of a dry run (maximum resident set of a fresh process): "
            f"{small[1] / 2**20:.0f} MiB for {small[0]} SQLite rows, {large[1] / 2**20:.0f} MiB "
            f"for {large[0]} rows ({large[1] / small[1]:.2f}x for {large[0] / small[0]:.0f}x the "
            "rows)."
        ),
        (
            f"Load average (1, 5, 15 min) on {usable_cpus()} usable CPUs, {'; '.join(loads)}.  "
            "Other jobs on the shared machine take cores from every mode; the 2-worker ratio "
            "needs both cores free."
        ),
    ]
    return report


def main(argv: Sequence[str] | None = None) -> int:
    """Run the full suite and write bench/results/bulk.{json,md}."""
    parser = argparse.ArgumentParser(prog="python -m bench bulk", description=__doc__)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--memory-rows", type=int, default=1_000_000)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, no result files")
    args = parser.parse_args(list(argv or []))
    if args.smoke:
        return smoke()
    report = run(rows=args.rows, memory_rows=args.memory_rows)
    report.write(args.out)
    return 0


def smoke() -> int:
    """Run every job once on a tiny table with the cheapest parameters; asserts no timing."""
    report = run(rows=200, memory_rows=2_000, smoke=True)
    print(report.markdown(), end="")
    return 0
