"""The rolled compressions of the state hash, run over whole messages, against hashlib."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.compiled_hash import hash_bytes
from twocats.hashes import HASHES

ALGORITHMS = ("blake2s", "blake2b", "sha256", "sha512")
BOUNDARIES = sorted(
    {b + extra for b in (55, 56, 63, 64, 111, 112, 127, 128) for extra in (0, 64, 128)}
)


def painted(length: int) -> bytes:
    """A message of ``length`` bytes painted with i % 251."""
    return bytes(i % 251 for i in range(length))


def compiled_digest(code: int, message: bytes) -> bytes:
    """Hash ``message`` with hash_bytes; the output buffer is larger than any digest."""
    msg = np.array(bytearray(message), dtype=np.uint8)
    out = np.full(80, 0xA5, dtype=np.uint8)
    hash_bytes(np.uint32(code), msg, out)
    # Bytes past the digest stay untouched.
    assert (out[HASHES[code].digest_size :] == 0xA5).all()
    return bytes(out[: HASHES[code].digest_size])


@pytest.mark.parametrize(("code", "algorithm"), list(enumerate(ALGORITHMS)))
def test_hash_bytes_equals_hashlib_on_lengths_and_boundaries(code: int, algorithm: str) -> None:
    """Every length 0..300, the padding boundaries and two long lengths give hashlib's digest."""
    for length in [*range(301), *BOUNDARIES, 1000, 4097]:
        message = painted(length)
        assert compiled_digest(code, message) == hashlib.new(algorithm, message).digest()


@settings(max_examples=80, deadline=None)
@given(message=st.binary(max_size=1000), code=st.integers(0, 3))
def test_hash_bytes_equals_hashlib_on_drawn_inputs(message: bytes, code: int) -> None:
    """Hypothesis-drawn messages give hashlib's digest for every hash code."""
    assert compiled_digest(code, message) == hashlib.new(ALGORITHMS[code], message).digest()
