"""``hash_many_array``: the digests of ``hash_many`` as one contiguous array, on every backend."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twocats.exceptions import InvalidParametersError
from twocats.lanes import ALGORITHMS, PRIMITIVES, hash_many, hash_many_array

BACKENDS = ("reference", "scalar", "simd")

# Every length up to two blocks of the widest hash, and lengths on the padding boundaries.
LENGTHS = [*range(260), 1000, 4097]


def painted(length: int, seed: int) -> bytes:
    """A message of ``length`` bytes painted with (i + seed) % 251."""
    return bytes((i + seed) % 251 for i in range(length))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("algorithm", PRIMITIVES)
def test_rows_are_the_hashlib_digests(algorithm: str, backend: str) -> None:
    """Row i is message i's hashlib digest, in one C-contiguous uint8 array."""
    messages = [painted(n, n) for n in LENGTHS]
    rows = hash_many_array(messages, algorithm, backend=backend)
    assert rows.shape == (len(messages), ALGORITHMS[algorithm].digest_size)
    assert rows.dtype == np.uint8
    assert rows.flags.c_contiguous
    assert [bytes(row) for row in rows] == [hashlib.new(algorithm, m).digest() for m in messages]


@pytest.mark.parametrize("backend", BACKENDS)
def test_empty_batch_and_generators(backend: str) -> None:
    """An empty batch gives a (0, size) array; any iterable of bytes-like objects is accepted."""
    assert hash_many_array([], "blake2b", backend=backend).shape == (0, 64)
    words = np.arange(7, dtype=np.uint16)
    rows = hash_many_array(iter([b"x", bytearray(b"y"), words.data]), "sha256", backend=backend)
    expected = [hashlib.sha256(m).digest() for m in (b"x", b"y", words.tobytes())]
    assert [bytes(row) for row in rows] == expected


def test_threads_and_lanes_give_the_same_array() -> None:
    """Splitting the batch over threads or changing the lane count changes nothing."""
    messages = [painted(n * 37 % 3000, n) for n in range(300)]
    single = hash_many_array(messages, "blake2s")
    assert (hash_many_array(messages, "blake2s", threads=3, lanes=5) == single).all()


@pytest.mark.parametrize("algorithm", ["sha3-256", "kt128", "blake2sp"])
def test_lane_modes(algorithm: str) -> None:
    """A lane mode's digests come back as rows too, and refuse lane options as hash_many does."""
    messages = [b"", b"abc", painted(500, 3)]
    rows = hash_many_array(messages, algorithm)
    assert rows.shape == (3, ALGORITHMS[algorithm].digest_size)
    assert [bytes(row) for row in rows] == hash_many(messages, algorithm)
    with pytest.raises(InvalidParametersError, match="lanes and threads apply only to"):
        hash_many_array(messages, algorithm, threads=2)


@settings(max_examples=30, deadline=None)
@given(
    messages=st.lists(st.binary(max_size=300), max_size=50),
    algorithm=st.sampled_from(PRIMITIVES),
    lanes=st.integers(1, 40),
)
def test_drawn_batches_equal_hash_many(messages: list[bytes], algorithm: str, lanes: int) -> None:
    """Hypothesis-drawn batches: the array rows equal hash_many's list, item for item."""
    rows = hash_many_array(messages, algorithm, lanes=lanes)
    assert [bytes(row) for row in rows] == hash_many(messages, algorithm, lanes=lanes)
