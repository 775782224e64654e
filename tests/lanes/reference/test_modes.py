"""The plain-Python references of the lane modes against official vectors and oracles."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import modes_kat as kat
from tests.support import oracles
from tests.support.environment import SHARED_VECTORS_DIR, absent_shared_file, shared_file
from twocats.exceptions import InvalidParametersError
from twocats.lanes.reference import blake2tree, keccak, lsh, sha256tree

# The pure-Python references run about 100 kB/s; the few official inputs above this size (up to
# 24 MB) are checked on the compiled backends only.
REFERENCE_LIMIT = 100_000


def _pattern(n: int) -> bytes:
    """Return bytes(i % 256 for i in range(n)), the pattern of lane-hashing.md."""
    return kat.pattern_bytes(n, 256)


# --- Keccak ---------------------------------------------------------------------------------------


def test_keccak_round_constants_match_fips202() -> None:
    """The LFSR-derived iota constants agree with the first and last values printed in FIPS 202."""
    assert keccak.ROUND_CONSTANTS[0] == 0x0000000000000001
    assert keccak.ROUND_CONSTANTS[1] == 0x0000000000008082
    assert keccak.ROUND_CONSTANTS[23] == 0x8000000080008008


def test_keccak_rotation_offsets_match_fips202() -> None:
    """The rho offsets derived by the (x, y) walk agree with FIPS 202 Table 2."""
    assert keccak.ROTATION_OFFSETS[:5] == (0, 1, 62, 28, 27)
    assert keccak.ROTATION_OFFSETS[20:] == (18, 2, 61, 56, 14)


def test_keccak_f1600_zero_state() -> None:
    """Keccak-f[1600] of the all-zero state equals the Keccak code package value."""
    expected = (
        "F1258F7940E1DDE7 84D5CCF933C0478A D598261EA65AA9EE BD1547306F80494D 8B284E056253D057 "
        "FF97A42D7F8E6FD4 90FEE5A0A44647C4 8C5BDA0CD6192E76 AD30A6F71B19059C 30935AB7D08FFC64 "
        "EB5AA93F2317D635 A9A6E6260D712103 81A57C16DBCF555F 43B831CD0347C826 01F22F1A11A5569F "
        "05E5635A21D9AE61 64BEFEF28CC970F2 613670957BC46611 B87C5A554FD00ECB 8C3EE88A1CCF32C8 "
        "940C7922AE3A2614 1841F924A2C509E4 16F53526E70465C2 75F644E97F30A13B EAF1FF7B5CECA249"
    )
    state = [0] * 25
    keccak.keccak_p1600(state)
    assert state == [int(word, 16) for word in expected.split()]


def test_sha3_fips202_examples() -> None:
    """SHA3-256 of the empty string and of "abc" equal the FIPS 202 examples."""
    assert keccak.sha3_256(b"").hex() == (
        "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a"
    )
    assert keccak.sha3_256(b"abc").hex() == (
        "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"
    )


def _keccak_reference(v: kat.KeccakVector) -> bytes:
    """Compute one official Keccak-family vector with the reference."""
    if v.algorithm.startswith("TurboSHAKE"):
        assert v.domain is not None
        func = keccak.turboshake128 if v.algorithm == "TurboSHAKE128" else keccak.turboshake256
        return func(v.data, v.output_len, v.domain)
    if v.algorithm in ("KT128", "KT256"):
        func = keccak.kt128 if v.algorithm == "KT128" else keccak.kt256
        return func(v.data, v.output_len, v.custom)
    assert v.block_size is not None
    ph = keccak.parallelhash128 if "128" in v.algorithm else keccak.parallelhash256
    return ph(v.data, v.block_size, v.output_len, v.custom, xof="XOF" in v.algorithm)


def _keccak_params() -> list[object]:
    """One pytest parameter per official Keccak-family vector (a skipped one without the file)."""
    path = SHARED_VECTORS_DIR / "k12-parallelhash-kat.jsonl"
    if not path.is_file():
        return [absent_shared_file(path.name, 1)]
    return [
        pytest.param(v, id=v.name)
        for v in kat.load_keccak(path)
        if len(v.data) + len(v.custom) <= REFERENCE_LIMIT
    ]


@pytest.mark.parametrize("vector", _keccak_params())
def test_keccak_official_vectors(vector: kat.KeccakVector) -> None:
    """TurboSHAKE, KT128/KT256 and ParallelHash reproduce the RFC 9861 and SP 800-185 vectors."""
    assert _keccak_reference(vector)[vector.offset :] == vector.digest


def test_keccak_official_file_complete() -> None:
    """The Keccak vector file holds the 81 vectors its README lists."""
    assert len(kat.load_keccak(shared_file("k12-parallelhash-kat.jsonl"))) == 81


@settings(max_examples=25, deadline=None)
@given(data=st.binary(max_size=400), bits=st.sampled_from([224, 256, 384, 512]))
def test_sha3_matches_hashlib(data: bytes, bits: int) -> None:
    """SHA3-224/256/384/512 equal hashlib for random inputs."""
    assert keccak.sha3(data, bits) == hashlib.new(f"sha3_{bits}", data).digest()


@settings(max_examples=25, deadline=None)
@given(data=st.binary(max_size=400), length=st.integers(0, 400))
def test_shake_matches_hashlib(data: bytes, length: int) -> None:
    """SHAKE128 and SHAKE256 equal hashlib for random inputs and output lengths."""
    assert keccak.shake128(data, length) == hashlib.shake_128(data).digest(length)
    assert keccak.shake256(data, length) == hashlib.shake_256(data).digest(length)


@settings(max_examples=20, deadline=None)
@given(data=st.binary(max_size=400), domain=st.integers(1, 0x7F), length=st.integers(1, 300))
def test_turboshake_matches_pycryptodome(data: bytes, domain: int, length: int) -> None:
    """TurboSHAKE128/256 equal pycryptodome for random inputs, domain bytes and lengths."""
    from Crypto.Hash import TurboSHAKE128, TurboSHAKE256

    assert keccak.turboshake128(data, length, domain) == (
        TurboSHAKE128.new(domain=domain, data=data).read(length)
    )
    assert keccak.turboshake256(data, length, domain) == (
        TurboSHAKE256.new(domain=domain, data=data).read(length)
    )


@settings(max_examples=10, deadline=None)
@given(
    size=st.integers(0, 3 * keccak.KT_CHUNK),
    custom=st.binary(max_size=300),
    length=st.integers(1, 80),
)
def test_kt128_matches_pycryptodome(size: int, custom: bytes, length: int) -> None:
    """KT128 equals pycryptodome's KangarooTwelve across the single-chunk/multi-chunk boundary."""
    from Crypto.Hash import KangarooTwelve

    data = kat.pattern_bytes(size)
    assert keccak.kt128(data, length, custom) == (
        KangarooTwelve.new(data=data, custom=custom).read(length)
    )


@settings(max_examples=15, deadline=None)
@given(data=st.binary(max_size=300), custom=st.binary(max_size=200), length=st.integers(1, 200))
def test_cshake_matches_pycryptodome(data: bytes, custom: bytes, length: int) -> None:
    """cSHAKE128/256 with empty function name equal pycryptodome's cSHAKE."""
    from Crypto.Hash import cSHAKE128, cSHAKE256

    assert keccak.cshake128(data, length, b"", custom) == (
        cSHAKE128.new(data=data, custom=custom).read(length)
    )
    assert keccak.cshake256(data, length, b"", custom) == (
        cSHAKE256.new(data=data, custom=custom).read(length)
    )


@pytest.mark.parametrize("module", [keccak, oracles], ids=["reference", "oracle"])
def test_encodings_of_sp800_185(module: Any) -> None:
    """left_encode, right_encode and length_encode produce the documented byte strings.

    Both the reference and the tests' independent oracle are held to the same bytes.
    """
    assert module.left_encode(0) == b"\x01\x00"
    assert module.left_encode(168) == b"\x01\xa8"
    assert module.right_encode(0) == b"\x00\x01"
    assert module.right_encode(256) == b"\x01\x00\x02"
    assert module.length_encode(0) == b"\x00"
    assert module.length_encode(12) == b"\x0c\x01"
    assert module.length_encode(65538) == b"\x01\x00\x02\x03"


# --- BLAKE2sp / BLAKE2bp ---------------------------------------------------------------------


def test_blake2_official_vectors() -> None:
    """All 256 unkeyed + 256 keyed BLAKE2sp and all 512 BLAKE2bp vectors of blake2-kat.json pass."""
    vectors = kat.load_blake2(shared_file("blake2-kat.json"))
    counts = {"blake2sp": 0, "blake2bp": 0}
    for v in vectors:
        if v.hash not in counts:
            continue
        func = blake2tree.blake2sp if v.hash == "blake2sp" else blake2tree.blake2bp
        assert func(v.data, v.key, len(v.digest)) == v.digest, (v.hash, len(v.data), len(v.key))
        counts[v.hash] += 1
    assert counts == {"blake2sp": 512, "blake2bp": 512}


def test_blake2_node_is_plain_blake2() -> None:
    """A node with a plain sequential parameter block is ordinary keyed BLAKE2s/BLAKE2b."""
    for variant, oracle in (
        (blake2tree.BLAKE2S, hashlib.blake2s),
        (blake2tree.BLAKE2B, hashlib.blake2b),
    ):
        for n, key in ((0, b""), (1, b"k"), (variant.block_bytes, b""), (300, b"key" * 5)):
            data = _pattern(n)
            params = bytes([variant.max_digest, len(key), 1, 1]) + bytes(variant.param_bytes - 4)
            got = blake2tree.blake2_node(variant, params, data, key, False, variant.max_digest)
            assert got == oracle(data, key=key).digest()


def test_blake2sp_quoted_vectors() -> None:
    """BLAKE2sp reproduces the vectors quoted in lane-hashing.md §6.3 (keyed outlen 16 too)."""
    assert blake2tree.blake2sp(b"abc").hex() == (
        "70f75b58f1fecab821db43c88ad84edde5a52600616cd22517b7bb14d440a7d5"
    )
    assert blake2tree.blake2sp(b"foobarbaz", b"Squeamish Ossifrage", 16).hex() == (
        "9a604f1653c25063debb3aeea79671c0"
    )
    assert blake2tree.blake2bp(b"").hex().startswith("b5ef811a8038f70b628fa8b294daae74")


@settings(max_examples=25, deadline=None)
@given(size=st.integers(0, 2000))
def test_blake2sp_bp_match_hashlib_tree(size: int) -> None:
    """Unkeyed full-length BLAKE2sp and BLAKE2bp equal hashlib with tree parameters."""
    data = _pattern(size)
    assert blake2tree.blake2sp(data) == oracles.blake2_tree(data, wide=False)
    assert blake2tree.blake2bp(data) == oracles.blake2_tree(data, wide=True)


# --- LSH -------------------------------------------------------------------------------------


def test_lsh_official_vectors() -> None:
    """All 735 Crypto++ LSH vectors (5 output lengths, messages up to 64 KiB) pass."""
    vectors = kat.load_lsh(shared_file("lsh-kat.jsonl"))
    assert len(vectors) == 735
    for v in vectors:
        func = lsh.lsh256 if v.family == 256 else lsh.lsh512
        assert func(v.data, v.digest_size) == v.digest, (v.algorithm, len(v.data))


LSH_QUOTED = [
    (256, 28, b"", "48a0d55b2b3d91f26e06f7110fe9ce8ea0e2656bbe344cb1c5930653"),
    (256, 28, b"abc", "f7c53ba4034e708e74fba42e55997ca5126bb7623688f85342f73732"),
    (256, 32, b"", "f3cd416a03818217726cb47f4e4d2881c9c29fd445c18b66fb19dea1a81007c1"),
    (256, 32, b"abc", "5fbf365daea5446a7053c52b57404d77a07a5f48a1f7c1963a0898ba1b714741"),
    (256, 32, b"\xce", "862f86db654094840d86df7881732fd69b7227ee4f7943868162feb733a9ca5b"),
    (512, 28, b"abc", "d1683234513ec5698394571ead128a8cd5373e97661ba20dcf89e489"),
    (512, 32, b"", "706df4ebf100f06d5cc9f6c79be5297c3f6f515801dd10fbc1b665a2d7bdb653"),
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
        b"",
        (
            "118a2ff2a99e3b2134125e2baf20ebe3bdd034d5a69b29c22fc4995063340b46"
            "697801d7f7fb0070568f78e8ed514215fc70af27d6f27b01aa8a1da72b14ce7c"
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
]


@pytest.mark.parametrize(("family", "size", "data", "digest"), LSH_QUOTED)
def test_lsh_quoted_vectors(family: int, size: int, data: bytes, digest: str) -> None:
    """LSH reproduces lane-hashing.md §4.4 (including LSH-512-224, absent from the file)."""
    func = lsh.lsh256 if family == 256 else lsh.lsh512
    assert func(data, size).hex() == digest


def test_lsh_iv_prefixes() -> None:
    """The derived IVs start with the words quoted in lane-hashing.md §4.2."""
    assert lsh.initial_value(lsh.LSH256, 256)[:4] == (
        0x46A10F1F,
        0xFDDCE486,
        0xB41443A8,
        0x198E6B9D,
    )
    assert lsh.initial_value(lsh.LSH512, 512)[:2] == (0xADD50F3C7F07094E, 0xE3F3CEE8F9418A4F)


# --- SHA-256 tree modes ----------------------------------------------------------------------

MH_SHA256_QUOTED = [
    (_pattern(0), "7ec5da16ca2ac87a3d69f3a413e2882d45b25f8ff16275406b7d1bf557a61348"),
    (_pattern(1), "6796839e0c9c540fe5bd8dde7e9bcf144d19cfd6ac8f1e0da64f6937c53e7cfc"),
    (_pattern(1016), "5c1cc9a0c1ced5e257858bb5ba092a293dc5f22239ab3d6fd46778f7a5fefbc7"),
    (_pattern(1024), "f5c942f29e8c6b6f24d9a27521771873cb7e36839aac6d986f9fb73349220270"),
    (_pattern(5000), "9110de2e2bd3b7285f5c3c4df20d847733ce58be24cd03e4f3468dedda31b7b1"),
    (b"abc", "3c3876791a4e9ffeacc5c9c846bd765b66cd485f0b67c11f8a284c6ed1dd5510"),
]


@pytest.mark.parametrize(("data", "digest"), MH_SHA256_QUOTED)
def test_mh_sha256_quoted_vectors(data: bytes, digest: str) -> None:
    """mh_sha256 reproduces the ISA-L reference values quoted in lane-hashing.md §2.2."""
    assert sha256tree.mh_sha256(data).hex() == digest


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


@pytest.mark.parametrize(("j", "data", "digest"), JLANES_QUOTED)
def test_jlanes_quoted_vectors(j: int, data: bytes, digest: str) -> None:
    """j-lanes SHA-256 with default IVs reproduces the vectors of lane-hashing.md §2.5."""
    assert sha256tree.jlanes_sha256(data, j).hex() == digest


@settings(max_examples=20, deadline=None)
@given(size=st.integers(0, 600), j=st.sampled_from(sha256tree.JLANES_WIDTHS))
def test_jlanes_is_hashlib_tree(size: int, j: int) -> None:
    """With standard IVs, j-lanes is hashlib.sha256 over the hashlib.sha256 digests of the lanes."""
    data = _pattern(size)
    leaves = b"".join(hashlib.sha256(lane).digest() for lane in oracles.round_robin(data, 4, j))
    assert sha256tree.jlanes_sha256(data, j) == hashlib.sha256(leaves).digest()


def test_jlanes_ivs_are_parameters() -> None:
    """Distinct leaf and root IVs change the digest, and the IV check rejects malformed IVs."""
    other = tuple((w ^ 0xFFFFFFFF) for w in sha256tree.SHA256_IV)
    plain = sha256tree.jlanes_sha256(b"abc", 8)
    assert sha256tree.jlanes_sha256(b"abc", 8, leaf_iv=other) != plain
    assert sha256tree.jlanes_sha256(b"abc", 8, root_iv=other) != plain
    with pytest.raises(InvalidParametersError, match="leaf_iv"):
        sha256tree.jlanes_sha256(b"abc", 8, leaf_iv=(1, 2, 3))
    with pytest.raises(InvalidParametersError, match="j must be"):
        sha256tree.jlanes_sha256(b"abc", 5)


@pytest.mark.parametrize("hash_name", sorted(sha256tree.JPOINTER_HASHES))
@pytest.mark.parametrize("extra", [0, 1, 63, 64, 127, 1000])
def test_jpointers_slices_end_on_block_boundaries(hash_name: str, extra: int) -> None:
    """Each j-pointers slice fills its padded last block exactly; the tail is under j blocks."""
    block, overhead = {"sha256": (64, 9), "sha384": (128, 17), "sha512": (128, 17)}[hash_name]
    j = 8
    length = j * (block - overhead) + extra
    ls = oracles.jpointers_slice_length(length, j, block, overhead)
    assert sha256tree.jpointers_slice_length(length, j, hash_name) == ls
    assert (ls + overhead) % block == 0
    assert 0 <= length - j * ls < j * block
    data = _pattern(length)
    digests = b"".join(
        hashlib.new(hash_name, data[i * ls : (i + 1) * ls]).digest() for i in range(j)
    )
    expected = hashlib.new(hash_name, digests + data[j * ls :]).digest()
    assert sha256tree.jpointers(data, j, hash_name) == expected


def test_jpointers_rejects_short_messages() -> None:
    """A message too short for padding-aligned slices is rejected with the minimum length named."""
    with pytest.raises(InvalidParametersError, match="at least j"):
        sha256tree.jpointers(b"x" * 100, 8)
    with pytest.raises(InvalidParametersError, match="hash_name"):
        sha256tree.jpointers(b"x" * 1000, 8, "md5")


def test_jpointers_messages_is_digest_of_digests() -> None:
    """j-pointers over separate messages hashes the concatenated digests."""
    msgs = [b"a", b"", _pattern(100)]
    expected = hashlib.sha256(b"".join(hashlib.sha256(m).digest() for m in msgs)).digest()
    assert sha256tree.jpointers_messages(msgs) == expected


def test_sha256_with_iv_default_is_sha256() -> None:
    """The pure-Python SHA-256 with the standard IV equals hashlib at padding boundaries."""
    for n in (0, 55, 56, 64, 200):
        assert sha256tree.sha256_with_iv(_pattern(n)) == hashlib.sha256(_pattern(n)).digest()
