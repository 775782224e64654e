"""The plain-Python reference hashes against hashlib; the reference is the truth for the kernels."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twocats.lanes import reference

ALGORITHMS = tuple(reference.FUNCTIONS)

# Padding boundaries of 64- and 128-byte blocks, each also one block further on.
BOUNDARIES = sorted(
    {b + extra for b in (55, 56, 63, 64, 111, 112, 127, 128) for extra in (0, 64, 128)}
)


def painted(length: int) -> bytes:
    """A message of ``length`` bytes painted with i % 251."""
    return bytes(i % 251 for i in range(length))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_reference_equals_hashlib_on_lengths_0_to_300(algorithm: str) -> None:
    """Every length from 0 to 300 bytes gives hashlib's digest."""
    for length in range(301):
        message = painted(length)
        assert reference.digest(algorithm, message) == hashlib.new(algorithm, message).digest()


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_reference_equals_hashlib_on_padding_boundaries(algorithm: str) -> None:
    """Lengths around the padding boundaries, and two multi-block lengths, give hashlib's digest."""
    for length in [*BOUNDARIES, 1000, 4097]:
        message = painted(length)
        assert reference.digest(algorithm, message) == hashlib.new(algorithm, message).digest()


@settings(max_examples=60, deadline=None)
@given(message=st.binary(max_size=700), algorithm=st.sampled_from(ALGORITHMS))
def test_reference_equals_hashlib_on_drawn_inputs(message: bytes, algorithm: str) -> None:
    """Hypothesis-drawn messages give hashlib's digest."""
    assert reference.digest(algorithm, message) == hashlib.new(algorithm, message).digest()


def test_reference_known_answers() -> None:
    """The FIPS 180-4 and RFC 7693 examples for "abc" come out right."""
    assert reference.sha1(b"abc").hex() == "a9993e364706816aba3e25717850c26c9cd0d89d"
    assert reference.sha256(b"abc").hex().startswith("ba7816bf8f01cfea414140de5dae2223")
    assert reference.sha512(b"abc").hex().startswith("ddaf35a193617abacc417349ae204131")
    assert reference.blake2s(b"abc").hex().startswith("508c5e8c327c14e2e1a72ba34eeb452f")
    assert reference.blake2b(b"abc").hex().startswith("ba80a53f981c4d0d6a2797b69f12f6e9")


def test_reference_accepts_bytes_like() -> None:
    """bytearray and memoryview inputs hash like the equal bytes."""
    data = painted(77)
    assert reference.sha256(bytearray(data)) == reference.sha256(data)
    assert reference.blake2s(memoryview(data)) == reference.blake2s(data)
