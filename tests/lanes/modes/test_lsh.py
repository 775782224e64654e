"""LSH-256 and LSH-512 single-message and multi-message kernels on every backend."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen import modes as codegen
from tests.support import modes_kat as kat
from tests.support.environment import shared_file
from twocats.exceptions import InvalidParametersError
from twocats.lanes.modes import lsh
from twocats.lanes.reference import lsh as ref

BACKENDS = ("reference", "scalar", "simd")
COMPILED = ("scalar", "simd")


def _official() -> list[kat.LshVector]:
    """Load lsh-kat.jsonl (the test skips without it, and fails under CI=true)."""
    return kat.load_lsh(shared_file("lsh-kat.jsonl"))


def test_generated_lsh_module_is_current() -> None:
    """The committed generated LSH kernels equal the generator's output."""
    assert (codegen.GENERATED / "lsh.py").read_text() == codegen.lsh_module()


@pytest.mark.parametrize("backend", COMPILED)
def test_official_vectors_single(backend: str) -> None:
    """All 735 Crypto++ vectors pass through the single-message kernel."""
    vectors = _official()
    for v in vectors:
        func = lsh.lsh256 if v.family == 256 else lsh.lsh512
        assert func(v.data, digest_size=v.digest_size, backend=backend) == v.digest, v.algorithm
    assert len(vectors) == 735


@pytest.mark.parametrize("backend", BACKENDS)
def test_official_vectors_many(backend: str) -> None:
    """All 735 vectors pass through the multi-message kernel, one batch per algorithm."""
    vectors = _official()
    passed = 0
    for algorithm in sorted({v.algorithm for v in vectors}):
        group = [v for v in vectors if v.algorithm == algorithm]
        func = lsh.lsh256_many if group[0].family == 256 else lsh.lsh512_many
        got = func([v.data for v in group], digest_size=group[0].digest_size, backend=backend)
        assert got == [v.digest for v in group], algorithm
        passed += len(group)
    assert passed == 735


def _pattern(n: int) -> bytes:
    """Return bytes(i % 256 for i in range(n))."""
    return kat.pattern_bytes(n, 256)


QUOTED = [
    (256, 28, b"", "48a0d55b2b3d91f26e06f7110fe9ce8ea0e2656bbe344cb1c5930653"),
    (256, 32, b"", "f3cd416a03818217726cb47f4e4d2881c9c29fd445c18b66fb19dea1a81007c1"),
    (256, 32, b"\xce", "862f86db654094840d86df7881732fd69b7227ee4f7943868162feb733a9ca5b"),
    (512, 32, b"", "706df4ebf100f06d5cc9f6c79be5297c3f6f515801dd10fbc1b665a2d7bdb653"),
    (
        512,
        64,
        b"",
        (
            "118a2ff2a99e3b2134125e2baf20ebe3bdd034d5a69b29c22fc4995063340b46"
            "697801d7f7fb0070568f78e8ed514215fc70af27d6f27b01aa8a1da72b14ce7c"
        ),
    ),
    (256, 32, _pattern(127), "d41fe0a7e2a47d78424039aa77e9558632276f8e025cdeab945022cd471476fa"),
    (256, 32, _pattern(128), "2d44a90b60f696e8fa4bb25432e22deba1d9775cff5606dba2545d17e2d4bf9a"),
    (256, 32, _pattern(129), "bd640f9347da08c6b58990400ca9dd049b10f2dde36d3aaa791a6af40ae6d5b1"),
    (256, 32, _pattern(256), "71bb4071bc789e2c48b726b546a529cb6a1851a7686c3612ade3f7c0160d6884"),
    (
        512,
        64,
        _pattern(256),
        (
            "9c2bb4e6b45ba3350e3a22910514cdfeffa821e16fb39d29d923c9e5fd98045f"
            "4a9dfe83ec18048bdec1cd7f79319399e195b85ed217f25e21a25c7377f34ca0"
        ),
    ),
    (
        512,
        64,
        _pattern(257),
        (
            "0c9299f6d8b6f5468494af90ba426dab16eb49b92df8635ea5eae33842ffced5"
            "f44ad55805b6aa0c372c9685b4709fcd1982e9bc6d6f1aa3c38810d707f9b62e"
        ),
    ),
    (256, 28, b"abc", "f7c53ba4034e708e74fba42e55997ca5126bb7623688f85342f73732"),
    (256, 32, b"abc", "5fbf365daea5446a7053c52b57404d77a07a5f48a1f7c1963a0898ba1b714741"),
    (512, 28, b"abc", "d1683234513ec5698394571ead128a8cd5373e97661ba20dcf89e489"),
    (512, 32, b"abc", "cd892310532602332b613f1ec11a6962fca61ea09ecffcd4bcf75858d802edec"),
    (
        512,
        48,
        b"abc",
        (
            "5f344efaa0e43ccd2e5e194d6039794b4fb431f10fb4b65fd45e9da4ecde0f27"
            "b66e8dbdfa47252e0d0b741bfd91f9fe"
        ),
    ),
    (
        512,
        64,
        b"abc",
        (
            "a3d93cfe60dc1aacdd3bd4bef0a6985381a396c7d49d9fd177795697c3535208"
            "b5c57224bef21084d42083e95a4bd8eb33e869812b65031c428819a1e7ce596d"
        ),
    ),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("family", "size", "data", "digest"), QUOTED)
def test_quoted_vectors(backend: str, family: int, size: int, data: bytes, digest: str) -> None:
    """The lane-hashing.md §4.4 vectors (LSH-512-224 among them) pass single and batched."""
    one = lsh.lsh256 if family == 256 else lsh.lsh512
    many = lsh.lsh256_many if family == 256 else lsh.lsh512_many
    assert one(data, digest_size=size, backend=backend).hex() == digest
    assert many([b"x" * 300, data], digest_size=size, backend=backend)[1].hex() == digest


@settings(max_examples=25, deadline=None)
@given(
    messages=st.lists(st.binary(max_size=700), max_size=19),
    size=st.integers(1, 64),
    backend=st.sampled_from(COMPILED),
)
def test_many_matches_reference(messages: list[bytes], size: int, backend: str) -> None:
    """Batched LSH equals the reference for any batch and every output length."""
    assert lsh.lsh512_many(messages, digest_size=size, backend=backend) == [
        ref.lsh512(m, size) for m in messages
    ]
    small = min(size, 32)
    assert lsh.lsh256_many(messages, digest_size=small, backend=backend) == [
        ref.lsh256(m, small) for m in messages
    ]


@pytest.mark.parametrize("backend", COMPILED)
def test_block_boundaries(backend: str) -> None:
    """Single and batched LSH equal the reference at and around the 128- and 256-byte blocks."""
    msgs = [_pattern(n) for n in (0, 1, 127, 128, 129, 255, 256, 257, 511, 512)]
    assert lsh.lsh256_many(msgs, backend=backend) == [ref.lsh256(m) for m in msgs]
    assert lsh.lsh512_many(msgs, backend=backend) == [ref.lsh512(m) for m in msgs]
    assert [lsh.lsh256(m, backend=backend) for m in msgs] == [ref.lsh256(m) for m in msgs]
    assert [lsh.lsh512(m, backend=backend) for m in msgs] == [ref.lsh512(m) for m in msgs]


@pytest.mark.parametrize("backend", COMPILED)
def test_many_refills_lanes_while_a_long_message_runs(backend: str) -> None:
    """Lanes freed by short messages take the next ones while a long message still runs."""
    msgs = [_pattern(5000), *(_pattern(n) for n in range(0, 600, 11))]
    assert lsh.lsh256_many(msgs, backend=backend) == [ref.lsh256(m) for m in msgs]
    assert lsh.lsh512_many(msgs, digest_size=40, backend=backend) == [
        ref.lsh512(m, 40) for m in msgs
    ]


def test_bad_digest_sizes_are_rejected() -> None:
    """Digest sizes outside 1..32 (LSH-256) or 1..64 (LSH-512) raise InvalidParametersError."""
    with pytest.raises(InvalidParametersError, match="digest_size"):
        lsh.lsh256(b"", digest_size=33)
    with pytest.raises(InvalidParametersError, match="digest_size"):
        lsh.lsh512_many([b""], digest_size=0)
