"""``twocats upgrade-db``: bad input is one clear line and exit status 2, and a dry run counts.

None of these but the dry run reach a Dask cluster: bad input is refused before one would start.
"""

from __future__ import annotations

import dataclasses
import json
import socket
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from twocats.cli import main
from twocats.params import Params
from twocats.password import PasswordHasher
from twocats.phc import encode_params
from twocats.profiles import CHEAPEST

OLD = dataclasses.replace(CHEAPEST, mem_cost=3, start_mem_cost=3)
TARGET = dataclasses.replace(OLD, mem_cost=6)


@pytest.fixture
def database(tmp_path: Path) -> Path:
    """An SQLite database with a users table of 5 TwoCats rows at OLD and 2 others."""
    path = tmp_path / "users.db"
    hasher = PasswordHasher.from_params(OLD)
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, pw TEXT, n INTEGER)")
        connection.execute("CREATE TABLE loose (name TEXT, pw TEXT)")
        connection.executemany(
            "INSERT INTO users VALUES (?, ?, 0)",
            [(key, hasher.hash(f"pw {key}")) for key in range(5)] + [(5, ""), (6, "x")],
        )
    connection.close()
    return path


def _run(*args: str) -> Result:
    return CliRunner().invoke(main, ["upgrade-db", *args])


def _table_args(
    path: Path, *, table: str = "users", key: str = "id", column: str = "pw"
) -> list[str]:
    return [f"sqlite:///{path}", "--table", table, "--key-column", key, "--hash-column", column]


def _refused(result: Result, *phrases: str) -> None:
    """The command exited 2 with one Error: line holding every phrase, and no traceback."""
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    for phrase in phrases:
        assert phrase in lines[0]
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("overrides", "phrases"),
    [
        ({"table": "nobody"}, ("no table 'nobody'",)),
        ({"key": "uid"}, ("--key-column", "no column 'uid'")),
        ({"column": "password"}, ("--hash-column", "no column 'password'")),
        ({"column": "n"}, ("not a text column",)),
        ({"table": "loose", "key": "name"}, ("not the primary key or a unique key",)),
    ],
)
def test_unknown_table_or_column_is_one_line(
    database: Path, overrides: dict[str, str], phrases: tuple[str, ...]
) -> None:
    """An unknown table, column, non-unique key or non-text hash column is exit 2, one line."""
    _refused(_run(*_table_args(database, **overrides), "--params", encode_params(TARGET)), *phrases)


def test_missing_sqlite_file_is_not_created(tmp_path: Path) -> None:
    """A SQLite path that does not exist is refused, and no empty database is left behind."""
    path = tmp_path / "absent.db"
    _refused(_run(*_table_args(path), "--params", encode_params(TARGET)), "no SQLite database")
    assert not path.exists()


def test_unreachable_database_is_one_line_without_the_password() -> None:
    """A PostgreSQL server that does not answer is one line that hides the URL's password."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"postgresql://user:hunter2@127.0.0.1:{port}/db"
    result = _run(url, "--table", "t", "--key-column", "k", "--hash-column", "h")
    _refused(result, "cannot connect to", "***")
    assert "hunter2" not in result.output


def test_bad_url_is_one_line() -> None:
    """A DATABASE_URL that is no URL at all is exit 2 with one line."""
    _refused(_run("users.db", "--table", "t", "--key-column", "k", "--hash-column", "h"), "URL")


@pytest.mark.parametrize(
    "target",
    [
        ["--mem-cost", "2"],
        ["--params", encode_params(dataclasses.replace(OLD, mem_cost=2, start_mem_cost=2))],
    ],
)
def test_rows_above_the_target_are_current_and_the_table_unchanged(
    database: Path, target: list[str]
) -> None:
    """Rows above the target's memory cost count as at or above it: exit 0, nothing written."""
    before = database.read_bytes()
    result = _run(*_table_args(database), *target, "--max-memory", "64MiB", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["current"], report["upgraded"], report["failed"]) == (5, 0, {})
    assert database.read_bytes() == before


def test_workers_and_scheduler_together_are_refused(database: Path) -> None:
    """--workers and --scheduler are exclusive."""
    _refused(
        _run(*_table_args(database), "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"),
        "--workers and --scheduler",
    )


def test_dry_run_counts_by_kind_and_estimates_without_writing(database: Path) -> None:
    """--dry-run --json counts rows by kind, times the workers' start and a sample; no write."""
    before = database.read_bytes()
    result = _run(
        *_table_args(database), "--params", encode_params(TARGET), "--dry-run", "--json",
        "--workers", "1",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["dry_run"] is True
    assert (report["rows"], report["to_upgrade"], report["upgraded"]) == (7, 5, 0)
    assert report["other"] == {"empty": 1, "malformed": 1}
    assert report["seconds_per_upgrade"] > 0
    # The estimate includes the fixed costs: starting the workers and loading the kernels.
    assert report["startup_seconds"] > 0
    upgrades = report["seconds_per_upgrade"] * report["to_upgrade"]
    assert report["estimated_seconds"] >= report["startup_seconds"] + upgrades
    assert database.read_bytes() == before


def test_stored_hash_over_the_work_limit_is_counted_as_failed(tmp_path: Path) -> None:
    """A planted hash over the hasher's limits is never computed: exit 1, failed with a reason."""
    path = tmp_path / "planted.db"
    planted = PasswordHasher.from_params(OLD).hash("x").replace("m=3,", "m=3,t=30,", 1)
    planted = planted.replace("v=2015", "v=2014")
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, pw TEXT)")
        connection.execute("INSERT INTO users VALUES (1, ?)", (planted,))
    connection.close()
    result = _run(*_table_args(path), "--mem-cost", "6", "--dry-run", "--json")
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert report["failed"] == {"over_work_limit": 1}


def test_a_row_above_the_target_never_stops_the_job(tmp_path: Path) -> None:
    """With --max-memory 64MiB, one m=11 row among m=8 rows (target m=10) is counted as current,
    the others are upgraded, and progress lines go to standard error without a terminal."""
    path = tmp_path / "users.db"
    low = PasswordHasher.from_params(Params(mem_cost=8, multiplies=1, lanes=8, parallelism=1))
    high = PasswordHasher.from_params(Params(mem_cost=11, multiplies=1, lanes=8, parallelism=1))
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, pw TEXT)")
        connection.executemany(
            "INSERT INTO users VALUES (?, ?)",
            [(key, low.hash(f"pw {key}")) for key in range(6)] + [(5000, high.hash("pw"))],
        )
    connection.close()
    result = _run(
        *_table_args(path), "--mem-cost", "10", "--max-memory", "64MiB", "--workers", "1",
        "--batch-size", "2",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "upgraded: 6" in result.stdout
    assert "at or above the target: 1" in result.stdout
    # The first line comes at once, with the rows of the table.
    assert result.stderr.startswith("upgrading: 0/7 rows")


@pytest.mark.parametrize(
    ("options", "phrase"),
    [
        (["--tls-ca-file", "{ca}"], "--tls-ca-file, --tls-cert and --tls-key go with --scheduler"),
        (
            ["--scheduler", "tls://127.0.0.1:1", "--tls-ca-file", "{ca}", "--tls-cert", "{ca}"],
            "give all of --tls-ca-file, --tls-cert and --tls-key, or none",
        ),
    ],
)
def test_tls_options_come_together_and_with_a_scheduler(
    database: Path, options: list[str], phrase: str
) -> None:
    """TLS files without --scheduler, or only some of them, are exit 2 before anything runs."""
    ca = database.parent / "ca.pem"
    ca.write_text("not used\n")
    given = [option.format(ca=ca) for option in options]
    _refused(_run(*_table_args(database), "--params", encode_params(TARGET), *given), phrase)


def test_help_states_the_memory_limit_and_every_exit_status() -> None:
    """--help says what --max-memory does by default and documents exit statuses 0 to 3."""
    result = _run("--help")
    text = " ".join(result.output.split())
    assert "twice the target's memory" in text
    for status in ("0 done", "1 done, but some rows failed", "2 bad input", "3 aborted midway"):
        assert status in text
    assert "1 GiB, or the target's need" not in text


def test_rows_with_a_null_key_are_counted_and_exit_1(tmp_path: Path) -> None:
    """Rows whose key is NULL are never read or written, but counted: exit status 1."""
    path = tmp_path / "null.db"
    stored = PasswordHasher.from_params(OLD).hash("pw")
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE users (name TEXT UNIQUE, pw TEXT)")
        connection.executemany(
            "INSERT INTO users VALUES (?, ?)", [(None, stored), (None, stored), ("a", stored)]
        )
    connection.close()
    before = path.read_bytes()
    args = _table_args(path, key="name")
    # The row with a key is above the target: nothing to upgrade, so no worker starts.
    result = _run(*args, "--mem-cost", "2", "--json")
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert (report["no_key"], report["rows"], report["current"]) == (2, 1, 1)
    assert "exit status 1: 2 rows are not at the target" in result.stderr
    text = _run(*args, "--mem-cost", "2")
    assert text.exit_code == 1
    assert "no key: 2 (rows whose key is NULL, which no update can name" in text.stdout
    assert path.read_bytes() == before
