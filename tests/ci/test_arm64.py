"""On an AArch64 host: the ISA levels, the NEON code of the simd kernels, the default kernels.

``bash .ci/arm64`` runs this module on a Debian arm64 root under qemu-user, beside the LSH,
BLAKE2 and hash_many known answers; elsewhere it skips.  Under emulation only the code and the
outputs are checked, never a speed.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.support import modes_kat as kat
from tests.support.environment import shared_file
from twocats.kdf.engine import Engine
from twocats.kdf.fill.threads import kernel_asm as fill_asm
from twocats.kdf.vectors import Vector, load_vectors
from twocats.lanes.modes import lsh
from twocats.lanes.modes._generated import lsh as lsh_kernels
from twocats.simd._jit import kernel_asm
from twocats.simd.asm import AsmProfile, profile_asm, verify_level
from twocats.simd.isa import (
    IsaLevel,
    available_levels,
    default_levels,
    emulation,
    get_level,
    host_arch,
    host_target,
)
from twocats.simd.registry import resolve_backend, simd_isa

pytestmark = pytest.mark.skipif(
    host_arch() != "aarch64", reason="runs on an AArch64 host (bash .ci/arm64)"
)


def _best_level() -> IsaLevel:
    """The level the simd backend compiles for on this host (sve or neon)."""
    return default_levels(host_target()[1])[0]


def _check_simd(profile: AsmProfile) -> None:
    """Assert that ``profile`` is vectorized code that passes the host's best level's check."""
    cpu_name, features = host_target()
    check = verify_level(_best_level(), profile, cpu_name, features)
    assert check["verified"], check["problems"]
    assert profile.vector_ops["neon"] + profile.vector_ops["sve"] > 0


def test_isa_lists_neon_and_none() -> None:
    """The level table offers neon (or sve) and none here, and no x86 level."""
    _cpu, features = host_target()
    keys = [level.key for level in default_levels(features)]
    assert keys in (["neon", "none"], ["sve", "none"])
    assert {"neon", "none"} <= {level.key for level in available_levels(features)}
    if emulation() is not None:
        assert keys == ["neon", "none"]
    assert simd_isa().startswith(("NEON", "SVE"))


def test_fill_kernel_is_neon_and_scalar_build_is_not() -> None:
    """The 8-lane TwoCats fill kernel computes on NEON vectors; its scalar build does not."""
    _check_simd(profile_asm(fill_asm(8, "simd")))
    scalar = profile_asm(fill_asm(8, "scalar"))
    assert not scalar.vectorized, scalar.vector_mnemonics
    cpu_name, features = host_target()
    assert verify_level(get_level("none"), scalar, cpu_name, features)["verified"]


def _lane_arguments(bits: int) -> tuple[object, ...]:
    dtype = np.uint32 if bits == 32 else np.uint64
    return (
        np.zeros((8, 16), dtype),
        np.zeros((16, 16), dtype),
        np.zeros(16, np.uint64),
        np.zeros(16, dtype),
        16,
    )


@pytest.mark.parametrize(("algorithm", "bits"), [("blake2s", 32), ("sha512", 64)])
def test_lane_kernels_are_neon(algorithm: str, bits: int) -> None:
    """hash_many's lane compressions vectorize on NEON; the scalar builds do not."""
    kernel = getattr(
        importlib.import_module(f"twocats.lanes._generated.{algorithm}"), f"{algorithm}_lanes"
    )
    _check_simd(profile_asm(kernel_asm(kernel.simd, *_lane_arguments(bits))))
    assert not profile_asm(kernel_asm(kernel.scalar, *_lane_arguments(bits))).vectorized


def test_lsh_lanes_are_neon() -> None:
    """The multi-message LSH-256 compression vectorizes on NEON."""
    u32 = np.uint32
    args = (np.zeros(128, u32), np.zeros(256, u32), np.zeros(128, u32), np.zeros(128, u32))
    _check_simd(profile_asm(kernel_asm(lsh_kernels.lsh256_lanes_x8.simd, *args)))


def test_lsh_two_messages_match_the_kats() -> None:
    """Every LSH KAT passes through the multi-message kernel two messages at a time."""
    vectors = kat.load_lsh(shared_file("lsh-kat.jsonl"))
    for algorithm in sorted({v.algorithm for v in vectors}):
        group = [v for v in vectors if v.algorithm == algorithm]
        many = lsh.lsh256_many if group[0].family == 256 else lsh.lsh512_many
        for pair in (group[i : i + 2] for i in range(0, len(group), 2)):
            got = many([v.data for v in pair], digest_size=pair[0].digest_size)
            assert got == [v.digest for v in pair], algorithm
    assert len(vectors) == 735


def _one_per_version_and_hash() -> Iterator[object]:
    """The cheapest vector of each TwoCats version and hash type."""
    chosen: dict[tuple[str, str], Vector] = {}
    for name in ("twocats-2015.jsonl", "twocats-2014.jsonl", "twocats-2014-03.jsonl"):
        for vector in load_vectors(Path(__file__).resolve().parents[1] / "vectors" / name):
            key = (vector.variant, vector.hash_type)
            best = chosen.get(key)
            if best is None or (vector.memory_bytes(), vector.id) < (best.memory_bytes(), best.id):
                chosen[key] = vector
    for (variant, hash_type), vector in sorted(chosen.items()):
        yield pytest.param(vector, id=f"{variant}-{hash_type}-{vector.id}")


@pytest.mark.parametrize("vector", list(_one_per_version_and_hash()))
def test_default_kernels_reproduce_a_vector(vector: Vector) -> None:
    """The default backend reproduces one vector of each version and hash type bit for bit."""
    assert resolve_backend(None) == "simd"
    engine = Engine()
    try:
        assert vector.compute(engine).hex() == vector.expected.hex()
    finally:
        engine.release()
