"""The lane scheduler's registration with the ahead-of-time artefacts (:mod:`twocats.simd.aot`).

Usage::

    from twocats.lanes.aot import LANES, LaneKey
    from twocats.simd import aot

    kernel = aot.load(LANES, LaneKey("sha256", "simd"))    # None: use numba's build
    if kernel is not None:
        kernel(addresses, lengths, order, count, out, LaneScratch.new(32, 16))

A loaded artefact is called with buffers, like :func:`numba_kernel`'s wrapper of the numba build
of :data:`twocats.lanes.scheduler.SCHEDULERS`, and passes the lanes' known-answer sample against
hashlib before it is used, so that ``hash_many`` of a primitive imports no numba once ``twocats
warmup`` (or a first call) has built it, and :func:`buffer_digests` (``twocats sum``) no numpy
either.  Importing this module imports neither numba nor numpy.
"""

from __future__ import annotations

import array
import ctypes
import functools
import hashlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from twocats.exceptions import BackendError
from twocats.hashes import by_name
from twocats.lanes.known_answers import SAMPLE
from twocats.simd import aot

__all__ = [
    "ENTRY",
    "LANES",
    "LaneKey",
    "LaneScratch",
    "NumbaScheduler",
    "buffer_digests",
    "joined",
    "longest_first",
    "numba_kernel",
    "passes",
]

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


@dataclass(frozen=True)
class LaneScratch:
    """The lanes' state a scheduler works in, for ``nlanes`` lanes of ``word_bits``-bit words:
    ``H`` (8 x nlanes) and ``M`` (16 x nlanes) words, ``T`` (nlanes) byte counters, ``F``
    (nlanes) final flags and ``meta`` (5 x nlanes) lane records, as zeroed buffers."""

    word_bits: int
    nlanes: int
    buffers: tuple[bytearray, ...]

    @classmethod
    def new(cls, word_bits: int, nlanes: int) -> LaneScratch:
        """Fresh state for ``nlanes`` lanes."""
        word = word_bits // 8
        sizes = (8 * nlanes * word, 16 * nlanes * word, 8 * nlanes, nlanes * word, 40 * nlanes)
        return cls(word_bits, nlanes, tuple(bytearray(size) for size in sizes))

    def arrays(self) -> tuple[Any, ...]:
        """The state as numpy arrays of its shapes and types (views, no copy)."""
        import numpy as np

        word = np.uint32 if self.word_bits == 32 else np.uint64
        h, m, t, f, meta = self.buffers
        return (
            np.frombuffer(h, dtype=word).reshape(8, self.nlanes),
            np.frombuffer(m, dtype=word).reshape(16, self.nlanes),
            np.frombuffer(t, dtype=np.uint64),
            np.frombuffer(f, dtype=word),
            np.frombuffer(meta, dtype=np.uint64).reshape(5, self.nlanes),
        )


def _address(buffer: Any) -> int:
    """The address of a writable buffer's first byte (0 for an empty one)."""
    if memoryview(buffer).nbytes == 0:
        return 0
    return ctypes.addressof(ctypes.c_char.from_buffer(buffer))


class _Kernel:
    """A loaded artefact, called with writable buffers (numpy arrays, ``array.array``s or
    bytearrays) and a :class:`LaneScratch`, like :class:`NumbaScheduler`.

    ``addresses`` (uint64), ``lengths`` and ``order`` (int64) are contiguous vectors, ``out``
    holds ``count`` rows of 8 words of the hash: the caller (:mod:`twocats.lanes.primitives`)
    builds them so.  ctypes releases the GIL during the call; numpy is not needed.
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
        self, addresses: Any, lengths: Any, order: Any, count: int, out: Any, scratch: LaneScratch
    ) -> None:
        result, failure = ctypes.c_void_p(), ctypes.c_void_p()
        status = self._function(
            ctypes.byref(result),
            ctypes.byref(failure),
            _address(addresses),
            _address(lengths),
            _address(order),
            len(order),
            count,
            _address(out),
            *(_address(buffer) for buffer in scratch.buffers),
            scratch.nlanes,
        )
        if status:
            raise BackendError(f"the compiled lane kernel failed (status {status})")


class NumbaScheduler:
    """numba's build of a scheduler, called as an artefact is (:class:`_Kernel`)."""

    def __init__(self, dispatcher: Any, word_bits: int) -> None:
        self._dispatcher = dispatcher
        self._word_bits = word_bits

    def __call__(
        self, addresses: Any, lengths: Any, order: Any, count: int, out: Any, scratch: LaneScratch
    ) -> None:
        import numpy as np

        word = np.uint32 if self._word_bits == 32 else np.uint64
        self._dispatcher(
            np.frombuffer(addresses, dtype=np.uint64),
            np.frombuffer(lengths, dtype=np.int64),
            np.frombuffer(order, dtype=np.int64),
            count,
            np.frombuffer(out, dtype=word).reshape(count, 8),
            *scratch.arrays(),
        )


def longest_first(lengths: Sequence[int]) -> array.array[int]:
    """The message indices longest first (ties in index order), or none when all are as long."""
    if len(lengths) < 2 or min(lengths) == max(lengths):
        return array.array("q")
    return array.array("q", sorted(range(len(lengths)), key=lengths.__getitem__, reverse=True))


def buffer_digests(
    kernel: Any,
    algorithm: str,
    buffer: bytearray,
    starts: Sequence[int],
    lengths: Sequence[int],
    nlanes: int,
) -> list[bytes]:
    """The ``algorithm`` digests, by ``kernel``, of ``buffer[starts[i]:starts[i] + lengths[i]]``
    (slices the caller has checked), computed where they lie with no numpy."""
    facts = by_name(algorithm)
    count = len(starts)
    base = _address(buffer)
    addresses = array.array("Q", [base + start for start in starts])
    sizes = array.array("q", lengths)
    # Each digest's row holds eight words of the hash.
    row = 8 * (facts.word_bits // 8)
    out = bytearray(count * row)
    kernel(
        addresses, sizes, longest_first(sizes), count, out, LaneScratch.new(facts.word_bits, nlanes)
    )
    view = memoryview(out)
    size = facts.digest_size
    return [view[at : at + size].tobytes() for at in range(0, count * row, row)]


def joined(messages: Sequence[bytes]) -> tuple[bytearray, list[int], list[int]]:
    """The messages joined in one buffer, with the start and length of each."""
    lengths = [len(message) for message in messages]
    starts = list(itertools.accumulate(lengths[:-1], initial=0)) if lengths else []
    return bytearray(b"".join(messages)), starts, lengths


def passes(kernel: Any, key: LaneKey) -> bool:
    """Whether ``kernel`` gives hashlib's digests of the known-answer sample."""
    messages = [bytes(message) for message in SAMPLE]
    digests = buffer_digests(kernel, key.algorithm, *joined(messages), 8)
    return digests == [hashlib.new(key.algorithm, message).digest() for message in messages]


@functools.cache
def _schedulers() -> dict[str, Any]:
    """numba's schedulers, each given its known-answer check: :func:`passes` on its build."""
    from twocats.lanes.scheduler import SCHEDULERS

    for name, kernel in SCHEDULERS.items():
        kernel.checked_by(functools.partial(_numba_passes, name))
    return SCHEDULERS


def _numba_passes(name: str, backend: str) -> bool:
    key = LaneKey(name, backend)
    return passes(numba_kernel(key), key)


def _numba_build(key: LaneKey) -> Any:
    return _schedulers()[key.algorithm].get(key.backend)


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


def numba_kernel(key: LaneKey) -> NumbaScheduler:
    """numba's build of ``key``, called as an artefact is (checked by :func:`passes` before its
    first use)."""
    return NumbaScheduler(_numba_build(key), by_name(key.algorithm).word_bits)


def _sources(key: LaneKey) -> list[str]:
    from twocats import hashes
    from twocats.simd import aotcompile

    return aotcompile.kernel_files(_numba_build(key), hashes.__file__, __file__)


#: The lane schedulers, as the artefact machinery knows them.
LANES: aot.KernelSet[LaneKey] = aot.KernelSet(
    name="lanes",
    entry=ENTRY,
    wrap=_Kernel,
    check=passes,
    entry_ir=_entry_ir,
    prepare=numba_kernel,
    sources=_sources,
)
