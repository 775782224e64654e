"""Ahead-of-time kernels are used only after their checks, and the password path stays numba-free.

A refused artefact (changed byte, folder others may write, index naming another file) warns once
and the hash is still right through numba; an artefact built from other sources is a silent
miss.  With artefacts present, ``twocats hash``, ``twocats verify`` and the library's
``PasswordHasher().verify`` import neither numba, llvmlite nor numpy (llvmlite only for an object
built where no C compiler exists).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.aot_artefacts import artefacts_in, reset
from twocats.exceptions import BackendError
from twocats.kdf.engine import Engine
from twocats.kdf.fill.args import FillKey
from twocats.kdf.fill.family import FILL
from twocats.params import Params
from twocats.simd import aot, cache, family

#: The default profile's kernel: the only artefact these tests build.
KEY = FillKey(8, "simd", 0, 0)

#: A small parameter set that runs KEY (final block hash, blake2s, 8 lanes).
PARAMS = Params(mem_cost=10, multiplies=2, lanes=8, hash_type="blake2s")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder with KEY's artefact, enabled for the module."""
    with artefacts_in(tmp_path_factory.mktemp("aot"), [KEY]) as folder:
        yield folder


@pytest.fixture(scope="module")
def built_object(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder with KEY's artefact built as where no C compiler exists (an object for MCJIT)."""
    with artefacts_in(tmp_path_factory.mktemp("aot-object"), [KEY], linked=False) as folder:
        yield folder


@pytest.fixture(params=["shared", "object"])
def spoiled(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """A private copy of a built folder (a shared object's, then an object's) for one test to
    damage, with the artefacts forgotten around it."""
    source: Path = request.getfixturevalue("built" if request.param == "shared" else "built_object")
    folder = tmp_path / "aot"
    folder.mkdir(mode=0o700)
    for path in source.iterdir():
        (folder / path.name).write_bytes(path.read_bytes())
        (folder / path.name).chmod(0o644)
    monkeypatch.setenv(aot.AOT_DIR_ENV, str(folder))
    reset()
    yield folder
    reset()


def _artefacts(folder: Path) -> list[Path]:
    """The artefact files in ``folder``, of either kind."""
    return [path for path in folder.iterdir() if path.suffix in (aot.SHARED, aot.OBJECT)]


def _expected() -> bytes:
    """PARAMS' output through numba's build (artefacts off)."""
    os.environ[cache.AOT_ENV] = "0"
    try:
        reset()
        return Engine("simd").derive(b"pw", b"saltsaltsalt", PARAMS)
    finally:
        os.environ[cache.AOT_ENV] = "1"
        reset()


def _derive_twice_counting_warnings() -> tuple[bytes, int]:
    """Derive PARAMS on two fresh engines; return the output and the RuntimeWarnings raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = Engine("simd").derive(b"pw", b"saltsaltsalt", PARAMS)
        family._ready.pop(KEY.name, None)
        second = Engine("simd").derive(b"pw", b"saltsaltsalt", PARAMS)
    assert first == second
    return first, sum(issubclass(w.category, RuntimeWarning) for w in caught)


def test_intact_artefact_loads_without_warning(spoiled: Path) -> None:
    """The untouched copy loads, silently, and derives the right output."""
    expected = _expected()
    output, warned = _derive_twice_counting_warnings()
    assert output == expected
    assert warned == 0
    assert aot.load(FILL, KEY) is not None


def test_changed_byte_is_refused_with_one_warning_and_the_result_is_right(spoiled: Path) -> None:
    """One flipped byte fails the SHA-256 check: one warning, numba's build, the right output;
    the refused artefact is then built again, so that the next process loads it."""
    expected = _expected()
    (artefact,) = _artefacts(spoiled)
    intact = artefact.read_bytes()
    data = bytearray(intact)
    data[len(data) // 2] ^= 0x01
    artefact.write_bytes(bytes(data))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert aot.load(FILL, KEY) is None
    assert len(caught) == 1
    output, warned = _derive_twice_counting_warnings()
    assert output == expected
    assert warned == 0
    (rebuilt,) = _artefacts(spoiled)
    assert rebuilt.read_bytes() == intact or rebuilt.suffix != artefact.suffix
    assert aot.load(FILL, KEY) is not None


@pytest.mark.parametrize("mode", [0o770, 0o707])
def test_folder_writable_by_group_or_others_is_refused(spoiled: Path, mode: int) -> None:
    """A folder that group or others may write to is not read: one warning, right output."""
    expected = _expected()
    spoiled.chmod(mode)
    output, warned = _derive_twice_counting_warnings()
    assert output == expected
    assert warned == 1


def test_artefact_writable_by_others_is_refused(spoiled: Path) -> None:
    """A shared object that others may write to is refused like a changed one."""
    (artefact,) = _artefacts(spoiled)
    artefact.chmod(0o666)
    _output, warned = _derive_twice_counting_warnings()
    assert warned == 1


def test_index_naming_a_file_elsewhere_is_refused(spoiled: Path) -> None:
    """An index entry whose file is outside the folder is refused, never opened."""
    index_path = spoiled / "index.json"
    index = json.loads(index_path.read_text())
    for entry in index.values():
        entry["file"] = "../elsewhere.so"
    index_path.write_text(json.dumps(index))
    _output, warned = _derive_twice_counting_warnings()
    assert warned == 1


def test_artefact_of_other_sources_is_a_silent_miss(spoiled: Path) -> None:
    """An entry built from other kernel sources is not used, and that is no warning."""
    index_path = spoiled / "index.json"
    index = json.loads(index_path.read_text())
    for entry in index.values():
        first = next(iter(entry["sources"]))
        entry["sources"][first] = "0" * 64
    index_path.write_text(json.dumps(index))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert aot.load(FILL, KEY) is None
    assert not caught


def test_numba_cache_folder_writable_by_others_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """numba's kernel cache is neither loaded from nor written to a folder others may write to:
    one warning, and the kernel compiles in memory."""
    from twocats.simd import _jit, cache
    from twocats.simd.cache import CACHE_ENV

    if _jit.config.DISABLE_JIT:
        pytest.skip("needs compiled kernels (NUMBA_DISABLE_JIT is set)")
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(cache, "_warned", [False])
    tmp_path.chmod(0o777)

    @_jit.jit
    def kernel(x: int) -> int:
        return x + 1

    with pytest.warns(RuntimeWarning, match="writable by group or others") as caught:
        assert kernel(1) == 2
    assert len(caught) == 1
    assert list(tmp_path.iterdir()) == []


def _child_env(folder: Path) -> dict[str, str]:
    env = dict(os.environ)
    env[aot.AOT_DIR_ENV] = str(folder)
    env[cache.AOT_ENV] = "1"
    return env


_SMALL = ["--mem-cost", "10", "--multiplies", "2", "--lanes", "8", "--hash-type", "blake2s"]


def _imports_of(command: list[str], stdin: str, folder: Path) -> tuple[str, str]:
    """Run ``command`` under ``-X importtime``; return its output and every module it imported."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *command],
        input=stdin,
        capture_output=True,
        text=True,
        env=_child_env(folder),
        timeout=300,
        check=True,
    )
    modules = " ".join(
        line.rsplit("|", 1)[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    )
    return done.stdout, modules


def test_hash_and_verify_commands_import_no_numba_with_artefacts(built: Path) -> None:
    """``twocats hash`` and ``twocats verify`` run on the artefact: no numba, llvmlite, numpy or
    generator."""
    stored, modules = _imports_of(
        ["-m", "twocats.cli", "hash", "--password-stdin", *_SMALL], "pw\n", built
    )
    assert stored.startswith("$twocats$")
    assert {"twocats.simd.aot", "twocats.kdf.fill.family"} <= set(modules.split())
    assert not {"numba", "llvmlite", "numpy", "codegen"} & set(modules.split())
    _output, modules = _imports_of(
        ["-m", "twocats.cli", "verify", "--password-stdin", stored.strip()], "pw\n", built
    )
    assert "twocats.simd.aot" in modules.split()
    assert not {"numba", "llvmlite", "numpy"} & set(modules.split())


def test_hash_without_a_c_compiler_runs_on_mcjit_without_numba(tmp_path: Path) -> None:
    """Built where no C compiler exists, the artefact is an object that ``twocats hash`` loads
    through llvmlite's MCJIT: llvmlite is imported, numba and numpy are not."""
    with artefacts_in(tmp_path / "aot", [KEY], linked=False) as folder:
        assert [path.suffix for path in folder.glob("*.o")] == [aot.OBJECT]
        stored, modules = _imports_of(
            ["-m", "twocats.cli", "hash", "--password-stdin", *_SMALL], "pw\n", folder
        )
    assert stored.startswith("$twocats$")
    assert "llvmlite" in modules.split()
    assert not {"numba", "numpy"} & set(modules.split())


def test_library_verify_imports_no_numba_with_artefacts(built: Path) -> None:
    """``PasswordHasher().verify`` on a stored hash loads the artefact and no numba or numpy."""
    script = (
        "import sys\n"
        "from twocats import PasswordHasher\n"
        "hasher = PasswordHasher(mem_cost=10, multiplies=2)\n"
        "stored = hasher.hash('pw')\n"
        "assert hasher.verify(stored, 'pw') is True\n"
        "heavy = ('numba', 'llvmlite', 'numpy')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=_child_env(built),
        timeout=300,
        check=True,
    )
    assert done.stdout.strip() == "[]"


def test_warmup_writes_the_artefact(tmp_path: Path) -> None:
    """``twocats warmup`` leaves an index entry and a shared object for the kernel it compiled."""
    folder = tmp_path / "aot"
    done = subprocess.run(
        [sys.executable, "-m", "twocats.cli", "warmup", "--jobs", "1", *_SMALL],
        capture_output=True,
        text=True,
        env=_child_env(folder),
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    index = json.loads((folder / "index.json").read_text())
    (entry,) = index.values()
    assert (folder / entry["file"]).is_file()
    assert next(iter(index)).startswith(KEY.name + "|")


def test_first_numba_build_writes_the_artefact(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hash that finds no artefact builds one, uses it, and a new process finds it."""
    folder = tmp_path / "aot"
    monkeypatch.setenv(aot.AOT_DIR_ENV, str(folder))
    reset()
    try:
        expected = _expected()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            engine = Engine("simd")
            assert engine.derive(b"pw", b"saltsaltsalt", PARAMS) == expected
        assert not caught
        assert isinstance(family._ready[KEY.name], aot.Entry)
        (entry,) = json.loads((folder / "index.json").read_text()).values()
        assert (folder / entry["file"]).is_file()
    finally:
        reset()


@pytest.mark.parametrize(
    "change",
    [{"sources": []}, {"sources": {"x.py": 1}}, {"file": "\x00.so"}, {"file": 5}, {"file": "a.so"}],
    ids=["sources-list", "digest-int", "file-nul", "file-int", "file-not-a-digest"],
)
def test_malformed_index_entry_is_refused_with_one_warning(
    spoiled: Path, change: dict[str, object]
) -> None:
    """A malformed index entry is a refusal (one warning, numba's build), never an exception."""
    expected = _expected()
    index_path = spoiled / "index.json"
    index = json.loads(index_path.read_text())
    for entry in index.values():
        entry.update(change)
    index_path.write_text(json.dumps(index))
    output, warned = _derive_twice_counting_warnings()
    assert output == expected
    assert warned == 1


def test_missing_artefact_is_built_once_even_if_that_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A missing artefact is built at most once per process, even if that build fails."""
    if cache.jit_disabled():
        pytest.skip("needs compiled kernels (NUMBA_DISABLE_JIT is set)")
    monkeypatch.setenv(aot.AOT_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(cache.AOT_ENV, "1")
    builds: list[object] = []

    def failing(*args: object) -> None:
        builds.append(args)
        raise BackendError("no build here")

    monkeypatch.setattr(aot, "build", failing)
    reset()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(2):
                family._ready.pop(KEY.name, None)
                assert family.ready(FILL, KEY) is not None
        assert len(builds) == 1
        assert ["could not build the compiled kernel" in str(w.message) for w in caught] == [True]
    finally:
        reset()


def test_one_trust_rule_for_every_cache_and_package_file() -> None:
    """A file is trusted when root or this user owns it and neither group nor others may write."""
    from twocats.simd.cache import trust_problem

    def file(mode: int, uid: int) -> os.stat_result:
        return os.stat_result((stat.S_IFREG | mode, 0, 0, 1, uid, 0, 0, 0, 0, 0))

    me = os.geteuid()
    stranger = 54321 if me != 54321 else 54322
    for owner in {me, 0}:
        assert trust_problem(Path("f"), file(0o644, owner)) is None
        assert trust_problem(Path("f"), file(0o600, owner)) is None
        assert "writable by group or others" in str(trust_problem(Path("f"), file(0o664, owner)))
        assert "writable by group or others" in str(trust_problem(Path("f"), file(0o646, owner)))
    assert "another user" in str(trust_problem(Path("f"), file(0o644, stranger)))
