"""The lane-mode simd kernels really run on vector registers; their scalar builds do not."""

from __future__ import annotations

import numpy as np
import pytest

from twocats.lanes.modes._generated import blake2tree, keccak, lsh, sha256tree
from twocats.simd._jit import kernel_asm
from twocats.simd.asm import profile_asm
from twocats.simd.isa import host_arch

# Vector work on 256- or 512-bit registers: adds, rotates (or their AVX2 substitutes), xors.
ARX = ("vpadd", "vprol", "vpror", "vpshufb", "vpsrl", "vpternlog", "vpxor")

# The AArch64 builds are checked by tests/ci/test_arm64.py (bash .ci/arm64).
pytestmark = pytest.mark.skipif(host_arch() != "x86_64", reason="x86 assembly")


def _kernels() -> list[object]:
    """(name, variants kernel, example arguments) of every lane compression of the modes."""
    u32, u64 = np.uint32, np.uint64
    cases: list[tuple[str, object, tuple[object, ...]]] = [
        ("keccak_x8", keccak.keccak_x8, (np.zeros(200, u64), 0)),
        ("keccak_x4", keccak.keccak_x4, (np.zeros(100, u64), 0)),
        (
            "lsh256",
            lsh.lsh256_lanes_x8,
            (np.zeros(128, u32), np.zeros(256, u32), np.zeros(128, u32), np.zeros(128, u32)),
        ),
        (
            "lsh512",
            lsh.lsh512_lanes_x8,
            (np.zeros(128, u64), np.zeros(256, u64), np.zeros(128, u64), np.zeros(128, u64)),
        ),
        (
            "sha256_x8",
            sha256tree.sha256_lanes_x8,
            (np.zeros((8, 8), u32), np.zeros((16, 8), u32), np.zeros(8, u64), np.zeros(8, u32), 8),
        ),
        (
            "blake2s",
            blake2tree.blake2s_tree_lanes,
            (
                np.zeros(64, u32),
                np.zeros(128, u32),
                np.zeros(8, u64),
                np.zeros(8, u32),
                np.zeros(8, u32),
            ),
        ),
        (
            "blake2b",
            blake2tree.blake2b_tree_lanes,
            (
                np.zeros(32, u64),
                np.zeros(64, u64),
                np.zeros(4, u64),
                np.zeros(4, u64),
                np.zeros(4, u64),
            ),
        ),
    ]
    return [pytest.param(*case, id=case[0]) for case in cases]


@pytest.mark.parametrize(("name", "kernel", "args"), _kernels())
def test_simd_build_uses_vector_registers(
    name: str, kernel: object, args: tuple[object, ...]
) -> None:
    """The simd build of each lane compression computes on ymm/zmm registers."""
    asm = kernel_asm(kernel.simd, *args)  # type: ignore[attr-defined]
    wide = profile_asm(asm).wide_mnemonics()
    assert any(op.startswith(ARX) for op in wide), f"{name}: the lane loop did not vectorize"


@pytest.mark.parametrize(("name", "kernel", "args"), _kernels())
def test_scalar_build_has_no_vector_arithmetic(
    name: str, kernel: object, args: tuple[object, ...]
) -> None:
    """The scalar build of each lane compression uses general-purpose registers only."""
    asm = kernel_asm(kernel.scalar, *args)  # type: ignore[attr-defined]
    found = profile_asm(asm).vector_mnemonics
    assert not any(found.values()), f"{name}: packed arithmetic in the scalar build: {found}"
