"""The table of stored hashes, through SQLAlchemy Core: keyset pages in key order, compare-and-swap.

Rows are read ``batch_size`` at a time with keyset pagination (``WHERE key > last ORDER BY key
LIMIT n``), so memory does not grow with the table and every page is one short read.  Results are
written back one batch per transaction, each row with ``UPDATE ... SET hash = new WHERE key = k AND
hash = old``: a row that changed since it was read (a user logged in and was rehashed) is left
alone and counted as a conflict.  A crash at any point therefore leaves every row with its old
value or its new one.

``postgresql://`` URLs use psycopg 3.  Errors opening the database or the table are
:class:`~twocats.exceptions.InvalidParametersError` with one line naming what is wrong; the URL's
password is never shown.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from twocats.exceptions import InvalidParametersError

__all__ = ["StoredHashTable", "database_error", "database_url", "open_table"]


def database_error(error: sa_exc.SQLAlchemyError) -> str:
    """Return the first line of a database error, without the statement or its parameters."""
    cause = getattr(error, "orig", None) or error
    text = str(cause).strip().splitlines()
    return text[0] if text else type(cause).__name__


def database_url(text: str) -> sa.URL:
    """Return the SQLAlchemy URL of `text`, with psycopg 3 for a plain ``postgresql://``."""
    try:
        url = sa.make_url(text)
    except sa_exc.ArgumentError:
        raise InvalidParametersError(
            "DATABASE_URL is not a database URL (for example sqlite:///users.db or "
            "postgresql://user@host/db)"
        ) from None
    if url.drivername == "postgresql":
        url = url.set(drivername="postgresql+psycopg")
    return url


def _engine(url_text: str) -> sa.Engine:
    url = database_url(url_text)
    shown = url.render_as_string(hide_password=True)
    options: dict[str, Any] = {}
    if url.get_backend_name() == "sqlite":
        path = url.database or ""
        in_file = path not in ("", ":memory:") and not path.startswith("file:")
        if in_file and not os.path.isfile(path):
            raise InvalidParametersError(f"no SQLite database at {path}")
        # Wait for another writer's lock instead of failing at once.
        options["connect_args"] = {"timeout": 30}
    elif url.get_backend_name() == "postgresql" and "connect_timeout" not in url.query:
        # A host that does not answer is reported after this many seconds, not the system's.
        options["connect_args"] = {"connect_timeout": 15}
    try:
        engine = sa.create_engine(url, **options)
    except (sa_exc.NoSuchModuleError, ImportError) as error:
        raise InvalidParametersError(f"no database driver for {shown}: {error}") from None
    try:
        with engine.connect():
            pass
    except sa_exc.SQLAlchemyError as error:
        engine.dispose()
        raise InvalidParametersError(
            f"cannot connect to {shown}: {database_error(error)}"
        ) from None
    return engine


def _is_unique(inspector: sa.Inspector, table: str, column: str) -> bool:
    """Return True if `column` alone is the table's primary key or a unique key."""
    if inspector.get_pk_constraint(table).get("constrained_columns") == [column]:
        return True
    if any(c.get("column_names") == [column] for c in inspector.get_unique_constraints(table)):
        return True
    return any(
        i.get("unique") and i.get("column_names") == [column] for i in inspector.get_indexes(table)
    )


@dataclass
class StoredHashTable:
    """One table's key and hash columns, opened and checked by :func:`open_table`."""

    engine: sa.Engine
    table: sa.Table
    key: sa.Column[Any]
    hash: sa.Column[Any]

    def pages(self, batch_size: int) -> Iterator[list[tuple[Any, Any]]]:
        """Yield the (key, value) rows in key order, `batch_size` at a time.

        A row whose key is NULL cannot be named by an update, so it is never read (and never
        written): a unique key may still hold NULLs, and databases sort them first or last.
        """
        query = (
            sa.select(self.key, self.hash)
            .where(self.key.is_not(None))
            .order_by(self.key)
            .limit(batch_size)
        )
        page_query = query
        while True:
            with self.engine.connect() as connection:
                rows = [(row[0], row[1]) for row in connection.execute(page_query)]
            if not rows:
                return
            yield rows
            if len(rows) < batch_size:
                return
            page_query = query.where(self.key > rows[-1][0])

    def swap(self, changes: Sequence[tuple[Any, str, str]]) -> int:
        """Write (key, old, new) changes in one transaction where the value is still old.

        Returns the number of conflicts: rows whose value had changed and were left alone.
        """
        conflicts = 0
        # The parameter names cannot be a column's: SQLAlchemy reserves those in an UPDATE.
        statement = (
            sa.update(self.table)
            .where(
                self.key == sa.bindparam("_twocats_key"),
                self.hash == sa.bindparam("_twocats_old"),
            )
            .values({self.hash.name: sa.bindparam("_twocats_new")})
        )
        with self.engine.begin() as connection:
            for key, old, new in changes:
                values = {"_twocats_key": key, "_twocats_old": old, "_twocats_new": new}
                result = connection.execute(statement, values)
                if result.rowcount != 1:
                    conflicts += 1
        return conflicts

    def close(self) -> None:
        """Close the connections to the database."""
        self.engine.dispose()


def open_table(url: str, table: str, key_column: str, hash_column: str) -> StoredHashTable:
    """Connect to the database at `url` and check `table` and its two columns.

    The key column must be unique on its own (the primary key or a unique key), since it orders
    the pages and names the row to update; the hash column must hold text.
    """
    engine = _engine(url)
    try:
        inspector = sa.inspect(engine)
        if not inspector.has_table(table):
            raise InvalidParametersError(f"no table {table!r} in the database")
        reflected = sa.Table(table, sa.MetaData(), autoload_with=engine)
        for option, column in (("--key-column", key_column), ("--hash-column", hash_column)):
            if column not in reflected.c:
                names = ", ".join(reflected.c.keys())
                raise InvalidParametersError(
                    f"{option}: table {table!r} has no column {column!r} (it has {names})"
                )
        if key_column == hash_column:
            raise InvalidParametersError("--key-column and --hash-column must differ")
        if not _is_unique(inspector, table, key_column):
            raise InvalidParametersError(
                f"--key-column: {key_column!r} is not the primary key or a unique key of "
                f"{table!r}, so it cannot name one row"
            )
        if not isinstance(reflected.c[hash_column].type, sa.String):
            raise InvalidParametersError(
                f"--hash-column: {hash_column!r} of {table!r} is not a text column"
            )
    except sa_exc.SQLAlchemyError as error:
        engine.dispose()
        raise InvalidParametersError(
            f"cannot read table {table!r}: {database_error(error)}"
        ) from None
    except BaseException:
        engine.dispose()
        raise
    return StoredHashTable(engine, reflected, reflected.c[key_column], reflected.c[hash_column])
