"""A damaged kernel cache never gives a wrong hash, a crash or a traceback.

One cache is warmed for the cheapest profile under ``umask 000``; each test damages one file of a
copy of it (numba's index, data and digest record, an artefact linked as a shared object or kept
as an object for MCJIT, the artefacts' index) by one bit, in the machine code where there is
some, or by truncation, and derives in a fresh process: the output is always the reference's, and
a damage that the process reads is told in exactly one warning (the kernel compiles afresh, or
numba's build serves).  ``TWOCATS_DAMAGE_SWEEP=1`` adds a bit flip at every 64th byte of the fill
kernel's machine code in numba's cache.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.cache_damage import Outcome, derive_in_child, flip_bit, text_ranges, truncate
from tests.support.environment import need
from twocats.kdf.engine import Engine
from twocats.profiles import CHEAPEST

#: The fill kernel the cheapest profile runs, as numba's cache names its files.
FILL = "fill_final_l8_blake2s__simd"


@pytest.fixture(scope="module")
def expected() -> str:
    """The cheapest profile's output through the pure-Python reference."""
    return Engine("reference").derive(b"pw", b"saltsaltsalt", CHEAPEST).hex()


def _warm(cache: Path, extra_env: dict[str, str] | None = None) -> None:
    """Run ``twocats warmup`` for the cheapest profile into ``cache`` under umask 000."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TWOCATS_")}
    env |= {"TWOCATS_CACHE_DIR": str(cache), "TWOCATS_AOT": "1", **(extra_env or {})}
    command = [sys.executable, "-m", "twocats.cli", "warmup", "--profile", "cheapest"]
    done = subprocess.run(
        [*command, "--insecure", "--jobs", "1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        preexec_fn=lambda: os.umask(0),
    )
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A kernel cache warmed for the cheapest profile (numba's cache and a shared object)."""
    from twocats.simd import _jit
    from twocats.simd.aot import compiler

    if _jit.config.DISABLE_JIT:
        pytest.skip("needs compiled kernels (NUMBA_DISABLE_JIT is set)")
    if compiler() is None:
        need("a C compiler (cc) to link ahead-of-time kernels")
    cache = tmp_path_factory.mktemp("warm") / "cache"
    _warm(cache)
    return cache


@pytest.fixture(scope="module")
def warm_object(warm: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The warm cache with its artefact built as where no C compiler exists (an object)."""
    cache = tmp_path_factory.mktemp("warm-object") / "cache"
    shutil.copytree(warm, cache, symlinks=True)
    shutil.rmtree(cache / "aot")
    _warm(cache, {"CC": str(cache / "no-such-compiler")})
    assert list((cache / "aot").glob("*.o"))
    return cache


def _fill_file(cache: Path, suffix: str) -> Path:
    """The fill kernel's file of numba's cache that ends with ``suffix``."""
    (path,) = cache.glob(f"numba-*/*/*/*/*{FILL}-*{suffix}")
    return path


def _callee_data(cache: Path) -> Path:
    """The data file of the state hash the fill kernel calls."""
    (path,) = cache.glob("numba-*/*/scalar/twocats.kdf.fill.statehash/*.hv_blake2s-*.nbc")
    return path


def _artefact(cache: Path) -> Path:
    (path,) = [p for p in (cache / "aot").iterdir() if p.suffix in (".so", ".o")]
    return path


def _in_text(fraction: float) -> Callable[[Path], None]:
    """A damage: flip one bit ``fraction`` of the way through the file's machine code."""

    def damage(path: Path) -> None:
        ranges = text_ranges(path.read_bytes())
        assert ranges, f"no machine code found in {path.name}"
        start, end = max(ranges, key=lambda r: r[1] - r[0])
        flip_bit(start + int((end - start) * fraction), bit=3)(path)

    return damage


def _in_recorded_digest(path: Path) -> None:
    """A damage: change one hex digit of the data file's digest in numba's digest record."""
    record = json.loads(path.read_text())
    name = next(name for name in record if name.endswith(".nbc"))
    digest = record[name]
    record[name] = ("1" if digest[0] != "1" else "2") + digest[1:]
    path.write_text(json.dumps(record))


def _in_artefact_digest(path: Path) -> None:
    """A damage: change one hex digit of the artefact's SHA-256 in the artefacts' index."""
    index = json.loads(path.read_text())
    for entry in index.values():
        digest = entry["sha256"]
        entry["sha256"] = ("1" if digest[0] != "1" else "2") + digest[1:]
    path.write_text(json.dumps(index))


@dataclass(frozen=True)
class Damage:
    """One damage: which file of which warm cache, how, and whether artefacts are on."""

    name: str
    target: Callable[[Path], Path]
    damage: Callable[[Path], None]
    aot: bool
    #: Whether the process must read the damaged file (and so warn exactly once).
    read: bool = True
    cache: str = "warm"


def _numba(name: str, target: Callable[[Path], Path], damage: Callable[[Path], None]) -> Damage:
    return Damage(f"numba-{name}", target, damage, aot=False)


def _nbc(cache: Path) -> Path:
    return _fill_file(cache, ".nbc")


def _nbi(cache: Path) -> Path:
    return _fill_file(cache, ".nbi")


def _digests(cache: Path) -> Path:
    return _fill_file(cache, ".sha256")


def _index(cache: Path) -> Path:
    return cache / "aot" / "index.json"


DAMAGES = [
    *(_numba(f"nbc-text-{i}", _nbc, _in_text(i / 4)) for i in range(4)),
    _numba("nbc-pickle-header", _nbc, flip_bit(2)),
    _numba("nbc-truncated-half", _nbc, truncate(0.5)),
    _numba("nbc-truncated-empty", _nbc, truncate(0.0)),
    _numba("nbi-bit", _nbi, flip_bit(-20)),
    _numba("nbi-truncated", _nbi, truncate(0.5)),
    _numba("digest-record-digit", _digests, _in_recorded_digest),
    _numba("digest-record-truncated", _digests, truncate(0.5)),
    Damage("numba-callee-nbc-bit", _callee_data, _in_text(0.5), aot=False, read=False),
    *(Damage(f"so-text-{i}", _artefact, _in_text(i / 3), aot=True) for i in range(3)),
    Damage("so-elf-header", _artefact, flip_bit(0x10), aot=True),
    Damage("so-truncated", _artefact, truncate(0.5), aot=True),
    Damage("aot-index-digest", _index, _in_artefact_digest, aot=True),
    Damage("aot-index-truncated", _index, truncate(0.5), aot=True),
    *(
        Damage(f"o-text-{i}", _artefact, _in_text(i / 2), aot=True, cache="warm_object")
        for i in range(2)
    ),
    Damage("o-truncated", _artefact, truncate(0.3), aot=True, cache="warm_object"),
]


@pytest.fixture
def copy_of(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[str], Path]:
    """Return a private copy of a warm cache fixture (by name) for one test to damage."""

    def make(name: str) -> Path:
        source: Path = request.getfixturevalue(name)
        target = tmp_path / "cache"
        shutil.copytree(source, target, symlinks=True)
        return target

    return make


def _check(outcome: Outcome, expected: str, damage: Damage) -> None:
    assert outcome.returncode == 0, outcome.stderr[-2000:]
    assert "Traceback" not in outcome.stderr
    assert outcome.output == expected
    if damage.read:
        assert len(outcome.warnings) == 1, outcome.warnings
    else:
        assert len(outcome.warnings) <= 1, outcome.warnings


@pytest.mark.parametrize("damage", DAMAGES, ids=lambda damage: damage.name)
def test_a_damaged_cache_gives_the_reference_output(
    damage: Damage, copy_of: Callable[[str], Path], expected: str
) -> None:
    """Each damage gives the reference's output in a fresh process, with one warning if read."""
    cache = copy_of(damage.cache)
    if not damage.aot:
        shutil.rmtree(cache / "aot")
    damage.damage(damage.target(cache))
    _check(derive_in_child(cache, aot=damage.aot), expected, damage)


def test_a_recompiled_entry_serves_the_next_process_silently(
    copy_of: Callable[[str], Path], expected: str
) -> None:
    """After a damaged entry compiled afresh, the next process loads it with no warning."""
    cache = copy_of("warm")
    shutil.rmtree(cache / "aot")
    _in_text(0.5)(_nbc(cache))
    assert len(derive_in_child(cache, aot=False).warnings) == 1
    healed = derive_in_child(cache, aot=False)
    assert (healed.output, healed.warnings) == (expected, [])


@pytest.mark.skipif(
    os.environ.get("TWOCATS_DAMAGE_SWEEP") != "1", reason="the long sweep is opt-in"
)
def test_every_64th_byte_of_numba_machine_code(
    copy_of: Callable[[str], Path], expected: str, tmp_path: Path
) -> None:
    """A bit flip at every 64th byte of the fill kernel's machine code: the reference's output."""
    warm = copy_of("warm")
    ranges = text_ranges(_nbc(warm).read_bytes())
    start, end = max(ranges, key=lambda r: r[1] - r[0])
    for offset in range(start, end, 64):
        cache = tmp_path / f"sweep-{offset}"
        shutil.copytree(warm, cache, symlinks=True)
        shutil.rmtree(cache / "aot")
        flip_bit(offset, bit=offset % 8)(_nbc(cache))
        damage = Damage(f"sweep-{offset}", _nbc, flip_bit(offset), aot=False)
        _check(derive_in_child(cache, aot=False), expected, damage)
        shutil.rmtree(cache)


def test_no_cache_file_is_writable_by_group_or_others_after_a_umask_000_warmup(
    warm: Path, warm_object: Path
) -> None:
    """A warm-up under umask 000 leaves every file 0600 and every folder 0700."""
    for root in (warm, warm_object):
        paths = [root, *root.rglob("*")]
        assert len(paths) > 10
        for path in paths:
            mode = stat.S_IMODE(path.lstat().st_mode)
            assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))
        assert not [p for p in paths if p.name.endswith(".tmp") or ".tmp." in p.name]


def test_artefact_builds_are_reproducible(warm: Path, tmp_path: Path) -> None:
    """A fresh build of the same kernel, in a process that compiled something else first, has
    the warm-up's SHA-256 (numba's process-wide counters do not reach the artefact)."""
    script = (
        "import numba\n"
        "numba.njit(lambda x: x + 1)(1)\n"
        "from twocats.kdf.fill.args import FillKey\n"
        "from twocats.kdf.fill.family import FILL\n"
        "from twocats.simd import aot, family\n"
        "key = FillKey(8, 'simd', 0, 0)\n"
        "print(aot.build(FILL, key, family._numba(FILL, key).build).name)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("TWOCATS_")}
    env |= {"TWOCATS_CACHE_DIR": str(tmp_path / "cache"), "TWOCATS_AOT": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == _artefact(warm).name
