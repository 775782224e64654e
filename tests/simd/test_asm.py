"""The simd kernels really use vector instructions and the scalar builds do not.

``kernel_asm`` compiles each kernel, or loads it from the disk cache, and prints its assembly.
A numba or LLVM upgrade that silently stops vectorizing costs about 8x; this guards against it.
"""

from __future__ import annotations

import importlib
import re

import numpy as np
import pytest

from twocats.simd._jit import kernel_asm
from twocats.simd.asm import profile_asm
from twocats.simd.isa import host_arch

# Vector rotates, or the byte shuffles and shifts AVX2 builds them from.
ROTATES = ("vprold", "vprolq", "vprord", "vprorq", "vpshufb", "vpsrld", "vpsrlq")

# The AArch64 builds are checked by tests/ci/test_arm64.py (bash .ci/arm64).
pytestmark = pytest.mark.skipif(host_arch() != "x86_64", reason="x86 assembly")


def lane_arguments(bits: int) -> tuple[object, ...]:
    """Arguments of a lane kernel: states, message words, counters, flags and the lane count."""
    dtype = np.uint32 if bits == 32 else np.uint64
    lanes = 16
    return (
        np.zeros((8, lanes), dtype),
        np.zeros((16, lanes), dtype),
        np.zeros(lanes, np.uint64),
        np.zeros(lanes, dtype),
        lanes,
    )


def lane_kernel(algorithm: str) -> object:
    """The variants object of an algorithm's multi-lane compression."""
    module = importlib.import_module(f"twocats.lanes._generated.{algorithm}")
    return getattr(module, f"{algorithm}_lanes")


@pytest.mark.parametrize(
    ("algorithm", "bits"), [("blake2s", 32), ("sha256", 32), ("sha512", 64), ("sha1", 32)]
)
def test_simd_build_uses_vector_instructions(algorithm: str, bits: int) -> None:
    """The simd build adds and rotates on ymm/zmm registers."""
    asm = kernel_asm(lane_kernel(algorithm).simd, *lane_arguments(bits))  # type: ignore[attr-defined]
    wide = profile_asm(asm).wide_mnemonics()
    assert wide & {"vpaddd", "vpaddq"}, "no vpaddd/vpaddq on ymm/zmm: the lanes did not vectorize"
    assert wide & set(ROTATES), "rotates were not vectorized"


@pytest.mark.parametrize(("algorithm", "bits"), [("blake2s", 32), ("sha512", 64)])
def test_scalar_build_has_no_vector_arithmetic(algorithm: str, bits: int) -> None:
    """The scalar build computes with general-purpose registers only."""
    asm = kernel_asm(lane_kernel(algorithm).scalar, *lane_arguments(bits))  # type: ignore[attr-defined]
    found = profile_asm(asm).vector_mnemonics
    assert not any(found.values()), f"packed arithmetic in the scalar build: {found}"
    assert re.search(r"\b(ror|rol|rorx)[lq]\b", asm), "expected scalar rotates"
