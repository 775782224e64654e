"""Keccak lanes (multi-message SHA-3/SHAKE, TurboSHAKE, KT, ParallelHash) on every backend."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from Crypto.Hash import KangarooTwelve
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen import modes as codegen
from tests.support import modes_kat as kat
from tests.support import oracles
from tests.support.environment import SHARED_VECTORS_DIR, absent_shared_file, shared_file
from twocats.exceptions import BackendError, InvalidParametersError
from twocats.lanes.modes import keccak
from twocats.lanes.reference import keccak as ref

KECCAK_FILE = "k12-parallelhash-kat.jsonl"
BACKENDS = ("reference", "scalar", "simd")
COMPILED = ("scalar", "simd")

# Official inputs above this size are run on the compiled backends only (the reference is slow).
REFERENCE_LIMIT = 100_000

ZERO_STATE_PERMUTED = [
    0xF1258F7940E1DDE7, 0x84D5CCF933C0478A, 0xD598261EA65AA9EE, 0xBD1547306F80494D,
    0x8B284E056253D057, 0xFF97A42D7F8E6FD4, 0x90FEE5A0A44647C4, 0x8C5BDA0CD6192E76,
    0xAD30A6F71B19059C, 0x30935AB7D08FFC64, 0xEB5AA93F2317D635, 0xA9A6E6260D712103,
    0x81A57C16DBCF555F, 0x43B831CD0347C826, 0x01F22F1A11A5569F, 0x05E5635A21D9AE61,
    0x64BEFEF28CC970F2, 0x613670957BC46611, 0xB87C5A554FD00ECB, 0x8C3EE88A1CCF32C8,
    0x940C7922AE3A2614, 0x1841F924A2C509E4, 0x16F53526E70465C2, 0x75F644E97F30A13B,
    0xEAF1FF7B5CECA249,
]  # fmt: skip


def test_generated_keccak_module_is_current() -> None:
    """The committed generated Keccak kernels equal the generator's output."""
    assert (codegen.GENERATED / "keccak.py").read_text() == codegen.keccak_module()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("width", [4, 8])
def test_zero_state_in_every_instance(backend: str, width: int) -> None:
    """Keccak-f[1600] of the zero state gives the Keccak code package value in every state."""
    states = np.zeros((25, width), dtype=np.uint64)
    permute = keccak.keccak_p1600_x4 if width == 4 else keccak.keccak_p1600_x8
    permute(states, backend=backend)
    for k in range(width):
        assert [int(v) for v in states[:, k]] == ZERO_STATE_PERMUTED


@pytest.mark.parametrize("backend", COMPILED)
@pytest.mark.parametrize("width", [4, 8])
@pytest.mark.parametrize("rounds", [24, 12])
def test_random_states_match_reference(backend: str, width: int, rounds: int) -> None:
    """Distinct random states are permuted independently and equal the reference."""
    rng = np.random.default_rng(width * 100 + rounds)
    states = rng.integers(0, 2**64, size=(25, width), dtype=np.uint64)
    expected = []
    for k in range(width):
        column = [int(v) for v in states[:, k]]
        ref.keccak_p1600(column, rounds)
        expected.append(column)
    permute = keccak.keccak_p1600_x4 if width == 4 else keccak.keccak_p1600_x8
    permute(states, rounds=rounds, backend=backend)
    assert [[int(v) for v in states[:, k]] for k in range(width)] == expected


def _compute(v: kat.KeccakVector, backend: str) -> bytes:
    """Compute one official vector through the public functions."""
    if v.algorithm.startswith("TurboSHAKE"):
        assert v.domain is not None
        ts = keccak.turboshake128 if v.algorithm == "TurboSHAKE128" else keccak.turboshake256
        return ts(v.data, v.output_len, domain=v.domain, backend=backend)
    if v.algorithm in ("KT128", "KT256"):
        kt = keccak.kt128 if v.algorithm == "KT128" else keccak.kt256
        return kt(v.data, v.output_len, custom=v.custom, backend=backend)
    assert v.block_size is not None
    ph = keccak.parallelhash128 if "128" in v.algorithm else keccak.parallelhash256
    return ph(
        v.data,
        v.block_size,
        v.output_len,
        custom=v.custom,
        xof="XOF" in v.algorithm,
        backend=backend,
    )


def _vector_params() -> list[object]:
    """One parameter per (official vector, backend); big inputs skip the reference backend."""
    path = SHARED_VECTORS_DIR / KECCAK_FILE
    if not path.is_file():
        return [absent_shared_file(KECCAK_FILE, 2)]
    params: list[object] = []
    for v in kat.load_keccak(path):
        for backend in BACKENDS:
            if backend == "reference" and len(v.data) + len(v.custom) > REFERENCE_LIMIT:
                continue
            params.append(pytest.param(v, backend, id=f"{backend}-{v.name}"))
    return params


@pytest.mark.parametrize(("vector", "backend"), _vector_params())
def test_official_vectors(vector: kat.KeccakVector, backend: str) -> None:
    """Every RFC 9861 and SP 800-185 vector passes (the 24 MB ones on the compiled backends)."""
    assert _compute(vector, backend)[vector.offset :] == vector.digest


def test_official_vector_count() -> None:
    """All 81 vectors of the file are run on both compiled backends."""
    shared_file(KECCAK_FILE)
    compiled = [p for p in _vector_params() if p.values[1] != "reference"]  # type: ignore[attr-defined]
    assert len(compiled) == 2 * 81


@pytest.mark.parametrize("backend", BACKENDS)
def test_fips202_examples(backend: str) -> None:
    """SHA3-256 of "" and "abc" equal FIPS 202 in a single batch."""
    assert [d.hex() for d in keccak.sha3_256_many([b"", b"abc"], backend=backend)] == [
        "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a",
        "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532",
    ]


# Lengths around the 136-byte (SHA3-256, SHAKE256) and 168-byte (SHAKE128) rates.
BOUNDARY_LENGTHS = [
    0,
    1,
    7,
    8,
    71,
    72,
    103,
    104,
    134,
    135,
    136,
    137,
    143,
    144,
    167,
    168,
    169,
    272,
    273,
    1000,
]


@pytest.mark.parametrize("backend", COMPILED)
def test_many_at_rate_boundaries(backend: str) -> None:
    """Every SHA-3 and SHAKE size equals hashlib for messages at and around every rate boundary."""
    msgs = [kat.pattern_bytes(n) for n in BOUNDARY_LENGTHS]
    for bits, func in (
        (224, keccak.sha3_224_many),
        (256, keccak.sha3_256_many),
        (384, keccak.sha3_384_many),
        (512, keccak.sha3_512_many),
    ):
        assert func(msgs, backend=backend) == [
            hashlib.new(f"sha3_{bits}", m).digest() for m in msgs
        ]
    assert keccak.shake128_many(msgs, 400, backend=backend) == [
        hashlib.shake_128(m).digest(400) for m in msgs
    ]
    assert keccak.shake256_many(msgs, 137, backend=backend) == [
        hashlib.shake_256(m).digest(137) for m in msgs
    ]


@pytest.mark.parametrize("backend", COMPILED)
def test_many_refills_states_while_a_long_message_runs(backend: str) -> None:
    """States freed by short messages take the next ones while a long message is still absorbed
    or squeezed: every output equals hashlib, at one rate and at several of output."""
    msgs = [kat.pattern_bytes(5000), *(kat.pattern_bytes(n) for n in range(0, 600, 11))]
    assert keccak.sha3_256_many(msgs, backend=backend) == [
        hashlib.sha3_256(m).digest() for m in msgs
    ]
    assert keccak.shake128_many(msgs, 500, backend=backend) == [
        hashlib.shake_128(m).digest(500) for m in msgs
    ]


@settings(max_examples=30, deadline=None)
@given(messages=st.lists(st.binary(max_size=600), max_size=19), backend=st.sampled_from(COMPILED))
def test_sha3_256_many_matches_hashlib(messages: list[bytes], backend: str) -> None:
    """Multi-message SHA3-256 equals hashlib for any batch (group sizes 1 to 19, mixed lengths)."""
    assert keccak.sha3_256_many(messages, backend=backend) == [
        hashlib.sha3_256(m).digest() for m in messages
    ]


@settings(max_examples=20, deadline=None)
@given(
    messages=st.lists(st.binary(max_size=400), max_size=10),
    length=st.integers(0, 700),
    backend=st.sampled_from(COMPILED),
)
def test_shake_many_matches_hashlib(messages: list[bytes], length: int, backend: str) -> None:
    """Multi-message SHAKE128/256 equal hashlib for any output length (multi-block squeezes)."""
    assert keccak.shake128_many(messages, length, backend=backend) == [
        hashlib.shake_128(m).digest(length) for m in messages
    ]
    assert keccak.shake256_many(messages, length, backend=backend) == [
        hashlib.shake_256(m).digest(length) for m in messages
    ]


@settings(max_examples=15, deadline=None)
@given(
    size=st.integers(0, 5 * ref.KT_CHUNK),
    custom=st.binary(max_size=100),
    length=st.integers(1, 100),
    backend=st.sampled_from(COMPILED),
)
def test_kt128_matches_pycryptodome(size: int, custom: bytes, length: int, backend: str) -> None:
    """KT128 equals pycryptodome's KangarooTwelve across chunk boundaries."""
    data = kat.pattern_bytes(size)
    assert keccak.kt128(data, length, custom=custom, backend=backend) == (
        KangarooTwelve.new(data=data, custom=custom).read(length)
    )


@settings(max_examples=10, deadline=None)
@given(
    size=st.integers(0, 3 * ref.KT_CHUNK),
    custom=st.binary(max_size=50),
    backend=st.sampled_from(COMPILED),
)
def test_kt256_matches_oracle(size: int, custom: bytes, backend: str) -> None:
    """KT256 equals the RFC 9861 tree built on pycryptodome's TurboSHAKE256."""
    data = kat.pattern_bytes(size)
    expected = oracles.kangarootwelve(data, custom, 64, security=256)
    assert keccak.kt256(data, 64, custom=custom, backend=backend) == expected
    assert ref.kt256(data, 64, custom) == expected


@settings(max_examples=15, deadline=None)
@given(
    data=st.binary(max_size=500),
    domain=st.integers(1, 0x7F),
    length=st.integers(1, 400),
    backend=st.sampled_from(COMPILED),
)
def test_turboshake_matches_pycryptodome(
    data: bytes, domain: int, length: int, backend: str
) -> None:
    """TurboSHAKE128/256 equal pycryptodome for any domain byte and output length."""
    from Crypto.Hash import TurboSHAKE128, TurboSHAKE256

    assert keccak.turboshake128(data, length, domain=domain, backend=backend) == (
        TurboSHAKE128.new(domain=domain, data=data).read(length)
    )
    assert keccak.turboshake256(data, length, domain=domain, backend=backend) == (
        TurboSHAKE256.new(domain=domain, data=data).read(length)
    )


@settings(max_examples=15, deadline=None)
@given(
    data=st.binary(max_size=300),
    custom=st.binary(max_size=200),
    length=st.integers(1, 300),
    backend=st.sampled_from(COMPILED),
)
def test_cshake_matches_pycryptodome(data: bytes, custom: bytes, length: int, backend: str) -> None:
    """cSHAKE128/256 equal pycryptodome's cSHAKE (empty function name)."""
    from Crypto.Hash import cSHAKE128, cSHAKE256

    assert keccak.cshake128(data, length, custom=custom, backend=backend) == (
        cSHAKE128.new(data=data, custom=custom).read(length)
    )
    assert keccak.cshake256(data, length, custom=custom, backend=backend) == (
        cSHAKE256.new(data=data, custom=custom).read(length)
    )


@settings(max_examples=15, deadline=None)
@given(
    size=st.integers(0, 3000),
    block=st.integers(1, 700),
    custom=st.binary(max_size=40),
    length=st.integers(1, 100),
    backend=st.sampled_from(COMPILED),
)
def test_parallelhash_matches_pycryptodome(
    size: int, block: int, custom: bytes, length: int, backend: str
) -> None:
    """ParallelHash128 equals SP 800-185 built on pycryptodome's cSHAKE128."""
    data = kat.pattern_bytes(size)
    assert keccak.parallelhash128(data, block, length, custom=custom, backend=backend) == (
        oracles.parallelhash(data, block, length, custom, security=128, xof=False)
    )


@settings(max_examples=8, deadline=None)
@given(
    size=st.integers(0, 2000),
    block=st.integers(1, 300),
    custom=st.binary(max_size=40),
    xof=st.booleans(),
    backend=st.sampled_from(COMPILED),
)
def test_parallelhash256_matches_oracle(
    size: int, block: int, custom: bytes, xof: bool, backend: str
) -> None:
    """ParallelHash256 and its XOF equal SP 800-185 built on pycryptodome's cSHAKE256."""
    data = kat.pattern_bytes(size)
    expected = oracles.parallelhash(data, block, 70, custom, security=256, xof=xof)
    assert keccak.parallelhash256(data, block, 70, custom=custom, xof=xof, backend=backend) == (
        expected
    )
    assert ref.parallelhash256(data, block, 70, custom, xof) == expected


@pytest.mark.parametrize("size", [0, 1, 8191, 8192, 8193, 3 * 8192 + 5])
def test_kangarootwelve_oracle_is_pycryptodome_for_kt128(size: int) -> None:
    """The oracle's RFC 9861 tree, run with TurboSHAKE128, is pycryptodome's KangarooTwelve."""
    data = kat.pattern_bytes(size)
    assert oracles.kangarootwelve(data, b"ctx", 40, security=128) == (
        KangarooTwelve.new(data=data, custom=b"ctx").read(40)
    )


def test_oracles_reproduce_the_official_vectors() -> None:
    """The KT256 and ParallelHash oracles reproduce every such RFC 9861 and SP 800-185 vector."""
    checked = 0
    for v in kat.load_keccak(shared_file(KECCAK_FILE)):
        if v.algorithm == "KT256":
            got = oracles.kangarootwelve(v.data, v.custom, v.output_len, security=256)
        elif v.algorithm.startswith("ParallelHash"):
            assert v.block_size is not None
            security = 128 if "128" in v.algorithm else 256
            xof = "XOF" in v.algorithm
            got = oracles.parallelhash(
                v.data, v.block_size, v.output_len, v.custom, security=security, xof=xof
            )
        else:
            continue
        assert got[v.offset :] == v.digest, v.name
        checked += 1
    assert checked == 18 + 12


def test_bad_arguments_are_rejected() -> None:
    """Bad parameters raise InvalidParametersError or BackendError naming what is wrong."""
    with pytest.raises(InvalidParametersError, match="messages"):
        keccak.sha3_256_many(b"abc")  # type: ignore[arg-type]
    with pytest.raises(InvalidParametersError, match="messages"):
        keccak.sha3_256_many(["abc"])  # type: ignore[list-item]
    with pytest.raises(InvalidParametersError, match="length"):
        keccak.shake128_many([b""], -1)
    with pytest.raises(InvalidParametersError, match="domain"):
        keccak.turboshake128(b"", 32, domain=0x80)
    with pytest.raises(InvalidParametersError, match="block_size"):
        keccak.parallelhash128(b"", 0, 32)
    with pytest.raises(InvalidParametersError, match="states"):
        keccak.keccak_p1600_x4(np.zeros((25, 8), dtype=np.uint64))
    with pytest.raises(BackendError, match="backend"):
        keccak.sha3_256_many([b""], backend="gpu")


@pytest.mark.parametrize("backend", BACKENDS)
def test_empty_batch(backend: str) -> None:
    """An empty batch gives an empty list on every backend."""
    assert keccak.sha3_512_many([], backend=backend) == []
