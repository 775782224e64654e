"""Multi-buffer hashing: many independent messages hashed in SIMD lanes (S-HASH).

Every output is the standard digest of its message (equal to ``hashlib``); only the speed differs.
Usage::

    from twocats.simd import hash_many, hash_many_fixed

    digests = hash_many([b"a", b"", b"x" * 1000], "blake2s")        # list of 32-byte digests
    rows = hash_many_array([b"a", b"", b"x" * 1000], "blake2s")     # uint8 array (3, 32)
    table = hash_many_fixed(np.zeros((1000, 64), np.uint8), "sha256")  # uint8 array (1000, 32)

``backend`` is "simd" (default, or ``$TWOCATS_BACKEND``), "scalar" (the same kernels compiled with
the vectorizers off) or "reference" (a pure-Python loop over ``twocats.simd.reference``).
``lanes`` is the number of messages in flight (default: two vector registers' worth) and
``threads`` the number of threads sharing the batch (default 1; the kernels release the GIL).

The compiled path joins the messages into one buffer and hands it, with their lengths, to a
kernel that schedules messages onto lanes, refilling a lane as soon as its message ends; block
decoding, padding and byte-order conversion happen inside that kernel.  Importing this module
is cheap: numpy and the kernels are imported on the first call.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from twocats.exceptions import InvalidParametersError
from twocats.hashes import HASHES
from twocats.simd import reference
from twocats.simd.registry import resolve_backend

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "ALGORITHMS",
    "DEFAULT_LANES",
    "DIGEST_SIZES",
    "MAX_LANES",
    "MAX_THREADS",
    "hash_many",
    "hash_many_array",
    "hash_many_fixed",
]

#: The algorithms, in hash-code order.
ALGORITHMS = tuple(facts.name for facts in HASHES)

#: Digest size in bytes of each algorithm.
DIGEST_SIZES = {facts.name: facts.digest_size for facts in HASHES}

#: Default lane count: two 512-bit registers of 32-bit or 64-bit words.
DEFAULT_LANES = {facts.name: 2 * 512 // facts.word_bits for facts in HASHES}

#: The largest lane count accepted.
MAX_LANES = 4096

#: The largest thread count accepted.
MAX_THREADS = 64

_WORD_BITS = {facts.name: facts.word_bits for facts in HASHES}


def _check_algorithm(algorithm: str) -> str:
    if algorithm not in DIGEST_SIZES:
        allowed = ", ".join(ALGORITHMS)
        raise InvalidParametersError(
            f"algorithm must be one of {allowed} (or, for hash_many, a name in "
            f"twocats.simd.modes.MODES), not {algorithm!r}"
        )
    return algorithm


def _check_lanes(lanes: int | None, algorithm: str) -> int:
    if lanes is None:
        return DEFAULT_LANES[algorithm]
    if isinstance(lanes, bool) or not isinstance(lanes, int) or not 1 <= lanes <= MAX_LANES:
        raise InvalidParametersError(
            f"lanes must be an integer from 1 to {MAX_LANES}, not {lanes!r}"
        )
    return lanes


def _kernel(algorithm: str, backend: str) -> Any:
    """Return the compiled scheduler of ``algorithm`` for the "scalar" or "simd" backend."""
    from twocats.simd.scheduler import SCHEDULERS

    return SCHEDULERS[algorithm].get(backend)


def _check_threads(threads: int) -> int:
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= MAX_THREADS:
        raise InvalidParametersError(
            f"threads must be an integer from 1 to {MAX_THREADS}, not {threads!r}"
        )
    return threads


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
    data: npt.NDArray[np.uint8],
    lengths: npt.NDArray[np.int64],
    stride: int,
    count: int,
    lanes: int,
    threads: int,
) -> npt.NDArray[np.uint8]:
    """Hash ``count`` back-to-back messages of ``data``; return their digests as rows of bytes.

    With several threads the batch is cut into that many runs of consecutive messages holding
    about equal numbers of bytes, each hashed by the kernel on its own thread.
    """
    import numpy as np

    words = np.empty((count, 8), dtype=np.uint32 if _WORD_BITS[algorithm] == 32 else np.uint64)
    # Read-only views keep a single compiled signature whatever the caller's array flags.
    view = data.view()
    view.flags.writeable = False
    kernel = _kernel(algorithm, backend)
    parts = min(threads, count)
    if parts <= 1:
        kernel(view, lengths, stride, count, words, lanes)
        return words.view(np.uint8)
    if stride >= 0:
        ends = np.linspace(0, count, parts + 1).astype(np.int64)
        starts = ends * stride
    else:
        cumulative = np.concatenate(([0], np.cumsum(lengths)))
        targets = np.linspace(0, cumulative[-1], parts + 1)
        ends = np.searchsorted(cumulative, targets).astype(np.int64)
        ends[0], ends[-1] = 0, count
        starts = cumulative[ends]
    futures = []
    for k in range(parts):
        first, last = int(ends[k]), int(ends[k + 1])
        if last <= first:
            continue
        part_lengths = lengths[first:last] if stride < 0 else lengths
        futures.append(
            _executor().submit(
                kernel,
                view[int(starts[k]) :],
                part_lengths,
                stride,
                last - first,
                words[first:last],
                lanes,
            )
        )
    for future in futures:
        future.result()
    return words.view(np.uint8)


def _lane_mode(algorithm: str, lanes: int | None, threads: int) -> Any:
    """The lane mode called ``algorithm`` (``twocats.simd.modes``), or None for the primitives."""
    if algorithm in DIGEST_SIZES:
        return None
    from twocats.simd.modes import MODES

    mode = MODES.get(algorithm)
    # The lane modes choose their own lane counts; one thread runs each call.
    if mode is not None and (lanes is not None or threads != 1):
        raise InvalidParametersError(
            f"lanes and threads apply only to {', '.join(ALGORITHMS)}, not {algorithm!r}"
        )
    return mode


def _digest_rows(
    batch: list[bytes | bytearray | memoryview],
    name: str,
    backend: str,
    lanes: int,
    threads: int,
) -> npt.NDArray[np.uint8]:
    """Hash a non-empty batch with a compiled backend; return a (count, digest size) array.

    The messages are joined into one buffer and their byte lengths read in one C-level pass
    each; the digests land in one array, with no Python object per message.
    """
    import numpy as np

    count = len(batch)
    try:
        joined = b"".join(batch)
    except TypeError:
        raise TypeError("messages must be bytes-like objects") from None
    lengths = np.fromiter(map(len, batch), dtype=np.int64, count=count)
    if int(lengths.sum()) != len(joined):
        # Some buffer has items wider than a byte, so len() did not count bytes.
        lengths = np.fromiter((memoryview(m).nbytes for m in batch), dtype=np.int64, count=count)
    data = np.frombuffer(joined, dtype=np.uint8)
    digests = _run(name, backend, data, lengths, -1, count, lanes, threads)
    return digests.reshape(count, DIGEST_SIZES[name])


def hash_many(
    messages: Iterable[bytes | bytearray | memoryview],
    algorithm: str = "sha256",
    *,
    backend: str | None = None,
    lanes: int | None = None,
    threads: int = 1,
) -> list[bytes]:
    """Return the digest of every message, in order, hashing up to ``lanes`` messages at once.

    ``algorithm`` is one of :data:`ALGORITHMS` or a lane mode of :data:`twocats.simd.modes.MODES`
    (SHA-3, SHAKE, KangarooTwelve, ParallelHash, BLAKE2sp/bp, LSH, SHA-256 trees, SHA-1), which
    choose their own lane layout.

    ``threads`` > 1 splits a compiled run over that many threads (the reference backend ignores
    it).  :func:`hash_many_array` returns the same digests as one array, without building a
    ``bytes`` object per message.
    """
    batch = messages if isinstance(messages, list) else list(messages)
    mode = _lane_mode(algorithm, lanes, threads)
    if mode is not None:
        result: list[bytes] = mode.many(batch, backend=backend)
        return result
    name = _check_algorithm(algorithm)
    chosen = resolve_backend(backend)
    width = _check_lanes(lanes, name)
    workers = _check_threads(threads)
    if chosen == "reference":
        return [reference.digest(name, bytes(message)) for message in batch]
    if not batch:
        return []
    rows = _digest_rows(batch, name, chosen, width, workers)
    # A void view turns each row into one bytes object in a single C loop.
    digests: list[bytes] = rows.view(f"V{DIGEST_SIZES[name]}").ravel().tolist()
    return digests


def hash_many_array(
    messages: Iterable[bytes | bytearray | memoryview],
    algorithm: str = "sha256",
    *,
    backend: str | None = None,
    lanes: int | None = None,
    threads: int = 1,
) -> npt.NDArray[np.uint8]:
    """Like :func:`hash_many`, but return the digests as one contiguous uint8 array.

    Row ``i`` of the ``(len(messages), digest_size)`` result is the digest of message ``i``, a
    view into one buffer (``bytes(row)`` or ``row.tobytes()`` copies it out): no Python object is
    built per message, which is most of hash_many's time on short messages.
    """
    import numpy as np

    batch = messages if isinstance(messages, list) else list(messages)
    mode = _lane_mode(algorithm, lanes, threads)
    if mode is not None:
        listed: list[bytes] = mode.many(batch, backend=backend)
        return _rows_of(listed, mode.digest_size)
    name = _check_algorithm(algorithm)
    chosen = resolve_backend(backend)
    width = _check_lanes(lanes, name)
    workers = _check_threads(threads)
    if chosen == "reference":
        digests = [reference.digest(name, bytes(message)) for message in batch]
        return _rows_of(digests, DIGEST_SIZES[name])
    if not batch:
        return np.empty((0, DIGEST_SIZES[name]), dtype=np.uint8)
    return _digest_rows(batch, name, chosen, width, workers)


def _rows_of(digests: list[bytes], size: int) -> npt.NDArray[np.uint8]:
    """Digests given one by one, as rows of a fresh writable array."""
    import numpy as np

    rows: npt.NDArray[np.uint8] = np.frombuffer(b"".join(digests), dtype=np.uint8).copy()
    return rows.reshape(len(digests), size)


def hash_many_fixed(
    array: npt.ArrayLike,
    algorithm: str = "sha256",
    *,
    backend: str | None = None,
    lanes: int | None = None,
    threads: int = 1,
) -> npt.NDArray[np.uint8]:
    """Hash every row of a 2-D uint8 array; return a uint8 array with one digest per row.

    ``threads`` > 1 splits a compiled run over that many threads.
    """
    import numpy as np

    name = _check_algorithm(algorithm)
    chosen = resolve_backend(backend)
    width = _check_lanes(lanes, name)
    workers = _check_threads(threads)
    rows = np.asarray(array)
    if rows.ndim != 2 or rows.dtype != np.uint8:
        raise InvalidParametersError(
            f"array must be a 2-D uint8 array, not {rows.ndim}-D {rows.dtype}"
        )
    count, size = rows.shape
    if chosen == "reference":
        out = np.empty((count, DIGEST_SIZES[name]), dtype=np.uint8)
        for i in range(count):
            out[i] = np.frombuffer(reference.digest(name, rows[i].tobytes()), dtype=np.uint8)
        return out
    if count == 0:
        return np.empty((0, DIGEST_SIZES[name]), dtype=np.uint8)
    data = np.ascontiguousarray(rows).reshape(-1)
    return _run(name, chosen, data, np.empty(0, dtype=np.int64), size, count, width, workers)
