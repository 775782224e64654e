"""The container recipe, run for real: root warms a shared cache, a service user hashes from it.

Root runs ``twocats warmup --shared`` into a fresh folder; ``nobody`` (through ``runuser``) then
hashes and verifies with no warning, without numba; a cache that group or others may write to is
still refused, with one warning, and the output stays the reference's.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cache_damage import derive_in_child
from tests.support.environment import need
from tests.support.users import SERVICE, SERVICE_GROUP, public_folder, python_as, warm_shared
from twocats.kdf.engine import Engine
from twocats.profiles import CHEAPEST

#: The service user of the recipe, and its group.
USER, GROUP = SERVICE, SERVICE_GROUP


@pytest.fixture(scope="module")
def shared_cache() -> Iterator[Path]:
    """A cache that root warmed with ``--shared``, in a folder every user may enter."""
    from twocats.simd import _jit
    from twocats.simd.aot import compiler

    if _jit.config.DISABLE_JIT:
        pytest.skip("needs compiled kernels (NUMBA_DISABLE_JIT is set)")
    if os.geteuid() != 0 or shutil.which("runuser") is None:
        need("root and runuser, to hash as a second user")
    if compiler() is None:
        need("a C compiler (cc) to link ahead-of-time kernels")
    with public_folder("twocats-shared-") as top:
        done = warm_shared(top / "cache", preexec_fn=lambda: os.umask(0o077))
        assert done.returncode == 0, done.stderr
        yield top / "cache"


@pytest.fixture(scope="module")
def expected() -> str:
    """The cheapest profile's output through the pure-Python reference."""
    return Engine("reference").derive(b"pw", b"saltsaltsalt", CHEAPEST).hex()


def _as_user(cache: Path) -> list[str]:
    """The command that starts this twocats's Python as the service user."""
    del cache
    return python_as(USER)


def test_the_warmed_cache_is_readable_and_writable_by_root_only(shared_cache: Path) -> None:
    """After ``--shared`` every folder is 0755 and every file 0644, all owned by root; only the
    lock files, which no reader takes, stay 0600."""
    for path in [shared_cache, *shared_cache.rglob("*")]:
        info = path.lstat()
        assert info.st_uid == 0
        wanted = 0o755 if path.is_dir() else 0o600 if path.suffix == ".lock" else 0o644
        assert stat.S_IMODE(info.st_mode) == wanted, path


def test_a_service_user_hashes_from_roots_cache_without_numba(
    shared_cache: Path, expected: str
) -> None:
    """``nobody`` derives, hashes and verifies with no warning and without importing numba."""
    outcome = derive_in_child(shared_cache, run_as=_as_user(shared_cache))
    assert outcome.returncode == 0, outcome.stderr
    assert (outcome.output, outcome.warnings, outcome.numba) == (expected, [], False)


def test_a_group_writable_artefact_is_refused_for_the_service_user(
    shared_cache: Path, expected: str, tmp_path: Path
) -> None:
    """An artefact the service user's group may write to is refused: one warning, and numba's
    checked build from the same cache gives the reference's output."""
    cache = Path(tempfile.mkdtemp(prefix="twocats-shared-copy-")) / "cache"
    try:
        cache.parent.chmod(0o755)
        shutil.copytree(shared_cache, cache, symlinks=True)
        (artefact,) = (cache / "aot").glob("*.so")
        os.chown(artefact, 0, GROUP)
        artefact.chmod(0o664)
        outcome = derive_in_child(cache, run_as=_as_user(cache))
    finally:
        shutil.rmtree(cache.parent)
    assert outcome.returncode == 0, outcome.stderr
    assert outcome.output == expected
    assert len(outcome.warnings) == 1
    assert "writable by group or others" in outcome.warnings[0]


def test_a_cache_others_may_write_to_is_refused_for_the_service_user(
    shared_cache: Path, expected: str
) -> None:
    """A cache root others may write to is refused whole: one warning, the kernels compile in
    memory, nothing is written, and the output is the reference's."""
    cache = Path(tempfile.mkdtemp(prefix="twocats-shared-copy-")) / "cache"
    try:
        cache.parent.chmod(0o755)
        shutil.copytree(shared_cache, cache, symlinks=True)
        cache.chmod(0o777)
        before = sorted(cache.rglob("*"))
        outcome = derive_in_child(cache, run_as=_as_user(cache))
        after = sorted(cache.rglob("*"))
    finally:
        shutil.rmtree(cache.parent)
    assert outcome.returncode == 0, outcome.stderr
    assert outcome.output == expected
    assert len(outcome.warnings) == 1
    assert "writable by group or others" in outcome.warnings[0]
    assert after == before
