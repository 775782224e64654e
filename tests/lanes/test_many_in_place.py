"""The lane scheduler reads bytes objects where they lie and other buffers joined: both paths,
longest-first ordering and thread splits against a hashlib loop."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twocats.exceptions import InvalidParametersError
from twocats.lanes import PRIMITIVES, hash_many, hash_many_array, hash_many_fixed
from twocats.lanes.many import hash_slices
from twocats.lanes.primitives import longest_first


def expected(messages: list[bytes], algorithm: str) -> list[bytes]:
    """The hashlib loop every path must agree with."""
    return [hashlib.new(algorithm, bytes(m)).digest() for m in messages]


def test_order_is_longest_first_and_empty_for_equal_lengths() -> None:
    """Messages go onto the lanes longest first, ties in index order; equal lengths need none."""
    assert longest_first([3, 70, 3, 200, 0]).tolist() == [3, 1, 0, 2, 4]
    assert len(longest_first([64] * 9)) == 0


@settings(max_examples=30, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 700), min_size=1, max_size=70),
    algorithm=st.sampled_from(PRIMITIVES),
    lanes=st.sampled_from([1, 3, 8, 16]),
    threads=st.sampled_from([1, 2, 3]),
    backend=st.sampled_from(["simd", "scalar"]),
    joined=st.booleans(),
)
def test_drawn_batches_in_place_and_joined(
    lengths: list[int], algorithm: str, lanes: int, threads: int, backend: str, joined: bool
) -> None:
    """Drawn lengths, read in place (bytes) or joined (bytearray), on any lanes and threads."""
    messages = [bytes((i * 7 + n) % 256 for i in range(n)) for n in lengths]
    batch: list[bytes] | list[bytearray] = [bytearray(m) for m in messages] if joined else messages
    got = hash_many(batch, algorithm, backend=backend, lanes=lanes, threads=threads)
    assert got == expected(messages, algorithm)


@pytest.mark.parametrize("algorithm", PRIMITIVES)
def test_a_long_message_among_short_ones(algorithm: str) -> None:
    """The longest message goes first; every digest still lands in its own row."""
    messages = [b"x" * n for n in (5, 0, 9000, 64, 1, 130_000, 127)]
    rows = hash_many_array(messages, algorithm, lanes=4)
    assert [bytes(row) for row in rows] == expected(messages, algorithm)


@pytest.mark.parametrize("algorithm", PRIMITIVES)
def test_fixed_rows_of_an_offset_view(algorithm: str) -> None:
    """Rows of a view that starts inside its buffer are read at their own addresses."""
    data = np.arange(40 * 97, dtype=np.uint64).astype(np.uint8).reshape(40, 97)
    rows = data[3:, 1:]
    got = hash_many_fixed(rows, algorithm, threads=2)
    assert [bytes(r) for r in got] == expected([r.tobytes() for r in rows], algorithm)


@settings(max_examples=30, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 700), min_size=0, max_size=40),
    gap=st.integers(0, 9),
    algorithm=st.sampled_from([*PRIMITIVES, "sha3-256"]),
    backend=st.sampled_from(["simd", "scalar", "reference"]),
)
def test_slices_of_one_buffer_equal_hashlib(
    lengths: list[int], gap: int, algorithm: str, backend: str
) -> None:
    """hash_slices hashes the slices of one buffer, gaps between them, as hashlib hashes each."""
    buffer = bytearray(i % 251 for i in range(sum(lengths) + gap * (len(lengths) + 1)))
    starts = []
    at = gap
    for length in lengths:
        starts.append(at)
        at += length + gap
    messages = [bytes(buffer[s : s + n]) for s, n in zip(starts, lengths, strict=True)]
    got = hash_slices(buffer, starts, lengths, algorithm, backend=backend)
    assert got == [hashlib.new(algorithm.replace("-", "_"), m).digest() for m in messages]


@pytest.mark.parametrize("algorithm", ["sha256", "sha3-256"])
@pytest.mark.parametrize(
    ("starts", "lengths"),
    [([0], [11]), ([-1], [2]), ([3], [-1]), ([0, 1], [1]), ([0.5], [2])],
)
def test_slices_outside_the_buffer_are_refused(
    starts: list[int], lengths: list[int], algorithm: str
) -> None:
    """A slice that does not lie within the buffer, a missing length or a start that is not an
    integer raises before hashing, for a primitive and for a lane mode alike."""
    with pytest.raises(InvalidParametersError):
        hash_slices(bytearray(10), starts, lengths, algorithm)
