"""The bulk upgrade's table layer on SQLite: pages skip NULL keys; writes suit any column names."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from twocats.bulk.table import open_table


def _database(path: Path, schema: str, rows: list[tuple[object, ...]]) -> str:
    with sqlite3.connect(path) as connection:
        connection.execute(schema)
        marks = ", ".join("?" * len(rows[0]))
        connection.executemany(f"INSERT INTO u VALUES ({marks})", rows)
    connection.close()
    return f"sqlite:///{path}"


def test_pages_skip_null_keys_and_end(tmp_path: Path) -> None:
    """A unique key holding NULLs (sorted first by SQLite) neither loops nor loses a named row."""
    rows = [(None, "n1"), (None, "n2"), ("a", "va"), ("b", "vb"), ("c", "vc")]
    url = _database(tmp_path / "null.db", "CREATE TABLE u (name TEXT UNIQUE, h TEXT)", rows)
    table = open_table(url, "u", "name", "h")
    try:
        for batch_size in (1, 2, 3, 10):
            pages = list(table.pages(batch_size))
            assert [row for page in pages for row in page] == [
                ("a", "va"),
                ("b", "vb"),
                ("c", "vc"),
            ]
            assert all(1 <= len(page) <= batch_size for page in pages)
    finally:
        table.close()


def test_swap_works_with_columns_named_like_its_parameters(tmp_path: Path) -> None:
    """Columns named k, old and new do not collide with the update's own parameters."""
    schema = "CREATE TABLE u (k TEXT PRIMARY KEY, h TEXT, old INTEGER, new INTEGER)"
    url = _database(tmp_path / "names.db", schema, [("x", "v1", 0, 0), ("y", "v2", 0, 0)])
    table = open_table(url, "u", "k", "h")
    try:
        # One change applies; one names a value that is no longer stored: a conflict.
        assert table.swap([("x", "v1", "w1"), ("y", "stale", "w2")]) == 1
        assert [row for page in table.pages(10) for row in page] == [("x", "w1"), ("y", "v2")]
    finally:
        table.close()
