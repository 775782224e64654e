"""Where a batch lies: bytes objects read in place, other buffers joined, lengths in bytes."""

from __future__ import annotations

import ctypes

import numpy as np
import numpy.typing as npt

from twocats.lanes.located import in_place, locate


def test_only_all_bytes_batches_are_read_in_place() -> None:
    """A batch of bytes objects is read in place; any other buffer type sends it to the join."""
    assert in_place([b"a", b"bc"]) is not None
    assert in_place([b"a", bytearray(b"bc")]) is None
    assert in_place([memoryview(b"a")]) is None


def _read(addresses: npt.NDArray[np.uint64], lengths: npt.NDArray[np.int64]) -> list[bytes]:
    pairs = zip(addresses.tolist(), lengths.tolist(), strict=True)
    return [ctypes.string_at(address, length) for address, length in pairs]


def test_located_messages_read_back_as_given() -> None:
    """Every address and length reads back its message, in place or joined (wide items too)."""
    wide = memoryview(bytes(range(8))).cast("I")
    for batch in ([b"one", b"", b"three"], [b"one", bytearray(b"two"), wide]):
        addresses, lengths, keep = locate(batch)
        assert keep is not None
        assert _read(addresses, lengths) == [bytes(m) for m in batch]
