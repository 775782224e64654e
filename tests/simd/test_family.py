"""One life for every family: a family other than the fill is made ready, checked and built.

The test's family adds a step to every word of an array.  Its numba build passes its known-answer
check before first use (a failing build compiles afresh once, then raises), its artefact is built,
stored and loaded back through the same check, an artefact that fails the check is never stored,
and an isolated compile is bounded in time and remembered when it fails.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.support.aot_artefacts import need_artefacts, reset
from twocats.exceptions import BackendError
from twocats.simd import _jit, aot, cache, family
from twocats.simd._jit import variants
from twocats.simd.family import Family, KernelKey

ROOT = Path(__file__).resolve().parents[2]


@variants
def _add(values: Any, step: Any) -> None:
    for i in range(values.shape[0]):
        values[i] += step


# How many of the next checks fail (a damaged build, as the reference would find it).
_failing = [0]


def _kernel(key: KernelKey) -> Any:
    return _add.get(key.backend)


def _signature(key: KernelKey) -> str:
    return "int64[:], int64"


def _check(kernel: Any, key: KernelKey) -> bool:
    values = np.array([1, 2, 3], dtype=np.int64)
    kernel(values, 5)
    if _failing[0]:
        _failing[0] -= 1
        return False
    return values.tolist() == [6, 7, 8]


def _keys(backend: str, params: object) -> list[KernelKey]:
    return [] if params is not None else [KernelKey("test_add", backend)]


ADD: Family[KernelKey] = Family("test-add", _kernel, _signature, _check, _keys)
KEY = KernelKey("test_add", "scalar")


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Compiled kernels only; nothing ready and no warning given, as in a new process."""
    if _jit.config.DISABLE_JIT:
        pytest.skip("needs compiled kernels (NUMBA_DISABLE_JIT is set)")
    # The test's kernel lives outside the package; its artefact is keyed on the tree's files.
    monkeypatch.setattr(aot, "_PACKAGE", ROOT)
    _failing[0] = 0
    reset()
    yield
    reset()


def test_a_family_is_built_checked_and_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The family's artefact is built, indexed and loaded back through its own check; it takes
    numpy arrays and buffers alike, and refuses an array of another shape."""
    need_artefacts()
    monkeypatch.setenv(aot.AOT_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(cache.AOT_ENV, "1")
    kernel = family.ready(ADD, KEY)
    assert isinstance(kernel, aot.Entry)
    assert len(list(tmp_path.glob("*.so"))) == 1
    values = np.array([10, 20], dtype=np.int64)
    kernel(values, 5)
    assert values.tolist() == [15, 25]
    words = memoryview(bytearray(16)).cast("q")
    kernel(words, 3)
    assert words.tolist() == [3, 3]
    for wrong in (np.zeros((2, 2), np.int64), np.zeros(4, np.int32), np.zeros(8, np.int64)[::2]):
        with pytest.raises(TypeError, match="C-contiguous 1-D array of 8-byte elements"):
            kernel(wrong, 1)
    reset()
    assert isinstance(aot.load(ADD, KEY), aot.Entry)


def test_an_artefact_that_fails_its_check_is_never_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The built code's check fails: BackendError, and no file is left."""
    need_artefacts()
    monkeypatch.setenv(aot.AOT_DIR_ENV, str(tmp_path))
    numba_build = family._numba(ADD, KEY).build
    _failing[0] = 1
    with pytest.raises(BackendError, match="fails its known-answer check"):
        aot.build(ADD, KEY, numba_build)
    assert not list(tmp_path.glob("*.so")) + list(tmp_path.glob("*.o"))


def test_a_build_that_fails_its_check_compiles_afresh_once() -> None:
    """One failed check: one warning, the build compiles afresh ignoring the cache, and passes."""
    _failing[0] = 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kernel = family.ready(ADD, KEY)
    assert [str(w.message) for w in caught] == [
        "twocats: the kernel test_add__scalar fails its known-answer check; it compiles afresh"
    ]
    assert _add.get("scalar")._cache.afresh
    values = np.array([1], dtype=np.int64)
    kernel(values, 1)
    assert values.tolist() == [2]


def test_a_build_that_keeps_failing_raises_every_time() -> None:
    """A fresh build that still fails raises BackendError, and so does the next ready."""
    for _ in range(2):
        _failing[0] = 2
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(BackendError, match="fails its known-answer check"):
                family.ready(ADD, KEY)
        assert KEY.name not in family._ready


def test_an_isolated_compile_waits_a_bounded_time() -> None:
    """Behind another isolated compile for longer than ``wait``, ready raises TimeoutError."""
    holding, release = threading.Event(), threading.Event()

    def compiling() -> None:
        with family._compiling:
            holding.set()
            release.wait(30)

    other = threading.Thread(target=compiling)
    other.start()
    try:
        assert holding.wait(30)
        with pytest.raises(TimeoutError, match=r"waited 0\.2 s"):
            family.ready(ADD, KEY, elsewhere=True, wait=0.2)
    finally:
        release.set()
        other.join()


def test_a_key_a_child_could_not_compile_is_refused_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A key whose isolated child failed is refused, then refused at once without a child."""
    children: list[object] = []

    def failing(family_: object, key: object) -> None:
        children.append(key)

    monkeypatch.setattr(family, "_compiled_by_child", failing)
    for _ in range(2):
        with pytest.raises(BackendError, match="could not be compiled"):
            family.ready(ADD, KEY, elsewhere=True)
    assert children == [KEY]


def test_signatures_are_read_in_numbas_spelling() -> None:
    """Arrays of any dimensions and integers; anything else is refused."""
    assert aot.arguments("uint32[:], uint64[:, :], int64") == (
        aot.Argument("uint32", 1),
        aot.Argument("uint64", 2),
        aot.Argument("int64", 0),
    )
    with pytest.raises(ValueError, match="float64"):
        aot.arguments("float64[:]")
