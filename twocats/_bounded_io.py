"""Reading files and streams with a size cap that is checked while reading.

A file's size from ``stat`` says nothing about ``/dev/zero``, a FIFO or ``/proc`` files (all size
0), and a single ``read(limit)`` may allocate the whole limit before the first byte arrives.  These
functions read in small chunks and stop one chunk past the cap, so memory stays within the cap
plus one chunk whatever the input.  Going over the cap is an ``OSError`` with ``errno.EFBIG``,
whose ``strerror`` names the limit, so callers report it like any other unreadable file.

This module imports neither numpy nor numba.
"""

from __future__ import annotations

import errno
import os
from typing import BinaryIO, Final

from twocats._units import format_size

__all__ = ["CHUNK_BYTES", "read_bounded", "read_file_bounded", "too_large"]

#: The most bytes asked of the operating system at a time.
CHUNK_BYTES: Final = 64 << 10


def too_large(name: str, limit: int) -> OSError:
    """Return the error for `name` holding more than `limit` bytes."""
    return OSError(errno.EFBIG, f"longer than the limit of {format_size(limit)}", name)


def read_bounded(handle: BinaryIO, limit: int, name: str) -> bytes:
    """Return everything `handle` holds, refusing (``OSError``) more than `limit` bytes.

    The cap is checked after every chunk, so an endless stream is refused after ``limit`` bytes.
    """
    data = bytearray()
    while True:
        chunk = handle.read(min(CHUNK_BYTES, limit + 1 - len(data)))
        if not chunk:
            return bytes(data)
        data += chunk
        if len(data) > limit:
            raise too_large(name, limit)


def read_file_bounded(path: str | os.PathLike[str], limit: int) -> bytes:
    """Return the bytes of the file at `path`, refusing (``OSError``) more than `limit` bytes.

    A regular file whose size is already over the cap is refused without reading it; every
    other file (a pipe, a device, a file still growing) is read up to the cap and no further.
    """
    name = os.fspath(path)
    with open(name, "rb") as handle:
        if os.fstat(handle.fileno()).st_size > limit:
            raise too_large(name, limit)
        return read_bounded(handle, limit, name)
