"""The lane scheduler's registration with the ahead-of-time artefacts (:mod:`twocats.simd.aot`).

Usage::

    from twocats.lanes.aot import LANES, LaneKey
    from twocats.simd import aot

    kernel = aot.load(LANES, LaneKey("sha256", "simd"))    # None: use numba's build
    if kernel is not None:
        kernel(addresses, lengths, order, count, out, *scratch)

A loaded artefact is called like the numba build of :data:`twocats.lanes.scheduler.SCHEDULERS`
and passes the lanes' known-answer sample against hashlib before it is used, so that
``hash_many`` of a primitive imports no numba once ``twocats warmup`` (or a first call) has built
it.  Importing this module imports neither numba nor numpy.
"""

from __future__ import annotations

import ctypes
import hashlib
from dataclasses import dataclass
from typing import Any

from twocats.exceptions import BackendError
from twocats.hashes import by_name
from twocats.lanes.known_answers import SAMPLE
from twocats.simd import aot

__all__ = ["ENTRY", "LANES", "LaneKey"]

#: The C symbol of every lane artefact's kernel.
ENTRY = "twocats_lanes"


@dataclass(frozen=True)
class LaneKey:
    """The scheduler of one lane primitive on one backend ("scalar" or "simd")."""

    algorithm: str
    backend: str

    @property
    def name(self) -> str:
        """The kernel's name, e.g. ``lanes_sha256__simd``."""
        return f"lanes_{self.algorithm}__{self.backend}"


class _Kernel:
    """A loaded artefact, called like the scheduler's numba build with numpy arrays.

    ``addresses`` (uint64) and ``lengths`` and ``order`` (int64) are one-dimensional and
    contiguous, ``out`` is a contiguous (count, 8) array of the hash's words and ``scratch`` the
    lane state of :func:`~twocats.lanes.primitives.scheduler_scratch`: the caller
    (:mod:`twocats.lanes.primitives`) builds them so, as for numba's build.  ctypes releases the
    GIL during the call.
    """

    def __init__(self, address: int, owner: object, key: LaneKey) -> None:
        # ``owner`` holds the code: the loaded library or the MCJIT engine.
        self._owner = owner
        # numba's calling convention: a status is returned, and a result and an exception are
        # stored through the first two pointers (the kernel returns nothing and raises nothing).
        prototype = ctypes.CFUNCTYPE(
            ctypes.c_int32,
            *[ctypes.c_void_p] * 5,
            ctypes.c_int64,
            ctypes.c_int64,
            *[ctypes.c_void_p] * 6,
            ctypes.c_int64,
        )
        self._function = prototype(address)

    def __call__(
        self, addresses: Any, lengths: Any, order: Any, count: int, out: Any, *scratch: Any
    ) -> None:
        result, failure = ctypes.c_void_p(), ctypes.c_void_p()
        status = self._function(
            ctypes.byref(result),
            ctypes.byref(failure),
            addresses.ctypes.data,
            lengths.ctypes.data,
            order.ctypes.data,
            order.shape[0],
            count,
            out.ctypes.data,
            *(array.ctypes.data for array in scratch),
            scratch[0].shape[1],
        )
        if status:
            raise BackendError(f"the compiled lane kernel failed (status {status})")


def _passes(kernel: Any, key: LaneKey) -> bool:
    """Whether ``kernel`` gives hashlib's digests of the known-answer sample."""
    import numpy as np

    from twocats.lanes.primitives import scheduler_scratch

    facts = by_name(key.algorithm)
    messages = [bytes(message) for message in SAMPLE]
    buffers = [np.frombuffer(message or b"\0", dtype=np.uint8) for message in messages]
    addresses = np.array([buffer.ctypes.data for buffer in buffers], dtype=np.uint64)
    lengths = np.array([len(message) for message in messages], dtype=np.int64)
    word = np.uint32 if facts.word_bits == 32 else np.uint64
    out = np.zeros((len(messages), 8), dtype=word)
    scratch = scheduler_scratch(facts.word_bits, 8)
    kernel(addresses, lengths, np.empty(0, dtype=np.int64), len(messages), out, *scratch)
    rows = out.view(np.uint8)[:, : facts.digest_size]
    return all(
        bytes(row) == hashlib.new(key.algorithm, message).digest()
        for row, message in zip(rows, messages, strict=True)
    )


def _numba_build(key: LaneKey) -> Any:
    from twocats.lanes.scheduler import SCHEDULERS

    return SCHEDULERS[key.algorithm].get(key.backend)


def _entry_ir(key: LaneKey) -> tuple[str, str]:
    """Compile the C entry of one scheduler; return its linked LLVM IR and its symbol name."""
    from numba import types
    from numba.np.numpy_support import carray

    from twocats.simd import aotcompile

    kernel = _numba_build(key)
    word = types.uint32 if by_name(key.algorithm).word_bits == 32 else types.uint64
    u64p: Any = types.CPointer(types.uint64)  # type: ignore[no-untyped-call]
    i64p: Any = types.CPointer(types.int64)  # type: ignore[no-untyped-call]
    wordp: Any = types.CPointer(word)  # type: ignore[no-untyped-call]
    i64 = types.int64

    def entry(  # type: ignore[no-untyped-def]
        addr_p, len_p, order_p, order_n, count, out_p, h_p, m_p, t_p, f_p, meta_p, nlanes
    ):
        kernel(
            carray(addr_p, (count,)),
            carray(len_p, (count,)),
            carray(order_p, (order_n,)),
            count,
            carray(out_p, (count, 8)),
            carray(h_p, (8, nlanes)),
            carray(m_p, (16, nlanes)),
            carray(t_p, (nlanes,)),
            carray(f_p, (nlanes,)),
            carray(meta_p, (5, nlanes)),
        )

    signature = types.void(u64p, i64p, i64p, i64, i64, wordp, wordp, wordp, u64p, wordp, u64p, i64)
    return aotcompile.cfunc_ir(entry, signature, kernel.twocats_mode)


def _checked_numba_build(key: LaneKey) -> Any:
    """numba's build of ``key``, which must pass the known-answer sample first."""
    kernel = _numba_build(key)
    if not _passes(kernel, key):
        raise BackendError(f"numba's build of {key.name} fails its known-answer check")
    return kernel


def _sources(key: LaneKey) -> list[str]:
    from twocats import hashes
    from twocats.simd import aotcompile

    return aotcompile.kernel_files(_numba_build(key), hashes.__file__, __file__)


#: The lane schedulers, as the artefact machinery knows them.
LANES: aot.KernelSet[LaneKey] = aot.KernelSet(
    name="lanes",
    entry=ENTRY,
    wrap=_Kernel,
    check=_passes,
    entry_ir=_entry_ir,
    prepare=_checked_numba_build,
    sources=_sources,
)
