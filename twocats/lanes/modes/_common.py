"""Helpers shared by the lane-mode front ends: argument checks and message packing.

Importing this module imports neither numpy nor numba; :func:`pack` imports numpy when called.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from twocats.exceptions import InvalidParametersError
from twocats.params import check_int

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "Packed",
    "as_data",
    "check_bytes",
    "check_int",
    "check_messages",
    "pack",
    "unpack",
]

Packed = tuple["npt.NDArray[np.uint8]", "npt.NDArray[np.uint64]", "npt.NDArray[np.uint64]"]


def check_bytes(name: str, value: Any, max_len: int | None = None) -> bytes:
    """Return ``value`` as bytes if it is bytes-like (and at most ``max_len`` long), else raise."""
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise InvalidParametersError(f"{name} must be bytes")
    data = bytes(value)
    if max_len is not None and len(data) > max_len:
        raise InvalidParametersError(f"{name} must be at most {max_len} bytes long")
    return data


def check_messages(messages: Sequence[bytes]) -> list[bytes]:
    """Return the messages as a list of bytes, rejecting anything that is not bytes-like."""
    if isinstance(messages, (bytes, bytearray, memoryview, str)):
        raise InvalidParametersError(
            "messages must be a sequence of bytes objects, not one message"
        )
    out = []
    for m in messages:
        if not isinstance(m, (bytes, bytearray, memoryview)):
            raise InvalidParametersError("messages must be a sequence of bytes objects")
        out.append(bytes(m))
    return out


def as_data(data: bytes | memoryview) -> npt.NDArray[np.uint8]:
    """View bytes as a read-only uint8 array (one zero byte for empty input).

    Every kernel receives its message bytes in this one array type, read-only, so that each kernel
    compiles for one signature only (numba types writable and read-only arrays differently).
    """
    import numpy as np

    array = np.frombuffer(data, dtype=np.uint8) if len(data) else np.zeros(1, dtype=np.uint8)
    array.flags.writeable = False
    return array


def pack(messages: Sequence[bytes]) -> Packed:
    """Join messages into one uint8 buffer and return it with the start and length of each."""
    import numpy as np

    lengths = np.fromiter((len(m) for m in messages), dtype=np.uint64, count=len(messages))
    starts = np.zeros(len(messages), dtype=np.uint64)
    if len(messages) > 1:
        np.cumsum(lengths[:-1], out=starts[1:])
    return as_data(b"".join(messages)), starts, lengths


def unpack(rows: npt.NDArray[np.uint8]) -> list[bytes]:
    """Return the rows of a 2-D uint8 array as a list of bytes objects."""
    return [row.tobytes() for row in rows]
