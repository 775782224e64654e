"""The fill kernels' C entry points, compiled by numba for their ahead-of-time artefacts.

Usage::

    from twocats.kdf.fill.build import entry_ir, source_files

    ir, symbol = entry_ir(FillKey(8, "simd", 0, 0))   # imports numba

:func:`twocats.kdf.fill.aot.build_fill` builds an artefact with these.  The fill's C entry takes
pointers and lengths for ``mem``, ``states`` and the scratch arrays, then
the integers of :class:`~twocats.kdf.fill.args.FillArgs`; :mod:`twocats.simd.aotcompile` reduces,
links, checks and stores it.
"""

from __future__ import annotations

from typing import Any

from numba import types
from numba.np.numpy_support import carray

from twocats import hashes
from twocats.hashes import SCRATCH_WORDS
from twocats.kdf.fill.args import FillArgs, FillKey
from twocats.kdf.fill.kernels import fill_kernel
from twocats.simd import aotcompile

__all__ = ["entry_ir", "source_files"]

_U32P: Any = types.CPointer(types.uint32)  # type: ignore[no-untyped-call]
_U64P: Any = types.CPointer(types.uint64)  # type: ignore[no-untyped-call]
_I64 = types.int64


def _entry_final(kernel: Any) -> Any:
    """Wrap a final/2014 kernel in the C entry's argument list (pointers and lengths)."""
    words = SCRATCH_WORDS

    def entry(  # type: ignore[no-untyped-def]
        mem_p, mem_n, st_p, st_rows, st_words, w32_p, w64_p, p_first, p_step, done,
        per_slice, bpt, blocklen, sub_blocklen, parallelism, multiplies, dependent,
    ):  # fmt: skip
        kernel(
            carray(mem_p, (mem_n,)), carray(st_p, (st_rows, st_words)),
            carray(w32_p, (words,)), carray(w64_p, (words,)),
            p_first, p_step, done, per_slice, bpt, blocklen, sub_blocklen, parallelism,
            multiplies, dependent,
        )  # fmt: skip

    return entry


def _entry_march(kernel: Any) -> Any:
    """Wrap a March 2014 kernel in the C entry's argument list (pointers and lengths)."""
    words = SCRATCH_WORDS

    def entry(  # type: ignore[no-untyped-def]
        mem_p, mem_n, st_p, st_rows, st_words, w32_p, w64_p, odd_p, p_first, p_step,
        done, per_slice, bpt, blocklen, sub_blocklen, parallelism, multiplies, dependent,
        time_cost,
    ):  # fmt: skip
        kernel(
            carray(mem_p, (mem_n,)), carray(st_p, (st_rows, st_words)),
            carray(w32_p, (words,)), carray(w64_p, (words,)), carray(odd_p, (8,)),
            p_first, p_step, done, per_slice, bpt, blocklen, sub_blocklen, parallelism,
            multiplies, dependent, time_cost,
        )  # fmt: skip

    return entry


def _signature(variant: int) -> Any:
    scratch = [_U32P, _U64P] + ([_U64P] if variant else [])
    ints = FillArgs.count(variant)
    return types.void(_U32P, _I64, _U32P, _I64, _I64, *scratch, *([_I64] * ints))


def entry_ir(key: FillKey) -> tuple[str, str]:
    """Compile the C entry of one kernel; return its linked LLVM IR and its symbol name."""
    kernel = fill_kernel(key.lanes, key.backend, key.hash_type, key.variant)
    wrap = _entry_march if key.variant else _entry_final
    return aotcompile.cfunc_ir(wrap(kernel), _signature(key.variant), kernel.twocats_mode)


def source_files(key: FillKey) -> list[str]:
    """Return the project files the kernel's machine code depends on (the hash constants too)."""
    kernel = fill_kernel(key.lanes, key.backend, key.hash_type, key.variant)
    return aotcompile.kernel_files(kernel, hashes.__file__, __file__)
