"""The ``hash_many`` family: many independent messages hashed at once in SIMD lanes (S-HASH).

Every output is the standard digest of its message; only the speed differs.  Usage::

    from twocats.lanes import hash_many, hash_many_array, hash_many_fixed

    digests = hash_many([b"a", b"", b"x" * 1000], "blake2s")        # list of 32-byte digests
    rows = hash_many_array([b"a", b"", b"x" * 1000], "blake2s")     # uint8 array (3, 32)
    table = hash_many_fixed(np.zeros((1000, 64), np.uint8), "sha256")  # uint8 array (1000, 32)
    hash_many([b"abc"], "sha3-256")                                  # a lane mode

``algorithm`` is a name of :data:`twocats.lanes.registry.ALGORITHMS`: one of the lane primitives
(:mod:`twocats.lanes.primitives`, whose ``lanes`` and ``threads`` the caller may set) or a lane
mode from the literature, which chooses its own lane layout.  ``backend`` is "simd" (default, or
``$TWOCATS_BACKEND``), "scalar" or "reference".  Importing this module is cheap: numpy and the
kernels are imported on the first call.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from twocats.exceptions import InvalidParametersError
from twocats.lanes import primitives

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from twocats.lanes.algorithm import Algorithm

__all__ = ["hash_many", "hash_many_array", "hash_many_fixed", "hash_slices"]


def _mode(algorithm: str, lanes: int | None, threads: int, backend: str | None) -> Algorithm:
    """The algorithm called ``algorithm``; a lane mode refuses lanes and threads."""
    from twocats.lanes.registry import algorithm_named

    entry = algorithm_named(algorithm)
    # The lane modes choose their own lane counts; one thread runs each call.
    if not entry.primitive and (lanes is not None or threads != 1):
        allowed = ", ".join(primitives.PRIMITIVES)
        raise InvalidParametersError(
            f"lanes and threads apply only to {allowed}, not {algorithm!r}"
        )
    return entry


def hash_many(
    messages: Iterable[bytes | bytearray | memoryview],
    algorithm: str = "sha256",
    *,
    backend: str | None = None,
    lanes: int | None = None,
    threads: int = 1,
) -> list[bytes]:
    """Return the digest of every message, in order, hashing up to ``lanes`` messages at once.

    ``algorithm`` is a name of :data:`twocats.lanes.registry.ALGORITHMS`: BLAKE2s, BLAKE2b,
    SHA-256, SHA-512, SHA-1 (legacy), or a lane mode (SHA-3, SHAKE, KangarooTwelve,
    ParallelHash, BLAKE2sp/bp, LSH, SHA-256 trees), which chooses its own lane layout.

    ``threads`` > 1 splits a compiled run of a primitive over that many threads (the reference
    backend ignores it).  :func:`hash_many_array` returns the same digests as one array, without
    building a ``bytes`` object per message.
    """
    batch = messages if isinstance(messages, list) else list(messages)
    entry = _mode(algorithm, lanes, threads, backend)
    if entry.primitive:
        return primitives.digest_list(
            entry.name, batch, backend=backend, lanes=lanes, threads=threads
        )
    return entry.many(batch, backend=backend)


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
    batch = messages if isinstance(messages, list) else list(messages)
    entry = _mode(algorithm, lanes, threads, backend)
    if entry.primitive:
        return primitives.digest_rows(
            entry.name, batch, backend=backend, lanes=lanes, threads=threads
        )
    return primitives.rows_of(entry.many(batch, backend=backend), entry.digest_size)


def hash_many_fixed(
    array: npt.ArrayLike,
    algorithm: str = "sha256",
    *,
    backend: str | None = None,
    lanes: int | None = None,
    threads: int = 1,
) -> npt.NDArray[np.uint8]:
    """Hash every row of a 2-D uint8 array; return a uint8 array with one digest per row.

    ``algorithm`` is one of the primitives (:data:`twocats.lanes.registry.PRIMITIVES`);
    ``threads`` > 1 splits a compiled run over that many threads.
    """
    if algorithm not in primitives.PRIMITIVES:
        allowed = ", ".join(primitives.PRIMITIVES)
        raise InvalidParametersError(f"algorithm must be one of {allowed}, not {algorithm!r}")
    return primitives.fixed_rows(algorithm, array, backend=backend, lanes=lanes, threads=threads)


def hash_slices(
    buffer: bytes | bytearray,
    starts: Sequence[int],
    lengths: Sequence[int],
    algorithm: str = "sha256",
    *,
    backend: str | None = None,
) -> list[bytes]:
    """Return the digest of every message ``buffer[starts[i]:starts[i] + lengths[i]]``, in order.

    The messages of one buffer (``twocats sum`` reads files into one): a primitive's lanes read
    them where they lie, with no copy and no object per message; a lane mode gets each as bytes.
    """
    primitives.check_slices(buffer, starts, lengths)
    if algorithm not in primitives.PRIMITIVES:
        entry = _mode(algorithm, None, 1, backend)
        view = memoryview(buffer)
        batch = [bytes(view[s : s + n]) for s, n in zip(starts, lengths, strict=True)]
        return entry.many(batch, backend=backend)
    # A primitive needs neither numpy nor the registry of lane modes here.
    return primitives.slice_digests(algorithm, buffer, starts, lengths, backend=backend)
