"""A kernel's known-answer check (``Variants.checked_by``) decides before its first use.

``get`` returns a build only once it passed its check in this process; the check may call the
code that calls the kernel (``get`` hands it the build being checked).  A build that fails is
compiled afresh with every kernel it calls, none of them loaded from the cache again, with one
warning; a build that still fails raises, and is checked again on the next ``get``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from twocats.exceptions import BackendError
from twocats.simd import _jit, cache
from twocats.simd._jit import variants


@variants
def _plus_one(x: Any) -> Any:
    return x + np.uint64(1)


@variants
def _twice_plus_one(x: Any) -> Any:
    return _plus_one(x) * np.uint64(2)


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """Compiled kernels only; the kernel is checked again, with the process's warning unsaid."""
    if _jit.config.DISABLE_JIT:
        pytest.skip("needs compiled kernels (NUMBA_DISABLE_JIT is set)")
    monkeypatch.setattr(cache, "_warned", [False])
    monkeypatch.setattr(_twice_plus_one, "_ready", {})


def _check(failures: int, calls: list[str]) -> Any:
    """A check that calls the kernel through ``get`` and fails its first ``failures`` times."""

    def check(backend: str) -> bool:
        calls.append(backend)
        right = _twice_plus_one.get(backend)(np.uint64(3)) == 8
        return bool(right) and len(calls) > failures

    return check


def test_a_passing_build_is_checked_once() -> None:
    """The check runs at the first get of a backend only."""
    calls: list[str] = []
    _twice_plus_one.checked_by(_check(0, calls))
    for _ in range(3):
        assert _twice_plus_one.get("scalar")(np.uint64(1)) == 4
    assert calls == ["scalar"]


def test_a_failed_build_compiles_afresh_with_what_it_calls() -> None:
    """One failure: one warning, the build and its callee leave the cache, the check passes."""
    calls: list[str] = []
    _twice_plus_one.checked_by(_check(1, calls))
    with pytest.warns(RuntimeWarning, match="fails its known-answer check") as caught:
        build = _twice_plus_one.get("scalar")
    assert len(caught) == 1
    assert calls == ["scalar", "scalar"]
    assert build._cache.afresh
    assert _plus_one._build_for("scalar")._cache.afresh
    assert build(np.uint64(5)) == 12


def test_a_build_that_keeps_failing_raises_every_time() -> None:
    """A fresh build that still fails raises BackendError, and so does the next get."""
    calls: list[str] = []
    _twice_plus_one.checked_by(_check(10, calls))
    for _ in range(2):
        with pytest.warns(RuntimeWarning), pytest.raises(BackendError, match="known-answer"):
            _twice_plus_one.get("scalar")
        cache._warned[0] = False
    assert "scalar" not in _twice_plus_one._ready


def test_a_kernel_compiles_in_a_new_thread(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kernel that no cache holds compiles in a thread that did not import the machinery (and
    cannot see another thread's ``cached_only``)."""
    import threading

    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path))

    @_jit.jit
    def triple(x: int) -> int:
        return 3 * x

    found: list[object] = []
    thread = threading.Thread(target=lambda: found.append(triple(5)))
    with _jit.cached_only():
        thread.start()
        thread.join()
    assert found == [15]
