"""An unusable cache place costs one warning, never a hash: no hang, no error.

A FIFO planted where the artefacts' index should be is refused without blocking.  A service
started with root's ``HOME`` (``setpriv`` keeps it) and no ``TWOCATS_CACHE_DIR``, and a cache
root longer than ``PATH_MAX``: ``twocats hash`` and ``PasswordHasher.hash`` answer with one
warning that names the folder and ``TWOCATS_CACHE_DIR``, and a hash the reference verifies.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.users import cache_env, public_folder, python_as
from twocats import PasswordHasher
from twocats.simd import cache

#: The CLI's command and PasswordHasher.hash, each with the cheapest profile.
_HASH = ["-m", "twocats.cli", "hash", "--profile", "cheapest", "--insecure", "--password-stdin"]
_LIBRARY = """
from twocats import PasswordHasher
from twocats.profiles import CHEAPEST
print(PasswordHasher.from_params(CHEAPEST).hash("pw"))
"""


@pytest.fixture(autouse=True)
def _compiled() -> None:
    from twocats.simd import _jit

    if _jit.config.DISABLE_JIT:
        pytest.skip("needs compiled kernels (NUMBA_DISABLE_JIT is set)")


@pytest.fixture
def top() -> Iterator[Path]:
    """A folder every user may enter, removed afterwards."""
    with public_folder("twocats-places-") as folder:
        yield folder


def _hashes(
    python: list[str], env: dict[str, str], prepare: Callable[[], None] = lambda: None
) -> list[tuple[str, list[str]]]:
    """``twocats hash`` and ``PasswordHasher.hash`` run by ``python``, each after ``prepare``:
    each output's hash and warnings, both bounded by a timeout."""
    found = []
    for arguments, stdin in ((_HASH, "pw\n"), (["-c", _LIBRARY], None)):
        prepare()
        done = subprocess.run(
            [*python, *arguments],
            input=stdin,
            env=env,
            cwd="/",
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert "Traceback" not in done.stderr
        warnings = [line for line in done.stderr.splitlines() if "Warning:" in line]
        found.append((done.stdout.strip(), warnings))
    return found


def _right(stored: str) -> bool:
    return PasswordHasher(backend="reference").verify(stored, "pw")


def test_a_fifo_as_the_index_is_refused_without_blocking(top: Path) -> None:
    """A FIFO at ``aot/index.json``: one warning naming it, and the right hash at once (the
    artefact built then replaces the FIFO with an index, so it is planted again for each run)."""
    aot = top / "cache" / "aot"

    def plant() -> None:
        shutil.rmtree(top / "cache", ignore_errors=True)
        aot.mkdir(parents=True, mode=0o700)
        (top / "cache").chmod(0o700)
        os.mkfifo(aot / "index.json", 0o600)

    for stored, warnings in _hashes([sys.executable], cache_env(top / "cache"), plant):
        assert _right(stored)
        assert len(warnings) == 1, warnings
        assert "index.json is not a regular file" in warnings[0]


def test_roots_home_for_a_service_user() -> None:
    """``setpriv`` to the service user keeps root's HOME: its default cache cannot be searched,
    which one warning says, naming the folder and the setting."""
    python = python_as(keep_home=True)
    env = cache_env(Path("/unused")) | {"HOME": "/root"}
    del env[cache.CACHE_ENV]
    for stored, warnings in _hashes(python, env):
        assert _right(stored)
        assert len(warnings) == 1, warnings
        assert "/root/.cache/twocats" in warnings[0]
        assert cache.CACHE_ENV in warnings[0]


def test_a_cache_root_longer_than_path_max(top: Path) -> None:
    """A root of 4,400 characters: one warning naming the setting, and the right hash."""
    root = top.joinpath(*(["d" * 200] * 22))
    assert len(str(root)) > os.pathconf("/", "PC_PATH_MAX")
    for stored, warnings in _hashes([sys.executable], cache_env(root)):
        assert _right(stored)
        assert len(warnings) == 1, warnings
        assert "File name too long" in warnings[0]
        assert cache.CACHE_ENV in warnings[0]
