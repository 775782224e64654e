"""Child processes run isolated: nothing is imported from the working directory or from a folder
others may write to, no secret reaches them, and they work in ``/``.

The issue's reproduction runs for real: the service (root) verifies a planted hash of a kernel
shape it has never compiled, from a working directory where another user left a ``numba.py``; the
compile child does not import it, and the verification gives the right answer.  A folder others
may write on the parent's ``PYTHONPATH`` (which the parent itself imports from: that is its own
setting) is not a child's either.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.users import SERVICE, need_root
from twocats import _child
from twocats.kdf.fill.args import FillKey
from twocats.kdf.fill.family import FILL
from twocats.simd.family import Job, warm

#: A module that leaves a mark where it is imported, and then fails the import.
_PLANTED = """
import os
with open({mark!r}, "a") as out:
    out.write(f"{{__file__}} ran as uid {{os.getuid()}}\\n")
raise ImportError("planted")
"""


@pytest.fixture
def planted() -> Iterator[tuple[Path, Path, Path]]:
    """A working directory and a folder everyone may write, each with a planted ``numba.py``
    (the service user's where this runs as root), and the file their marks go to."""
    top = Path(tempfile.mkdtemp(prefix="twocats-planted-"))
    top.chmod(0o755)
    work, everyone = top / "work", top / "everyone"
    mark = top / "marks"
    try:
        for folder in (work, everyone):
            folder.mkdir()
            (folder / "numba.py").write_text(_PLANTED.format(mark=str(mark)))
        everyone.chmod(0o777)
        if os.geteuid() == 0:
            for path in (work, work / "numba.py", everyone / "numba.py"):
                shutil.chown(path, SERVICE)
        yield work, everyone, mark
    finally:
        shutil.rmtree(top)


def test_a_child_gets_no_secret_no_planted_folder_and_works_in_the_root_folder(
    planted: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """From a working directory with a planted module, with a secret and a folder others may
    write in the environment, the child is isolated, in ``/``, and sees neither."""
    work, everyone, mark = planted
    monkeypatch.chdir(work)
    monkeypatch.setenv("TWOCATS_DATABASE_URL", "postgresql://app:secret@db/app")
    monkeypatch.setenv("PYTHONPATH", str(everyone))
    monkeypatch.syspath_prepend(str(everyone))
    code = (
        "import json, os, sys; "
        "print(json.dumps([dict(os.environ), os.getcwd(), sys.flags.isolated, sys.path]))"
    )
    done = _child.run(code, timeout=60, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    environment, cwd, isolated, path = json.loads(done.stdout)
    assert "TWOCATS_DATABASE_URL" not in environment
    assert "PYTHONPATH" not in environment
    assert set(environment) <= _child.PASSED | {
        name for name in environment if name.startswith(_child.PASSED_PREFIX)
    }
    assert (cwd, isolated) == ("/", 1)
    assert str(everyone) not in path
    assert str(work) not in path
    assert "" not in path
    assert not mark.exists()


def test_warmup_workers_import_nothing_planted(
    planted: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``warm`` on two processes, started from the planted working directory with the
    planted folder on PYTHONPATH, compiles both kernels and runs neither planted module."""
    from twocats.simd import _jit

    if _jit.config.DISABLE_JIT:
        pytest.skip("needs compiled kernels (NUMBA_DISABLE_JIT is set)")
    work, everyone, mark = planted
    monkeypatch.chdir(work)
    monkeypatch.setenv("PYTHONPATH", str(everyone))
    jobs = [Job(FILL, FillKey(1, "scalar", 0, 0)), Job(FILL, FillKey(2, "scalar", 0, 0))]
    done = [job for job, _seconds, _artefact in warm(jobs, 2)]
    assert set(done) == set(jobs)
    assert not mark.exists()


#: The service: verify a planted hash of a new shape (sha512, 16 lanes), right and wrong.
_SERVICE = """
import json, sys
from twocats import PasswordHasher
from twocats.exceptions import VerifyMismatchError
from twocats.profiles import CHEAPEST
hasher = PasswordHasher.from_params(CHEAPEST)
right = hasher.verify(sys.argv[1], "pw")
try:
    hasher.verify(sys.argv[1], "wrong")
    wrong = "accepted"
except VerifyMismatchError:
    wrong = "mismatch"
print(json.dumps({"right": right, "wrong": wrong, "numba": "numba" in sys.modules}))
"""


def test_a_planted_shape_compiles_without_running_planted_code(
    planted: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """The issue's reproduction: root's service in a working directory where the service user
    planted ``numba.py``: the planted hash is verified rightly and the planted module never
    runs (the kernel reaches the service without numba)."""
    need_root()
    import dataclasses

    from twocats import PasswordHasher
    from twocats.profiles import CHEAPEST

    work, _everyone, mark = planted
    shape = dataclasses.replace(
        CHEAPEST, hash_type="sha512", lanes=16, block_size=64, sub_block_size=64
    )
    stored = PasswordHasher.from_params(shape, backend="reference").hash("pw")
    script = tmp_path / "service.py"
    script.write_text(_SERVICE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TWOCATS_")}
    env["TWOCATS_CACHE_DIR"] = str(tmp_path / "cache")
    env.pop("NUMBA_DISABLE_JIT", None)
    done = subprocess.run(
        [sys.executable, str(script), stored],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.splitlines()[-1]) == {
        "right": True,
        "wrong": "mismatch",
        "numba": False,
    }
    assert not mark.exists(), mark.read_text()
