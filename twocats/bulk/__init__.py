"""Bulk upgrade of the TwoCats hashes stored in a database table, on Dask.

:func:`upgrade_table` raises the memory cost of every upgradable hash in a table without the
passwords (see :meth:`twocats.PasswordHasher.upgrade`), in key order, on the workers of a Dask
cluster: one passed in, one at a scheduler address, or a local one started for the job that only
the job can use (TLS with throwaway credentials).  Every result is checked before it is written.
Each batch is written back in one transaction with compare-and-swap, so rows changed meanwhile
are left alone, and a crash at any point leaves every row old or new; a rerun finishes the job.

Needs the ``bulk`` extra (``pip install -e '.[bulk]'`` in a checkout: Dask's distributed
scheduler, SQLAlchemy and cryptography), and the ``postgres`` extra for PostgreSQL (psycopg 3).
Without the extra, ``from twocats.bulk import upgrade_table`` (and importing any module of the
job) raises an ImportError that names the extra and how to install it; this package's own limits
and reasons import without it, for the command line's help.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from twocats.bulk.limits import DEFAULT_BATCH_SIZE, MAX_BATCH_SIZE
from twocats.bulk.reasons import FAILURE_REASONS
from twocats.bulk.values import OTHER_KINDS
from twocats.exceptions import DatabaseError

if TYPE_CHECKING:
    from twocats.bulk.job import BulkReport, JobAbortedError, upgrade_table

# The names of the job, loaded on first use: the job imports SQLAlchemy, its limits do not.
_LAZY = frozenset({"BulkReport", "JobAbortedError", "upgrade_table"})

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "FAILURE_REASONS",
    "MAX_BATCH_SIZE",
    "OTHER_KINDS",
    "BulkReport",
    "DatabaseError",
    "JobAbortedError",
    "upgrade_table",
]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("twocats.bulk.job"), name)
    globals()[name] = value
    return value
