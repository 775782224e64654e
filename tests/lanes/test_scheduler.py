"""The lane scheduler: whole and partial vectors of lanes on both builds, and what each holds."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twocats.hashes import by_name
from twocats.lanes import PRIMITIVES, hash_many
from twocats.simd.isa import host_arch

COMPILED = ("scalar", "simd")


@settings(max_examples=30, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 1500), min_size=1, max_size=70),
    algorithm=st.sampled_from(PRIMITIVES),
    lanes=st.sampled_from([8, 15, 16, 17, 24, 32, 33, 48]),
    backend=st.sampled_from(COMPILED),
    seed=st.integers(0, 250),
)
def test_vectors_of_lanes_whole_partial_and_idle(
    lengths: list[int], algorithm: str, lanes: int, backend: str, seed: int
) -> None:
    """Lane counts of whole and partial vectors, with messages of whole and padded blocks
    ending at every point, match a hashlib loop: every decode path meets every other."""
    messages = [bytes((i * 7 + seed + n) % 251 for i in range(n)) for n in lengths]
    got = hash_many(messages, algorithm, backend=backend, lanes=lanes)
    assert got == [hashlib.new(algorithm, m).digest() for m in messages]


def test_one_long_message_behind_many_short_ones() -> None:
    """A long message that outlives every other lane (the lanes run it in a vector of idle
    lanes) and messages at the ends of unaligned buffers."""
    messages = [bytes(range(251)) * 400, *(bytes([n % 251]) * n for n in range(0, 4000, 37))]
    for backend in COMPILED:
        for algorithm in PRIMITIVES:
            got = hash_many(messages, algorithm, backend=backend)
            assert got == [hashlib.new(algorithm, m).digest() for m in messages]


def _scheduler_asm(algorithm: str, backend: str) -> str:
    """The assembly of one build of a hash type's scheduler."""
    from twocats.lanes.scheduler import SCHEDULERS
    from twocats.simd._jit import kernel_asm

    word = np.uint32 if by_name(algorithm).word_bits == 32 else np.uint64
    lanes = 16
    return kernel_asm(  # type: ignore[no-any-return]
        SCHEDULERS[algorithm].get(backend),
        np.zeros(2, np.uint64),
        np.zeros(2, np.int64),
        np.zeros(0, np.int64),
        2,
        np.zeros((2, 8), word),
        np.zeros((8, lanes), word),
        np.zeros((16, lanes), word),
        np.zeros(lanes, np.uint64),
        np.zeros(lanes, word),
        np.zeros((5, lanes), np.uint64),
    )


@pytest.mark.skipif(host_arch() != "x86_64", reason="x86 assembly")
@pytest.mark.parametrize("algorithm", ["sha1", "sha512"])
def test_scalar_build_holds_no_vector_code(algorithm: str) -> None:
    """The scalar build's scheduler, its decode included, computes in general-purpose registers."""
    from twocats.simd.asm import profile_asm

    found = profile_asm(_scheduler_asm(algorithm, "scalar")).vector_mnemonics
    assert not any(found.values()), f"vector code in the scalar build: {found}"


@pytest.mark.skipif(host_arch() != "x86_64", reason="x86 assembly")
@pytest.mark.parametrize("algorithm", ["sha1", "sha512"])
def test_simd_build_decodes_with_vector_shuffles(algorithm: str) -> None:
    """The simd build's scheduler transposes blocks with vector permutes."""
    from twocats.simd.asm import profile_asm

    wide = profile_asm(_scheduler_asm(algorithm, "simd")).wide_mnemonics()
    assert any(name.startswith(("vperm", "vpunpck", "vshuf")) for name in wide), wide


@pytest.mark.parametrize("lanes", [16, 32, 48])
def test_whole_vectors_of_an_interleaved_compression(lanes: int) -> None:
    """SHA-1's compression keeps two vectors in flight; one, two or three vectors of lanes
    (a vector left over runs alone) give hashlib's digests."""
    from twocats.lanes.primitives import DEFAULT_LANES, LANE_VECTORS

    assert DEFAULT_LANES["sha1"] == LANE_VECTORS["sha1"] * 16
    messages = [bytes((i + n) % 251 for i in range(n)) for n in range(0, 9000, 97)]
    got = hash_many(messages, "sha1", backend="simd", lanes=lanes)
    assert got == [hashlib.sha1(m).digest() for m in messages]
