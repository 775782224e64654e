"""The simd build's transposing block decode against numpy's transpose, and its scalar stand-in."""

from __future__ import annotations

import numpy as np
import pytest

from twocats.lanes._blocks import no_groups, transposed_groups
from twocats.simd.isa import host_arch


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64])
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("width", [0, 1, 7, 8, 16, 17, 33])
def test_whole_groups_are_the_blocks_transposed(dtype: type, swap: bool, width: int) -> None:
    """Each whole group of lanes gets its blocks' words (byte-swapped if asked) in its columns;
    lanes past the last whole group within ``width`` are left alone."""
    nlanes = 40
    size = 512 // (8 * np.dtype(dtype).itemsize)
    rng = np.random.default_rng(width)
    # Blocks at odd offsets of one buffer: the decode loads them unaligned.
    buffer = rng.integers(0, 256, nlanes * 16 * 8 + 3, dtype=np.uint8)
    stride = 16 * np.dtype(dtype).itemsize
    starts = [3 + lane * stride for lane in range(nlanes)]
    addresses = np.array([buffer.ctypes.data + start for start in starts], dtype=np.uint64)
    M = np.full((16, nlanes), 7, dtype=dtype)
    done = transposed_groups(M, addresses, width, swap)
    assert done == width // size * size
    blocks = np.stack([buffer[start : start + stride].view(dtype) for start in starts])
    expected = blocks.byteswap() if swap else blocks
    assert (M[:, :done] == expected[:done].T).all()
    assert (M[:, done:] == 7).all()


def test_scalar_stand_in_decodes_nothing() -> None:
    """The scalar build's stand-in leaves every lane to the plain decode."""
    M = np.zeros((16, 16), dtype=np.uint32)
    assert no_groups(M, np.zeros(16, dtype=np.uint64), 16, True) == 0
    assert not M.any()


@pytest.mark.skipif(host_arch() != "x86_64", reason="x86 assembly")
def test_decode_runs_on_vector_shuffles() -> None:
    """The decode loads whole vectors and transposes them with vector permutes."""
    from twocats.simd._jit import kernel_asm
    from twocats.simd.asm import profile_asm

    M = np.zeros((16, 16), dtype=np.uint32)
    asm = kernel_asm(transposed_groups, M, np.zeros(16, dtype=np.uint64), 16, True)
    wide = profile_asm(asm).wide_mnemonics()
    assert any(name.startswith(("vperm", "vpunpck", "vshuf")) for name in wide), wide
