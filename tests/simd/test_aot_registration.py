"""A kernel set other than the fill registers with the artefact machinery and gets its checks."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.environment import need
from twocats.simd import _jit, aot, cache


@dataclass(frozen=True)
class _AddKey:
    """One kernel of the set: add ``step`` to every word of an array."""

    step: int

    @property
    def name(self) -> str:
        return f"test_add_{self.step}"


class _Add:
    """A loaded artefact of the set, called on a ctypes array of 64-bit words."""

    def __init__(self, address: int, owner: object, key: _AddKey) -> None:
        self._owner = owner
        prototype = ctypes.CFUNCTYPE(
            ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64
        )
        self._function = prototype(address)

    def __call__(self, values: Any) -> None:
        result, failure = ctypes.c_void_p(), ctypes.c_void_p()
        status = self._function(
            ctypes.byref(result), ctypes.byref(failure), ctypes.addressof(values), len(values)
        )
        assert status == 0


def _check(kernel: Any, key: _AddKey) -> bool:
    values = (ctypes.c_int64 * 3)(1, 2, 3)
    kernel(values)
    return list(values) == [1 + key.step, 2 + key.step, 3 + key.step]


def _entry_ir(key: _AddKey) -> tuple[str, str]:
    from numba import types
    from numba.np.numpy_support import carray

    from twocats.simd import aotcompile

    step = key.step

    def entry(pointer, count):  # type: ignore[no-untyped-def]
        values = carray(pointer, (count,))
        for i in range(count):
            values[i] += step

    signature = types.void(types.CPointer(types.int64), types.int64)  # type: ignore[no-untyped-call]
    return aotcompile.cfunc_ir(entry, signature, _jit.BUILDS["scalar"])


#: The test's kernel set; its artefacts are keyed on one package file.
ADD: aot.KernelSet[_AddKey] = aot.KernelSet(
    name="add",
    entry="twocats_test_add",
    wrap=_Add,
    check=_check,
    entry_ir=_entry_ir,
    prepare=lambda key: None,
    sources=lambda key: [aot.__file__],
)


def test_a_registered_set_is_built_checked_and_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The set's artefact is built, indexed and loaded back through its own check."""
    if _jit.config.DISABLE_JIT:
        pytest.skip("needs compiled kernels (NUMBA_DISABLE_JIT is set)")
    import numba

    from twocats.simd import aotcompile

    if aotcompile.compiler() is None:
        need("a C compiler (cc) to link ahead-of-time kernels")
    if numba.__version__ not in aotcompile.BUILD_NUMBA:
        pytest.skip(f"ahead-of-time kernels are built on numba {sorted(aotcompile.BUILD_NUMBA)}")
    monkeypatch.setenv(aot.AOT_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(cache.AOT_ENV, "1")
    key = _AddKey(5)
    built = aotcompile.build(ADD, key)
    assert built is not None
    assert built.parent == tmp_path
    aot.forget(key)
    kernel = aot.load(ADD, key)
    assert kernel is not None
    values = (ctypes.c_int64 * 2)(10, 20)
    kernel(values)
    assert list(values) == [15, 25]


def test_a_set_whose_check_fails_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An artefact that fails its set's check is never stored."""
    if _jit.config.DISABLE_JIT:
        pytest.skip("needs compiled kernels (NUMBA_DISABLE_JIT is set)")
    import numba

    from twocats.exceptions import BackendError
    from twocats.simd import aotcompile

    if numba.__version__ not in aotcompile.BUILD_NUMBA:
        pytest.skip(f"ahead-of-time kernels are built on numba {sorted(aotcompile.BUILD_NUMBA)}")
    monkeypatch.setenv(aot.AOT_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(cache.AOT_ENV, "1")
    wrong = aot.KernelSet(
        ADD.name, ADD.entry, ADD.wrap, lambda kernel, key: False, ADD.entry_ir, ADD.prepare,
        ADD.sources,
    )  # fmt: skip
    with pytest.raises(BackendError, match="fails its known-answer check"):
        aotcompile.build(wrong, _AddKey(1))
    assert not list(tmp_path.glob("*.so")) + list(tmp_path.glob("*.o"))
