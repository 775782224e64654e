"""The lane primitives (BLAKE2s, BLAKE2b, SHA-256, SHA-512 and legacy SHA-1) hashed in SIMD lanes.

Every output is the standard digest of its message (equal to ``hashlib``); only the speed differs.
``backend`` is "simd" (default, or ``$TWOCATS_BACKEND``), "scalar" (the same kernels compiled with
the vectorizers off) or "reference" (a pure-Python loop over :mod:`twocats.lanes.reference`).
``lanes`` is the number of messages in flight (default: the vectors its compression keeps in
flight, one register's worth for all but SHA-1) and
``threads`` the number of threads sharing the batch (default 1; the kernels release the GIL).

The compiled path hands the messages' addresses and lengths to a kernel that schedules messages
onto lanes longest first, refilling a lane as soon as its message ends, and reads each message
where it lies (bytes objects in place; other buffers joined once); block decoding, padding and
byte-order conversion happen inside that kernel.  Callers use the
``hash_many`` family of :mod:`twocats.lanes.many`.  Importing this module is cheap: numpy and the
kernels are imported on the first call.
"""

from __future__ import annotations

import functools
import hashlib
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from twocats.exceptions import InvalidParametersError
from twocats.hashes import LANE_HASHES, by_name
from twocats.lanes import reference
from twocats.params import check_int
from twocats.simd.registry import resolve_backend

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "DEFAULT_LANES",
    "LANE_VECTORS",
    "MAX_LANES",
    "MAX_THREADS",
    "PRIMITIVES",
    "VECTOR_BITS",
    "check_slices",
    "digest_list",
    "digest_rows",
    "digests_of",
    "fixed_rows",
    "joined_digests",
    "known_answer",
    "rows_of",
    "slice_digests",
]

#: The primitives, in hash-code order: the lane hashes (:data:`twocats.hashes.LANE_HASHES`).
PRIMITIVES = tuple(facts.name for facts in LANE_HASHES)

#: The bits of the vector registers the simd lane kernels are written for (AVX-512).
VECTOR_BITS = 512

#: The vectors of lanes a primitive's compression keeps in flight at once (one where absent):
#: SHA-1's rounds wait on the latency of one vector's chain of operations, so its compression
#: interleaves two vectors; the others are bound by the throughput of the vector units.
LANE_VECTORS = {"sha1": 2}

#: Default lane count: the vectors a compression keeps in flight, of 32-bit or 64-bit words.
#: More lanes are not faster (the compression runs that many at a time) and leave more lanes
#: idle behind a long message at the end of a batch.
DEFAULT_LANES = {
    facts.name: LANE_VECTORS.get(facts.name, 1) * VECTOR_BITS // facts.word_bits
    for facts in LANE_HASHES
}

#: The largest lane count accepted.
MAX_LANES = 4096

#: The largest thread count accepted.
MAX_THREADS = 64

#: A batch of messages as the callers pass it.
Batch = Sequence[bytes | bytearray | memoryview]


@functools.cache
def known_answer(name: str) -> str:
    """A primitive's known answer (:mod:`twocats.lanes.known_answers`), from hashlib, the
    primitives' reference."""
    from twocats.lanes.known_answers import SAMPLE

    digests = b"".join(hashlib.new(name, message).digest() for message in SAMPLE)
    return hashlib.sha256(digests).hexdigest()


def _check_lanes(lanes: int | None, algorithm: str) -> int:
    if lanes is None:
        return DEFAULT_LANES[algorithm]
    return check_int("lanes", lanes, 1, MAX_LANES)


def _kernel(algorithm: str, backend: str) -> Any:
    """Return the compiled scheduler of ``algorithm`` for the "scalar" or "simd" backend.

    Its checked ahead-of-time artefact where there is one (no numba is imported then); otherwise
    numba's build, and an artefact is built for the next process where one can be.
    """
    from twocats.lanes import aot as lane_artefacts
    from twocats.simd import aot

    key = lane_artefacts.LaneKey(algorithm, backend)
    kernel = aot.load(lane_artefacts.LANES, key)
    if kernel is not None:
        return kernel
    from twocats.simd import _jit, aotcompile

    compiled = lane_artefacts.numba_kernel(key)
    built = (
        not _jit.config.DISABLE_JIT
        and aot.claim_build(key)
        and aotcompile.try_build(lane_artefacts.LANES, key) is not None
    )
    if built:
        aot.forget(key)
        kernel = aot.load(lane_artefacts.LANES, key)
    return compiled if kernel is None else kernel


def _check_threads(threads: int) -> int:
    return check_int("threads", threads, 1, MAX_THREADS)


_pool: list[ThreadPoolExecutor] = []
_pool_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    """The shared worker threads (the kernels release the GIL), created on first use."""
    with _pool_lock:
        if not _pool:
            _pool.append(ThreadPoolExecutor(max_workers=MAX_THREADS, thread_name_prefix="twocats"))
        return _pool[0]


def _forget_pool_after_fork() -> None:
    """In a forked child the pool's threads do not exist; start a fresh pool on first use."""
    global _pool_lock
    _pool.clear()
    _pool_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool_after_fork)


def _run(
    algorithm: str,
    backend: str,
    addresses: npt.NDArray[np.uint64],
    lengths: npt.NDArray[np.int64],
    lanes: int,
    threads: int,
) -> npt.NDArray[np.uint8]:
    """Hash the messages of ``lengths[i]`` bytes at ``addresses[i]``; return their digests as
    the rows of a (count, digest size) array.  The caller keeps every buffer alive and unchanged
    until this returns.

    With several threads the batch is cut into that many runs of consecutive messages holding
    about equal numbers of bytes, each hashed by the kernel on its own thread.  Each run puts
    its messages on the lanes longest first.
    """
    import numpy as np

    from twocats.lanes.aot import LaneScratch

    count = addresses.shape[0]
    facts = by_name(algorithm)
    bits = facts.word_bits
    words = np.empty((count, 8), dtype=np.uint32 if bits == 32 else np.uint64)
    kernel = _kernel(algorithm, backend)
    parts = min(threads, count)
    if parts <= 1:
        kernel(
            addresses, lengths, _longest_first(lengths), count, words, LaneScratch.new(bits, lanes)
        )
        return _digests(words, facts.digest_size)
    cumulative = np.concatenate(([0], np.cumsum(lengths)))
    targets = np.linspace(0, cumulative[-1], parts + 1)
    ends = np.searchsorted(cumulative, targets).astype(np.int64)
    ends[0], ends[-1] = 0, count
    futures = []
    for k in range(parts):
        first, last = int(ends[k]), int(ends[k + 1])
        if last <= first:
            continue
        part = lengths[first:last]
        futures.append(
            _executor().submit(
                kernel,
                addresses[first:last],
                part,
                _longest_first(part),
                last - first,
                words[first:last],
                LaneScratch.new(bits, lanes),
            )
        )
    for future in futures:
        future.result()
    return _digests(words, facts.digest_size)


def _longest_first(lengths: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The message indices longest first, or none when all are as long: the order of
    :func:`twocats.lanes.aot.longest_first`, made by numpy for long lists (ties in any order,
    which the lanes do not mind, sorted a few times faster than in index order)."""
    import numpy as np

    if lengths.shape[0] < 2 or lengths.min() == lengths.max():
        return np.empty(0, dtype=np.int64)
    order: npt.NDArray[np.int64] = np.argsort(-lengths).astype(np.int64)
    return order


def _digests(words: npt.NDArray[Any], size: int) -> npt.NDArray[np.uint8]:
    """The digests of ``size`` bytes that open the rows of eight words the kernel wrote."""
    import numpy as np

    rows = words.view(np.uint8)
    return rows if rows.shape[1] == size else np.ascontiguousarray(rows[:, :size])


def _joined_rows(
    batch: Batch,
    name: str,
    backend: str,
    lanes: int,
    threads: int,
) -> npt.NDArray[np.uint8]:
    """Hash a non-empty batch with a compiled backend; return a (count, digest size) array.

    The kernel reads bytes objects where they lie; other buffers are joined into one buffer
    first.  Byte lengths are read in one C-level pass; the digests land in one array, with no
    Python object per message.
    """
    from twocats.lanes.located import locate

    addresses, lengths, _keep = locate(batch)
    # ``_keep`` holds every buffer the kernel reads until it returns.
    return _run(name, backend, addresses, lengths, lanes, threads)


def _settings(
    name: str, backend: str | None, lanes: int | None, threads: int
) -> tuple[str, int, int]:
    """Validate the backend, lane count and thread count of one call (``name`` is a primitive)."""
    return resolve_backend(backend), _check_lanes(lanes, name), _check_threads(threads)


def digest_list(
    name: str,
    batch: Batch,
    *,
    backend: str | None = None,
    lanes: int | None = None,
    threads: int = 1,
) -> list[bytes]:
    """Return the ``name`` digest of every message of ``batch``, in order, as bytes objects."""
    return digests_of(digest_rows(name, batch, backend=backend, lanes=lanes, threads=threads))


def digests_of(rows: npt.NDArray[np.uint8]) -> list[bytes]:
    """The rows of a (count, digest size) array as bytes objects."""
    # A void view turns each row into one bytes object in a single C loop.
    digests: list[bytes] = rows.view(f"V{rows.shape[1]}").ravel().tolist()
    return digests


def digest_rows(
    name: str,
    batch: Batch,
    *,
    backend: str | None = None,
    lanes: int | None = None,
    threads: int = 1,
) -> npt.NDArray[np.uint8]:
    """Return the ``name`` digests of ``batch`` as the rows of one (count, digest size) array."""
    import numpy as np

    chosen, width, workers = _settings(name, backend, lanes, threads)
    size = by_name(name).digest_size
    if chosen == "reference":
        return rows_of([reference.digest(name, bytes(message)) for message in batch], size)
    if not batch:
        return np.empty((0, size), dtype=np.uint8)
    return _joined_rows(batch, name, chosen, width, workers)


def rows_of(digests: list[bytes], size: int) -> npt.NDArray[np.uint8]:
    """Digests given one by one, as rows of a fresh writable array."""
    import numpy as np

    rows: npt.NDArray[np.uint8] = np.frombuffer(b"".join(digests), dtype=np.uint8).copy()
    return rows.reshape(len(digests), size)


def fixed_rows(
    name: str,
    array: npt.ArrayLike,
    *,
    backend: str | None = None,
    lanes: int | None = None,
    threads: int = 1,
) -> npt.NDArray[np.uint8]:
    """Hash every row of a 2-D uint8 array; return a uint8 array with one digest per row."""
    import numpy as np

    chosen, width, workers = _settings(name, backend, lanes, threads)
    size = by_name(name).digest_size
    rows = np.asarray(array)
    if rows.ndim != 2 or rows.dtype != np.uint8:
        raise InvalidParametersError(
            f"array must be a 2-D uint8 array, not {rows.ndim}-D {rows.dtype}"
        )
    count, length = rows.shape
    if chosen == "reference":
        out = np.empty((count, size), dtype=np.uint8)
        for i in range(count):
            out[i] = np.frombuffer(reference.digest(name, rows[i].tobytes()), dtype=np.uint8)
        return out
    if count == 0:
        return np.empty((0, size), dtype=np.uint8)
    data = np.ascontiguousarray(rows).reshape(-1)
    base = np.uint64(data.ctypes.data)
    addresses = base + np.arange(count, dtype=np.uint64) * np.uint64(length)
    lengths = np.full(count, length, dtype=np.int64)
    # ``data`` holds the rows the kernel reads until it returns.
    return _run(name, chosen, addresses, lengths, width, workers)


def joined_digests(name: str, batch: Sequence[bytes], *, backend: str | None = None) -> list[bytes]:
    """The digests of ``batch`` through :func:`slice_digests`, the messages joined in one buffer."""
    from twocats.lanes.aot import joined

    return slice_digests(name, *joined(batch), backend=backend)


def check_slices(buffer: bytes | bytearray, starts: Sequence[int], lengths: Sequence[int]) -> None:
    """Raise unless ``starts`` and ``lengths`` give one slice of ``buffer`` per message."""
    if len(starts) != len(lengths):
        raise InvalidParametersError("starts and lengths must have one entry per message")
    size = len(buffer)
    for start, length in zip(starts, lengths, strict=True):
        if not isinstance(start, int) or not isinstance(length, int):
            raise InvalidParametersError("starts and lengths must be integers")
        if start < 0 or length < 0 or start + length > size:
            raise InvalidParametersError("every slice must lie within the buffer")


def slice_digests(
    name: str,
    buffer: bytes | bytearray,
    starts: Sequence[int],
    lengths: Sequence[int],
    *,
    backend: str | None = None,
    lanes: int | None = None,
) -> list[bytes]:
    """The digests of the slices ``buffer[starts[i]:starts[i] + lengths[i]]`` (which
    :func:`check_slices` accepts), hashed where they lie (a read-only buffer is copied once).
    With the scheduler's artefact this imports no numpy (``twocats sum`` starts faster)."""
    from twocats.lanes.aot import buffer_digests

    chosen, width, _ = _settings(name, backend, lanes, 1)
    if chosen == "reference":
        view = memoryview(buffer)
        pairs = zip(starts, lengths, strict=True)
        return [reference.digest(name, bytes(view[s : s + n])) for s, n in pairs]
    if not starts:
        return []
    writable = buffer if isinstance(buffer, bytearray) else bytearray(buffer)
    return buffer_digests(_kernel(name, chosen), name, writable, starts, lengths, width)
