"""``hash_many`` and ``hash_many_fixed`` on every backend against a hashlib loop."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twocats.exceptions import BackendError, InvalidParametersError
from twocats.lanes import ALGORITHMS, PRIMITIVES, hash_many, hash_many_fixed
from twocats.lanes import reference as simd_reference

COMPILED = ("scalar", "simd")
BOUNDARIES = sorted(
    {b + extra for b in (55, 56, 63, 64, 111, 112, 127, 128) for extra in (0, 64, 128)}
)


def painted(length: int, seed: int = 0) -> bytes:
    """A message of ``length`` bytes painted with (i + seed) % 251."""
    return bytes((i + seed) % 251 for i in range(length))


def expected(messages: list[bytes], algorithm: str) -> list[bytes]:
    """The hashlib loop every backend must agree with."""
    return [hashlib.new(algorithm, m).digest() for m in messages]


@pytest.mark.parametrize("backend", ["reference", *COMPILED])
@pytest.mark.parametrize("algorithm", PRIMITIVES)
def test_every_length_0_to_300_and_boundaries(algorithm: str, backend: str) -> None:
    """One batch holding every length 0..300, the padding boundaries and long messages."""
    messages = [painted(n, n) for n in [*range(301), *BOUNDARIES, 1000, 4097]]
    assert hash_many(messages, algorithm, backend=backend) == expected(messages, algorithm)


@pytest.mark.parametrize("backend", COMPILED)
@pytest.mark.parametrize("algorithm", PRIMITIVES)
@pytest.mark.parametrize("lanes", [1, 3, 16, 33])
def test_mixed_batches_with_empty_messages(algorithm: str, backend: str, lanes: int) -> None:
    """Mixed lengths with empty messages, more messages than lanes, any lane count."""
    lengths = [0, 5000, 0, 1, 64, 0, 129, 55, 300, 0, 2, 3, 200, 0] * 5
    messages = [painted(n, i) for i, n in enumerate(lengths)]
    got = hash_many(messages, algorithm, backend=backend, lanes=lanes)
    assert got == expected(messages, algorithm)


@pytest.mark.parametrize("backend", ["reference", *COMPILED])
@pytest.mark.parametrize("algorithm", PRIMITIVES)
def test_single_message_and_empty_batch(algorithm: str, backend: str) -> None:
    """One message (also the empty one) and an empty batch."""
    for message in (b"", b"abc", painted(1000)):
        assert hash_many([message], algorithm, backend=backend) == expected([message], algorithm)
    assert hash_many([], algorithm, backend=backend) == []


@pytest.mark.parametrize("backend", COMPILED)
def test_many_equal_messages_beyond_lane_count(backend: str) -> None:
    """Thousands of equal-length messages (many lane refills) match the hashlib loop."""
    messages = [painted(64, i) for i in range(3000)]
    assert hash_many(messages, "blake2s", backend=backend) == expected(messages, "blake2s")


@pytest.mark.parametrize("backend", COMPILED)
def test_order_of_submission_does_not_matter(backend: str) -> None:
    """Reversing the batch reverses the digests (lanes finish out of order)."""
    messages = [painted(n, n) for n in (1000, 1, 500, 0, 77, 3000, 64)]
    forward = hash_many(messages, "sha256", backend=backend, lanes=4)
    backward = hash_many(messages[::-1], "sha256", backend=backend, lanes=4)
    assert backward == forward[::-1]


@pytest.mark.parametrize("threads", [2, 3])
def test_threads_split_the_batch(threads: int) -> None:
    """Several threads give the same digests, for mixed lengths and for fixed-length rows."""
    lengths = [0, 3000, 1, 64, 0, 129, 55, 300, 2, 5000, 7] * 9
    messages = [painted(n, i) for i, n in enumerate(lengths)]
    got = hash_many(messages, "blake2b", lanes=4, threads=threads)
    assert got == expected(messages, "blake2b")
    assert hash_many(messages[:2], "sha256", threads=threads) == expected(messages[:2], "sha256")
    rows = np.frombuffer(painted(100 * 70), dtype=np.uint8).reshape(100, 70)
    single = hash_many_fixed(rows, "sha512")
    assert (hash_many_fixed(rows, "sha512", threads=threads) == single).all()


def test_bytes_like_messages() -> None:
    """bytearray, memoryview (also of wider items) and generators are accepted."""
    words = np.arange(10, dtype=np.uint32)
    messages: list[bytes | bytearray | memoryview] = [
        bytearray(b"ab"),
        memoryview(b"cd"),
        words.data,
        b"ef",
    ]
    plain = [b"ab", b"cd", words.tobytes(), b"ef"]
    assert hash_many(iter(messages), "sha512") == expected(plain, "sha512")


def test_rejects_non_bytes_messages() -> None:
    """A str among the messages is a TypeError, not a silent encoding."""
    with pytest.raises(TypeError, match="bytes-like"):
        hash_many([b"a", "b"], "sha256")  # type: ignore[list-item]


@settings(max_examples=40, deadline=None)
@given(
    messages=st.lists(st.binary(max_size=400), max_size=40),
    algorithm=st.sampled_from(PRIMITIVES),
    lanes=st.integers(1, 20),
    backend=st.sampled_from(COMPILED),
)
def test_drawn_batches(messages: list[bytes], algorithm: str, lanes: int, backend: str) -> None:
    """Hypothesis-drawn batches match the hashlib loop."""
    assert hash_many(messages, algorithm, backend=backend, lanes=lanes) == expected(
        messages, algorithm
    )


@pytest.mark.parametrize("backend", ["reference", *COMPILED])
@pytest.mark.parametrize("algorithm", PRIMITIVES)
def test_fixed_length_rows(algorithm: str, backend: str) -> None:
    """hash_many_fixed hashes every row, for sizes on and around the padding boundaries."""
    for size in (0, 1, 55, 56, 64, 111, 112, 128, 129):
        flat = b"".join(painted(size, r) for r in range(37))
        rows = np.frombuffer(flat, dtype=np.uint8).reshape(37, size)
        got = hash_many_fixed(rows, algorithm, backend=backend, lanes=8)
        assert got.shape == (37, ALGORITHMS[algorithm].digest_size)
        assert got.dtype == np.uint8
        assert [bytes(row) for row in got] == expected([r.tobytes() for r in rows], algorithm)


def test_fixed_accepts_strided_and_readonly_arrays() -> None:
    """A non-contiguous or read-only input gives the same digests as its contiguous copy."""
    base = np.frombuffer(painted(64 * 40), dtype=np.uint8).reshape(40, 64)
    strided = base[::2, :]
    assert not strided.flags.c_contiguous
    assert (hash_many_fixed(strided, "blake2s") == hash_many_fixed(strided.copy(), "blake2s")).all()
    assert hash_many_fixed(np.empty((0, 5), np.uint8), "sha256").shape == (0, 32)


def test_invalid_arguments_are_named() -> None:
    """Bad algorithm, lanes, array or backend raise the project's errors naming the parameter."""
    with pytest.raises(InvalidParametersError, match="algorithm must be one of"):
        hash_many([b""], "md5")
    with pytest.raises(InvalidParametersError, match="lanes must be an integer from 1"):
        hash_many([b""], "sha256", lanes=0)
    with pytest.raises(InvalidParametersError, match="lanes"):
        hash_many([b""], "sha256", lanes=True)
    with pytest.raises(InvalidParametersError, match="threads must be an integer from 1"):
        hash_many([b""], "sha256", threads=0)
    with pytest.raises(InvalidParametersError, match="array must be a 2-D uint8 array"):
        hash_many_fixed(np.zeros(8, np.uint8))
    with pytest.raises(InvalidParametersError, match="array must be a 2-D uint8 array"):
        hash_many_fixed(np.zeros((2, 8), np.uint16))
    with pytest.raises(BackendError, match="reference, scalar, simd"):
        hash_many([b""], backend="gpu")


def test_backend_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """TWOCATS_BACKEND chooses the backend when none is passed, and is validated."""
    calls: list[bytes] = []
    real_digest = simd_reference.digest

    def counted(name: str, message: bytes) -> bytes:
        calls.append(message)
        return real_digest(name, message)

    # Only the reference backend hashes through twocats.lanes.reference, so the calls tell which
    # backend ran.
    monkeypatch.setattr(simd_reference, "digest", counted)
    monkeypatch.setenv("TWOCATS_BACKEND", "reference")
    assert hash_many([b"abc", b"de"], "sha256") == expected([b"abc", b"de"], "sha256")
    assert calls == [b"abc", b"de"]
    assert hash_many([b"abc"], "sha256", backend="scalar") == expected([b"abc"], "sha256")
    assert calls == [b"abc", b"de"]
    monkeypatch.setenv("TWOCATS_BACKEND", "scalar")
    assert hash_many([b"abc"], "sha256") == expected([b"abc"], "sha256")
    assert calls == [b"abc", b"de"]
    monkeypatch.setenv("TWOCATS_BACKEND", "fast")
    with pytest.raises(BackendError, match="TWOCATS_BACKEND must be one of"):
        hash_many([b"abc"], "sha256")
