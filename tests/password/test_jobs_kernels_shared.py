"""Planted kernel shapes under load: a busy error that always formats, and one compile at most.

A hasher without a ``timeout`` (``PasswordHasher()``'s default) whose caller waits behind another
stored hash's compile gets a HasherBusyError naming the time it waited, never a TypeError.  With
root's read-only shared cache, the service user's planted shape is compiled once, by the isolated
child: the kernel reaches the service as the artefact the child wrote into a private folder, so the
service imports no numba; where no artefact can be built the child cannot leave a kernel the service
could load, and the hash is refused like a wrong password with nothing compiled in the service.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.users import (
    cache_env,
    need_service_kernels,
    public_folder,
    python_as,
    warm_shared,
)
from twocats import PasswordHasher
from twocats.exceptions import HasherBusyError
from twocats.profiles import CHEAPEST
from twocats.simd import family

#: A stored hash's shape no cache holds in these tests: SHA-512, 16 lanes.
PLANTED = dataclasses.replace(
    CHEAPEST, hash_type="sha512", lanes=16, block_size=64, sub_block_size=64
)


def test_the_busy_error_formats_without_a_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """Behind another caller's compile for longer than the bound, a hasher without a timeout
    raises HasherBusyError naming the bound it waited."""
    monkeypatch.setattr(family, "COMPILE_SECONDS", 0.5)
    # No kernel is ready yet, as in a new process.
    monkeypatch.setattr(family, "_ready", {})
    monkeypatch.delenv("NUMBA_DISABLE_JIT", raising=False)
    hasher = PasswordHasher.from_params(CHEAPEST, backend="simd")
    assert hasher.timeout is None
    stored = PasswordHasher.from_params(PLANTED, backend="reference").hash("pw")
    holding, release = threading.Event(), threading.Event()

    def compiling() -> None:
        with family._compiling:
            holding.set()
            release.wait(30)

    other = threading.Thread(target=compiling)
    other.start()
    try:
        assert holding.wait(30)
        with pytest.raises(HasherBusyError, match=r"waited 0\.5 s \(timeout\)"):
            hasher.verify(stored, "pw")
    finally:
        release.set()
        other.join()


@pytest.fixture(scope="module")
def shared_cache() -> Iterator[Path]:
    """Root's cache of the cheapest profile, warmed with ``--shared``."""
    need_service_kernels()
    with public_folder("twocats-planted-shared-") as top:
        done = warm_shared(top / "cache")
        assert done.returncode == 0, done.stderr
        yield top / "cache"


#: The service: the planted hash with the right and a wrong password, then what ran here.
_SERVICE = """
import json, sys
from twocats import PasswordHasher
from twocats.exceptions import TwoCatsError
from twocats.profiles import CHEAPEST
hasher = PasswordHasher.from_params(CHEAPEST)
answers = []
for password in ("pw", "wrong"):
    try:
        answers.append(hasher.verify(sys.argv[1], password))
    except TwoCatsError as error:
        answers.append(type(error).__name__)
compiled = None
if "numba" in sys.modules:
    from twocats.kdf.fill.family import fill_variants
    compiled = len(fill_variants(16, 3, 0).get("simd").overloads)
print(json.dumps({"answers": answers, "numba": "numba" in sys.modules, "compiled": compiled}))
"""


def _service(cache: Path, *, aot: bool) -> dict[str, object]:
    stored = PasswordHasher.from_params(PLANTED, backend="reference").hash("pw")
    done = subprocess.run(
        [*python_as(), "-c", _SERVICE, stored],
        env=cache_env(cache, aot=aot),
        cwd="/",
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_a_read_only_cache_gets_the_childs_artefact(shared_cache: Path) -> None:
    """The service user's planted shape: compiled by the child alone, verified rightly, and the
    service never imports numba."""
    import numba

    from twocats.simd.aot import BUILD_NUMBA

    if numba.__version__ not in BUILD_NUMBA:
        pytest.skip(f"artefacts are built with numba {', '.join(sorted(BUILD_NUMBA))} only")
    result = _service(shared_cache, aot=True)
    assert result == {"answers": [True, "VerifyMismatchError"], "numba": False, "compiled": None}


def test_without_artefacts_a_read_only_cache_refuses_the_shape(shared_cache: Path) -> None:
    """Without artefacts the child cannot leave the kernel anywhere: the planted hash is refused
    like a wrong password (HashLimitError, both times), and nothing compiled in the service."""
    result = _service(shared_cache, aot=False)
    assert result == {
        "answers": ["HashLimitError", "HashLimitError"],
        "numba": True,
        "compiled": 0,
    }
