"""A neighbour who holds the cache's locks cannot hang anyone.

Root warms a cache with the SHA3-256 lane kernels and shares it, with its lock files readable by
everyone (as an earlier ``--shared`` left them); another user opens every lock file and holds
``flock`` on it.  The service user, for whom the cache is read-only, takes no lock at all: its
``hash_many`` and ``twocats sum`` answer at once with the right digest and no warning.  Root, who
may write the cache, waits :data:`~twocats.simd.cache.LOCK_SECONDS` for the first lock, then
reads the checked cache without its locks, with one warning, and its digest is right too.  Every
run is bounded by a timeout of the test.  Artefacts are off: this is numba's cache, whose entries
are read under a lock (an artefact is read without one).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.users import NEIGHBOUR, cache_env, need_service_kernels, public_folder, python_as
from twocats.simd import cache

#: What the neighbour runs: hold an exclusive flock on every lock file under the folder.
_HOLD = """
import fcntl, os, pathlib, sys, time
held = []
for path in sorted(pathlib.Path(sys.argv[1]).rglob("*.lock")):
    fd = os.open(path, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    held.append(fd)
print(len(held), flush=True)
time.sleep(600)
"""

#: What the hashing processes run: the lane mode's digest, and the warnings it gave.
_HASH = """
import json, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    from twocats.lanes import hash_many
    digest = hash_many([b"abc"], "sha3-256")[0].hex()
print(json.dumps({"digest": digest, "warnings": [str(w.message) for w in caught]}))
"""

_EXPECTED = hashlib.sha3_256(b"abc").hexdigest()


@pytest.fixture(scope="module")
def held_cache() -> Iterator[Path]:
    """Root's shared cache of the SHA3-256 kernels, every lock of it held by the neighbour."""
    need_service_kernels()
    with public_folder("twocats-locks-") as top:
        yield from _held(top / "cache")


def _held(root: Path) -> Iterator[Path]:
    """Warm and share ``root``, make its locks readable, and have the neighbour hold them."""
    warm = _HASH + "from twocats.simd.cache import share; from pathlib import Path\n"
    warm += f"share(Path({str(root)!r}))\n"
    subprocess.run(
        [sys.executable, "-c", warm],
        env=cache_env(root, aot=False),
        cwd="/",
        check=True,
        timeout=600,
    )
    locks = list(root.rglob("*.lock"))
    assert locks
    for lock in locks:
        lock.chmod(0o644)
    # The neighbour needs the standard library only.
    python = shutil.which("python3", path="/usr/bin") or sys.executable
    as_neighbour = ["setpriv", f"--reuid={NEIGHBOUR}", f"--regid={NEIGHBOUR}", "--clear-groups"]
    holder = subprocess.Popen(
        [*as_neighbour, python, "-I", "-c", _HOLD, str(root)],
        stdout=subprocess.PIPE,
        text=True,
        cwd="/",
    )
    try:
        assert holder.stdout is not None
        assert int(holder.stdout.readline()) == len(locks)
        yield root
    finally:
        holder.kill()
        holder.wait()


def _hash(command: list[str], root: Path) -> tuple[dict[str, object], float]:
    started = time.monotonic()
    done = subprocess.run(
        [*command, "-c", _HASH],
        env=cache_env(root, aot=False),
        cwd="/",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1]), time.monotonic() - started


def test_the_service_user_takes_no_lock_of_a_read_only_cache(held_cache: Path) -> None:
    """The service user's lane mode answers at once: right digest, no warning, no wait."""
    result, seconds = _hash(python_as(), held_cache)
    assert result == {"digest": _EXPECTED, "warnings": []}
    assert seconds < 60


def test_twocats_sum_of_the_service_user_is_not_held(held_cache: Path) -> None:
    """``twocats sum -a sha3-256 --backend simd`` as the service user answers at once."""
    data = held_cache.parent / "data"
    data.write_bytes(b"abc")
    data.chmod(0o644)
    command = [*python_as(), "-m", "twocats.cli", "sum", "-a", "sha3-256", "--backend", "simd"]
    done = subprocess.run(
        [*command, str(data)],
        env=cache_env(held_cache, aot=False),
        cwd="/",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{_EXPECTED}  {data}\n"
    assert "Warning" not in done.stderr


def test_the_owner_waits_for_a_held_lock_only_so_long(held_cache: Path) -> None:
    """Root, who may write the cache, gives up a held lock after LOCK_SECONDS with one warning
    naming it, waits for no other, and still gives the right digest."""
    result, seconds = _hash([sys.executable], held_cache)
    assert result["digest"] == _EXPECTED
    warnings = result["warnings"]
    assert isinstance(warnings, list)
    assert len(warnings) == 1
    assert f"held by another process for more than {cache.LOCK_SECONDS:g} s" in warnings[0]
    assert cache.LOCK_SECONDS <= seconds < 4 * cache.LOCK_SECONDS + 10
