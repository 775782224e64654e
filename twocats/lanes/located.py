"""Where a batch of messages lies: each message's data address and length, for kernels that read
the messages in place.

CPython's ``id`` of a bytes object is its address, and the object's data follows its header, so a
batch of bytes objects is read where it lies; other interpreters and buffer types are joined into
one buffer first.  Importing this module is cheap: numpy is imported on the first call.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Located", "in_place", "locate"]

#: The addresses and byte lengths of a batch's messages, and what holds their bytes alive.
Located = tuple["npt.NDArray[np.uint64]", "npt.NDArray[np.int64]", object]

#: Where a bytes object's data starts, from the object's address (CPython's layout).
_BYTES_DATA = bytes.__basicsize__ - 1


@functools.cache
def _bytes_in_place() -> bool:
    """Whether a bytes object's data lies at its ``id`` plus :data:`_BYTES_DATA` (checked once)."""
    if sys.implementation.name != "cpython":
        return False
    import ctypes

    probe = b"twocats reads bytes objects where they lie"
    return ctypes.string_at(id(probe) + _BYTES_DATA, len(probe)) == probe


def in_place(batch: Sequence[object]) -> npt.NDArray[np.uint64] | None:
    """The data address of every message if all are ``bytes`` (read where they lie), else None."""
    import numpy as np

    if not _bytes_in_place() or set(map(type, batch)) != {bytes}:
        return None
    addresses = np.fromiter(map(id, batch), dtype=np.uint64, count=len(batch))
    addresses += np.uint64(_BYTES_DATA)
    return addresses


def locate(batch: Sequence[bytes | bytearray | memoryview]) -> Located:
    """The address and byte length of every message of ``batch``, and an object to keep alive
    while a kernel reads them: the batch itself, or the one buffer its messages were joined into.

    Byte lengths are read in one C-level pass.  The caller must not change the messages while a
    kernel reads them.
    """
    import numpy as np

    # A private copy of the list holds every message alive while a kernel runs without the GIL,
    # whatever another thread does to the caller's list meanwhile.
    batch = tuple(batch)
    count = len(batch)
    addresses = in_place(batch)
    lengths = np.fromiter(map(len, batch), dtype=np.int64, count=count)
    if addresses is not None:
        return addresses, lengths, batch
    try:
        joined = b"".join(batch)
    except TypeError:
        raise TypeError("messages must be bytes-like objects") from None
    if int(lengths.sum()) != len(joined):
        # Some buffer has items wider than a byte, so len() did not count bytes.
        lengths = np.fromiter((memoryview(m).nbytes for m in batch), dtype=np.int64, count=count)
    data = np.frombuffer(joined, dtype=np.uint8)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.uint64)
    return starts + np.uint64(data.ctypes.data if data.size else 0), lengths, joined
