"""The table of stored hashes, through SQLAlchemy Core: keyset pages in key order, compare-and-swap.

Rows are read ``batch_size`` at a time with keyset pagination (``WHERE key > last ORDER BY key
LIMIT n``), so memory does not grow with the table and every page is one short read.  Results are
written back one batch per transaction, each row with ``UPDATE ... SET hash = new WHERE key = k AND
hash = old``: a row that changed since it was read (a user logged in and was rehashed) is left
alone and counted as a conflict.  A crash at any point therefore leaves every row with its old
value or its new one.

Each value is read bounded: one character more than :data:`~twocats.bulk.values.MAX_VALUE_LENGTH`
at most leaves the database (one byte more from SQLite, whose values are read as bytes), so a huge
value or one that is not UTF-8 becomes an :class:`~twocats.bulk.values.Unreadable` without being
read in full or shown anywhere.  An update that matches more than one row rolls its batch back
(:class:`AmbiguousKeyError`).

``postgresql://`` URLs use psycopg 3.  Errors opening the database or the table are
:class:`~twocats.exceptions.InvalidParametersError` with one line naming what is wrong; no secret
of the URL (its password, its query values) is ever shown, in these or in later errors.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

from twocats._extras import missing_extra

try:
    import sqlalchemy as sa
    from sqlalchemy import exc as sa_exc
except ImportError as error:
    raise missing_extra(__name__, error, "bulk") from None

from twocats.bulk.values import MAX_VALUE_LENGTH, Unreadable
from twocats.exceptions import DatabaseError, InvalidParametersError

__all__ = [
    "AmbiguousKeyError",
    "StoredHashTable",
    "database_error",
    "database_url",
    "open_table",
    "shown_url",
]

#: What a secret is replaced with wherever it would be shown.
MASK: Final = "***"

# Query parameters whose values are secrets whatever their length.
_SECRET_KEY: Final = re.compile(r"pass|pwd|secret|token|key|auth", re.IGNORECASE)


class AmbiguousKeyError(DatabaseError):
    """An update matched more than one row, so its batch was rolled back: the key is not unique."""


def _masked(text: str, secrets: Sequence[str]) -> str:
    """Return `text` with every one of `secrets` in it masked."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def database_error(error: sa_exc.SQLAlchemyError, secrets: Sequence[str] = ()) -> str:
    """Return the first line of a database error, without the statement, its parameters or
    any of `secrets`."""
    cause = getattr(error, "orig", None) or error
    text = str(cause).strip().splitlines()
    return _masked(text[0] if text else type(cause).__name__, secrets)


def shown_url(url: sa.URL) -> str:
    """Return `url` as text with its password and every query value masked."""
    shown = url.set(query={}).render_as_string(hide_password=True)
    query = "&".join(f"{name}={MASK}" for name in url.query)
    return f"{shown}?{query}" if query else shown


def _url_secrets(url: sa.URL) -> tuple[str, ...]:
    """Return the secrets of `url`: its password, and its query values that may be ones."""
    found = [url.password] if url.password else []
    for name, values in url.query.items():
        for value in (values,) if isinstance(values, str) else values:
            # Short values of other parameters (a port, a mode) would mask too much.
            if value and (_SECRET_KEY.search(name) or len(value) >= 4):
                found.append(value)
    return tuple(found)


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


def _engine(url_text: str) -> tuple[sa.Engine, tuple[str, ...]]:
    """Return an engine connected once to the database at `url_text`, and the URL's secrets."""
    url = database_url(url_text)
    shown = shown_url(url)
    secrets = _url_secrets(url)
    options: dict[str, Any] = {}
    if url.get_backend_name() == "sqlite":
        path = url.database or ""
        in_file = path not in ("", ":memory:") and not path.startswith("file:")
        if in_file and not os.path.isfile(path):
            raise InvalidParametersError(f"no SQLite database at {path}")
        # Wait for another writer's lock instead of failing at once.
        options["connect_args"] = {"timeout": 30}
    elif url.get_backend_name() == "postgresql":
        arguments: dict[str, Any] = {}
        if "connect_timeout" not in url.query:
            # A host that does not answer is reported after this many seconds, not the system's.
            arguments["connect_timeout"] = 15
        password = os.environ.get("PGPASSWORD")
        if password and url.password is None:
            # Given to each connection here: the job's workers start without the variable.
            arguments["password"] = password
            secrets += (password,)
        options["connect_args"] = arguments
    try:
        engine = sa.create_engine(url, **options)
    except (sa_exc.NoSuchModuleError, ImportError) as error:
        raise InvalidParametersError(
            f"no database driver for {shown}: {_masked(str(error), secrets)}"
        ) from None
    try:
        with engine.connect():
            pass
    except sa_exc.SQLAlchemyError as error:
        engine.dispose()
        raise InvalidParametersError(
            f"cannot connect to {shown}: {database_error(error, secrets)}"
        ) from None
    return engine, secrets


def _is_partial(index: Any) -> bool:
    """Return True if a reflected index has a WHERE clause (``postgresql_where`` and the like)."""
    options = index.get("dialect_options") or {}
    return any(name.endswith("_where") and value is not None for name, value in options.items())


def _key_problem(inspector: sa.Inspector, table: str, column: str) -> str | None:
    """Return why `column` alone cannot name one row of `table`, or None if it can.

    It can if it is the primary key, a unique constraint, or a unique index on the column itself
    that covers every row.
    """
    if inspector.get_pk_constraint(table).get("constrained_columns") == [column]:
        return None
    if any(c.get("column_names") == [column] for c in inspector.get_unique_constraints(table)):
        return None
    with warnings.catch_warnings():
        # SQLAlchemy warns that it skips SQLite's indexes on expressions; they are no key either.
        warnings.simplefilter("ignore", sa_exc.SAWarning)
        unique = [index for index in inspector.get_indexes(table) if index.get("unique")]
    on_column = [index for index in unique if index.get("column_names") == [column]]
    if any(not _is_partial(index) for index in on_column):
        return None
    if on_column:
        return (
            f"the unique index {on_column[0].get('name')!r} on {column!r} is partial (it has a "
            f"WHERE clause), so {column!r} may repeat in the rows it leaves out"
        )
    for index in unique:
        if any(column in str(text) for text in index.get("expressions") or ()):
            return (
                f"the unique index {index.get('name')!r} of {table!r} is on an expression, not "
                f"on {column!r} itself, so {column!r} may repeat"
            )
    return (
        f"{column!r} is not the primary key or a unique key of {table!r}, so it cannot name one row"
    )


@dataclass
class StoredHashTable:
    """One table's key and hash columns, opened and checked by :func:`open_table`."""

    engine: sa.Engine
    table: sa.Table
    key: sa.Column[Any]
    hash: sa.Column[Any]
    secrets: tuple[str, ...] = ()

    def error_text(self, error: sa_exc.SQLAlchemyError) -> str:
        """Return the first line of a database error, with the URL's secrets masked."""
        return database_error(error, self.secrets)

    def _bounded_hash(self) -> sa.ColumnElement[Any]:
        """The hash column, cut one character past the longest TwoCats value."""
        if self.engine.dialect.name == "sqlite":
            # SQLite's text may hold bytes that are not UTF-8: read bytes and decode them here.
            return sa.func.substr(sa.cast(self.hash, sa.LargeBinary), 1, MAX_VALUE_LENGTH + 1)
        return sa.func.substr(self.hash, 1, MAX_VALUE_LENGTH + 1)

    def pages(self, batch_size: int) -> Iterator[list[tuple[Any, Any]]]:
        """Yield the (key, value) rows in key order, `batch_size` at a time.

        A value is a string, None, or an :class:`~twocats.bulk.values.Unreadable` for one too long
        to be a TwoCats value or not UTF-8.  A row whose key is NULL cannot be named by an update,
        so it is never read (and never written): a unique key may still hold NULLs, and databases
        sort them first or last.  :meth:`null_keys` counts them.
        """
        query = (
            sa.select(self.key, self._bounded_hash())
            .where(self.key.is_not(None))
            .order_by(self.key)
            .limit(batch_size)
        )
        page_query = query
        while True:
            with self.engine.connect() as connection:
                rows = [(row[0], _value(row[1])) for row in connection.execute(page_query)]
            if not rows:
                return
            yield rows
            if len(rows) < batch_size:
                return
            page_query = query.where(self.key > rows[-1][0])

    def null_keys(self) -> int:
        """Return the number of rows whose key is NULL: :meth:`pages` never reads them."""
        query = sa.select(sa.func.count()).select_from(self.table).where(self.key.is_(None))
        with self.engine.connect() as connection:
            return int(connection.execute(query).scalar_one())

    def swap(self, changes: Sequence[tuple[Any, str, str]]) -> int:
        """Write (key, old, new) changes in one transaction where the value is still old.

        Returns the number of conflicts: rows whose value had changed and were left alone.
        Raises :class:`AmbiguousKeyError`, writing nothing, if an update matches more than one row.
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
                if result.rowcount > 1:
                    # Leaving the block with an error rolls the whole batch back.
                    raise AmbiguousKeyError(
                        f"an update of one key matched {result.rowcount} rows: the key column "
                        "is not unique; the batch was rolled back"
                    )
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
    engine, secrets = _engine(url)
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
        problem = _key_problem(inspector, table, key_column)
        if problem is not None:
            raise InvalidParametersError(f"--key-column: {problem}")
        if not isinstance(reflected.c[hash_column].type, sa.String):
            raise InvalidParametersError(
                f"--hash-column: {hash_column!r} of {table!r} is not a text column"
            )
    except sa_exc.SQLAlchemyError as error:
        engine.dispose()
        raise InvalidParametersError(
            f"cannot read table {table!r}: {database_error(error, secrets)}"
        ) from None
    except BaseException:
        engine.dispose()
        raise
    return StoredHashTable(
        engine, reflected, reflected.c[key_column], reflected.c[hash_column], secrets
    )


def _value(raw: object) -> object:
    """Return a bounded value as read: text, None, or an Unreadable.

    Bytes (from SQLite) are measured before they are decoded: a value cut in the middle of a
    character is a long one, not an undecodable one.
    """
    if isinstance(raw, (str, bytes)) and len(raw) > MAX_VALUE_LENGTH:
        return Unreadable(f"longer than {MAX_VALUE_LENGTH} characters")
    if isinstance(raw, bytes):
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return Unreadable("not UTF-8")
    return raw
