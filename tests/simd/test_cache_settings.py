"""Odd kernel cache settings cost compile time, never a result: one warning, nothing left behind.

``TWOCATS_CACHE_DIR`` naming a file, ``/dev/null``, ``/proc``, ``/``, a folder the user cannot
write or a full file system: a fresh process hashes with the reference's output and exactly one
warning, creates nothing inside the refused place and leaves no temporary file.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cache_damage import derive_in_child
from tests.support.environment import need
from twocats.kdf.engine import Engine
from twocats.profiles import CHEAPEST
from twocats.simd import cache


@pytest.fixture(scope="module")
def expected() -> str:
    """The cheapest profile's output through the pure-Python reference."""
    from twocats.simd import _jit

    if _jit.config.DISABLE_JIT:
        pytest.skip("needs compiled kernels (NUMBA_DISABLE_JIT is set)")
    return Engine("reference").derive(b"pw", b"saltsaltsalt", CHEAPEST).hex()


def _listing(folder: Path) -> list[str]:
    """The names directly inside ``folder``."""
    return sorted(os.listdir(folder))


def _one_warning_and_the_reference(
    setting: Path, expected: str, run_as: list[str] | None = None
) -> None:
    outcome = derive_in_child(setting, run_as=run_as)
    assert outcome.returncode == 0, outcome.stderr[-2000:]
    assert "Traceback" not in outcome.stderr
    assert outcome.output == expected
    assert len(outcome.warnings) == 1, outcome.warnings


def test_a_file_as_the_cache(expected: str, tmp_path: Path) -> None:
    """A regular file: one warning, the file unchanged, nothing created beside it."""
    setting = tmp_path / "a-file"
    setting.write_bytes(b"not a cache")
    _one_warning_and_the_reference(setting, expected)
    assert setting.read_bytes() == b"not a cache"
    assert _listing(tmp_path) == ["a-file"]


@pytest.mark.parametrize("place", ["/dev/null", "/proc", "/"])
def test_a_system_place_as_the_cache(expected: str, place: str) -> None:
    """``/dev/null``, ``/proc`` and ``/``: one warning and no new name in that place."""
    folder = Path(place) if Path(place).is_dir() else Path(place).parent
    before = _listing(folder)
    _one_warning_and_the_reference(Path(place), expected)
    new = set(_listing(folder)) - set(before)
    assert not {name for name in new if name == "aot" or name.startswith("numba-")}


def test_a_folder_the_user_cannot_write(expected: str) -> None:
    """An empty folder of root's that the user may read but not write: one warning, still
    empty afterwards."""
    if os.geteuid() != 0 or shutil.which("runuser") is None:
        need("root and runuser, to hash as a user who cannot write the folder")
    from tests.simd.test_cache_shared import _as_user

    top = Path(tempfile.mkdtemp(prefix="twocats-readonly-"))
    try:
        top.chmod(0o755)
        _one_warning_and_the_reference(top, expected, run_as=_as_user(top))
        assert _listing(top) == []
    finally:
        shutil.rmtree(top)


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB file system, too small for a kernel's cache entry."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        need("root and mount, to make a tiny file system")
    folder = tmp_path / "tiny"
    folder.mkdir(mode=0o700)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", str(folder)],
        capture_output=True,
    )
    if done.returncode != 0:
        need("permission to mount a tmpfs")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_a_full_file_system_leaves_no_temporary_file(expected: str, full_disk: Path) -> None:
    """Writes that run out of space: one warning, the reference's output, no ``.tmp`` left."""
    _one_warning_and_the_reference(full_disk, expected)
    left = [p for p in full_disk.rglob("*") if ".tmp" in p.name]
    assert left == []


def test_a_failed_write_removes_its_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that fails half-way raises, removes its temporary file and keeps the old file."""
    target = tmp_path / "entry"
    target.write_bytes(b"old")
    written: list[int] = []

    def full(fd: int, data: object) -> int:
        if written:
            raise OSError(errno.ENOSPC, "No space left on device")
        written.append(fd)
        return 1

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(OSError, match="No space"), cache.open_folder(tmp_path) as folder:
        folder.write("entry", b"new bytes")
    monkeypatch.undo()
    assert _listing(tmp_path) == ["entry"]
    assert target.read_bytes() == b"old"


@pytest.mark.parametrize("setting", ["/", "/dev/null", "/dev/null/sub"])
def test_a_refused_root_creates_nothing(setting: str) -> None:
    """Opening a folder below a refused cache root raises before creating anything."""
    root = Path(setting)
    with pytest.raises(cache.RefusedError):
        cache.open_folder(root / "aot", root=root, create=True)
