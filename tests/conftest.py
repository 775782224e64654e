"""Shared fixtures: the known-answer vector files, the team's shared vector folder, and engines.

Engines are shared by the whole session (one per backend) so that compiled kernels load once and
work buffers are reused across tests, as they are in production.  Under ``CI=true`` a test that
skips because something is missing (see ``support/environment.py``) fails instead.  ``--core``
runs the core selection only (:data:`CORE_MODULES`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any, Final

import pytest
from hypothesis import settings

from tests.support.environment import NEEDS, SHARED_VECTORS_DIR, in_ci, need
from twocats.kdf.engine import Engine
from twocats.kdf.vectors import Vector, load_vectors

# Tests run numba's builds and do not write ahead-of-time kernels on every first compile (each
# costs seconds); the tests of twocats.simd.aot build theirs into folders of their own.
os.environ.setdefault("TWOCATS_AOT", "0")

#: The project's own vector files (copies of the shared TwoCats files, see vectors/README.md).
VECTORS_DIR = Path(__file__).resolve().parent / "vectors"

# Hypothesis' per-example deadline measures the machine's load, not the code: no test here is
# about speed (bench/ measures that), so it is off everywhere.  Under CI=true every run draws the
# same examples and keeps no example database, so CI is repeatable; local runs keep exploring.
settings.register_profile("twocats", deadline=None)
settings.register_profile("twocats-ci", deadline=None, derandomize=True, database=None)
settings.load_profile("twocats-ci" if in_ci() else "twocats")

#: The core selection (``pytest --core``), by module path below ``tests/`` without ``.py``: the
#: TwoCats vectors on every backend, the password API and its PHC strings, the lanes' registry
#: with every lane kernel's check, and the password commands.  CI runs it on every Python the
#: package claims but the one that runs every test (``.ci/pythons``).  Only modules that need
#: nothing beyond the test extra belong here.
CORE_MODULES: Final = frozenset(
    {
        "kdf/test_vectors",
        "kdf/test_api",
        "password/test_hasher",
        "core/test_phc",
        "core/test_params",
        "lanes/test_registry",
        "cli/test_passwords",
    }
)

#: The three TwoCats known-answer files, one per algorithm version.
TWOCATS_FILES = ("twocats-2015.jsonl", "twocats-2014.jsonl", "twocats-2014-03.jsonl")


@pytest.fixture(scope="session")
def vectors_dir() -> Path:
    """The folder of the project's own vector files."""
    return VECTORS_DIR


@pytest.fixture(scope="session")
def shared_vectors_dir() -> Path:
    """The team's shared vector folder (skips the test when it is absent, fails it in CI)."""
    if not SHARED_VECTORS_DIR.is_dir():
        need(f"the shared vector folder {SHARED_VECTORS_DIR}")
    return SHARED_VECTORS_DIR


@pytest.fixture(scope="session")
def twocats_vectors() -> dict[str, Vector]:
    """Every vector of the three TwoCats files, by id."""
    return {v.id: v for name in TWOCATS_FILES for v in load_vectors(VECTORS_DIR / name)}


@pytest.fixture(scope="session")
def twocats_records() -> list[dict[str, Any]]:
    """Every record of the three TwoCats files, as decoded JSON."""
    records = []
    for name in TWOCATS_FILES:
        with (VECTORS_DIR / name).open(encoding="utf-8") as handle:
            records.extend(json.loads(line) for line in handle if line.strip())
    return records


@pytest.fixture(scope="session")
def reject_records() -> list[dict[str, Any]]:
    """The records of twocats-rejects.jsonl: parameter sets that must be refused."""
    with (VECTORS_DIR / "twocats-rejects.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@pytest.fixture(scope="session")
def engine_for() -> Iterator[Callable[[str], Engine]]:
    """Return the session's shared engine of a backend ("reference", "scalar" or "simd")."""
    engines: dict[str, Engine] = {}

    def get(backend: str) -> Engine:
        if backend not in engines:
            engines[backend] = Engine(backend)
        return engines[backend]

    yield get
    for engine in engines.values():
        engine.release()


_HERE = Path(__file__).resolve().parent


def _module_name(path: Path) -> str:
    """A test module's name in :data:`CORE_MODULES`: its path below this folder, without .py."""
    try:
        return path.resolve().relative_to(_HERE).with_suffix("").as_posix()
    except ValueError:
        return path.stem


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--core``: collect the modules of :data:`CORE_MODULES` only."""
    parser.addoption(
        "--core",
        action="store_true",
        help="run the core selection only (CORE_MODULES in tests/conftest.py)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Under ``--core``, refuse a core module name that no test module has (one was renamed)."""
    if not config.getoption("core"):
        return
    present = {_module_name(path) for path in _HERE.rglob("test_*.py")}
    missing = sorted(CORE_MODULES - present)
    if missing:
        raise pytest.UsageError(f"CORE_MODULES names no test module: {', '.join(missing)}")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under ``--core``, leave out the test modules that are not in :data:`CORE_MODULES`."""
    if (
        config.getoption("core")
        and collection_path.suffix == ".py"
        and collection_path.name.startswith("test_")
        and _module_name(collection_path) not in CORE_MODULES
    ):
        return True
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave out ``slow`` tests unless a ``-m`` expression asks for markers (``-m slow``)."""
    if config.getoption("markexpr"):
        return
    kept, slow = [], []
    for item in items:
        (slow if item.get_closest_marker("slow") else kept).append(item)
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = kept


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Under CI=true, fail a test that skipped because something was missing (see environment)."""
    report = yield
    if report.skipped and in_ci() and isinstance(report.longrepr, tuple):
        reason = report.longrepr[2].removeprefix("Skipped: ")
        if reason.startswith(NEEDS):
            report.outcome = "failed"
            report.longrepr = f"CI=true and this test {reason}; CI must run every test"
    return report
