"""BLAKE2sp and BLAKE2bp on every backend: all official KATs, hashlib tree mode, keyed trees."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen import modes as codegen
from tests.support import modes_kat as kat
from tests.support import oracles
from tests.support.environment import shared_file
from twocats.exceptions import InvalidParametersError
from twocats.lanes.modes import blake2tree
from twocats.lanes.reference import blake2tree as ref

BACKENDS = ("reference", "scalar", "simd")
COMPILED = ("scalar", "simd")


def test_generated_blake2_module_is_current() -> None:
    """The committed generated BLAKE2 tree kernels equal the generator's output."""
    assert (codegen.GENERATED / "blake2tree.py").read_text() == codegen.blake2_module()


@pytest.mark.parametrize("backend", COMPILED)
def test_official_vectors(backend: str) -> None:
    """All 256 unkeyed + 256 keyed BLAKE2sp and 256 + 256 BLAKE2bp KATs pass."""
    path = shared_file("blake2-kat.json")
    counts = {"blake2sp": 0, "blake2bp": 0}
    for v in kat.load_blake2(path):
        if v.hash not in counts:
            continue
        func = blake2tree.blake2sp if v.hash == "blake2sp" else blake2tree.blake2bp
        got = func(v.data, key=v.key, digest_size=len(v.digest), backend=backend)
        assert got == v.digest, (v.hash, len(v.data), len(v.key))
        counts[v.hash] += 1
    assert counts == {"blake2sp": 512, "blake2bp": 512}


@pytest.mark.parametrize("backend", BACKENDS)
def test_quoted_vectors(backend: str) -> None:
    """The lane-hashing.md §6.3 vectors pass, including the keyed 16-byte blake2s_simd vector."""
    assert blake2tree.blake2sp(b"abc", backend=backend).hex() == (
        "70f75b58f1fecab821db43c88ad84edde5a52600616cd22517b7bb14d440a7d5"
    )
    assert (
        blake2tree.blake2sp(
            b"foobarbaz", key=b"Squeamish Ossifrage", digest_size=16, backend=backend
        ).hex()
        == "9a604f1653c25063debb3aeea79671c0"
    )
    assert blake2tree.blake2sp_many([b"", b"abc"], backend=backend)[0].hex() == (
        "dd0e891776933f43c7d032b08a917e25741f8aa9a12c12e1cac8801500f2ca4f"
    )


@settings(max_examples=30, deadline=None)
@given(size=st.integers(0, 5000), backend=st.sampled_from(COMPILED))
def test_matches_hashlib_tree_mode(size: int, backend: str) -> None:
    """Unkeyed full-length BLAKE2sp and BLAKE2bp equal hashlib with tree parameters."""
    data = kat.pattern_bytes(size)
    assert blake2tree.blake2sp(data, backend=backend) == oracles.blake2_tree(data, wide=False)
    assert blake2tree.blake2bp(data, backend=backend) == oracles.blake2_tree(data, wide=True)


@pytest.mark.parametrize("backend", COMPILED)
@pytest.mark.parametrize("size", [0, 1, 63, 64, 65, 511, 512, 513, 1023, 1024, 1025, 4096 + 100])
def test_stride_boundaries(backend: str, size: int) -> None:
    """Lengths around block and 512-byte stride boundaries equal the reference, keyed too."""
    data = kat.pattern_bytes(size)
    for key in (b"", b"K" * 7):
        assert blake2tree.blake2sp(data, key=key, backend=backend) == ref.blake2sp(data, key)
        assert blake2tree.blake2bp(data, key=key, backend=backend) == ref.blake2bp(data, key)


@settings(max_examples=20, deadline=None)
@given(
    data=st.binary(max_size=1500),
    key=st.binary(max_size=32),
    size=st.integers(1, 32),
    backend=st.sampled_from(COMPILED),
)
def test_keyed_any_length_matches_reference(
    data: bytes, key: bytes, size: int, backend: str
) -> None:
    """Keyed trees with every output length equal the reference (hashlib cannot express them)."""
    assert blake2tree.blake2sp(data, key=key, digest_size=size, backend=backend) == (
        ref.blake2sp(data, key, size)
    )
    assert blake2tree.blake2bp(data, key=key + key, digest_size=2 * size, backend=backend) == (
        ref.blake2bp(data, key + key, 2 * size)
    )


def test_bad_parameters_are_rejected() -> None:
    """Over-long keys and out-of-range digest sizes raise InvalidParametersError."""
    with pytest.raises(InvalidParametersError, match="key"):
        blake2tree.blake2sp(b"", key=b"k" * 33)
    with pytest.raises(InvalidParametersError, match="digest_size"):
        blake2tree.blake2bp(b"", digest_size=65)
    with pytest.raises(InvalidParametersError, match="digest_size"):
        blake2tree.blake2sp(b"", digest_size=0)
