"""The bulk upgrade against hostile tables and URLs, on SQLite and a real PostgreSQL server.

Undecodable and oversized values are counted without being read in full or shown; keys that do
not name one row are refused; secrets of the database URL are never printed; a run that loses
its database stops with its own exit status and the counts so far.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner, Result

from tests.bulk.test_upgrade import (
    HASHER,
    KILL_TARGET,
    TARGET,
    _password,
    _unavailable,
    dask_client,  # noqa: F401 - a fixture
    postgres,  # noqa: F401 - a fixture
)
from tests.support.pgserver import PostgresServer, find_bin_dir
from twocats.bulk import JobAbortedError, upgrade_table
from twocats.bulk.table import AmbiguousKeyError, StoredHashTable, database_url, open_table
from twocats.bulk.values import MAX_VALUE_LENGTH, Unreadable
from twocats.cli import main
from twocats.password import PasswordHasher
from twocats.phc import decode, encode_params

#: A latin-1 value of a legacy system: not UTF-8.
LEGACY = "legacy café secret".encode("latin-1")

#: A secret given as a query parameter of the database URL.
QUERY_SECRET = "qp-secret-7781"


def _run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, ["upgrade-db", *args], env=env)


def _table_args(url: str, *, key: str = "id") -> list[str]:
    return [url, "--table", "users", "--key-column", key, "--hash-column", "pw"]


def _sqlite_users(path: Path, rows: list[tuple[int, Any]]) -> str:
    """Create users(id primary key, pw text) in SQLite; bytes values are stored as TEXT."""
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, pw TEXT)")
        connection.executemany("INSERT INTO users VALUES (?, CAST(? AS TEXT))", rows)
    connection.close()
    return f"sqlite:///{path}"


@pytest.fixture
def pg_database(postgres: PostgresServer) -> str:  # noqa: F811 - the fixture
    """The URL of a fresh database on the module's PostgreSQL server."""
    name = f"t_{uuid.uuid4().hex}"
    admin = sa.create_engine(database_url(postgres.url), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(sa.text(f"CREATE DATABASE {name}"))
    admin.dispose()
    return postgres.database_url(name)


def _execute(url: str, *statements: str, rows: list[dict[str, Any]] | None = None) -> None:
    engine = sa.create_engine(database_url(url))
    with engine.begin() as connection:
        for statement in statements:
            connection.execute(sa.text(statement))
        if rows:
            connection.execute(sa.text("INSERT INTO users (id, pw) VALUES (:id, :pw)"), rows)
    engine.dispose()


def _values(url: str) -> dict[int, str]:
    engine = sa.create_engine(database_url(url))
    with engine.connect() as connection:
        found = {int(k): v for k, v in connection.execute(sa.text("SELECT id, pw FROM users"))}
    engine.dispose()
    return found


def test_a_non_utf8_row_is_counted_never_shown_and_the_other_rows_are_upgraded(
    tmp_path: Path,
) -> None:
    """One latin-1 row is malformed, not echoed, and left as it was; 100 rows are upgraded."""
    rows: list[tuple[int, Any]] = [(key, HASHER.hash(_password(key))) for key in range(100)]
    url = _sqlite_users(tmp_path / "users.db", [*rows, (100, LEGACY)])
    args = [*_table_args(url), "--params", encode_params(TARGET), "--json"]
    dry = _run(*args, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert json.loads(dry.stdout)["other"] == {"malformed": 1}
    result = _run(*args, "--workers", "1")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["upgraded"], report["other"], report["failed"]) == (100, {"malformed": 1}, {})
    for output in (dry.output, result.output):
        assert "legacy" not in output
        assert "caf" not in output
    with sqlite3.connect(tmp_path / "users.db") as connection:
        connection.text_factory = bytes
        stored = dict(connection.execute("SELECT id, pw FROM users"))
    connection.close()
    assert stored[100] == LEGACY
    verifier = PasswordHasher.from_params(TARGET)
    assert all(verifier.verify(stored[key].decode(), _password(key)) for key in range(100))


@pytest.fixture(params=["sqlite", "postgresql"])
def text_table(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """users(id primary key, pw text) on each database, with values around the read bound."""
    longest = "x" * MAX_VALUE_LENGTH
    rows = [
        {"id": 1, "pw": HASHER.hash("one")},
        {"id": 2, "pw": "y" * (3 << 20)},
        {"id": 3, "pw": longest},
        {"id": 4, "pw": "é" * (MAX_VALUE_LENGTH + 1)},
    ]
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'users.db'}"
        (tmp_path / "users.db").touch()
    else:
        url = request.getfixturevalue("pg_database")
    _execute(url, "CREATE TABLE users (id INTEGER PRIMARY KEY, pw TEXT)", rows=rows)
    return url


def test_values_longer_than_any_twocats_value_are_not_read(text_table: str) -> None:
    """A 3 MiB value and one a character too long come back unread; the longest is read whole."""
    table = open_table(text_table, "users", "id", "pw")
    try:
        [page] = list(table.pages(10))
    finally:
        table.close()
    values = dict(page)
    assert str(values[1]).startswith("$twocats$")
    assert values[2] == Unreadable(f"longer than {MAX_VALUE_LENGTH} characters")
    assert values[3] == "x" * MAX_VALUE_LENGTH
    assert isinstance(values[4], Unreadable)


def test_partial_unique_index_is_refused_and_nothing_written(tmp_path: Path) -> None:
    """A unique index WHERE active = 1 is no key: exit 2 naming it, and the file is unchanged."""
    path = tmp_path / "users.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE users (id INTEGER, active INTEGER, pw TEXT)")
        connection.execute("CREATE UNIQUE INDEX one_active ON users (id) WHERE active = 1")
        connection.executemany(
            "INSERT INTO users VALUES (?, ?, ?)",
            [(1, 1, HASHER.hash("a")), (1, 0, HASHER.hash("b")), (2, 1, HASHER.hash("c"))],
        )
    connection.close()
    before = path.read_bytes()
    result = _run(*_table_args(f"sqlite:///{path}"), "--params", encode_params(TARGET))
    assert result.exit_code == 2, result.output
    assert "'one_active'" in result.stderr
    assert "partial" in result.stderr
    assert path.read_bytes() == before


def test_partial_and_expression_unique_indexes_are_refused_on_postgresql(pg_database: str) -> None:
    """PostgreSQL's partial index and an index on an expression of the key are no key either."""
    hashes = [{"id": key, "pw": HASHER.hash(_password(key))} for key in (1, 2)]
    _execute(
        pg_database,
        "CREATE TABLE users (id INTEGER, active INTEGER DEFAULT 1, pw TEXT)",
        "CREATE UNIQUE INDEX one_active ON users (id) WHERE active = 1",
        "CREATE UNIQUE INDEX by_expr ON users ((id * 10 + active))",
        rows=hashes,
    )
    _execute(pg_database, "INSERT INTO users (id, active, pw) VALUES (1, 0, 'x')")
    before = _values(pg_database)
    result = _run(*_table_args(pg_database), "--params", encode_params(TARGET))
    assert result.exit_code == 2, result.output
    assert "partial" in result.stderr
    _execute(pg_database, "DROP INDEX one_active")
    result = _run(*_table_args(pg_database), "--params", encode_params(TARGET))
    assert result.exit_code == 2, result.output
    assert "'by_expr'" in result.stderr
    assert "expression" in result.stderr
    assert _values(pg_database) == before


def test_a_swap_matching_two_rows_rolls_its_batch_back(tmp_path: Path) -> None:
    """An update that matches two rows raises, and the batch's other update is undone."""
    path = tmp_path / "dup.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE users (id INTEGER, pw TEXT)")
        connection.executemany(
            "INSERT INTO users VALUES (?, ?)", [(1, "old1"), (2, "dup"), (2, "dup")]
        )
    connection.close()
    engine = sa.create_engine(f"sqlite:///{path}")
    reflected = sa.Table("users", sa.MetaData(), autoload_with=engine)
    table = StoredHashTable(engine, reflected, reflected.c.id, reflected.c.pw)
    try:
        with pytest.raises(AmbiguousKeyError, match="rolled back"):
            table.swap([(1, "old1", "new1"), (2, "dup", "new2")])
    finally:
        table.close()
    with sqlite3.connect(path) as connection:
        assert sorted(connection.execute("SELECT id, pw FROM users")) == [
            (1, "old1"),
            (2, "dup"),
            (2, "dup"),
        ]
    connection.close()


def test_a_key_made_not_unique_midway_rolls_its_batches_back(
    tmp_path: Path,
    dask_client: Any,  # noqa: F811 - the fixture
) -> None:
    """The unique index dropped and a key doubled after the first batch: its batch is undone."""
    path = tmp_path / "users.db"
    rows = [(key, HASHER.hash(_password(key))) for key in range(8)]
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE users (id INTEGER, pw TEXT)")
        connection.execute("CREATE UNIQUE INDEX by_id ON users (id)")
        connection.executemany("INSERT INTO users VALUES (?, ?)", rows)
    connection.close()

    doubled = False

    def double_key_6(done: int, total: int) -> None:
        # Once the first batch (keys 0 and 1) is written; pages and batches hold two rows.
        nonlocal doubled
        if not doubled and _values(f"sqlite:///{path}") != dict(rows):
            doubled = True
            with sqlite3.connect(path) as connection:
                connection.execute("DROP INDEX by_id")
                connection.execute("INSERT INTO users VALUES (6, ?)", (rows[6][1],))
            connection.close()

    report = upgrade_table(
        f"sqlite:///{path}",
        "users",
        key_column="id",
        hash_column="pw",
        target=TARGET,
        client=dask_client,
        batch_size=2,
        progress=double_key_6,
    )
    # Both rows of key 6 came in one page and one batch, whose first update matched both.
    assert report.failed == {"key_not_unique": 2}
    assert report.upgraded == 7
    with sqlite3.connect(path) as connection:
        stored = list(connection.execute("SELECT id, pw FROM users WHERE id >= 6"))
    connection.close()
    assert sorted(stored)[:2] == [rows[6], rows[6]]
    assert sorted(stored)[2][1] != rows[7][1]


def test_query_password_of_an_unreachable_server_is_never_printed() -> None:
    """?password= and ?sslpassword= of a URL are masked in the connection error."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"postgresql://user:pw1234@127.0.0.1:{port}/db?password={QUERY_SECRET}&sslpassword=k3y9"
    result = _run(*_table_args(url), "--params", encode_params(TARGET))
    assert result.exit_code == 2, result.output
    assert "cannot connect to" in result.stderr
    assert "password=***" in result.stderr
    for secret in (QUERY_SECRET, "pw1234", "k3y9"):
        assert secret not in result.output


def test_query_password_is_never_printed_by_a_real_server(pg_database: str) -> None:
    """With a real server, --json reports and table errors never show ?password=."""
    _execute(
        pg_database,
        "CREATE TABLE users (id INTEGER PRIMARY KEY, pw TEXT)",
        rows=[{"id": 1, "pw": HASHER.hash("one")}],
    )
    url = f"{pg_database}?password={QUERY_SECRET}"
    report = _run(*_table_args(url), "--params", encode_params(TARGET), "--dry-run", "--json")
    assert report.exit_code == 0, report.output
    assert json.loads(report.stdout)["to_upgrade"] == 1
    wrong = _run(url, "--table", "nobody", "--key-column", "id", "--hash-column", "pw")
    assert wrong.exit_code == 2
    bad_option = _run(*_table_args(f"{url}&no_such_option=1"), "--dry-run")
    assert bad_option.exit_code == 2
    for result in (report, wrong, bad_option):
        assert QUERY_SECRET not in result.output


@pytest.fixture
def own_postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server of its own, for a test that stops it."""
    bin_dir = find_bin_dir()
    if bin_dir is None:
        _unavailable("PostgreSQL's initdb and pg_ctl are not installed")
    server = PostgresServer(bin_dir)
    try:
        server.start()
    except (OSError, subprocess.SubprocessError) as error:
        server.stop()
        _unavailable(f"cannot start PostgreSQL: {error} {server.log()}")
    yield server
    server.stop()


def _hash_table(url: str, count: int) -> dict[int, str]:
    rows = {key: HASHER.hash(_password(key)) for key in range(count)}
    _execute(
        url,
        "CREATE TABLE users (id INTEGER PRIMARY KEY, pw TEXT)",
        rows=[{"id": key, "pw": value} for key, value in rows.items()],
    )
    return rows


def _old_or_new(url: str, before: dict[int, str], params: Any) -> int:
    """Check that every row holds its old value or a verifying new one; return the new ones."""
    verifier = PasswordHasher.from_params(params)
    new = 0
    for key, value in _values(url).items():
        if value != before[key]:
            assert decode(value).params.mem_cost == params.mem_cost
            assert verifier.verify(value, _password(key))
            new += 1
    return new


def test_losing_the_database_midway_aborts_with_the_counts_so_far(
    own_postgres: PostgresServer,
    dask_client: Any,  # noqa: F811 - the fixture
) -> None:
    """The server halted after the first batch: JobAbortedError holds the rows written till then."""
    url = f"{own_postgres.url}?password={QUERY_SECRET}"
    before = _hash_table(url, 12)

    halted = False

    def halt_after_first_batch(done: int, total: int) -> None:
        nonlocal halted
        if not halted and _values(url) != before:
            halted = True
            own_postgres.halt()

    with pytest.raises(JobAbortedError) as aborted:
        upgrade_table(
            url,
            "users",
            key_column="id",
            hash_column="pw",
            target=TARGET,
            client=dask_client,
            batch_size=2,
            progress=halt_after_first_batch,
        )
    report = aborted.value.report
    assert report.aborted is not None
    assert QUERY_SECRET not in report.aborted
    assert report.upgraded == 2
    assert report.document()["aborted"] == report.aborted
    own_postgres.resume()
    assert _old_or_new(url, before, TARGET) == 2


def test_the_cli_exits_3_with_partial_counts_when_the_database_is_lost(
    own_postgres: PostgresServer,
    dask_client: Any,  # noqa: F811 - the fixture
) -> None:
    """upgrade-db whose server is halted midway exits 3, prints the counts, hides the URL."""
    url = f"{own_postgres.url}?password={QUERY_SECRET}"
    before = _hash_table(url, 60)
    command = [
        sys.executable, "-c", "from twocats.cli import main; main()",
        "upgrade-db", "--table", "users", "--key-column", "id", "--hash-column", "pw",
        "--params", encode_params(KILL_TARGET), "--batch-size", "2", "--json",
        "--scheduler", dask_client.scheduler.address,
    ]  # fmt: skip
    environment = {**os.environ, "TWOCATS_DATABASE_URL": url}
    job = subprocess.Popen(
        command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        while _count_upgraded_pw(url, KILL_TARGET.mem_cost) == 0 and job.poll() is None:
            time.sleep(0.01)
        own_postgres.halt()
        stdout, stderr = job.communicate(timeout=300)
    finally:
        if job.poll() is None:
            job.send_signal(signal.SIGKILL)
    assert job.returncode == 3, stdout + stderr
    report = json.loads(stdout)
    assert report["aborted"]
    assert "aborted midway" in stderr
    assert "is not TLS" in stderr
    assert QUERY_SECRET not in stdout + stderr
    own_postgres.resume()
    assert _old_or_new(url, before, KILL_TARGET) == report["upgraded"] > 0


def _count_upgraded_pw(url: str, mem_cost: int) -> int:
    return sum(1 for value in _values(url).values() if decode(value).params.mem_cost == mem_cost)
