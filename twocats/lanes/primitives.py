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

import array
import ctypes
import hashlib
import itertools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from twocats import hashes
from twocats._machine import kernel_threads
from twocats.exceptions import InvalidParametersError
from twocats.hashes import LANE_HASHES, by_name
from twocats.lanes import reference
from twocats.params import check_int
from twocats.simd.family import Family, KernelKey, ready
from twocats.simd.isa import VECTOR_BITS
from twocats.simd.registry import resolve_backend

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "DEFAULT_LANES",
    "FAMILY",
    "LANE_VECTORS",
    "MAX_LANES",
    "MAX_THREADS",
    "PRIMITIVES",
    "check_slices",
    "digest_list",
    "digest_rows",
    "digests_of",
    "fixed_rows",
    "longest_first",
    "rows_of",
    "slice_digests",
]

#: The primitives, in hash-code order: the lane hashes (:data:`twocats.hashes.LANE_HASHES`).
PRIMITIVES = tuple(facts.name for facts in LANE_HASHES)

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


def _check_lanes(lanes: int | None, algorithm: str) -> int:
    if lanes is None:
        return DEFAULT_LANES[algorithm]
    return check_int("lanes", lanes, 1, MAX_LANES)


def _numba_scheduler(key: KernelKey) -> Any:
    from twocats.lanes.scheduler import SCHEDULERS

    return SCHEDULERS[key.kernel.removeprefix("lanes_")].get(key.backend)


def _signature(key: KernelKey) -> str:
    word = f"uint{by_name(key.kernel.removeprefix('lanes_')).word_bits}"
    return (
        f"uint64[:], int64[:], int64[:], int64, {word}[:, :], {word}[:, :], {word}[:, :], "
        f"uint64[:], {word}[:], uint64[:, :]"
    )


def _passes(kernel: Any, key: KernelKey) -> bool:
    """Whether ``kernel`` gives hashlib's digests of messages of every padding case and of more
    than two 8 KiB chunks."""
    algorithm = key.kernel.removeprefix("lanes_")
    messages = reference.painted(0, 1, 64, 65, 200, 1000, 16391)
    digests = _buffer_digests(kernel, algorithm, *_joined(messages), 8)
    return digests == [hashlib.new(algorithm, message).digest() for message in messages]


def _keys(backend: str, params: object) -> list[KernelKey]:
    # No parameter set of the password hash needs a lane kernel.
    return [] if params is not None else [KernelKey(f"lanes_{n}", backend) for n in PRIMITIVES]


#: The schedulers of :mod:`twocats.lanes.scheduler`, one per primitive (``lanes_<name>``), as
#: :func:`twocats.simd.family.ready` knows them.
FAMILY: Family[KernelKey] = Family(
    "lanes", _numba_scheduler, _signature, _passes, _keys, (__file__, hashes.__file__)
)


def _checked_scheduler(algorithm: str, backend: str) -> Any:
    """The checked scheduler of ``algorithm`` on ``backend``: its artefact where one loads (no
    numba is imported then), otherwise numba's build."""
    return ready(FAMILY, KernelKey(f"lanes_{algorithm}", backend))


def _lane_scratch(word_bits: int, nlanes: int) -> list[memoryview]:
    """The lanes' state a scheduler works in, zeroed: ``H`` (8 x nlanes) and ``M`` (16 x nlanes)
    words, ``T`` (nlanes) byte counters, ``F`` (nlanes) final flags and ``meta`` (5 x nlanes)
    lane records."""
    word = word_bits // 8

    def zeroed(size: int, *shape: int) -> memoryview:
        view = memoryview(bytearray(size * math.prod(shape)))
        return view.cast("I", shape) if size == 4 else view.cast("Q", shape)

    return [
        zeroed(word, 8, nlanes),
        zeroed(word, 16, nlanes),
        zeroed(8, nlanes),
        zeroed(word, nlanes),
        zeroed(8, 5, nlanes),
    ]


def _address(buffer: bytearray) -> int:
    """The address of a writable buffer's first byte (0 for an empty one)."""
    if not buffer:
        return 0
    return ctypes.addressof(ctypes.c_char.from_buffer(buffer))


def longest_first(lengths: Sequence[int]) -> array.array[int]:
    """The message indices longest first (ties in index order), or none when all are as long."""
    if len(lengths) < 2 or min(lengths) == max(lengths):
        return array.array("q")
    return array.array("q", sorted(range(len(lengths)), key=lengths.__getitem__, reverse=True))


def _buffer_digests(
    kernel: Any,
    algorithm: str,
    buffer: bytearray,
    starts: Sequence[int],
    lengths: Sequence[int],
    nlanes: int,
) -> list[bytes]:
    """The ``algorithm`` digests, by ``kernel``, of ``buffer[starts[i]:starts[i] + lengths[i]]``
    (at least one slice, each checked by the caller), computed where they lie with no numpy."""
    facts = by_name(algorithm)
    count = len(starts)
    base = _address(buffer)
    addresses = array.array("Q", [base + start for start in starts])
    sizes = array.array("q", lengths)
    # Each digest's row holds eight words of the hash.
    row = 8 * (facts.word_bits // 8)
    out = bytearray(count * row)
    rows = memoryview(out).cast("I" if facts.word_bits == 32 else "Q", (count, 8))
    kernel(
        addresses, sizes, longest_first(sizes), count, rows, *_lane_scratch(facts.word_bits, nlanes)
    )
    view = memoryview(out)
    size = facts.digest_size
    return [view[at : at + size].tobytes() for at in range(0, count * row, row)]


def _joined(messages: Sequence[bytes]) -> tuple[bytearray, list[int], list[int]]:
    """The messages joined in one buffer, with the start and length of each."""
    lengths = [len(message) for message in messages]
    starts = list(itertools.accumulate(lengths[:-1], initial=0)) if lengths else []
    return bytearray(b"".join(messages)), starts, lengths


def _check_threads(threads: int) -> int:
    return check_int("threads", threads, 1, MAX_THREADS)


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

    count = addresses.shape[0]
    facts = by_name(algorithm)
    bits = facts.word_bits
    words = np.empty((count, 8), dtype=np.uint32 if bits == 32 else np.uint64)
    kernel = _checked_scheduler(algorithm, backend)
    parts = min(threads, count)
    if parts <= 1:
        kernel(
            addresses, lengths, _longest_first(lengths), count, words, *_lane_scratch(bits, lanes)
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
            kernel_threads(parts).submit(
                kernel,
                addresses[first:last],
                part,
                _longest_first(part),
                last - first,
                words[first:last],
                *_lane_scratch(bits, lanes),
            )
        )
    for future in futures:
        future.result()
    return _digests(words, facts.digest_size)


def _longest_first(lengths: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The message indices longest first, or none when all are as long: the order of
    :func:`longest_first`, made by numpy for long lists (ties in any order, which the lanes do
    not mind, sorted a few times faster than in index order)."""
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
    chosen, width, _ = _settings(name, backend, lanes, 1)
    if chosen == "reference":
        view = memoryview(buffer)
        pairs = zip(starts, lengths, strict=True)
        return [reference.digest(name, bytes(view[s : s + n])) for s, n in pairs]
    if not starts:
        return []
    writable = buffer if isinstance(buffer, bytearray) else bytearray(buffer)
    return _buffer_digests(_checked_scheduler(name, chosen), name, writable, starts, lengths, width)
