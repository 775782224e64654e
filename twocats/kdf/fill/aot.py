"""The fill kernels' registration with the ahead-of-time artefacts (:mod:`twocats.simd.aot`).

Usage::

    from twocats.kdf.fill import aot

    kernel = aot.load_fill(FillKey(8, "simd", 0, 0))    # None: use numba's build
    if kernel is not None:
        kernel(mem, states, FillArgs.of(job))
    aot.build_fill(FillKey(8, "simd", 0, 0))            # imports numba; stores an artefact

A loaded artefact is called like :class:`twocats.kdf.fill.kernels.NumbaFill`, and passes the
known-answer check of :mod:`twocats.kdf.fill.check` before it is used.  Importing this module
imports neither numba nor numpy.
"""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any

from twocats.exceptions import BackendError
from twocats.kdf import words
from twocats.kdf.fill.args import CHAINS, SCRATCH, FillArgs, FillKey
from twocats.kdf.fill.check import reference_check, run_check
from twocats.simd import aot

__all__ = ["ENTRY", "FILL", "build_fill", "load_fill", "try_build_fill"]

#: The C symbol of every fill artefact's kernel.
ENTRY = "twocats_fill"


#: The C type of each scratch array's element type.
_SCRATCH_TYPES = {"uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64}


class _Kernel:
    """A loaded artefact, called like :class:`twocats.kdf.fill.kernels.NumbaFill`.

    ``mem`` and ``states`` are words of :mod:`twocats.kdf.words`; the scratch arrays are made
    for each call and zeroed after it.  The arguments are checked by the caller
    (:mod:`twocats.kdf.fill.threads` validates every slice), as for numba's build; ctypes releases
    the GIL during the call.
    """

    def __init__(self, address: int, owner: object, key: FillKey) -> None:
        # ``owner`` holds the code: the loaded library or the MCJIT engine.
        self._owner = owner
        chain = SCRATCH[CHAINS[key.variant]]
        self._scratch = [_SCRATCH_TYPES[kind] * count for _name, kind, count in chain]
        # numba's calling convention: a status is returned, and a result and an exception are
        # stored through the first two pointers (the kernel returns nothing and raises nothing).
        prototype = ctypes.CFUNCTYPE(
            ctypes.c_int32,
            *[ctypes.c_void_p, ctypes.c_void_p],
            *[ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64],
            *[ctypes.c_void_p] * len(self._scratch),
            *[ctypes.c_int64] * FillArgs.count(key.variant),
        )
        self._function = prototype(address)

    def __call__(self, mem: words.Words, states: words.Words, args: FillArgs) -> None:
        # The caller checked that states has two dimensions.
        rows, width = words.as_view(states).shape or (0, 0)
        scratch = [kind() for kind in self._scratch]
        result, failure = ctypes.c_void_p(), ctypes.c_void_p()
        try:
            status = self._function(
                ctypes.byref(result),
                ctypes.byref(failure),
                words.address(mem),
                words.as_view(mem).nbytes // 4,
                words.address(states),
                rows,
                width,
                *(ctypes.addressof(array) for array in scratch),
                *args.ints(),
            )
        finally:
            # The scratch held words derived from the password.
            for array in scratch:
                ctypes.memset(array, 0, ctypes.sizeof(array))
        if status:
            raise BackendError(f"the compiled fill kernel failed (status {status})")


def _passes(kernel: Any, key: FillKey) -> bool:
    return run_check(kernel, key) == reference_check(key)


def _entry_ir(key: FillKey) -> tuple[str, str]:
    from twocats.kdf.fill.build import entry_ir

    return entry_ir(key)


def _prepare(key: FillKey) -> Any:
    from twocats.kdf.fill.kernels import checked_fill

    return checked_fill(key)


def _sources(key: FillKey) -> list[str]:
    from twocats.kdf.fill.build import source_files

    return source_files(key)


#: The fill kernels, as the artefact machinery knows them.
FILL: aot.KernelSet[FillKey] = aot.KernelSet(
    name="fill",
    entry=ENTRY,
    wrap=_Kernel,
    check=_passes,
    entry_ir=_entry_ir,
    prepare=_prepare,
    sources=_sources,
)


def load_fill(key: FillKey) -> Any:
    """Return the checked artefact of one fill kernel, or None to use numba's build.

    See :func:`twocats.simd.aot.load`: a refused artefact warns once per process and is built
    again; a missing or outdated one does not warn.
    """
    return aot.load(FILL, key)


def build_fill(
    key: FillKey, level: str | None = None, prebuilt: Path = aot.PREBUILT_DIR
) -> Path | None:
    """Build and store the artefact of one fill kernel (:func:`twocats.simd.aotcompile.build`).

    This imports numba.
    """
    from twocats.simd import aotcompile

    return aotcompile.build(FILL, key, level, prebuilt)


def try_build_fill(key: FillKey) -> Path | None:
    """Build the artefact of ``key``, warning once instead of raising on a failure."""
    from twocats.simd import aotcompile

    return aotcompile.try_build(FILL, key)
