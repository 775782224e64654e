"""What the tests need from the machine, and how a test says that something is missing.

A test that cannot run because something is missing (a file of the shared vector folder, a
coreutils tool, os.fork, /proc) skips through :func:`need`, whose reason starts with
:data:`NEEDS`.  Under ``CI=true`` the conftest turns every such skip into a failure, so that a
green CI run has run everything.  The shared files are read where they are, never copied in.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

#: The start of the reason of every skip for something missing from the machine.
NEEDS = "needs "

#: The team's shared vector folder, next to the repository.
SHARED_VECTORS_DIR = Path(__file__).resolve().parents[3] / "shared" / "vectors"


def in_ci() -> bool:
    """Whether this run is the CI run, where nothing may be missing."""
    return os.environ.get("CI") == "true"


def need(what: str) -> NoReturn:
    """Skip the running test because ``what`` is missing (a failure under CI=true)."""
    pytest.skip(NEEDS + what)


def shared_file(name: str) -> Path:
    """Return the path of a file of the shared vector folder, or skip through :func:`need`."""
    path = SHARED_VECTORS_DIR / name
    if not path.is_file():
        need(f"the shared vector file {path}")
    return path


def absent_shared_file(name: str, arity: int) -> object:
    """One parameter set standing for a shared file's vectors when the file is absent.

    Parametrized tests built from a shared file use it instead of an empty list, so that a
    missing file shows as a skip (a failure under CI=true) rather than as no tests at all.
    """
    path = SHARED_VECTORS_DIR / name
    return pytest.param(
        *([None] * arity),
        id=f"absent-{name}",
        marks=pytest.mark.skip(reason=f"{NEEDS}the shared vector file {path}"),
    )
