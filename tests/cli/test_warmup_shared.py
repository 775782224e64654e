"""``twocats warmup --shared`` never follows a link at or under the cache root.

Root runs the documented recipe on a cache root that the service user turned into a link to a
folder of root's (a stand-in for ``/etc``): the command refuses with one line naming the root,
no mode changes behind the link and nothing is created there.  Inside a cache root of root's,
only what the cache's records name becomes readable by everyone: a linked folder, another user's
folder, a file whose bytes differ from its record and everything unrecorded are left alone.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.users import SERVICE, need_root, public_folder, warm_shared
from twocats.simd import cache


@pytest.fixture
def top() -> Iterator[Path]:
    """A folder every user may enter, removed afterwards."""
    need_root()
    with public_folder("twocats-shared-links-") as folder:
        yield folder


def _stand_in(top: Path) -> Path:
    """A folder of root's with a private file and a private folder, as ``/etc`` has."""
    folder = top / "etc"
    (folder / "ssl-private").mkdir(parents=True, mode=0o700)
    (folder / "shadow").write_text("root:secret\n")
    (folder / "shadow").chmod(0o600)
    (folder / "ssl-private").chmod(0o700)
    return folder


def _modes(folder: Path) -> dict[str, int]:
    """Every name under ``folder`` (itself included) with its mode, links not followed."""
    return {
        str(path.relative_to(folder)): stat.S_IMODE(path.lstat().st_mode)
        for path in [folder, *folder.rglob("*")]
    }


def test_warmup_shared_refuses_a_linked_root_and_changes_nothing_behind_it(top: Path) -> None:
    """The service user links the cache root to root's folder: warmup --shared exits 1 with one
    line naming the root, and the folder behind the link keeps every mode and name."""
    home = top / "svc-home"
    home.mkdir()
    shutil.chown(home, SERVICE)
    stand_in = _stand_in(top)
    before = _modes(stand_in)
    root = home / "twocats-cache"
    link = ["runuser", "-u", SERVICE, "--", "ln", "-s", str(stand_in), str(root)]
    subprocess.run(link, check=True)
    done = warm_shared(root)
    assert done.returncode == 1, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [f"Error: --shared refused the cache: {root} is a symbolic link"]
    assert _modes(stand_in) == before


def _record(folder: Path, name: str, data: bytes) -> str:
    """Write a private file; return its SHA-256."""
    (folder / name).write_bytes(data)
    (folder / name).chmod(0o600)
    return hashlib.sha256(data).hexdigest()


def test_share_changes_only_what_the_records_name(top: Path) -> None:
    """A cache of root's with a linked folder, the service user's folder, a damaged recorded file
    and unrecorded files: only the recorded files and root's folders are shared, and each thing
    left alone is named once."""
    stand_in = _stand_in(top)
    before = _modes(stand_in)
    root = top / "cache"
    aot = root / "aot"
    aot.mkdir(parents=True, mode=0o700)
    root.chmod(0o700)
    artefact = "a" * 64 + ".so"
    index = {"k": {"file": artefact, "sha256": _record(aot, artefact, b"code"), "sources": {}}}
    index["damaged"] = {"file": "b" * 64 + ".so", "sha256": "0" * 64, "sources": {}}
    _record(aot, "b" * 64 + ".so", b"other code")
    _record(aot, "index.json", json.dumps(index).encode())
    _record(aot, "index.lock", b"")
    _record(root, "notes.txt", b"not the cache's")
    (root / "numba-0.68.1").symlink_to(stand_in, target_is_directory=True)
    (root / "theirs").mkdir(mode=0o700)
    shutil.chown(root / "theirs", SERVICE)

    done = cache.share(root)

    assert sorted(done.refused) == sorted(
        [
            f"{aot / ('b' * 64 + '.so')} does not have its recorded SHA-256",
            f"{root / 'numba-0.68.1'} is a symbolic link",
            f"{root / 'theirs'} is owned by another user",
        ]
    )
    assert _modes(stand_in) == before
    modes = _modes(root)
    assert modes["."] == modes["aot"] == 0o755
    assert modes[f"aot/{artefact}"] == modes["aot/index.json"] == 0o644
    for private in ("aot/index.lock", "notes.txt", f"aot/{'b' * 64}.so"):
        assert modes[private] == 0o600, private
    assert modes["theirs"] == 0o700


def test_share_refuses_a_root_of_another_user(top: Path) -> None:
    """A cache root the caller does not own is refused whole, naming it, and nothing changes."""
    root = top / "cache"
    root.mkdir(mode=0o700)
    _record(root, "index.json", b"{}")
    shutil.chown(root, SERVICE)
    with pytest.raises(cache.RefusedError, match=f"{root} is owned by another user"):
        cache.share(root)
    assert _modes(root) == {".": 0o700, "index.json": 0o600}
