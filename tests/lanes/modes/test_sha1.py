"""Multi-buffer SHA-1 (legacy integrity checks) on every backend, against hashlib.sha1."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen import modes as codegen
from tests.support import modes_kat as kat
from twocats.exceptions import InvalidParametersError
from twocats.lanes.modes import sha1

BACKENDS = ("reference", "scalar", "simd")
COMPILED = ("scalar", "simd")


def test_generated_sha1_module_is_current() -> None:
    """The committed generated SHA-1 kernels equal the generator's output."""
    assert (codegen.GENERATED / "sha1.py").read_text() == codegen.sha1_module()


@pytest.mark.parametrize("backend", BACKENDS)
def test_fips_examples(backend: str) -> None:
    """SHA-1 of "abc" and of the 448-bit FIPS message equal the published digests."""
    got = sha1.sha1_many(
        [b"abc", b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"], backend=backend
    )
    assert [d.hex() for d in got] == [
        "a9993e364706816aba3e25717850c26c9cd0d89d",
        "84983e441c3bd26ebaae4aa1f95129e5e54670f1",
    ]


@pytest.mark.parametrize("backend", COMPILED)
def test_padding_boundaries(backend: str) -> None:
    """Every length from 0 to 200 bytes (one, two and three blocks, every tail) equals hashlib."""
    msgs = [kat.pattern_bytes(n, 256) for n in range(201)]
    assert sha1.sha1_many(msgs, backend=backend) == [hashlib.sha1(m).digest() for m in msgs]


@settings(max_examples=30, deadline=None)
@given(messages=st.lists(st.binary(max_size=700), max_size=20), backend=st.sampled_from(COMPILED))
def test_matches_hashlib(messages: list[bytes], backend: str) -> None:
    """Any batch of messages gives hashlib.sha1 of each, in the caller's order."""
    assert sha1.sha1_many(messages, backend=backend) == [hashlib.sha1(m).digest() for m in messages]


def test_rejects_a_single_message() -> None:
    """Passing one bytes object instead of a sequence of messages is an error."""
    with pytest.raises(InvalidParametersError, match="messages"):
        sha1.sha1_many(b"abc")  # type: ignore[arg-type]
