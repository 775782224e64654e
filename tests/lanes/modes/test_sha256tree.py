"""j-lanes SHA-256, mh_sha256 and j-pointers on every backend against the reference and vectors."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen import modes as codegen
from tests.support import modes_kat as kat
from tests.support import oracles
from twocats.exceptions import InvalidParametersError
from twocats.lanes.modes import sha256tree
from twocats.lanes.reference import sha256tree as ref

BACKENDS = ("reference", "scalar", "simd")
COMPILED = ("scalar", "simd")


def _pattern(n: int) -> bytes:
    """Return bytes(i % 256 for i in range(n))."""
    return kat.pattern_bytes(n, 256)


def test_generated_sha256tree_module_is_current() -> None:
    """The committed generated SHA-2 tree drivers equal the generator's output."""
    assert (codegen.GENERATED / "sha256tree.py").read_text() == codegen.sha256tree_module()


def test_sha384_iv_is_derived_correctly() -> None:
    """The derived SHA-384 IV starts with the FIPS 180-4 value."""
    assert sha256tree.SHA384_IV[0] == 0xCBBB9D5DC1059ED8
    assert sha256tree.SHA384_IV[7] == 0x47B5481DBEFA4FA4


MH_QUOTED = [
    (0, "7ec5da16ca2ac87a3d69f3a413e2882d45b25f8ff16275406b7d1bf557a61348"),
    (1, "6796839e0c9c540fe5bd8dde7e9bcf144d19cfd6ac8f1e0da64f6937c53e7cfc"),
    (1016, "5c1cc9a0c1ced5e257858bb5ba092a293dc5f22239ab3d6fd46778f7a5fefbc7"),
    (1024, "f5c942f29e8c6b6f24d9a27521771873cb7e36839aac6d986f9fb73349220270"),
    (5000, "9110de2e2bd3b7285f5c3c4df20d847733ce58be24cd03e4f3468dedda31b7b1"),
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_mh_sha256_vectors(backend: str) -> None:
    """mh_sha256 reproduces the ISA-L values quoted in lane-hashing.md §2.2 (and "abc")."""
    for size, digest in MH_QUOTED:
        assert sha256tree.mh_sha256(_pattern(size), backend=backend).hex() == digest
    assert sha256tree.mh_sha256(b"abc", backend=backend).hex() == (
        "3c3876791a4e9ffeacc5c9c846bd765b66cd485f0b67c11f8a284c6ed1dd5510"
    )


@pytest.mark.parametrize("backend", COMPILED)
@pytest.mark.parametrize("size", [3, 1015, 1017, 1023, 1025, 2047, 2048, 3000])
def test_mh_sha256_padding_boundaries(backend: str, size: int) -> None:
    """mh_sha256 equals the reference where the global padding needs one or two mh-blocks."""
    assert sha256tree.mh_sha256(_pattern(size), backend=backend) == ref.mh_sha256(_pattern(size))


JLANES_QUOTED = [
    (4, b"", "9fb03d22515ca48e57b578de80bbc1e75d5126dbb2de6db177947c3da3b2276f"),
    (4, b"abc", "7372943dd5b3f10177ebadcb5084d68fa95d649a51a34b42152d724cf993e0c4"),
    (4, _pattern(1000), "7d55658aa43930dba0af022aad90bce8259fc1d29dbe64c964be732223e6211b"),
    (4, _pattern(4096), "e2e8a2f254d6dbb7ea4073aa0b1678202fe2ca160ff4cc1bc68db817b960034e"),
    (8, b"", "da4974409dcfd785cec6321826272da5cf679e2d48a28bab45e77d489752a47b"),
    (8, b"abc", "3df3e89a5eb4de87c3341571bec78a975740f171bade75dfdaf99ab5db1235bc"),
    (8, _pattern(1000), "88d298eb675a70bcd3b58f29a74e829e20978f5336fe4acc0e58010686e57328"),
    (8, _pattern(4096), "9ae7bfca538b4888ef9ede485ca9e840a95dabbb9253bfce2f2967ee0b1488fc"),
    (16, b"abc", "9d227cde7cade32274c208ee89b7d23ccef2ad2ad6626156f198a901730041b1"),
    (16, _pattern(4096), "44e9a30043c88523a86cdfc2ed5d6bd976c6dd19ef7a30b5c3cda6ad3dec842c"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("j", "data", "digest"), JLANES_QUOTED)
def test_jlanes_vectors(backend: str, j: int, data: bytes, digest: str) -> None:
    """j-lanes with default IVs reproduces the vectors of lane-hashing.md §2.5."""
    assert sha256tree.jlanes_sha256(data, j=j, backend=backend).hex() == digest


@settings(max_examples=25, deadline=None)
@given(
    size=st.integers(0, 3000),
    j=st.sampled_from(ref.JLANES_WIDTHS),
    backend=st.sampled_from(COMPILED),
)
def test_jlanes_matches_hashlib_tree(size: int, j: int, backend: str) -> None:
    """With standard IVs, compiled j-lanes equals hashlib over the lanes' hashlib digests."""
    data = _pattern(size)
    leaves = b"".join(hashlib.sha256(lane).digest() for lane in oracles.round_robin(data, 4, j))
    assert sha256tree.jlanes_sha256(data, j=j, backend=backend) == hashlib.sha256(leaves).digest()


@pytest.mark.parametrize("backend", COMPILED)
def test_jlanes_custom_ivs(backend: str) -> None:
    """Distinct leaf and root IVs give the reference's result; malformed IVs are rejected."""
    leaf = tuple((w * 7 + 1) & 0xFFFFFFFF for w in ref.SHA256_IV)
    root = tuple(w ^ 0x5A5A5A5A for w in ref.SHA256_IV)
    data = _pattern(777)
    assert sha256tree.jlanes_sha256(data, j=8, leaf_iv=leaf, root_iv=root, backend=backend) == (
        ref.jlanes_sha256(data, 8, leaf, root)
    )
    with pytest.raises(InvalidParametersError, match="root_iv"):
        sha256tree.jlanes_sha256(data, root_iv=(0,) * 7, backend=backend)
    with pytest.raises(InvalidParametersError, match="j must be"):
        sha256tree.jlanes_sha256(data, j=2, backend=backend)


@pytest.mark.parametrize("backend", COMPILED)
@pytest.mark.parametrize("hash_name", ["sha256", "sha384", "sha512"])
def test_jpointers_matches_reference(backend: str, hash_name: str) -> None:
    """Padding-aligned slices equal the reference for several j and lengths."""
    for j in (1, 3, 8):
        for size in (1000, 1500, 4099):
            data = _pattern(size)
            assert sha256tree.jpointers(data, j=j, hash_name=hash_name, backend=backend) == (
                ref.jpointers(data, j, hash_name)
            )


@settings(max_examples=20, deadline=None)
@given(
    messages=st.lists(st.binary(max_size=400), max_size=9),
    hash_name=st.sampled_from(["sha256", "sha384", "sha512"]),
    backend=st.sampled_from(COMPILED),
)
def test_jpointers_messages_matches_hashlib(
    messages: list[bytes], hash_name: str, backend: str
) -> None:
    """j-pointers over separate messages is the hash of their hashlib digests."""
    digests = b"".join(hashlib.new(hash_name, m).digest() for m in messages)
    assert sha256tree.jpointers_messages(messages, hash_name=hash_name, backend=backend) == (
        hashlib.new(hash_name, digests).digest()
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_jpointers_rejects_bad_parameters(backend: str) -> None:
    """Too-short messages and unknown hashes are rejected on every backend."""
    with pytest.raises(InvalidParametersError, match="at least j"):
        sha256tree.jpointers(b"x" * 100, backend=backend)
    with pytest.raises(InvalidParametersError, match="hash_name"):
        sha256tree.jpointers_messages([b""], hash_name="md5", backend=backend)
