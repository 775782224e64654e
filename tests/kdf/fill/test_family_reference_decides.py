"""The plain-Python reference decides between builds: a numba build that fails it compiles afresh.

A build whose known-answer check differs from the reference's (simulated by spoiling the first
check) warns once and is compiled again with what it calls, ignoring the cache; a build that
still differs is an error, never a wrong hash.  Each test makes the kernel's build check again,
as a new process would.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from twocats.exceptions import BackendError
from twocats.kdf.fill import family as fill_family
from twocats.kdf.fill.args import FillKey
from twocats.kdf.fill.family import FILL, fill_variants
from twocats.simd import _jit, cache, family

#: The cheapest profile's kernel.
KEY = FillKey(8, "simd", 0, 0)


@pytest.fixture(autouse=True)
def _compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Skip without compiled kernels; forget the process's cache warning around each test."""
    if _jit.config.DISABLE_JIT:
        pytest.skip("needs compiled kernels (NUMBA_DISABLE_JIT is set)")
    monkeypatch.setattr(cache, "_warned", [False])
    # The reference's digest is computed (and kept) before any check is spoiled.
    fill_family.reference_check(KEY)
    # The build is checked again on its next use.
    family.ready(FILL, KEY)
    monkeypatch.delitem(family._ready, KEY.name)


def _spoiled_checks(monkeypatch: pytest.MonkeyPatch, spoiled: int) -> list[int]:
    """Make the first ``spoiled`` known-answer checks of numba's build differ; count them all."""
    real = fill_family.run_check
    calls: list[int] = []

    def check(kernel: Any, key: FillKey) -> bytes:
        calls.append(1)
        digest = real(kernel, key)
        return bytes(32) if len(calls) <= spoiled else digest

    monkeypatch.setattr(fill_family, "run_check", check)
    return calls


def test_a_build_that_fails_its_check_is_compiled_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """One failed check: one warning, numba recompiles the kernel, and the check then passes."""
    kernel = fill_variants(KEY.lanes, KEY.hash_type, KEY.variant).get(KEY.backend)
    recompiled: list[Any] = []
    recompile = type(kernel).recompile

    def counted(self: Any) -> None:
        recompiled.append(self)
        recompile(self)

    monkeypatch.setattr(type(kernel), "recompile", counted)
    calls = _spoiled_checks(monkeypatch, spoiled=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fill = family.ready(FILL, KEY)
    assert len(calls) == 2
    assert recompiled.count(kernel) == 1
    assert kernel._cache.afresh
    assert len(caught) == 1
    assert "fails its known-answer check" in str(caught[0].message)
    monkeypatch.undo()
    assert fill_family.run_check(fill, KEY) == fill_family.reference_check(KEY)


def test_a_build_that_keeps_failing_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh build that still differs from the reference raises instead of hashing."""
    kernel = fill_variants(KEY.lanes, KEY.hash_type, KEY.variant).get(KEY.backend)
    monkeypatch.setattr(type(kernel), "recompile", lambda self: None)
    _spoiled_checks(monkeypatch, spoiled=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(BackendError, match="fails its known-answer check"):
            family.ready(FILL, KEY)
